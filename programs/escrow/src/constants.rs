use anchor_lang::prelude::*;

/// Seed of the singleton config PDA: `["config"]`.
#[constant]
pub const CONFIG_SEED: &[u8] = b"config";

/// Seed prefix of an order PDA: `["order", order_id (16 bytes)]`.
#[constant]
pub const ORDER_SEED: &[u8] = b"order";

/// Highest platform fee the config accepts (10%).
#[constant]
pub const MAX_FEE_BPS: u16 = 1_000;

/// 100% in basis points.
#[constant]
pub const BPS_DENOMINATOR: u16 = 10_000;

/// Longest allow-list of payment mints.
#[constant]
pub const MAX_ALLOWED_MINTS: u8 = 8;

/// Longest `max_review_window` a config may set (365 days, in seconds): keeps
/// `delivered_at + review_window` far from overflow and a buyer's money from being parked for years.
#[constant]
pub const REVIEW_WINDOW_LIMIT: i64 = 365 * 24 * 3600;

/// Longest `max_delivery_window` a config may set (3 years, in seconds).
#[constant]
pub const DELIVERY_WINDOW_LIMIT: i64 = 3 * 365 * 24 * 3600;

/// Longest lifetime of co-signed fund terms: `fund` refuses `expires_at > now + this` (1 day, in
/// seconds), so a platform co-signature can never be replayed for long, even with a durable nonce.
#[constant]
pub const MAX_FUND_TERMS_LIFETIME: i64 = 24 * 3600;

/// Most milestones (escrows) one order may have: `fund_milestone` refuses a `milestone_index`
/// outside 1..=this (`InvalidMilestone`).
#[constant]
pub const MAX_MILESTONES: u8 = 10;

/// Least time a revision gives the seller (1 day, in seconds): `request_revision` moves the
/// delivery deadline to at least now + the time that was left at delivery, and never less than this.
#[constant]
pub const MIN_REVISION_SECONDS: i64 = 24 * 3600;

/// Longest lifetime of a settlement proposal (7 days, in seconds): `propose_settlement` refuses
/// `expires_at > now + this` (`SettlementLifetimeTooLong`).
#[constant]
pub const MAX_PROPOSAL_LIFETIME: i64 = 7 * 24 * 3600;
