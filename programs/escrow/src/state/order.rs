use anchor_lang::prelude::*;

/// Layout version of `Order` written by this program (`Order::version`); same layout rule as
/// `CONFIG_VERSION` (first-release fields, then the version byte, then later fields appended).
/// - version 0: the first release (no version byte): order_id .. bump, 236 bytes;
/// - version 1: the version byte appended, 237 bytes.
pub const ORDER_VERSION: u8 = 1;

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq, InitSpace)]
pub enum OrderState {
    Funded,
    Delivered,
    Disputed,
}

/// PDA `["order", order_id]`. Exists only while money is in escrow: every terminal
/// instruction closes it (and its vault) and returns the rent to `rent_payer`. Every instruction
/// refuses an order whose `version` is not `ORDER_VERSION` (`AccountNotMigrated`; an order of the
/// first release does not even deserialize): `migrate_order` rewrites it first.
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
    /// Layout version (`ORDER_VERSION`); fields added after the first release follow it.
    pub version: u8,
}

impl Order {
    /// Allocated size of an order account of the current version (discriminator included).
    pub const LEN: usize = 8 + Order::INIT_SPACE;

    /// Unix time from which `claim` is allowed (only meaningful once delivered).
    pub fn auto_release_at(&self) -> Option<i64> {
        self.delivered_at.checked_add(self.review_window)
    }

    /// Whether the account has the current layout (every instruction but the migration requires it).
    pub fn is_current(&self) -> bool {
        self.version == ORDER_VERSION
    }

    /// Delivered no later than the delivery deadline (`delivered_at` is 0 while undelivered).
    pub fn delivered_on_time(&self) -> bool {
        self.delivered_at != 0 && self.delivered_at <= self.delivery_deadline
    }

    /// Deadline rule: may the buyer alone take her money back at `now` (unix seconds)?
    ///
    /// Only once the delivery deadline has passed (`now > delivery_deadline`) without an on-time
    /// delivery (`delivered_on_time` false), and then
    /// - Funded: always (nothing was delivered);
    /// - Delivered (late): while the review window runs (`now < auto_release_at`), the window in
    ///   which she could also dispute; from auto-release on, `claim` is the seller's and not raced;
    /// - Disputed: always; a dispute does not stop the deadline clock, whoever opened it.
    ///
    /// So a seller who missed the deadline can turn it into a stalemate neither by delivering late
    /// nor by opening a dispute (Fiverr: a late order may be cancelled by the buyer; Upwork: the
    /// client may still get a refund). `None` when `auto_release_at` overflows.
    pub fn buyer_may_refund(&self, now: i64) -> Option<bool> {
        if now <= self.delivery_deadline || self.delivered_on_time() {
            return Some(false);
        }
        Some(match self.state {
            OrderState::Funded | OrderState::Disputed => true,
            OrderState::Delivered => now < self.auto_release_at()?,
        })
    }
}
