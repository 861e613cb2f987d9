//! A test-only program, never deployed: it calls another program by CPI with its own instruction.
//!
//! Accounts: `[target program, ...accounts of the forwarded instruction]`; data: the forwarded
//! instruction's data, verbatim. Each forwarded account keeps the signer and writable flags it has
//! in this instruction, so a transaction signed by, say, a seller can make the escrow program see
//! that seller's signature one level down (the callee sees a CPI, `stack height` 2).
//!
//! The tests use it to reach the escrow program the way any third-party program could: through a
//! CPI, with the escrow's program id loaded from an address lookup table rather than listed in the
//! transaction's static account keys. The localnet registers it natively at [`ID`] when started with
//! `--test-programs` (`BAZAAR_LOCALNET_TEST_PROGRAMS=1`), never otherwise.

use solana_program::{
    account_info::AccountInfo,
    entrypoint::ProgramResult,
    instruction::{AccountMeta, Instruction},
    program::invoke,
    program_error::ProgramError,
    pubkey::Pubkey,
};

solana_program::declare_id!("CpiCa11erTest111111111111111111111111111111");

#[cfg(not(feature = "no-entrypoint"))]
solana_program::entrypoint!(process_instruction);

/// Forward `data` and `accounts[1..]` to the program `accounts[0]` by CPI.
///
/// Errors: `NotEnoughAccountKeys` without a target; otherwise whatever the callee returns.
pub fn process_instruction(_program_id: &Pubkey, accounts: &[AccountInfo], data: &[u8]) -> ProgramResult {
    let (target, forwarded) = accounts.split_first().ok_or(ProgramError::NotEnoughAccountKeys)?;
    let metas = forwarded
        .iter()
        .map(|a| AccountMeta { pubkey: *a.key, is_signer: a.is_signer, is_writable: a.is_writable })
        .collect();
    invoke(&Instruction { program_id: *target.key, accounts: metas, data: data.to_vec() }, accounts)
}
