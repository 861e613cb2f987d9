use crate::constants::CONFIG_SEED;
use crate::errors::EscrowError;
use crate::events::ConfigUpdated;
use crate::instructions::initialize_config::validate;
use crate::state::Config;
use anchor_lang::prelude::*;

/// `None` keeps the current value. The result must satisfy the same invariants as a fresh config
/// (see `initialize_config::validate`); windows in seconds.
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, Default, PartialEq)]
pub struct UpdateConfigArgs {
    pub admin: Option<Pubkey>,
    pub platform_authority: Option<Pubkey>,
    pub arbiter: Option<Pubkey>,
    pub treasury: Option<Pubkey>,
    pub fee_bps: Option<u16>,
    pub default_review_window: Option<i64>,
    pub max_review_window: Option<i64>,
    pub max_delivery_window: Option<i64>,
    pub allowed_mints: Option<Vec<Pubkey>>,
}

#[derive(Accounts)]
pub struct UpdateConfig<'info> {
    pub admin: Signer<'info>,
    #[account(
        mut,
        seeds = [CONFIG_SEED],
        bump = config.bump,
        has_one = admin @ EscrowError::NotAdmin,
        constraint = config.is_current() @ EscrowError::AccountNotMigrated,
    )]
    pub config: Account<'info, Config>,
}

pub fn handler(ctx: Context<UpdateConfig>, args: UpdateConfigArgs) -> Result<()> {
    let config = &mut ctx.accounts.config;
    if let Some(admin) = args.admin {
        config.admin = admin;
    }
    if let Some(platform_authority) = args.platform_authority {
        config.platform_authority = platform_authority;
    }
    if let Some(arbiter) = args.arbiter {
        config.arbiter = arbiter;
    }
    if let Some(treasury) = args.treasury {
        config.treasury = treasury;
    }
    if let Some(fee_bps) = args.fee_bps {
        config.fee_bps = fee_bps;
    }
    if let Some(window) = args.default_review_window {
        config.default_review_window = window;
    }
    if let Some(window) = args.max_review_window {
        config.max_review_window = window;
    }
    if let Some(window) = args.max_delivery_window {
        config.max_delivery_window = window;
    }
    if let Some(mints) = args.allowed_mints {
        config.allowed_mints = mints;
    }
    validate(config)?;
    crate::emit_event!(ConfigUpdated {
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
