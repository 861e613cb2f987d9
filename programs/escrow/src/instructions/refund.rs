use crate::constants::{BPS_DENOMINATOR, CONFIG_SEED, ORDER_SEED};
use crate::errors::EscrowError;
use crate::events::OrderRefunded;
use crate::payout::split;
use crate::state::{Config, Order};
use crate::vault::Vault;
use anchor_lang::prelude::*;
use anchor_spl::token_interface::{Mint, TokenAccount, TokenInterface};

#[derive(Accounts)]
pub struct Refund<'info> {
    /// The seller or the platform authority at any time; the buyer alone only after a missed
    /// delivery deadline (`Order::buyer_may_refund`: not delivered on time; a late delivery
    /// until auto-release; a dispute does not stop the clock).
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
        has_one = mint,
        has_one = rent_payer @ EscrowError::RentReceiverMismatch,
        close = rent_payer,
    )]
    pub order: Box<Account<'info, Order>>,
    #[account(mint::token_program = token_program)]
    pub mint: Box<InterfaceAccount<'info, Mint>>,
    #[account(
        mut,
        associated_token::mint = mint,
        associated_token::authority = order,
        associated_token::token_program = token_program,
    )]
    pub vault: Box<InterfaceAccount<'info, TokenAccount>>,
    #[account(
        mut,
        token::mint = mint,
        token::token_program = token_program,
        constraint = buyer_token_account.owner == order.buyer @ EscrowError::BuyerTokenAccountMismatch,
    )]
    pub buyer_token_account: Box<InterfaceAccount<'info, TokenAccount>>,
    /// Receives the rent of the order and the vault: `order.rent_payer`, pinned by the order's
    /// `has_one`. Checked by address only, never by owner: a buyer who reassigns her wallet to
    /// another program must not be able to block settlement (any account may be credited).
    /// CHECK: address pinned to `order.rent_payer` by `has_one`; only credited, never read or debited.
    #[account(mut)]
    pub rent_payer: UncheckedAccount<'info>,
    pub token_program: Interface<'info, TokenInterface>,
}

pub fn handler(ctx: Context<Refund>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let a = ctx.accounts;
    let by = a.authority.key();
    if by != a.order.seller && by != a.config.platform_authority {
        require_keys_eq!(by, a.order.buyer, EscrowError::NotOrderParty);
        // Deadline rule (Order::buyer_may_refund): after a missed delivery deadline, a late
        // delivery (until auto-release) or a dispute no longer keeps the buyer from her money.
        let allowed = a.order.buyer_may_refund(now).ok_or(EscrowError::MathOverflow)?;
        require!(allowed, EscrowError::BuyerRefundNotAllowed);
    }
    let payouts = split(a.order.amount, BPS_DENOMINATOR, a.order.fee_bps)?;
    Vault { order: &a.order, vault: &mut a.vault, mint: &a.mint, token_program: &a.token_program }.settle(
        &[(a.buyer_token_account.to_account_info(), payouts.buyer)],
        &a.buyer_token_account.to_account_info(),
        &a.rent_payer.to_account_info(),
    )?;
    crate::emit_event!(OrderRefunded {
        order: a.order.key(),
        order_id: a.order.order_id,
        by,
        amount: payouts.buyer,
        refunded_at: now,
    });
    Ok(())
}
