//! Token-2022 mints may carry extensions that let a third party drain, freeze or tax a PDA
//! vault (permanent delegate, transfer hook, default-frozen accounts, transfer fees, pausing,
//! non-transferability, confidential balances). Only extensions that cannot touch the vault's
//! balance are accepted; anything else, including extensions added in future releases, is refused.

use crate::errors::EscrowError;
use anchor_lang::prelude::*;
use anchor_spl::token_2022::spl_token_2022::{
    self,
    extension::{BaseStateWithExtensions, ExtensionType, StateWithExtensions},
    state::Mint as MintState,
};

/// Mint extensions that are harmless for an escrow vault (metadata and display only).
pub const ALLOWED_MINT_EXTENSIONS: [ExtensionType; 9] = [
    ExtensionType::MetadataPointer,
    ExtensionType::TokenMetadata,
    ExtensionType::MintCloseAuthority,
    ExtensionType::InterestBearingConfig,
    ExtensionType::ScaledUiAmount,
    ExtensionType::GroupPointer,
    ExtensionType::TokenGroup,
    ExtensionType::GroupMemberPointer,
    ExtensionType::TokenGroupMember,
];

pub fn assert_mint_extensions_allowed(mint: &AccountInfo) -> Result<()> {
    if *mint.owner != spl_token_2022::ID {
        return Ok(()); // legacy SPL Token mints have no extensions
    }
    let data = mint.try_borrow_data()?;
    let state = StateWithExtensions::<MintState>::unpack(&data)?;
    for extension in state.get_extension_types()? {
        if !ALLOWED_MINT_EXTENSIONS.contains(&extension) {
            msg!("mint extension not allowed: {:?}", extension);
            return err!(EscrowError::MintExtensionNotAllowed);
        }
    }
    Ok(())
}
