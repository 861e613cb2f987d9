use crate::constants::{CONFIG_SEED, ORDER_SEED};
use crate::errors::EscrowError;
use crate::events::DisputeOpened;
use crate::state::{Config, Order, OrderState};
use anchor_lang::prelude::*;

#[derive(Accounts)]
pub struct OpenDispute<'info> {
    /// The buyer, the seller or the platform authority.
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
            || authority.key() == order.seller
            || authority.key() == config.platform_authority @ EscrowError::NotOrderParty,
    )]
    pub order: Box<Account<'info, Order>>,
}

pub fn handler(ctx: Context<OpenDispute>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let order = &mut ctx.accounts.order;
    match order.state {
        OrderState::Funded => {}
        OrderState::Delivered => {
            // Once auto-release is due the seller's claim must not be blocked.
            let due = order.auto_release_at().ok_or(EscrowError::MathOverflow)?;
            require!(now < due, EscrowError::ReviewWindowElapsed);
        }
        OrderState::Disputed => return err!(EscrowError::OrderNotFundedOrDelivered),
    }
    order.state = OrderState::Disputed;
    order.disputed_at = now;
    crate::emit_event!(DisputeOpened {
        order: order.key(),
        order_id: order.order_id,
        by: ctx.accounts.authority.key(),
        disputed_at: now,
    });
    Ok(())
}
