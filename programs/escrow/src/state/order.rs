use anchor_lang::prelude::*;

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq, InitSpace)]
pub enum OrderState {
    Funded,
    Delivered,
    Disputed,
}

/// PDA `["order", order_id]`. Exists only while money is in escrow: every terminal
/// instruction closes it (and its vault) and returns the rent to `rent_payer`.
#[account]
#[derive(InitSpace)]
pub struct Order {
    pub order_id: [u8; 16],
    pub buyer: Pubkey,
    pub seller: Pubkey,
    pub mint: Pubkey,
    /// Base units held in the vault.
    pub amount: u64,
    /// Snapshot of config.fee_bps at funding.
    pub fee_bps: u16,
    /// Snapshot of config.treasury at funding.
    pub treasury: Pubkey,
    pub state: OrderState,
    pub funded_at: i64,
    pub delivery_deadline: i64,
    /// 0 until delivered.
    pub delivered_at: i64,
    /// 0 unless disputed.
    pub disputed_at: i64,
    pub review_window: i64,
    pub rent_payer: Pubkey,
    pub bump: u8,
}

impl Order {
    /// Unix time from which `claim` is allowed (only meaningful once delivered).
    pub fn auto_release_at(&self) -> Option<i64> {
        self.delivered_at.checked_add(self.review_window)
    }
}
