use crate::constants::{CONFIG_SEED, ORDER_SEED};
use crate::errors::EscrowError;
use crate::events::SettlementWithdrawn;
use crate::state::{Config, Order, SettlementProposal};
use anchor_lang::prelude::*;

#[derive(Accounts)]
pub struct WithdrawSettlement<'info> {
    /// The party who proposed (`order.settlement.proposed_by`) or the platform authority.
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
        constraint = order.proposer_key().is_some() @ EscrowError::NoSettlementProposal,
        constraint = order.proposer_key() == Some(authority.key())
            || authority.key() == config.platform_authority @ EscrowError::NotProposingParty,
    )]
    pub order: Box<Account<'info, Order>>,
}

/// Clears the pending proposal (an expired one too); the escrow stays as it was.
pub fn handler(ctx: Context<WithdrawSettlement>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let order = &mut ctx.accounts.order;
    let proposed_by = order.settlement.proposed_by;
    order.settlement = SettlementProposal::default();
    crate::emit_event!(SettlementWithdrawn {
        order: order.key(),
        order_id: order.order_id,
        by: ctx.accounts.authority.key(),
        proposed_by,
        withdrawn_at: now,
    });
    Ok(())
}
