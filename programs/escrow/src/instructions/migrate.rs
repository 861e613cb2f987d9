//! Rewrites accounts written by an earlier version of the program into the current layout, after
//! an in-place upgrade (see `state/config.rs` for the layout rule and `state/legacy.rs` for the old
//! layouts). Only the program's upgrade authority may, the same check as `initialize_config`; it
//! pays the rent of the bytes added. Every other instruction refuses an account that is not current
//! (`AccountNotMigrated`), so nothing can act on a misread layout meanwhile.

use crate::constants::{CONFIG_SEED, ORDER_SEED};
use crate::errors::EscrowError;
use crate::events::AccountMigrated;
use crate::instructions::initialize_config::validate;
use crate::state::legacy::{
    ConfigUnversionedWindows, ConfigV0, OrderV0, OrderV1, CONFIG_UNVERSIONED_WINDOWS_LEN, CONFIG_V0_LEN, ORDER_V0_LEN,
    ORDER_V1_LEN,
};
use crate::state::{Config, Order, SettlementProposal, CONFIG_VERSION, ORDER_VERSION};
use anchor_lang::prelude::*;
use anchor_lang::solana_program::bpf_loader_upgradeable;
use anchor_lang::system_program;
use anchor_lang::Discriminator;

/// Values of config fields that the old layout may lack, in seconds. `None` keeps the value the
/// old account holds; a version-0 config holds neither window, so both are required for it
/// (`MigrationValueMissing`). The result must satisfy the config invariants (`validate`).
#[derive(AnchorSerialize, AnchorDeserialize, Clone, Debug, Default, PartialEq)]
pub struct MigrateConfigArgs {
    pub max_review_window: Option<i64>,
    pub max_delivery_window: Option<i64>,
}

#[derive(Accounts)]
pub struct MigrateConfig<'info> {
    /// The program's upgrade authority; pays the rent of the added bytes.
    #[account(mut)]
    pub authority: Signer<'info>,
    /// The config PDA in whatever layout an earlier version left it.
    /// CHECK: address by seeds, owner pinned to this program; discriminator and layout (by size) checked in the handler.
    #[account(mut, seeds = [CONFIG_SEED], bump, owner = crate::ID)]
    pub config: UncheckedAccount<'info>,
    /// The program's ProgramData account, naming `authority` as upgrade authority (see initialize_config).
    #[account(
        seeds = [crate::ID.as_ref()],
        bump,
        seeds::program = bpf_loader_upgradeable::ID,
        constraint = program_data.upgrade_authority_address == Some(authority.key()) @ EscrowError::NotUpgradeAuthority,
    )]
    pub program_data: Account<'info, ProgramData>,
    pub system_program: Program<'info, System>,
}

#[derive(Accounts)]
pub struct MigrateOrder<'info> {
    /// The program's upgrade authority; pays the rent of the added bytes (returned to the order's
    /// `rent_payer` with the rest when the order closes).
    #[account(mut)]
    pub authority: Signer<'info>,
    /// An open order in whatever layout an earlier version left it.
    /// CHECK: owner pinned to this program; discriminator, layout (by size) and the PDA address
    /// (`["order", order_id]` with the stored bump) checked in the handler.
    #[account(mut, owner = crate::ID)]
    pub order: UncheckedAccount<'info>,
    #[account(
        seeds = [crate::ID.as_ref()],
        bump,
        seeds::program = bpf_loader_upgradeable::ID,
        constraint = program_data.upgrade_authority_address == Some(authority.key()) @ EscrowError::NotUpgradeAuthority,
    )]
    pub program_data: Account<'info, ProgramData>,
    pub system_program: Program<'info, System>,
}

fn old_body<'a>(data: &'a [u8], discriminator: &[u8]) -> Result<&'a [u8]> {
    require!(data.len() >= 8 && &data[..8] == discriminator, EscrowError::UnknownAccountLayout);
    Ok(&data[8..])
}

fn decode<T: AnchorDeserialize>(mut body: &[u8]) -> Result<T> {
    T::deserialize(&mut body).map_err(|_| error!(EscrowError::UnknownAccountLayout))
}

/// Tops the account up to rent exemption at `len` bytes (from `payer`), resizes it and writes
/// `value` (discriminator + Borsh, zero padded).
fn rewrite<'info, T: AccountSerialize>(
    account: &AccountInfo<'info>,
    payer: &Signer<'info>,
    system: &Program<'info, System>,
    value: &T,
    len: usize,
) -> Result<()> {
    let short = Rent::get()?.minimum_balance(len).saturating_sub(account.lamports());
    if short > 0 {
        system_program::transfer(
            CpiContext::new(
                system.to_account_info(),
                system_program::Transfer { from: payer.to_account_info(), to: account.clone() },
            ),
            short,
        )?;
    }
    account.resize(len)?;
    let mut data = account.try_borrow_mut_data()?;
    data.fill(0);
    let mut out: &mut [u8] = &mut data[..];
    value.try_serialize(&mut out)
}

/// Rewrites the config into the current layout (`CONFIG_VERSION`), from the first release's layout
/// (407 bytes) or the unreleased one with the windows in the middle (423 bytes). Refuses a current
/// config (`AccountAlreadyCurrent`) and anything else (`UnknownAccountLayout`).
pub fn config_handler(ctx: Context<MigrateConfig>, args: MigrateConfigArgs) -> Result<()> {
    let info = ctx.accounts.config.to_account_info();
    let config = {
        let data = info.try_borrow_data()?;
        let body = old_body(&data, Config::DISCRIMINATOR)?;
        match data.len() {
            CONFIG_V0_LEN => {
                let old: ConfigV0 = decode(body)?;
                Config {
                    admin: old.admin,
                    platform_authority: old.platform_authority,
                    arbiter: old.arbiter,
                    treasury: old.treasury,
                    fee_bps: old.fee_bps,
                    default_review_window: old.default_review_window,
                    allowed_mints: old.allowed_mints,
                    bump: old.bump,
                    version: CONFIG_VERSION,
                    max_review_window: args.max_review_window.ok_or(EscrowError::MigrationValueMissing)?,
                    max_delivery_window: args.max_delivery_window.ok_or(EscrowError::MigrationValueMissing)?,
                }
            }
            CONFIG_UNVERSIONED_WINDOWS_LEN => {
                let old: ConfigUnversionedWindows = decode(body)?;
                Config {
                    admin: old.admin,
                    platform_authority: old.platform_authority,
                    arbiter: old.arbiter,
                    treasury: old.treasury,
                    fee_bps: old.fee_bps,
                    default_review_window: old.default_review_window,
                    allowed_mints: old.allowed_mints,
                    bump: old.bump,
                    version: CONFIG_VERSION,
                    max_review_window: args.max_review_window.unwrap_or(old.max_review_window),
                    max_delivery_window: args.max_delivery_window.unwrap_or(old.max_delivery_window),
                }
            }
            Config::LEN => {
                let current: Config = decode(body)?;
                require!(current.version != CONFIG_VERSION, EscrowError::AccountAlreadyCurrent);
                return err!(EscrowError::UnknownAccountLayout);
            }
            _ => return err!(EscrowError::UnknownAccountLayout),
        }
    };
    require!(config.bump == ctx.bumps.config, EscrowError::UnknownAccountLayout);
    validate(&config)?;
    rewrite(&info, &ctx.accounts.authority, &ctx.accounts.system_program, &config, Config::LEN)?;
    crate::emit_event!(AccountMigrated {
        account: info.key(),
        by: ctx.accounts.authority.key(),
        from_version: 0,
        to_version: CONFIG_VERSION,
    });
    Ok(())
}

/// The current order holding every field of a version-0 order: a one-milestone order (milestone 1
/// of its own id, no revisions included, none used, no settlement proposal pending), which is what
/// every order funded before version 2 is.
fn order_from_v0(old: OrderV0) -> Order {
    Order {
        order_id: old.order_id,
        buyer: old.buyer,
        seller: old.seller,
        mint: old.mint,
        amount: old.amount,
        fee_bps: old.fee_bps,
        treasury: old.treasury,
        state: old.state,
        funded_at: old.funded_at,
        delivery_deadline: old.delivery_deadline,
        delivered_at: old.delivered_at,
        disputed_at: old.disputed_at,
        review_window: old.review_window,
        rent_payer: old.rent_payer,
        bump: old.bump,
        version: ORDER_VERSION,
        parent_order_id: old.order_id,
        milestone_index: 1,
        revisions_included: 0,
        revisions_used: 0,
        settlement: SettlementProposal::default(),
    }
}

/// Rewrites an open order into the current layout (`ORDER_VERSION`) from the first release's
/// layout (236 bytes) or version 1 (237 bytes, version byte 1); every field keeps its value and the
/// fields of version 2 describe a one-milestone order (`order_from_v0`). Refuses a current order
/// (`AccountAlreadyCurrent`), another account of the program or a 237-byte account whose version
/// byte is not 1 (`UnknownAccountLayout`), and an account that is not the order PDA of its own
/// `order_id` (`ConstraintSeeds`). The upgrade authority pays the rent of the added bytes.
pub fn order_handler(ctx: Context<MigrateOrder>) -> Result<()> {
    let info = ctx.accounts.order.to_account_info();
    let (order, from_version) = {
        let data = info.try_borrow_data()?;
        let body = old_body(&data, Order::DISCRIMINATOR)?;
        match data.len() {
            ORDER_V0_LEN => (order_from_v0(decode::<OrderV0>(body)?), 0),
            ORDER_V1_LEN => {
                let old: OrderV1 = decode(body)?;
                require!(old.version == 1, EscrowError::UnknownAccountLayout);
                (order_from_v0(old.v0), 1)
            }
            Order::LEN => {
                let current: Order = decode(body)?;
                require!(current.version != ORDER_VERSION, EscrowError::AccountAlreadyCurrent);
                return err!(EscrowError::UnknownAccountLayout);
            }
            _ => return err!(EscrowError::UnknownAccountLayout),
        }
    };
    let pda = Pubkey::create_program_address(&[ORDER_SEED, order.order_id.as_ref(), &[order.bump]], &crate::ID)
        .map_err(|_| error!(anchor_lang::error::ErrorCode::ConstraintSeeds))?;
    require_keys_eq!(pda, info.key(), anchor_lang::error::ErrorCode::ConstraintSeeds);
    rewrite(&info, &ctx.accounts.authority, &ctx.accounts.system_program, &order, Order::LEN)?;
    crate::emit_event!(AccountMigrated {
        account: info.key(),
        by: ctx.accounts.authority.key(),
        from_version,
        to_version: ORDER_VERSION,
    });
    Ok(())
}
