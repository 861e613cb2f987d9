use crate::constants::{CONFIG_SEED, DELIVERY_WINDOW_LIMIT, MAX_ALLOWED_MINTS, MAX_FEE_BPS, REVIEW_WINDOW_LIMIT};
use crate::errors::EscrowError;
use crate::events::ConfigInitialized;
use crate::state::{Config, CONFIG_VERSION};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::bpf_loader_upgradeable;

/// Terms of a fresh config. Windows are in seconds, `fee_bps` in basis points (<= MAX_FEE_BPS).
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq)]
pub struct ConfigArgs {
    pub platform_authority: Pubkey,
    pub arbiter: Pubkey,
    pub treasury: Pubkey,
    pub fee_bps: u16,
    pub default_review_window: i64,
    pub max_review_window: i64,
    pub max_delivery_window: i64,
    pub allowed_mints: Vec<Pubkey>,
}

#[derive(Accounts)]
pub struct InitializeConfig<'info> {
    /// The program's upgrade authority; pays for the config and becomes its admin.
    #[account(mut)]
    pub admin: Signer<'info>,
    #[account(init, payer = admin, space = Config::LEN, seeds = [CONFIG_SEED], bump)]
    pub config: Account<'info, Config>,
    /// The program's ProgramData account (BPF upgradeable loader). Its address is derived rather
    /// than read from the program account (`program.programdata_address()`): on chain the two are
    /// the same PDA (`[program id]` under the loader), and it also works where the program runs
    /// natively as a builtin (tests, localnet), whose genesis then carries this account.
    #[account(
        seeds = [crate::ID.as_ref()],
        bump,
        seeds::program = bpf_loader_upgradeable::ID,
        constraint = program_data.upgrade_authority_address == Some(admin.key()) @ EscrowError::NotUpgradeAuthority,
    )]
    pub program_data: Account<'info, ProgramData>,
    pub system_program: Program<'info, System>,
}

/// Config invariants, checked by initialize_config and after every update_config:
/// `fee_bps <= MAX_FEE_BPS`; `0 < default_review_window <= max_review_window <= REVIEW_WINDOW_LIMIT`;
/// `0 < max_delivery_window <= DELIVERY_WINDOW_LIMIT`; at most MAX_ALLOWED_MINTS mints.
pub(crate) fn validate(config: &Config) -> Result<()> {
    require!(config.fee_bps <= MAX_FEE_BPS, EscrowError::FeeTooHigh);
    require!(config.default_review_window > 0, EscrowError::ReviewWindowNotPositive);
    require!(
        config.max_review_window >= config.default_review_window && config.max_review_window <= REVIEW_WINDOW_LIMIT,
        EscrowError::MaxReviewWindowOutOfRange
    );
    require!(
        config.max_delivery_window > 0 && config.max_delivery_window <= DELIVERY_WINDOW_LIMIT,
        EscrowError::MaxDeliveryWindowOutOfRange
    );
    require!(config.allowed_mints.len() <= MAX_ALLOWED_MINTS as usize, EscrowError::TooManyAllowedMints);
    Ok(())
}

pub fn handler(ctx: Context<InitializeConfig>, args: ConfigArgs) -> Result<()> {
    let config = &mut ctx.accounts.config;
    config.set_inner(Config {
        admin: ctx.accounts.admin.key(),
        platform_authority: args.platform_authority,
        arbiter: args.arbiter,
        treasury: args.treasury,
        fee_bps: args.fee_bps,
        default_review_window: args.default_review_window,
        max_review_window: args.max_review_window,
        max_delivery_window: args.max_delivery_window,
        allowed_mints: args.allowed_mints,
        bump: ctx.bumps.config,
        version: CONFIG_VERSION,
    });
    validate(config)?;
    crate::emit_event!(ConfigInitialized {
        admin: config.admin,
        platform_authority: config.platform_authority,
        arbiter: config.arbiter,
        treasury: config.treasury,
        fee_bps: config.fee_bps,
        default_review_window: config.default_review_window,
        max_review_window: config.max_review_window,
        max_delivery_window: config.max_delivery_window,
        allowed_mints: config.allowed_mints.clone(),
    });
    Ok(())
}
