use crate::constants::MAX_ALLOWED_MINTS;
use anchor_lang::prelude::*;

/// Layout version of `Config` written by this program (`Config::version`).
///
/// Layout rule (both accounts): the fields of the first release keep their order, the version
/// byte follows them, and fields added later are appended after it (in the order of the version
/// that added them). A version bump goes with a `migrate_*` step that rewrites older accounts.
/// - version 0: the first release (no version byte): admin .. bump, 407 bytes;
/// - version 1: `version`, then `max_review_window`, `max_delivery_window` appended, 424 bytes.
pub const CONFIG_VERSION: u8 = 1;

/// Singleton PDA `["config"]`. The platform authority, arbiter and windows are read live by every
/// instruction (only `fee_bps` and `treasury` are snapshotted per order): rotating them moves control
/// of the orders already open. Every instruction refuses a config whose `version` is not
/// `CONFIG_VERSION` (`AccountNotMigrated`): `migrate_config` rewrites it first.
#[account]
#[derive(InitSpace)]
pub struct Config {
    pub admin: Pubkey,
    /// Service key that co-signs funding and may act for buyer/seller.
    pub platform_authority: Pubkey,
    /// Sole signer of `resolve_dispute`.
    pub arbiter: Pubkey,
    /// Wallet whose associated token account (per mint) receives fees.
    pub treasury: Pubkey,
    pub fee_bps: u16,
    /// Seconds after delivery before anyone may `claim`; used when `fund` passes 0.
    pub default_review_window: i64,
    #[max_len(MAX_ALLOWED_MINTS as usize)]
    pub allowed_mints: Vec<Pubkey>,
    pub bump: u8,
    /// Layout version (`CONFIG_VERSION`); fields added after the first release follow it.
    pub version: u8,
    /// (version 1) Longest review window (seconds) `fund` accepts; `default_review_window <= this <= REVIEW_WINDOW_LIMIT`.
    pub max_review_window: i64,
    /// (version 1) Longest delivery window (seconds) `fund` accepts: `delivery_deadline - now <= this`;
    /// `0 < this <= DELIVERY_WINDOW_LIMIT`.
    pub max_delivery_window: i64,
}

impl Config {
    /// Allocated size of a config account of the current version (discriminator included).
    pub const LEN: usize = 8 + Config::INIT_SPACE;

    /// Whether the account has the current layout (every instruction but the migration requires it).
    pub fn is_current(&self) -> bool {
        self.version == CONFIG_VERSION
    }
}
