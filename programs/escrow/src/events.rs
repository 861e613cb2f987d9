use anchor_lang::prelude::*;

#[event]
pub struct ConfigInitialized {
    pub admin: Pubkey,
    pub platform_authority: Pubkey,
    pub arbiter: Pubkey,
    pub treasury: Pubkey,
    pub fee_bps: u16,
    pub default_review_window: i64,
    pub allowed_mints: Vec<Pubkey>,
}

#[event]
pub struct ConfigUpdated {
    pub admin: Pubkey,
    pub platform_authority: Pubkey,
    pub arbiter: Pubkey,
    pub treasury: Pubkey,
    pub fee_bps: u16,
    pub default_review_window: i64,
    pub allowed_mints: Vec<Pubkey>,
}

#[event]
pub struct OrderFunded {
    pub order: Pubkey,
    pub order_id: [u8; 16],
    pub buyer: Pubkey,
    pub seller: Pubkey,
    pub mint: Pubkey,
    pub amount: u64,
    pub fee_bps: u16,
    pub delivery_deadline: i64,
    pub review_window: i64,
    pub funded_at: i64,
}

#[event]
pub struct OrderDelivered {
    pub order: Pubkey,
    pub order_id: [u8; 16],
    pub by: Pubkey,
    pub delivered_at: i64,
    /// When `claim` becomes possible.
    pub auto_release_at: i64,
}

#[event]
pub struct OrderReleased {
    pub order: Pubkey,
    pub order_id: [u8; 16],
    pub by: Pubkey,
    pub seller_amount: u64,
    pub fee: u64,
    pub released_at: i64,
}

#[event]
pub struct OrderClaimed {
    pub order: Pubkey,
    pub order_id: [u8; 16],
    pub by: Pubkey,
    pub seller_amount: u64,
    pub fee: u64,
    pub claimed_at: i64,
}

#[event]
pub struct DisputeOpened {
    pub order: Pubkey,
    pub order_id: [u8; 16],
    pub by: Pubkey,
    pub disputed_at: i64,
}

#[event]
pub struct DisputeResolved {
    pub order: Pubkey,
    pub order_id: [u8; 16],
    pub arbiter: Pubkey,
    pub buyer_bps: u16,
    pub buyer_amount: u64,
    pub seller_amount: u64,
    pub fee: u64,
    pub resolved_at: i64,
}

#[event]
pub struct OrderRefunded {
    pub order: Pubkey,
    pub order_id: [u8; 16],
    pub by: Pubkey,
    pub amount: u64,
    pub refunded_at: i64,
}
