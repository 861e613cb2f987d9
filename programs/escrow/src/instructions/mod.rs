// Each module exports its Accounts struct; the per-module `handler` names stay module-qualified.
#![allow(ambiguous_glob_reexports)]

pub mod accept_settlement;
pub mod claim;
pub mod extend_deadline;
pub mod fund;
pub mod fund_milestone;
pub mod initialize_config;
pub mod mark_delivered;
pub mod migrate;
pub mod open_dispute;
pub mod propose_settlement;
pub mod refund;
pub mod release;
pub mod request_revision;
pub mod resolve_dispute;
pub mod update_config;
pub mod withdraw_settlement;

pub use accept_settlement::*;
pub use claim::*;
pub use extend_deadline::*;
pub use fund::*;
pub use fund_milestone::*;
pub use initialize_config::*;
pub use mark_delivered::*;
pub use migrate::*;
pub use open_dispute::*;
pub use propose_settlement::*;
pub use refund::*;
pub use release::*;
pub use request_revision::*;
pub use resolve_dispute::*;
pub use update_config::*;
pub use withdraw_settlement::*;
