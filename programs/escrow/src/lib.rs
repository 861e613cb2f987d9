//! Bazaar escrow: a buyer's SPL Token / Token-2022 payment is held in a vault owned by the
//! order PDA until it is released to the seller (buyer or platform), claimed after the review
//! window (anyone), split by the arbiter after a dispute, or refunded to the buyer.
//!
//! Every handler lives in `instructions/<name>.rs`; validation is declarative in the
//! `Accounts` structs. Seeds are defined once in `constants.rs`.
#![allow(unexpected_cfgs)]

use anchor_lang::prelude::*;

pub mod constants;
pub mod errors;
pub mod events;
pub mod instructions;
pub mod payout;
pub mod mint_guard;
pub mod vault;
pub mod state;

pub use constants::*;
pub use instructions::*;
pub use state::*;

declare_id!("AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r");

#[program]
pub mod escrow {
    use super::*;

    /// Creates the singleton config PDA. Only the program's upgrade authority (its ProgramData
    /// account) may, so nobody can front-run a fresh deployment; it becomes the admin.
    pub fn initialize_config(ctx: Context<InitializeConfig>, args: ConfigArgs) -> Result<()> {
        instructions::initialize_config::handler(ctx, args)
    }

    /// Admin-only; every field is optional (None keeps the current value); can rotate the admin.
    pub fn update_config(ctx: Context<UpdateConfig>, args: UpdateConfigArgs) -> Result<()> {
        instructions::update_config::handler(ctx, args)
    }

    /// Buyer deposits `amount` (base units) into the vault owned by the order PDA (its associated
    /// token account, created or, when someone created it first, accepted); the platform co-signs
    /// the terms, which are valid until `expires_at` (unix seconds, cluster clock).
    pub fn fund(
        ctx: Context<Fund>,
        order_id: [u8; 16],
        amount: u64,
        delivery_deadline: i64,
        review_window: i64,
        expires_at: i64,
    ) -> Result<()> {
        instructions::fund::handler(ctx, order_id, amount, delivery_deadline, review_window, expires_at)
    }

    /// Seller (or platform) marks the work delivered; starts the review window.
    pub fn mark_delivered(ctx: Context<MarkDelivered>) -> Result<()> {
        instructions::mark_delivered::handler(ctx)
    }

    /// Buyer (or platform) accepts: seller gets amount - fee, treasury the fee.
    pub fn release(ctx: Context<Release>) -> Result<()> {
        instructions::release::handler(ctx)
    }

    /// Anyone, once the review window after delivery has elapsed without a dispute.
    pub fn claim(ctx: Context<Claim>) -> Result<()> {
        instructions::claim::handler(ctx)
    }

    /// Buyer, seller or platform; before auto-release is due.
    pub fn open_dispute(ctx: Context<OpenDispute>) -> Result<()> {
        instructions::open_dispute::handler(ctx)
    }

    /// Arbiter splits a disputed order: buyer gets `buyer_bps` of the amount, the rest goes
    /// to the seller minus the fee.
    pub fn resolve_dispute(ctx: Context<ResolveDispute>, buyer_bps: u16) -> Result<()> {
        instructions::resolve_dispute::handler(ctx, buyer_bps)
    }

    /// Full amount back to the buyer: seller/platform any time; buyer alone after a missed deadline
    /// (`Order::buyer_may_refund`: a late delivery until auto-release, a dispute does not stop the clock).
    pub fn refund(ctx: Context<Refund>) -> Result<()> {
        instructions::refund::handler(ctx)
    }

    /// Upgrade authority only: rewrites the config into the current layout after an in-place
    /// upgrade (see `instructions/migrate.rs`); `args` fill the fields the old layout lacks.
    pub fn migrate_config(ctx: Context<MigrateConfig>, args: MigrateConfigArgs) -> Result<()> {
        instructions::migrate::config_handler(ctx, args)
    }

    /// Upgrade authority only: rewrites an open order into the current layout after an in-place
    /// upgrade; every field keeps its value.
    pub fn migrate_order(ctx: Context<MigrateOrder>) -> Result<()> {
        instructions::migrate::order_handler(ctx)
    }

    /// Like `fund`, for one milestone escrow of an order (`FundMilestoneArgs`): buyer + platform
    /// co-sign; several fit in one transaction.
    pub fn fund_milestone(ctx: Context<FundMilestone>, args: FundMilestoneArgs) -> Result<()> {
        instructions::fund_milestone::handler(ctx, args)
    }

    /// Buyer (or platform): delivered work goes back to the seller (Delivered -> Funded), the
    /// auto-release timer stops, the deadline moves (`request_revision::revised_deadline`).
    pub fn request_revision(ctx: Context<RequestRevision>) -> Result<()> {
        instructions::request_revision::handler(ctx)
    }

    /// Buyer (or platform for her): a later delivery deadline on a Funded escrow.
    pub fn extend_deadline(ctx: Context<ExtendDeadline>, new_deadline: i64) -> Result<()> {
        instructions::extend_deadline::handler(ctx, new_deadline)
    }

    /// Buyer or seller (or platform for `proposed_by`): proposes `buyer_bps` of the amount to the
    /// buyer, valid until `expires_at`; replaces an earlier proposal.
    pub fn propose_settlement(
        ctx: Context<ProposeSettlement>,
        buyer_bps: u16,
        expires_at: i64,
        proposed_by: u8,
    ) -> Result<()> {
        instructions::propose_settlement::handler(ctx, buyer_bps, expires_at, proposed_by)
    }

    /// The other party (or platform): pays the pending proposal's split exactly and closes.
    pub fn accept_settlement(ctx: Context<AcceptSettlement>, buyer_bps: u16) -> Result<()> {
        instructions::accept_settlement::handler(ctx, buyer_bps)
    }

    /// The proposer (or platform): clears the pending proposal.
    pub fn withdraw_settlement(ctx: Context<WithdrawSettlement>) -> Result<()> {
        instructions::withdraw_settlement::handler(ctx)
    }
}
