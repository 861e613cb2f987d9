use crate::constants::{CONFIG_SEED, MAX_MILESTONES, ORDER_SEED};
use crate::errors::EscrowError;
use crate::events::{MilestoneFunded, OrderFunded};
use crate::instructions::fund::{check_terms, deposit};
use crate::mint_guard::assert_mint_extensions_allowed;
use crate::state::{Config, Order, OrderState, SettlementProposal, ORDER_VERSION};
use anchor_lang::prelude::*;
use anchor_spl::associated_token::AssociatedToken;
use anchor_spl::token_interface::{Mint, TokenAccount, TokenInterface};

/// Co-signed terms of one milestone escrow. Units as `fund`: `amount` base units, times unix
/// seconds on the cluster clock, `review_window` seconds (0 = the config's default).
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub struct FundMilestoneArgs {
    /// The milestone's own id (the seed of its order PDA); for milestone 1 the order's id.
    pub escrow_id: [u8; 16],
    /// The order's id (= its first milestone's escrow id).
    pub parent_order_id: [u8; 16],
    /// 1..=MAX_MILESTONES.
    pub milestone_index: u8,
    pub amount: u64,
    pub delivery_deadline: i64,
    pub review_window: i64,
    /// The co-signed terms are valid until then (`now <= expires_at <= now + MAX_FUND_TERMS_LIFETIME`).
    pub expires_at: i64,
    /// Revisions the buyer may request on this milestone (`request_revision`).
    pub revisions_included: u8,
}

/// Same accounts and checks as `Fund`, plus `rent_payer`; the order PDA is
/// `["order", args.escrow_id]`. Several `fund_milestone` instructions (one per milestone) fit in one
/// transaction under one buyer and one platform signature.
///
/// Fee sponsorship: `rent_payer` pays the rent of the order account and the vault and is recorded
/// in `order.rent_payer`, so every closing instruction returns the rent to it. Unsponsored, the
/// buyer passes its own key twice (`rent_payer == buyer`); Anchor 0.32 does not reject a duplicate
/// account, and the message merges the two metas into one writable signer.
#[derive(Accounts)]
#[instruction(args: FundMilestoneArgs)]
pub struct FundMilestone<'info> {
    /// Pays the deposit (authority of `buyer_token_account`). Not writable: its lamports are not
    /// touched here, so a buyer with 0 SOL can fund when someone else is `rent_payer` and fee payer.
    pub buyer: Signer<'info>,
    /// Co-signs so the on-chain terms are the ones the service quoted.
    pub platform_authority: Signer<'info>,
    /// Pays the rent of the milestone's order account and vault and gets it back when the order
    /// closes (`order.rent_payer`). The buyer itself, or the service's fee sponsor.
    #[account(mut)]
    pub rent_payer: Signer<'info>,
    /// CHECK: only its address is recorded; it never signs here and holds nothing.
    #[account(constraint = seller.key() != buyer.key() @ EscrowError::BuyerIsSeller)]
    pub seller: UncheckedAccount<'info>,
    #[account(
        seeds = [CONFIG_SEED],
        bump = config.bump,
        has_one = platform_authority @ EscrowError::PlatformAuthorityMismatch,
        constraint = config.is_current() @ EscrowError::AccountNotMigrated,
    )]
    pub config: Box<Account<'info, Config>>,
    /// The milestone's escrow. `init`: funding the same escrow id twice fails (the account exists).
    #[account(
        init,
        payer = rent_payer,
        space = Order::LEN,
        seeds = [ORDER_SEED, args.escrow_id.as_ref()],
        bump,
    )]
    pub order: Box<Account<'info, Order>>,
    #[account(
        mint::token_program = token_program,
        constraint = config.allowed_mints.contains(&mint.key()) @ EscrowError::MintNotAllowed,
    )]
    pub mint: Box<InterfaceAccount<'info, Mint>>,
    #[account(
        mut,
        token::mint = mint,
        token::authority = buyer,
        token::token_program = token_program,
    )]
    pub buyer_token_account: Box<InterfaceAccount<'info, TokenAccount>>,
    /// Associated token account of (milestone order PDA, mint), created or accepted as in `Fund`.
    #[account(
        init_if_needed,
        payer = rent_payer,
        associated_token::mint = mint,
        associated_token::authority = order,
        associated_token::token_program = token_program,
    )]
    pub vault: Box<InterfaceAccount<'info, TokenAccount>>,
    pub token_program: Interface<'info, TokenInterface>,
    pub associated_token_program: Program<'info, AssociatedToken>,
    pub system_program: Program<'info, System>,
}

/// Checks the terms like `fund` (`fund::check_terms`) and the milestone's place in its order:
/// `1 <= milestone_index <= MAX_MILESTONES`, and `escrow_id == parent_order_id` exactly when
/// `milestone_index == 1` (`InvalidMilestone`); deposits `amount` and records the milestone escrow
/// (Funded, no revision used, no settlement pending).
pub fn handler(ctx: Context<FundMilestone>, args: FundMilestoneArgs) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    require!(
        (1..=MAX_MILESTONES).contains(&args.milestone_index)
            && (args.milestone_index == 1) == (args.escrow_id == args.parent_order_id),
        EscrowError::InvalidMilestone
    );
    let config = &ctx.accounts.config;
    let review_window =
        check_terms(config, now, args.amount, args.delivery_deadline, args.review_window, args.expires_at)?;
    assert_mint_extensions_allowed(&ctx.accounts.mint.to_account_info())?;
    let a = &ctx.accounts;
    deposit(&a.token_program, &a.buyer_token_account, &a.mint, &a.vault, &a.buyer, args.amount)?;

    let order = &mut ctx.accounts.order;
    order.set_inner(Order {
        order_id: args.escrow_id,
        buyer: ctx.accounts.buyer.key(),
        seller: ctx.accounts.seller.key(),
        mint: ctx.accounts.mint.key(),
        amount: args.amount,
        fee_bps: config.fee_bps,
        treasury: config.treasury,
        state: OrderState::Funded,
        funded_at: now,
        delivery_deadline: args.delivery_deadline,
        delivered_at: 0,
        disputed_at: 0,
        review_window,
        rent_payer: ctx.accounts.rent_payer.key(),
        bump: ctx.bumps.order,
        version: ORDER_VERSION,
        parent_order_id: args.parent_order_id,
        milestone_index: args.milestone_index,
        revisions_included: args.revisions_included,
        revisions_used: 0,
        settlement: SettlementProposal::default(),
    });
    crate::emit_event!(OrderFunded {
        order: order.key(),
        order_id: args.escrow_id,
        buyer: order.buyer,
        seller: order.seller,
        mint: order.mint,
        amount: args.amount,
        fee_bps: order.fee_bps,
        delivery_deadline: args.delivery_deadline,
        review_window,
        funded_at: now,
    });
    crate::emit_event!(MilestoneFunded {
        order: order.key(),
        order_id: args.escrow_id,
        parent_order_id: args.parent_order_id,
        milestone_index: args.milestone_index,
        revisions_included: args.revisions_included,
    });
    Ok(())
}
