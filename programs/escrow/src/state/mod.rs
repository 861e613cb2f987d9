pub mod config;
pub mod legacy;
pub mod order;

pub use config::*;
pub use order::*;
