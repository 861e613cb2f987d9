//! The localnet's own methods for development and tests (no validator has them): read the clock,
//! move it forward, write an account.

use base64::Engine as _;
use serde_json::{json, Value};
use solana_sdk::account::AccountSharedData;

use crate::chain::{is_builtin_owned, wall_now, Chain, Note, B64, MAX_ADVANCE_SECONDS, MAX_WARP_SLOTS, MS_PER_SLOT};
use crate::ledger::StoredAccount;
use crate::rpc::{cfg_bool, cfg_str, parse_pubkey, Params, RpcError, RpcResult};

/// `localnet_getClock` -> `{slot, unix_timestamp}` (the on-chain `Clock`).
pub async fn get_clock(c: &mut Chain, _: Params<'_>) -> RpcResult {
    let clock = c.clock.clone();
    Ok(json!({"slot": clock.slot, "unix_timestamp": clock.unix_timestamp}))
}

/// `localnet_advanceClock [seconds]` -> the new clock: unix time moves by exactly `seconds`, slot and
/// block height by `seconds / 0.4` (1 ..= `MAX_WARP_SLOTS`).
pub async fn advance_clock(c: &mut Chain, p: Params<'_>) -> RpcResult {
    let seconds = p.get(0).and_then(Value::as_i64).filter(|s| (0..=MAX_ADVANCE_SECONDS).contains(s)).ok_or_else(|| {
        RpcError::invalid_params(format!(
            "Invalid params: expected [seconds] (integer, 0..={MAX_ADVANCE_SECONDS})"
        ))
    })?;
    // The blocks of the warped slots are produced as wall time would have (a warp past a
    // blockhash's lifetime expires it), then unix time moves by exactly `seconds`.
    let before = c.clock.clone();
    let slots = ((seconds as u64).saturating_mul(1000) / MS_PER_SLOT).clamp(1, MAX_WARP_SLOTS);
    c.clock_offset += seconds;
    c.advance_blocks(slots).await?;
    let unix_timestamp = before.unix_timestamp.saturating_add(seconds).max(wall_now().saturating_add(c.clock_offset));
    c.set_clock(before.slot + slots, unix_timestamp);
    c.log(Ok(vec![]), None).await;
    Ok(json!({"slot": c.clock.slot, "unix_timestamp": c.clock.unix_timestamp}))
}

/// `localnet_setAccount [pubkey, {lamports, data (base64), owner, executable}]` -> null; persisted and
/// notified like a transaction's write.
pub async fn set_account(c: &mut Chain, p: Params<'_>) -> RpcResult {
    // Dev helper: [pubkey, {lamports, data(base64), owner, executable}]
    let key = p.pubkey(0)?;
    let cfg = p.config(1)?;
    let data = B64
        .decode(cfg_str(&cfg, "data").unwrap_or(""))
        .map_err(|e| RpcError::invalid_params(format!("Invalid params: bad base64: {e}")))?;
    let owner = parse_pubkey(cfg_str(&cfg, "owner").unwrap_or("11111111111111111111111111111111"))?;
    let lamports = cfg.get("lamports").and_then(Value::as_u64).unwrap_or(0);
    let mut acc = AccountSharedData::new(lamports, data.len(), &owner);
    solana_sdk::account::WritableAccount::data_as_mut_slice(&mut acc).copy_from_slice(&data);
    solana_sdk::account::WritableAccount::set_executable(&mut acc, cfg_bool(&cfg, "executable"));
    c.ctx.set_account(&key, &acc);
    c.state_changed();
    c.known.insert(key);
    let stored = c.account(&key).await?;
    let persisted = stored.as_ref().is_none_or(|a| !(is_builtin_owned(&a.owner) || a.executable));
    let accounts = if persisted { vec![StoredAccount::new(&key, stored.as_ref())] } else { vec![] };
    c.log(Ok(accounts), None).await;
    let notes = c.account_notes(vec![(key, stored)]).await;
    let _ = c.notify.notes.send(Note::Accounts { slot: c.clock.slot, accounts: std::sync::Arc::new(notes) });
    Ok(Value::Null)
}
