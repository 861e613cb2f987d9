use crate::constants::{BPS_DENOMINATOR, CONFIG_SEED, MAX_PROPOSAL_LIFETIME, ORDER_SEED};
use crate::errors::EscrowError;
use crate::events::SettlementProposed;
use crate::state::{Config, Order, SettlementProposal, PARTY_BUYER, PARTY_SELLER};
use anchor_lang::prelude::*;

#[derive(Accounts)]
#[instruction(buyer_bps: u16, expires_at: i64, proposed_by: u8)]
pub struct ProposeSettlement<'info> {
    /// The proposing party's own key (`proposed_by`: 1 buyer, 2 seller) or the platform authority
    /// proposing for that party.
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
        constraint = proposed_by == PARTY_BUYER || proposed_by == PARTY_SELLER @ EscrowError::InvalidParty,
        constraint = order.party_key(proposed_by) == Some(authority.key())
            || authority.key() == config.platform_authority @ EscrowError::NotProposingParty,
    )]
    pub order: Box<Account<'info, Order>>,
}

/// Any open state (Funded, Delivered, Disputed: an order account exists only while open).
/// `buyer_bps <= 10000` (`BuyerBpsTooHigh`; 10000 = cancel, everything back to the buyer) and
/// `now < expires_at <= now + MAX_PROPOSAL_LIFETIME` (`SettlementExpiresInPast`,
/// `SettlementLifetimeTooLong`). Replaces any earlier proposal, whoever made it.
pub fn handler(ctx: Context<ProposeSettlement>, buyer_bps: u16, expires_at: i64, proposed_by: u8) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    require!(buyer_bps <= BPS_DENOMINATOR, EscrowError::BuyerBpsTooHigh);
    require!(expires_at > now, EscrowError::SettlementExpiresInPast);
    require!(expires_at.saturating_sub(now) <= MAX_PROPOSAL_LIFETIME, EscrowError::SettlementLifetimeTooLong);
    let order = &mut ctx.accounts.order;
    order.settlement = SettlementProposal { proposed_by, buyer_bps, expires_at };
    crate::emit_event!(SettlementProposed {
        order: order.key(),
        order_id: order.order_id,
        by: ctx.accounts.authority.key(),
        proposed_by,
        buyer_bps,
        expires_at,
        proposed_at: now,
    });
    Ok(())
}
