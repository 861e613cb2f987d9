pub mod config;
pub mod order;

pub use config::*;
pub use order::*;
