use anchor_lang::prelude::*;

/// Layout version of `Order` written by this program (`Order::version`); same layout rule as
/// `CONFIG_VERSION` (first-release fields, then the version byte, then later fields appended).
/// - version 0: the first release (no version byte): order_id .. bump, 236 bytes;
/// - version 1: the version byte appended, 237 bytes;
/// - version 2 (issue 24): `parent_order_id`, `milestone_index`, `revisions_included`,
///   `revisions_used`, `settlement` appended, 267 bytes.
pub const ORDER_VERSION: u8 = 2;

/// `SettlementProposal::proposed_by` when no proposal is pending.
pub const PARTY_NONE: u8 = 0;
/// `SettlementProposal::proposed_by` / `propose_settlement`'s `proposed_by`: the buyer.
pub const PARTY_BUYER: u8 = 1;
/// `SettlementProposal::proposed_by` / `propose_settlement`'s `proposed_by`: the seller.
pub const PARTY_SELLER: u8 = 2;

/// A pending settlement by agreement (version 2): `buyer_bps` of the amount to the buyer, the rest
/// to the seller minus the fee, if the other party accepts before `expires_at` (unix seconds,
/// exclusive). All zero when none is pending.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, Default, PartialEq, Eq, InitSpace)]
pub struct SettlementProposal {
    /// PARTY_NONE, PARTY_BUYER or PARTY_SELLER.
    pub proposed_by: u8,
    /// Basis points of the amount to the buyer (0..=10000; 10000 = cancel).
    pub buyer_bps: u16,
    pub expires_at: i64,
}

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
    /// (version 2) Escrow id of the order this escrow is a milestone of: its first milestone's id
    /// (equal to `order_id` for milestone 1 and for every order funded with `fund`).
    pub parent_order_id: [u8; 16],
    /// (version 2) 1..=MAX_MILESTONES; 1 for `fund`.
    pub milestone_index: u8,
    /// (version 2) Revisions the buyer may request (`request_revision`), co-signed at funding.
    pub revisions_included: u8,
    /// (version 2) Revisions requested so far (<= revisions_included).
    pub revisions_used: u8,
    /// (version 2) The pending settlement proposal, if any.
    pub settlement: SettlementProposal,
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

    /// Key of a party role (PARTY_BUYER / PARTY_SELLER); None for any other value.
    pub fn party_key(&self, party: u8) -> Option<Pubkey> {
        match party {
            PARTY_BUYER => Some(self.buyer),
            PARTY_SELLER => Some(self.seller),
            _ => None,
        }
    }

    /// Key of the party whose settlement proposal is pending; None when there is none.
    pub fn proposer_key(&self) -> Option<Pubkey> {
        self.party_key(self.settlement.proposed_by)
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
