use crate::constants::MAX_ALLOWED_MINTS;
use anchor_lang::prelude::*;

/// Singleton PDA `["config"]`. The platform authority, arbiter and windows are read live by every
/// instruction (only `fee_bps` and `treasury` are snapshotted per order): rotating them moves control
/// of the orders already open.
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
    /// Longest review window (seconds) `fund` accepts; `default_review_window <= this <= REVIEW_WINDOW_LIMIT`.
    pub max_review_window: i64,
    /// Longest delivery window (seconds) `fund` accepts: `delivery_deadline - now <= this`;
    /// `0 < this <= DELIVERY_WINDOW_LIMIT`.
    pub max_delivery_window: i64,
    #[max_len(MAX_ALLOWED_MINTS as usize)]
    pub allowed_mints: Vec<Pubkey>,
    pub bump: u8,
}
