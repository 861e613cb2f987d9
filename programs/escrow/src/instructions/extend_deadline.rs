use crate::constants::{CONFIG_SEED, ORDER_SEED};
use crate::errors::EscrowError;
use crate::events::DeadlineExtended;
use crate::state::{Config, Order, OrderState};
use anchor_lang::prelude::*;

#[derive(Accounts)]
pub struct ExtendDeadline<'info> {
    /// The buyer or the platform authority (for her): a later deadline postpones the buyer's right
    /// to refund alone (the deadline rule), so only her consent moves it. The seller's proposal
    /// and its expiry live off chain.
    pub authority: Signer<'info>,
    #[account(
        seeds = [CONFIG_SEED],
        bump = config.bump,
        constraint = config.is_current() @ EscrowError::AccountNotMigrated,
    )]
    pub config: Box<Account<'info, Config>>,
    #[account(
        mut,
        seeds = [ORDER_SEED, order.order_id.as_ref()],
        bump = order.bump,
        constraint = order.is_current() @ EscrowError::AccountNotMigrated,
        constraint = authority.key() == order.buyer
            || authority.key() == config.platform_authority @ EscrowError::NotBuyerOrPlatform,
    )]
    pub order: Box<Account<'info, Order>>,
}

/// Funded only (`OrderNotFunded`): delivered work is reviewed, not extended, and a disputed
/// escrow cannot be delivered any more (only the arbiter, a settlement or a refund end it), so an
/// extension there would only take the buyer's refund right away. `new_deadline` (unix seconds)
/// must be later than the current deadline (`DeadlineNotLater`), in the future
/// (`DeliveryDeadlineInPast`) and at most `config.max_delivery_window` ahead of now
/// (`DeliveryDeadlineTooFar`), the bound `fund` applies.
pub fn handler(ctx: Context<ExtendDeadline>, new_deadline: i64) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let max_delivery_window = ctx.accounts.config.max_delivery_window;
    let order = &mut ctx.accounts.order;
    require!(order.state == OrderState::Funded, EscrowError::OrderNotFunded);
    require!(new_deadline > order.delivery_deadline, EscrowError::DeadlineNotLater);
    require!(new_deadline > now, EscrowError::DeliveryDeadlineInPast);
    require!(new_deadline.saturating_sub(now) <= max_delivery_window, EscrowError::DeliveryDeadlineTooFar);
    let previous_deadline = order.delivery_deadline;
    order.delivery_deadline = new_deadline;
    crate::emit_event!(DeadlineExtended {
        order: order.key(),
        order_id: order.order_id,
        by: ctx.accounts.authority.key(),
        previous_deadline,
        delivery_deadline: new_deadline,
        extended_at: now,
    });
    Ok(())
}
