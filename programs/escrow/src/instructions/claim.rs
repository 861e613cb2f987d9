use crate::constants::{CONFIG_SEED, ORDER_SEED};
use crate::errors::EscrowError;
use crate::events::OrderClaimed;
use crate::payout::split;
use crate::state::{Config, Order, OrderState};
use crate::vault::Vault;
use anchor_lang::prelude::*;
use anchor_spl::token_interface::{Mint, TokenAccount, TokenInterface};

#[derive(Accounts)]
pub struct Claim<'info> {
    /// Anyone (usually the seller or a crank); only pays the transaction fee.
    pub payer: Signer<'info>,
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
        constraint = seller_token_account.owner == order.seller @ EscrowError::SellerTokenAccountMismatch,
    )]
    pub seller_token_account: Box<InterfaceAccount<'info, TokenAccount>>,
    #[account(
        mut,
        associated_token::mint = mint,
        associated_token::authority = order.treasury,
        associated_token::token_program = token_program,
    )]
    pub treasury_token_account: Box<InterfaceAccount<'info, TokenAccount>>,
    /// Receives the rent of the order and the vault: `order.rent_payer`, pinned by the order's
    /// `has_one`. Checked by address only, never by owner: a buyer who reassigns her wallet to
    /// another program must not be able to block settlement (any account may be credited).
    /// CHECK: address pinned to `order.rent_payer` by `has_one`; only credited, never read or debited.
    #[account(mut)]
    pub rent_payer: UncheckedAccount<'info>,
    pub token_program: Interface<'info, TokenInterface>,
}

pub fn handler(ctx: Context<Claim>) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let a = ctx.accounts;
    require!(a.order.state == OrderState::Delivered, EscrowError::OrderNotDelivered);
    let due = a.order.auto_release_at().ok_or(EscrowError::MathOverflow)?;
    require!(now >= due, EscrowError::ReviewWindowNotElapsed);
    let payouts = split(a.order.amount, 0, a.order.fee_bps)?;
    Vault { order: &a.order, vault: &mut a.vault, mint: &a.mint, token_program: &a.token_program }.settle(
        &[
            (a.seller_token_account.to_account_info(), payouts.seller),
            (a.treasury_token_account.to_account_info(), payouts.fee),
        ],
        &a.treasury_token_account.to_account_info(),
        &a.rent_payer.to_account_info(),
    )?;
    crate::emit_event!(OrderClaimed {
        order: a.order.key(),
        order_id: a.order.order_id,
        by: a.payer.key(),
        seller_amount: payouts.seller,
        fee: payouts.fee,
        claimed_at: now,
    });
    Ok(())
}
