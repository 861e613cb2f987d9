use crate::constants::{CONFIG_SEED, ORDER_SEED};
use crate::errors::EscrowError;
use crate::events::SettlementAccepted;
use crate::payout::split;
use crate::state::{Config, Order};
use crate::vault::Vault;
use anchor_lang::prelude::*;
use anchor_spl::token_interface::{Mint, TokenAccount, TokenInterface};

#[derive(Accounts)]
pub struct AcceptSettlement<'info> {
    /// The party who did NOT propose (buyer or seller, own key) or the platform authority for her.
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
        constraint = order.proposer_key().is_some() @ EscrowError::NoSettlementProposal,
        constraint = authority.key() == order.buyer
            || authority.key() == order.seller
            || authority.key() == config.platform_authority @ EscrowError::NotOrderParty,
        constraint = order.proposer_key() != Some(authority.key()) @ EscrowError::OwnSettlementProposal,
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
    #[account(
        mut,
        token::mint = mint,
        token::token_program = token_program,
        constraint = seller_token_account.owner == order.seller @ EscrowError::SellerTokenAccountMismatch,
    )]
    pub seller_token_account: Box<InterfaceAccount<'info, TokenAccount>>,
    /// The treasury snapshot's associated token account; the service creates it beforehand.
    #[account(
        mut,
        associated_token::mint = mint,
        associated_token::authority = order.treasury,
        associated_token::token_program = token_program,
    )]
    pub treasury_token_account: Box<InterfaceAccount<'info, TokenAccount>>,
    /// Receives the rent of the order and the vault: `order.rent_payer`, pinned by the order's
    /// `has_one`. Checked by address only, never by owner (see `Release`).
    /// CHECK: address pinned to `order.rent_payer` by `has_one`; only credited, never read or debited.
    #[account(mut)]
    pub rent_payer: UncheckedAccount<'info>,
    pub token_program: Interface<'info, TokenInterface>,
}

/// Any open state, a dispute included. `buyer_bps` must repeat the pending proposal's
/// (`SettlementTermsMismatch`: the signer accepts exactly what she saw) and the proposal must not
/// have expired (`now < expires_at`, else `SettlementProposalExpired`). Pays like `resolve_dispute`
/// (`payout::split`): buyer floor(amount * bps / 10000), seller the rest minus the fee (the fee only
/// on the seller's share), then closes the vault and the order (surplus to the treasury, rent to
/// `rent_payer`).
pub fn handler(ctx: Context<AcceptSettlement>, buyer_bps: u16) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let a = ctx.accounts;
    let proposal = a.order.settlement;
    require!(buyer_bps == proposal.buyer_bps, EscrowError::SettlementTermsMismatch);
    require!(now < proposal.expires_at, EscrowError::SettlementProposalExpired);
    let payouts = split(a.order.amount, buyer_bps, a.order.fee_bps)?;
    Vault { order: &a.order, vault: &mut a.vault, mint: &a.mint, token_program: &a.token_program }.settle(
        &[
            (a.buyer_token_account.to_account_info(), payouts.buyer),
            (a.seller_token_account.to_account_info(), payouts.seller),
            (a.treasury_token_account.to_account_info(), payouts.fee),
        ],
        &a.treasury_token_account.to_account_info(),
        &a.rent_payer.to_account_info(),
    )?;
    crate::emit_event!(SettlementAccepted {
        order: a.order.key(),
        order_id: a.order.order_id,
        by: a.authority.key(),
        proposed_by: proposal.proposed_by,
        buyer_bps,
        buyer_amount: payouts.buyer,
        seller_amount: payouts.seller,
        fee: payouts.fee,
        accepted_at: now,
    });
    Ok(())
}
