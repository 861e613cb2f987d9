//! Version 0 transactions with address lookup tables, and the test-only CPI caller program
//! (`--test-programs`): what a client that parses transactions needs from getTransaction
//! (`meta.loadedAddresses`, balances and CPIs indexed over static + loaded keys) and from
//! getSignaturesForAddress (an address that appears only through a lookup table).

mod common;

use base64::Engine as _;
use common::*;
use serde_json::{json, Value};
use solana_sdk::{
    address_lookup_table::instruction::{create_lookup_table, extend_lookup_table},
    instruction::{AccountMeta, Instruction},
    message::{v0, AddressLookupTableAccount, VersionedMessage},
    native_token::LAMPORTS_PER_SOL,
    pubkey::Pubkey,
    signature::{Keypair, Signer},
    transaction::{Transaction, VersionedTransaction},
};

const CPI_CALLER: Pubkey = solana_sdk::pubkey!("CpiCa11erTest111111111111111111111111111111");
const SYSTEM: Pubkey = solana_sdk::pubkey!("11111111111111111111111111111111");

fn send_legacy(port: u16, payer: &Keypair, ixs: &[Instruction]) -> String {
    let tx = Transaction::new_signed_with_payer(ixs, Some(&payer.pubkey()), &[payer], blockhash(port));
    let sent = send(port, &tx, json!({}));
    sent["result"].as_str().unwrap_or_else(|| panic!("sendTransaction: {sent}")).to_string()
}

fn send_v0(port: u16, payer: &Keypair, ixs: &[Instruction], tables: &[AddressLookupTableAccount]) -> Value {
    let msg = v0::Message::try_compile(&payer.pubkey(), ixs, tables, blockhash(port)).unwrap();
    let tx = VersionedTransaction::try_new(VersionedMessage::V0(msg), &[payer]).unwrap();
    let wire = B64.encode(bincode::serialize(&tx).unwrap());
    call(port, "sendTransaction", json!([wire, {"encoding": "base64"}]))
}

/// A system transfer from `payer` to `to`, made by the CPI caller (stack height 2).
#[allow(deprecated)]
fn transfer_by_cpi(payer: &Pubkey, to: &Pubkey, lamports: u64) -> Instruction {
    let inner = solana_sdk::system_instruction::transfer(payer, to, lamports);
    let mut accounts = vec![AccountMeta::new_readonly(inner.program_id, false)];
    accounts.extend(inner.accounts);
    Instruction { program_id: CPI_CALLER, accounts, data: inner.data }
}

#[test]
fn v0_transaction_through_a_lookup_table_and_a_cpi_is_reported_with_its_loaded_addresses() {
    let n = start_with(&["--test-programs"]);
    let payer = Keypair::new();
    airdrop(n.port, &payer.pubkey(), 10 * LAMPORTS_PER_SOL);
    let to = Keypair::new().pubkey();

    // create a table from the node's current slot (web3.js does the same) and extend it
    let slot = result(n.port, "getSlot", json!([])).as_u64().unwrap();
    let (create, table) = create_lookup_table(payer.pubkey(), payer.pubkey(), slot);
    send_legacy(n.port, &payer, &[create]);
    let extend = extend_lookup_table(table, payer.pubkey(), Some(payer.pubkey()), vec![to, SYSTEM]);
    send_legacy(n.port, &payer, &[extend]);

    // the next transaction uses the new addresses: `to` (writable) and the system program
    // (the CPI's callee, an account of the CPI caller's instruction) come from the table
    let alt = AddressLookupTableAccount { key: table, addresses: vec![to, SYSTEM] };
    let sent = send_v0(n.port, &payer, &[transfer_by_cpi(&payer.pubkey(), &to, 1_234_567)], &[alt]);
    let sig = sent["result"].as_str().unwrap_or_else(|| panic!("sendTransaction v0: {sent}")).to_string();
    assert_eq!(balance(n.port, &to), 1_234_567);

    let got = result(n.port, "getTransaction", json!([sig, {"encoding": "json", "maxSupportedTransactionVersion": 0}]));
    assert_eq!(got["version"], json!(0));
    assert_eq!(got["meta"]["err"], Value::Null, "{got}");
    assert_eq!(got["meta"]["loadedAddresses"], json!({"writable": [to.to_string()], "readonly": [SYSTEM.to_string()]}));
    // json: accountKeys are the static keys (payer, CPI caller); indexes 2 and 3 are the loaded ones
    let statics = got["transaction"]["message"]["accountKeys"].as_array().unwrap().clone();
    assert_eq!(statics, vec![json!(payer.pubkey().to_string()), json!(CPI_CALLER.to_string())]);
    assert_eq!(got["transaction"]["message"]["addressTableLookups"][0]["accountKey"], json!(table.to_string()));
    assert_eq!(got["meta"]["postBalances"].as_array().unwrap().len(), 4);
    assert_eq!(got["meta"]["preBalances"][2], json!(0));
    assert_eq!(got["meta"]["postBalances"][2], json!(1_234_567));
    // the CPI: the system program (loaded, index 3) moved the lamports to `to` (loaded, index 2)
    let inner = &got["meta"]["innerInstructions"][0];
    assert_eq!(inner["index"], json!(0));
    assert_eq!(inner["instructions"][0]["programIdIndex"], json!(3), "{inner}");
    assert_eq!(inner["instructions"][0]["accounts"], json!([0, 2]));
    assert_eq!(inner["instructions"][0]["stackHeight"], json!(2));
    // the caller's own invoke and its callee's, balanced (what log parsers keep a stack of)
    let logs: Vec<String> = got["meta"]["logMessages"].as_array().unwrap().iter().map(|l| l.as_str().unwrap().to_string()).collect();
    assert_eq!(logs.iter().filter(|l| l.ends_with(" invoke [1]")).count(), 1, "{logs:?}");
    assert_eq!(logs.iter().filter(|l| **l == format!("Program {SYSTEM} invoke [2]")).count(), 1, "{logs:?}");
    assert_eq!(logs.iter().filter(|l| l.ends_with(" success")).count(), 2, "{logs:?}");

    // jsonParsed: every key, the loaded ones marked as such; inner instructions by address
    let parsed = result(n.port, "getTransaction", json!([sig, {"encoding": "jsonParsed", "maxSupportedTransactionVersion": 0}]));
    let keys = parsed["transaction"]["message"]["accountKeys"].as_array().unwrap().clone();
    assert_eq!(keys.len(), 4);
    assert_eq!(keys[2], json!({"pubkey": to.to_string(), "signer": false, "writable": true, "source": "lookupTable"}));
    assert_eq!(keys[3], json!({"pubkey": SYSTEM.to_string(), "signer": false, "writable": false, "source": "lookupTable"}));
    assert_eq!(parsed["meta"]["innerInstructions"][0]["instructions"][0]["programId"], json!(SYSTEM.to_string()));

    // history: an address that is only in the lookup table finds the transaction
    let sigs = result(n.port, "getSignaturesForAddress", json!([to.to_string()]));
    assert_eq!(sigs.as_array().unwrap().len(), 1);
    assert_eq!(sigs[0]["signature"], json!(sig));

    // an index past the table's end: refused, nothing recorded
    let bad = AddressLookupTableAccount { key: table, addresses: vec![to, SYSTEM, Keypair::new().pubkey()] };
    let third = bad.addresses[2];
    let refused = send_v0(n.port, &payer, &[transfer_by_cpi(&payer.pubkey(), &third, 1)], &[bad]);
    assert!(refused.get("error").is_some(), "{refused}");
    assert_eq!(balance(n.port, &third), 0);
}

#[test]
fn test_programs_are_loaded_only_when_asked() {
    let plain = start();
    let info = result(plain.port, "getAccountInfo", json!([CPI_CALLER.to_string(), {"encoding": "base64"}]));
    assert_eq!(info["value"], Value::Null);
    let with = start_with(&["--test-programs"]);
    let info = result(with.port, "getAccountInfo", json!([CPI_CALLER.to_string(), {"encoding": "base64"}]));
    assert_eq!(info["value"]["executable"], json!(true));
}
