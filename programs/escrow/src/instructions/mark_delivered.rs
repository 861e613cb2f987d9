use crate::constants::{CONFIG_SEED, ORDER_SEED};
use crate::errors::EscrowError;
use crate::events::OrderDelivered;
use crate::state::{Config, Order, OrderState};
use anchor_lang::prelude::*;

#[derive(Accounts)]
pub struct MarkDelivered<'info> {
    /// The seller or the platform authority.
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
        constraint = authority.key() == order.seller
            || authority.key() == config.platform_authority @ EscrowError::NotSellerOrPlatform,
    )]
    pub order: Box<Account<'info, Order>>,
}

pub fn handler(ctx: Context<MarkDelivered>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let order = &mut ctx.accounts.order;
    require!(order.state == OrderState::Funded, EscrowError::OrderNotFunded);
    order.state = OrderState::Delivered;
    order.delivered_at = now;
    crate::emit_event!(OrderDelivered {
        order: order.key(),
        order_id: order.order_id,
        by: ctx.accounts.authority.key(),
        delivered_at: now,
        auto_release_at: order.auto_release_at().ok_or(EscrowError::MathOverflow)?,
    });
    Ok(())
}
