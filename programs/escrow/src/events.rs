use anchor_lang::prelude::*;

/// `emit!` on chain. Off chain (the program running natively in solana-program-test or the
/// localnet) anchor-lang 0.32's `sol_log_data` is a no-op, so the same bytes are handed to the
/// runtime's syscall stubs instead, where a host can log them as `Program data: ...`.
#[macro_export]
macro_rules! emit_event {
    ($event:expr) => {{
        let event = $event;
        #[cfg(target_os = "solana")]
        anchor_lang::prelude::emit!(event);
        #[cfg(not(target_os = "solana"))]
        $crate::events::log_data_off_chain(&anchor_lang::Event::data(&event));
    }};
}

#[cfg(not(target_os = "solana"))]
#[doc(hidden)]
pub fn log_data_off_chain(data: &[u8]) {
    solana_sysvar::program_stubs::sol_log_data(&[data]);
}

#[event]
pub struct ConfigInitialized {
    pub admin: Pubkey,
    pub platform_authority: Pubkey,
    pub arbiter: Pubkey,
    pub treasury: Pubkey,
    pub fee_bps: u16,
    pub default_review_window: i64,
    pub max_review_window: i64,
    pub max_delivery_window: i64,
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
    pub max_review_window: i64,
    pub max_delivery_window: i64,
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

/// `migrate_config` / `migrate_order` rewrote `account` from layout `from_version` to `to_version`.
#[event]
pub struct AccountMigrated {
    pub account: Pubkey,
    pub by: Pubkey,
    pub from_version: u8,
    pub to_version: u8,
}

/// `fund_milestone` funded one milestone escrow of an order (emitted after its `OrderFunded`).
#[event]
pub struct MilestoneFunded {
    pub order: Pubkey,
    pub order_id: [u8; 16],
    pub parent_order_id: [u8; 16],
    pub milestone_index: u8,
    pub revisions_included: u8,
}

/// `request_revision`: the delivered work goes back to the seller (Delivered -> Funded).
#[event]
pub struct RevisionRequested {
    pub order: Pubkey,
    pub order_id: [u8; 16],
    pub by: Pubkey,
    pub revisions_used: u8,
    pub revisions_included: u8,
    /// The delivery deadline after the revision (unix seconds).
    pub delivery_deadline: i64,
    pub requested_at: i64,
}

/// `extend_deadline`: the buyer (or the platform for her) moved the delivery deadline later.
#[event]
pub struct DeadlineExtended {
    pub order: Pubkey,
    pub order_id: [u8; 16],
    pub by: Pubkey,
    pub previous_deadline: i64,
    pub delivery_deadline: i64,
    pub extended_at: i64,
}

/// `propose_settlement`: a settlement by agreement is pending (replacing any earlier one).
#[event]
pub struct SettlementProposed {
    pub order: Pubkey,
    pub order_id: [u8; 16],
    pub by: Pubkey,
    /// PARTY_BUYER (1) or PARTY_SELLER (2).
    pub proposed_by: u8,
    pub buyer_bps: u16,
    pub expires_at: i64,
    pub proposed_at: i64,
}

/// `accept_settlement`: the escrow was paid out as proposed and closed.
#[event]
pub struct SettlementAccepted {
    pub order: Pubkey,
    pub order_id: [u8; 16],
    pub by: Pubkey,
    pub proposed_by: u8,
    pub buyer_bps: u16,
    pub buyer_amount: u64,
    pub seller_amount: u64,
    pub fee: u64,
    pub accepted_at: i64,
}

/// `withdraw_settlement`: the pending proposal was withdrawn.
#[event]
pub struct SettlementWithdrawn {
    pub order: Pubkey,
    pub order_id: [u8; 16],
    pub by: Pubkey,
    pub proposed_by: u8,
    pub withdrawn_at: i64,
}
