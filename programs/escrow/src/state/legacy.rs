//! Account layouts of earlier program versions, read only by `migrate_config` / `migrate_order`.
//! An account without a version byte is recognised by its allocated size, which only this program
//! ever set (`8 + INIT_SPACE` of the version that created it) and which no later layout reuses.

use crate::constants::MAX_ALLOWED_MINTS;
use crate::state::OrderState;
use anchor_lang::prelude::*;

/// `Config` of the first release (version 0, no version byte).
#[derive(AnchorSerialize, AnchorDeserialize)]
pub struct ConfigV0 {
    pub admin: Pubkey,
    pub platform_authority: Pubkey,
    pub arbiter: Pubkey,
    pub treasury: Pubkey,
    pub fee_bps: u16,
    pub default_review_window: i64,
    pub allowed_mints: Vec<Pubkey>,
    pub bump: u8,
}

/// Allocated size of a version-0 config: discriminator, 4 keys, fee, window, vec of <= 8 keys, bump.
pub const CONFIG_V0_LEN: usize = 8 + 4 * 32 + 2 + 8 + (4 + MAX_ALLOWED_MINTS as usize * 32) + 1;

/// `Config` as issue 8 left it on main before versioning: the two windows inserted before
/// `allowed_mints` (never released, but written by dev localnets with a ledger). No version byte.
#[derive(AnchorSerialize, AnchorDeserialize)]
pub struct ConfigUnversionedWindows {
    pub admin: Pubkey,
    pub platform_authority: Pubkey,
    pub arbiter: Pubkey,
    pub treasury: Pubkey,
    pub fee_bps: u16,
    pub default_review_window: i64,
    pub max_review_window: i64,
    pub max_delivery_window: i64,
    pub allowed_mints: Vec<Pubkey>,
    pub bump: u8,
}

/// Allocated size of a `ConfigUnversionedWindows` account.
pub const CONFIG_UNVERSIONED_WINDOWS_LEN: usize = CONFIG_V0_LEN + 16;

/// `Order` of the first release (version 0): the current fields without the version byte.
#[derive(AnchorSerialize, AnchorDeserialize)]
pub struct OrderV0 {
    pub order_id: [u8; 16],
    pub buyer: Pubkey,
    pub seller: Pubkey,
    pub mint: Pubkey,
    pub amount: u64,
    pub fee_bps: u16,
    pub treasury: Pubkey,
    pub state: OrderState,
    pub funded_at: i64,
    pub delivery_deadline: i64,
    pub delivered_at: i64,
    pub disputed_at: i64,
    pub review_window: i64,
    pub rent_payer: Pubkey,
    pub bump: u8,
}

/// Allocated size of a version-0 order.
pub const ORDER_V0_LEN: usize = 8 + 16 + 3 * 32 + 8 + 2 + 32 + 1 + 5 * 8 + 32 + 1;

/// `Order` of version 1 (issue 20 up to issue 24): version 0's fields, then the version byte (1).
#[derive(AnchorSerialize, AnchorDeserialize)]
pub struct OrderV1 {
    pub v0: OrderV0,
    pub version: u8,
}

/// Allocated size of a version-1 order.
pub const ORDER_V1_LEN: usize = ORDER_V0_LEN + 1;

// The migration tells layouts apart by size: no two of them may share one.
const _: () = assert!(ORDER_V1_LEN + 16 + 3 + 11 == crate::state::Order::LEN);
const _: () = assert!(CONFIG_V0_LEN + 1 + 16 == crate::state::Config::LEN);
const _: () = assert!(CONFIG_UNVERSIONED_WINDOWS_LEN != crate::state::Config::LEN);
