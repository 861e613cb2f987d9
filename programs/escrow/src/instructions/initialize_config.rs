use crate::constants::{CONFIG_SEED, MAX_ALLOWED_MINTS, MAX_FEE_BPS};
use crate::errors::EscrowError;
use crate::events::ConfigInitialized;
use crate::state::Config;
use anchor_lang::prelude::*;

#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, PartialEq)]
pub struct ConfigArgs {
    pub platform_authority: Pubkey,
    pub arbiter: Pubkey,
    pub treasury: Pubkey,
    pub fee_bps: u16,
    pub default_review_window: i64,
    pub allowed_mints: Vec<Pubkey>,
}

#[derive(Accounts)]
pub struct InitializeConfig<'info> {
    #[account(mut)]
    pub admin: Signer<'info>,
    #[account(init, payer = admin, space = 8 + Config::INIT_SPACE, seeds = [CONFIG_SEED], bump)]
    pub config: Account<'info, Config>,
    pub system_program: Program<'info, System>,
}

pub(crate) fn validate(fee_bps: u16, default_review_window: i64, allowed_mints: &[Pubkey]) -> Result<()> {
    require!(fee_bps <= MAX_FEE_BPS, EscrowError::FeeTooHigh);
    require!(default_review_window > 0, EscrowError::ReviewWindowNotPositive);
    require!(allowed_mints.len() <= MAX_ALLOWED_MINTS as usize, EscrowError::TooManyAllowedMints);
    Ok(())
}

pub fn handler(ctx: Context<InitializeConfig>, args: ConfigArgs) -> Result<()> {
    validate(args.fee_bps, args.default_review_window, &args.allowed_mints)?;
    let config = &mut ctx.accounts.config;
    config.set_inner(Config {
        admin: ctx.accounts.admin.key(),
        platform_authority: args.platform_authority,
        arbiter: args.arbiter,
        treasury: args.treasury,
        fee_bps: args.fee_bps,
        default_review_window: args.default_review_window,
        allowed_mints: args.allowed_mints,
        bump: ctx.bumps.config,
    });
    crate::emit_event!(ConfigInitialized {
        admin: config.admin,
        platform_authority: config.platform_authority,
        arbiter: config.arbiter,
        treasury: config.treasury,
        fee_bps: config.fee_bps,
        default_review_window: config.default_review_window,
        allowed_mints: config.allowed_mints.clone(),
    });
    Ok(())
}
