//! agave `AccountsData` (accounts by key, token account balance, token supply) and `AccountsScan`
//! (program accounts, token accounts by owner / delegate: scans over the accounts the node knows).

use serde_json::{json, Value};

use crate::chain::{matches_filters, Chain};
use crate::rpc::{cfg_bool, cfg_str, parse_pubkey, Params, RpcError, RpcResult};
use crate::tokens;

/// `getAccountInfo`.
pub async fn get_account_info(c: &mut Chain, p: Params<'_>) -> RpcResult {
    let key = p.pubkey(0)?;
    let cfg = p.config(1)?;
    let value = match c.account(&key).await? {
        Some(acc) => c.account_json(&acc, &cfg).await?,
        None => Value::Null,
    };
    c.ctx_json(value).await
}

/// `getMultipleAccounts`.
pub async fn get_multiple_accounts(c: &mut Chain, p: Params<'_>) -> RpcResult {
    let keys = p
        .get(0)
        .and_then(Value::as_array)
        .ok_or_else(|| RpcError::invalid_params("Invalid params: expected an array of public keys"))?;
    if keys.len() > 100 {
        return Err(RpcError::invalid_params("Too many inputs provided; max 100"));
    }
    let cfg = p.config(1)?;
    let mut out = vec![];
    for k in keys {
        let key = parse_pubkey(k.as_str().unwrap_or(""))?;
        out.push(match c.account(&key).await? {
            Some(acc) => c.account_json(&acc, &cfg).await?,
            None => Value::Null,
        });
    }
    c.ctx_json(json!(out)).await
}

/// `getTokenAccountBalance`.
pub async fn get_token_account_balance(c: &mut Chain, p: Params<'_>) -> RpcResult {
    let key = p.pubkey(0)?;
    let acc = c
        .account(&key)
        .await?
        .ok_or_else(|| RpcError::invalid_params("Invalid param: could not find account"))?;
    let ta = tokens::parse_token_account(&acc.owner, &acc.data)
        .ok_or_else(|| RpcError::invalid_params("Invalid param: not a Token account"))?;
    let dec = c
        .mint_decimals(&ta.mint)
        .await
        .ok_or_else(|| RpcError::invalid_params("Invalid param: could not find mint"))?;
    c.ctx_json(tokens::token_amount_json(ta.amount, dec)).await
}

/// `getTokenSupply`.
pub async fn get_token_supply(c: &mut Chain, p: Params<'_>) -> RpcResult {
    let key = p.pubkey(0)?;
    let acc = c
        .account(&key)
        .await?
        .ok_or_else(|| RpcError::invalid_params("Invalid param: could not find account"))?;
    let m = tokens::parse_mint(&acc.owner, &acc.data)
        .ok_or_else(|| RpcError::invalid_params("Invalid param: not a Token mint"))?;
    c.ctx_json(tokens::token_amount_json(m.supply, m.decimals)).await
}

/// `getProgramAccounts`.
pub async fn get_program_accounts(c: &mut Chain, p: Params<'_>) -> RpcResult {
    let program = p.pubkey(0)?;
    let cfg = p.config(1)?;
    let filters = cfg.get("filters").and_then(Value::as_array).cloned().unwrap_or_default();
    let mut out = vec![];
    for key in c.known.clone() {
        let Some(acc) = c.account(&key).await? else { continue };
        if acc.owner != program || !matches_filters(&acc.data, &filters)? {
            continue;
        }
        out.push(json!({"pubkey": key.to_string(), "account": c.account_json(&acc, &cfg).await?}));
    }
    if cfg_bool(&cfg, "withContext") {
        c.ctx_json(json!(out)).await
    } else {
        Ok(json!(out))
    }
}

/// `getTokenAccountsByOwner`.
pub async fn get_token_accounts_by_owner(c: &mut Chain, p: Params<'_>) -> RpcResult {
    token_accounts(c, p, false).await
}

/// `getTokenAccountsByDelegate`.
pub async fn get_token_accounts_by_delegate(c: &mut Chain, p: Params<'_>) -> RpcResult {
    token_accounts(c, p, true).await
}

/// Token accounts (known to the node) whose owner, or delegate when `by_delegate`, is `params[0]`,
/// filtered by `{mint}` or `{programId}` (`params[1]`), encoded per `params[2]`.
async fn token_accounts(c: &mut Chain, p: Params<'_>, by_delegate: bool) -> RpcResult {
    let owner = p.pubkey(0)?;
    let filter = p.config(1)?;
    let cfg = p.config(2)?;
    let (mint, program) = if let Some(m) = cfg_str(&filter, "mint") {
        (Some(parse_pubkey(m)?), None)
    } else if let Some(pid) = cfg_str(&filter, "programId") {
        let pid = parse_pubkey(pid)?;
        if !tokens::is_token_program(&pid) {
            return Err(RpcError::invalid_params("Invalid param: unrecognized Token program id"));
        }
        (None, Some(pid))
    } else {
        return Err(RpcError::invalid_params("Invalid params: expected {mint} or {programId} filter"));
    };
    let mut out = vec![];
    for key in c.known.clone() {
        let Some(acc) = c.account(&key).await? else { continue };
        let Some(ta) = tokens::parse_token_account(&acc.owner, &acc.data) else { continue };
        let who = if by_delegate { ta.delegate } else { Some(ta.owner) };
        if who != Some(owner) || mint.is_some_and(|m| m != ta.mint) || program.is_some_and(|pr| pr != acc.owner) {
            continue;
        }
        out.push(json!({"pubkey": key.to_string(), "account": c.account_json(&acc, &cfg).await?}));
    }
    c.ctx_json(json!(out)).await
}
