// Each module exports its Accounts struct; the per-module `handler` names stay module-qualified.
#![allow(ambiguous_glob_reexports)]

pub mod claim;
pub mod fund;
pub mod initialize_config;
pub mod mark_delivered;
pub mod migrate;
pub mod open_dispute;
pub mod refund;
pub mod release;
pub mod resolve_dispute;
pub mod update_config;

pub use claim::*;
pub use fund::*;
pub use initialize_config::*;
pub use mark_delivered::*;
pub use migrate::*;
pub use open_dispute::*;
pub use refund::*;
pub use release::*;
pub use resolve_dispute::*;
pub use update_config::*;
