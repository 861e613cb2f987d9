use crate::constants::{CONFIG_SEED, MAX_FUND_TERMS_LIFETIME, ORDER_SEED};
use crate::errors::EscrowError;
use crate::events::OrderFunded;
use crate::mint_guard::assert_mint_extensions_allowed;
use crate::state::{Config, Order, OrderState, SettlementProposal, ORDER_VERSION};
use anchor_lang::prelude::*;
use anchor_spl::associated_token::AssociatedToken;
use anchor_spl::token_interface::{transfer_checked, Mint, TokenAccount, TokenInterface, TransferChecked};

#[derive(Accounts)]
#[instruction(order_id: [u8; 16])]
pub struct Fund<'info> {
    /// Pays the deposit and the rent of the order and the vault (refunded on close).
    #[account(mut)]
    pub buyer: Signer<'info>,
    /// Co-signs so the on-chain terms are the ones the service quoted.
    pub platform_authority: Signer<'info>,
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
    #[account(
        init,
        payer = buyer,
        space = Order::LEN,
        seeds = [ORDER_SEED, order_id.as_ref()],
        bump,
    )]
    pub order: Box<Account<'info, Order>>,
    /// `mint::token_program` states the invariant where the mint is declared; it never fires
    /// first: Anchor creates `init` accounts before checking the others, and the vault's creation
    /// already fails (IncorrectProgramId) when `token_program` does not own the mint.
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
    /// Associated token account of (order PDA, mint): one vault authority per order. Created if
    /// missing, accepted if it already exists (the idempotent ATA create): anyone can create the
    /// ATA of an order PDA before it is funded, and plain `init` let that block the funding. An
    /// existing account must be the associated token account of (order PDA, mint, token program)
    /// (address, mint, owner and token program checked by Anchor: ConstraintTokenMint /
    /// ConstraintTokenOwner / ConstraintAssociatedTokenTokenProgram / AccountNotAssociatedTokenAccount).
    /// Only the order PDA can move tokens out of it or close it; tokens someone put there first
    /// are surplus, swept at settlement (`vault.rs`).
    #[account(
        init_if_needed,
        payer = buyer,
        associated_token::mint = mint,
        associated_token::authority = order,
        associated_token::token_program = token_program,
    )]
    pub vault: Box<InterfaceAccount<'info, TokenAccount>>,
    /// SPL Token or Token-2022, whichever owns the mint.
    pub token_program: Interface<'info, TokenInterface>,
    pub associated_token_program: Program<'info, AssociatedToken>,
    pub system_program: Program<'info, System>,
}

/// Checks co-signed fund terms against the clock and the config and returns the effective review
/// window (seconds). Shared by `fund` and `fund_milestone`.
///
/// Times are unix seconds on the cluster clock, windows seconds:
/// - `now <= expires_at <= now + MAX_FUND_TERMS_LIFETIME` (FundTermsExpired / FundTermsLifetimeTooLong):
///   a co-signed fund transaction cannot be replayed after its terms expire, whatever its blockhash
///   or nonce, so an order id the service has given up on cannot be funded again later;
/// - `amount > 0` (AmountIsZero);
/// - `now < delivery_deadline <= now + config.max_delivery_window` (DeliveryDeadlineInPast / DeliveryDeadlineTooFar);
/// - `0 <= review_window`, 0 meaning `config.default_review_window`, and the effective window
///   `<= config.max_review_window` (ReviewWindowNegative / ReviewWindowTooLong).
pub(crate) fn check_terms(
    config: &Config,
    now: i64,
    amount: u64,
    delivery_deadline: i64,
    review_window: i64,
    expires_at: i64,
) -> Result<i64> {
    require!(now <= expires_at, EscrowError::FundTermsExpired);
    require!(expires_at.saturating_sub(now) <= MAX_FUND_TERMS_LIFETIME, EscrowError::FundTermsLifetimeTooLong);
    require!(amount > 0, EscrowError::AmountIsZero);
    require!(delivery_deadline > now, EscrowError::DeliveryDeadlineInPast);
    require!(
        delivery_deadline.saturating_sub(now) <= config.max_delivery_window,
        EscrowError::DeliveryDeadlineTooFar
    );
    require!(review_window >= 0, EscrowError::ReviewWindowNegative);
    let review_window = if review_window == 0 { config.default_review_window } else { review_window };
    require!(review_window <= config.max_review_window, EscrowError::ReviewWindowTooLong);
    Ok(review_window)
}

/// Moves `amount` base units from the buyer's token account into the vault (the buyer signs).
pub(crate) fn deposit<'info>(
    token_program: &Interface<'info, TokenInterface>,
    from: &InterfaceAccount<'info, TokenAccount>,
    mint: &InterfaceAccount<'info, Mint>,
    to: &InterfaceAccount<'info, TokenAccount>,
    buyer: &Signer<'info>,
    amount: u64,
) -> Result<()> {
    transfer_checked(
        CpiContext::new(
            token_program.to_account_info(),
            TransferChecked {
                from: from.to_account_info(),
                mint: mint.to_account_info(),
                to: to.to_account_info(),
                authority: buyer.to_account_info(),
            },
        ),
        amount,
        mint.decimals,
    )
}

/// Checks the co-signed terms (`check_terms`), moves `amount` base units from the buyer's token
/// account into the vault and records the order: milestone 1 of a one-milestone order (its own id
/// as parent), no revisions included.
pub fn handler(
    ctx: Context<Fund>,
    order_id: [u8; 16],
    amount: u64,
    delivery_deadline: i64,
    review_window: i64,
    expires_at: i64,
) -> Result<()> {
    let now = Clock::get()?.unix_timestamp;
    let config = &ctx.accounts.config;
    let review_window = check_terms(config, now, amount, delivery_deadline, review_window, expires_at)?;
    assert_mint_extensions_allowed(&ctx.accounts.mint.to_account_info())?;
    let a = &ctx.accounts;
    deposit(&a.token_program, &a.buyer_token_account, &a.mint, &a.vault, &a.buyer, amount)?;

    let order = &mut ctx.accounts.order;
    order.set_inner(Order {
        order_id,
        buyer: ctx.accounts.buyer.key(),
        seller: ctx.accounts.seller.key(),
        mint: ctx.accounts.mint.key(),
        amount,
        fee_bps: config.fee_bps,
        treasury: config.treasury,
        state: OrderState::Funded,
        funded_at: now,
        delivery_deadline,
        delivered_at: 0,
        disputed_at: 0,
        review_window,
        rent_payer: ctx.accounts.buyer.key(),
        bump: ctx.bumps.order,
        version: ORDER_VERSION,
        parent_order_id: order_id,
        milestone_index: 1,
        revisions_included: 0,
        revisions_used: 0,
        settlement: SettlementProposal::default(),
    });
    crate::emit_event!(OrderFunded {
        order: order.key(),
        order_id,
        buyer: order.buyer,
        seller: order.seller,
        mint: order.mint,
        amount,
        fee_bps: order.fee_bps,
        delivery_deadline,
        review_window,
        funded_at: now,
    });
    Ok(())
}
