//! agave `Full`, the transaction methods: sendTransaction, simulateTransaction, requestAirdrop,
//! getSignatureStatuses, getSignaturesForAddress, getTransaction (and the transaction's RPC forms).

use base64::Engine as _;
use serde_json::{json, Map, Value};
use solana_sdk::{
    message::VersionedMessage,
    signature::Signer,
    transaction::{Transaction, TransactionError, VersionedTransaction},
};

use crate::chain::{bc, fix_logs, inner_json, is_writable, status_json, tx_err_json, Chain, B64, MEMO_PROGRAM_ID};
use crate::record::TxRecord;
use crate::rpc::*;

/// `getSignatureStatuses`.
pub async fn get_signature_statuses(c: &mut Chain, p: Params<'_>) -> RpcResult {
    let sigs = p
        .get(0)
        .and_then(Value::as_array)
        .ok_or_else(|| RpcError::invalid_params("Invalid params: expected an array of signatures"))?;
    if sigs.len() > 256 {
        return Err(RpcError::invalid_params("Too many inputs provided; max 256"));
    }
    let mut out = vec![];
    for s in sigs {
        let sig = parse_signature(s.as_str().unwrap_or(""))?;
        out.push(match c.txs.get(&sig) {
            Some(r) => json!({
                "slot": r.slot,
                "confirmations": null,
                "err": tx_err_json(&r.err),
                "status": status_json(&r.err),
                "confirmationStatus": "finalized",
            }),
            None => Value::Null,
        });
    }
    c.ctx_json(json!(out)).await
}

/// `getSignaturesForAddress`.
pub async fn get_signatures_for_address(c: &mut Chain, p: Params<'_>) -> RpcResult {
    let key = p.pubkey(0)?;
    let cfg = p.config(1)?;
    let limit = cfg.get("limit").and_then(Value::as_u64).unwrap_or(1000).clamp(1, 1000) as usize;
    let before = cfg_str(&cfg, "before").map(parse_signature).transpose()?;
    let until = cfg_str(&cfg, "until").map(parse_signature).transpose()?;
    let sigs = c.by_address.get(&key).cloned().unwrap_or_default();
    let mut out = vec![];
    let mut started = before.is_none();
    for sig in sigs.iter().rev() {
        if !started {
            started = Some(*sig) == before;
            continue;
        }
        if Some(*sig) == until || out.len() >= limit {
            break;
        }
        let r = &c.txs[sig];
        out.push(json!({
            "signature": sig.to_string(),
            "slot": r.slot,
            "err": tx_err_json(&r.err),
            "memo": null,
            "blockTime": r.block_time,
            "confirmationStatus": "finalized",
        }));
    }
    Ok(json!(out))
}

/// `getTransaction` / `getConfirmedTransaction`.
pub async fn get_transaction(c: &mut Chain, p: Params<'_>) -> RpcResult {
    let sig = parse_signature(p.str(0, "a signature")?)?;
    let cfg = match p.get(1) {
        Some(Value::String(enc)) => {
            let mut m = Map::new();
            m.insert("encoding".into(), json!(enc));
            m
        }
        _ => p.config(1)?,
    };
    match c.txs.get(&sig) {
        None => Ok(Value::Null),
        Some(r) => transaction_json(r, cfg_str(&cfg, "encoding").unwrap_or("json")),
    }
}

/// `requestAirdrop`.
pub async fn request_airdrop(c: &mut Chain, p: Params<'_>) -> RpcResult {
    let to = p.pubkey(0)?;
    let lamports = p.u64(1, "lamports")?;
    let (hash, _) = c.latest_blockhash()?;
    #[allow(deprecated)]
    let ix = solana_sdk::system_instruction::transfer(&c.faucet.pubkey(), &to, lamports);
    let mut tx = Transaction::new_signed_with_payer(&[ix.clone()], Some(&c.faucet.pubkey()), &[&c.faucet], hash);
    // The same airdrop again within one block (one blockhash) would be the very same
    // transaction, a duplicate; a memo with a counter makes it another one.
    let mut n = 0u64;
    while c.txs.contains_key(&tx.signatures[0]) {
        n += 1;
        let memo = solana_sdk::instruction::Instruction::new_with_bytes(
            MEMO_PROGRAM_ID,
            format!("airdrop {n}").as_bytes(),
            vec![],
        );
        tx = Transaction::new_signed_with_payer(&[ix.clone(), memo], Some(&c.faucet.pubkey()), &[&c.faucet], hash);
    }
    match c.execute(tx.into(), Some(json!([]))).await {
        Ok(sig) => match c.txs.get(&sig).and_then(|r| r.err.clone()) {
            None => Ok(json!(sig.to_string())),
            Some(e) => Err(RpcError::internal(format!("airdrop request failed: {e}"))),
        },
        Err((e, _)) => Err(RpcError::internal(format!("airdrop failed: {e}"))),
    }
}

/// `sendTransaction`.
pub async fn send_transaction(c: &mut Chain, p: Params<'_>) -> RpcResult {
    let cfg = p.config(1)?;
    let tx = decode_tx(p.str(0, "an encoded transaction")?, cfg_str(&cfg, "encoding"))?;
    if tx.verify_with_results().iter().any(|ok| !ok) {
        return Err(RpcError::new(
            TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
            "Transaction signature verification failure",
        ));
    }
    let sig = tx.signatures[0];
    if c.txs.contains_key(&sig) {
        // A committed transaction again (a rebroadcast, or the same instructions
        // signed again on the same blockhash, i.e. in the same block), as on a
        // validator: without preflight the answer is its signature (the leader drops
        // the duplicate; senders that rebroadcast until confirmed rely on this); with
        // preflight the simulation refuses it, AlreadyProcessed while its blockhash is
        // valid (the bank's status cache), BlockhashNotFound after.
        if cfg_bool(&cfg, "skipPreflight") {
            return Ok(json!(sig.to_string()));
        }
        let err = if c.blockhash_usable(&tx.message).await? {
            TransactionError::AlreadyProcessed
        } else {
            TransactionError::BlockhashNotFound
        };
        return Err(preflight_error(&err, vec![], 0));
    }
    let mut preflight_inner = None;
    if !cfg_bool(&cfg, "skipPreflight") {
        if !c.blockhash_usable(&tx.message).await? {
            return Err(preflight_error(&TransactionError::BlockhashNotFound, vec![], 0));
        }
        let sim = c.simulate(&tx).await?;
        let (logs, units, inner) = sim
            .simulation_details
            .map(|d| (fix_logs(d.logs), d.units_consumed, inner_json(d.inner_instructions)))
            .unwrap_or_default();
        if let Some(Err(e)) = sim.result {
            return Err(preflight_error(&e, logs, units));
        }
        preflight_inner = Some(inner);
    }
    match c.execute(tx, preflight_inner).await {
        Ok(sig) => Ok(json!(sig.to_string())),
        Err((e, logs)) => Err(preflight_error(&e, logs, 0)),
    }
}

/// `simulateTransaction`.
pub async fn simulate_transaction(c: &mut Chain, p: Params<'_>) -> RpcResult {
    let cfg = p.config(1)?;
    let mut tx = decode_tx(p.str(0, "an encoded transaction")?, cfg_str(&cfg, "encoding"))?;
    let sig_verify = cfg_bool(&cfg, "sigVerify");
    let replace = cfg_bool(&cfg, "replaceRecentBlockhash");
    if sig_verify && replace {
        return Err(RpcError::invalid_params(
            "sigVerify may not be used with replaceRecentBlockhash",
        ));
    }
    if sig_verify && tx.verify_with_results().iter().any(|ok| !ok) {
        return Err(RpcError::new(
            TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
            "Transaction signature verification failure",
        ));
    }
    let mut replacement = Value::Null;
    if replace {
        let (hash, last_valid) = c.latest_blockhash()?;
        tx.message.set_recent_blockhash(hash);
        replacement = json!({"blockhash": hash.to_string(), "lastValidBlockHeight": last_valid});
    }
    let blockhash_ok = c.blockhash_usable(&tx.message).await?;
    let (err, logs, units, return_data, inner) = if !blockhash_ok {
        (Some(TransactionError::BlockhashNotFound), vec![], 0, Value::Null, Value::Null)
    } else {
        let sim = c.simulate(&tx).await?;
        let err = sim.result.and_then(|r| r.err());
        match sim.simulation_details {
            Some(d) => {
                let rd = d.return_data.map_or(Value::Null, |rd| {
                    json!({"programId": rd.program_id.to_string(), "data": [B64.encode(&rd.data), "base64"]})
                });
                (err, fix_logs(d.logs), d.units_consumed, rd, inner_json(d.inner_instructions))
            }
            None => (err, vec![], 0, Value::Null, Value::Null),
        }
    };
    let mut value = json!({
        "err": tx_err_json(&err),
        "logs": logs,
        "accounts": null,
        "unitsConsumed": units,
        "returnData": return_data,
        "innerInstructions": if cfg_bool(&cfg, "innerInstructions") { inner } else { Value::Null },
    });
    if !replacement.is_null() {
        value["replacementBlockhash"] = replacement;
    }
    c.ctx_json(value).await
}

fn preflight_error(err: &TransactionError, logs: Vec<String>, units: u64) -> RpcError {
    RpcError::new(SEND_TRANSACTION_PREFLIGHT_FAILURE, format!("Transaction simulation failed: {err}")).with_data(json!({
        "err": serde_json::to_value(err).unwrap_or(Value::Null),
        "logs": logs,
        "accounts": null,
        "unitsConsumed": units,
        "returnData": null,
        "innerInstructions": null,
    }))
}

fn decode_tx(encoded: &str, encoding: Option<&str>) -> Result<VersionedTransaction, RpcError> {
    let bytes = match encoding.unwrap_or("base58") {
        "base58" => bs58::decode(encoded)
            .into_vec()
            .map_err(|e| RpcError::invalid_params(format!("invalid base58 encoding: {e}")))?,
        "base64" => B64
            .decode(encoded)
            .map_err(|e| RpcError::invalid_params(format!("invalid base64 encoding: {e}")))?,
        other => return Err(RpcError::invalid_params(format!("unsupported encoding: {other}. Supported encodings: base58, base64"))),
    };
    let tx: VersionedTransaction = bincode::deserialize(&bytes)
        .map_err(|e| RpcError::invalid_params(format!("failed to deserialize solana_transaction::versioned::VersionedTransaction: {e}")))?;
    tx.sanitize()
        .map_err(|e| RpcError::invalid_params(format!("invalid transaction: {e}")))?;
    if tx.signatures.is_empty() {
        return Err(RpcError::invalid_params("invalid transaction: no signatures"));
    }
    Ok(tx)
}

/// jsonParsed form of inner instructions: program id and accounts as addresses.
fn parsed_inner(inner: &Value, keys: &[String]) -> Value {
    let key = |i: &Value| i.as_u64().and_then(|i| keys.get(i as usize)).map_or(Value::Null, |k| json!(k));
    let Some(lists) = inner.as_array() else { return json!([]) };
    json!(lists
        .iter()
        .map(|l| json!({
            "index": l["index"],
            "instructions": l["instructions"].as_array().into_iter().flatten().map(|ix| json!({
                "programId": key(&ix["programIdIndex"]),
                "accounts": ix["accounts"].as_array().into_iter().flatten().map(key).collect::<Vec<_>>(),
                "data": ix["data"],
                "stackHeight": ix["stackHeight"],
            })).collect::<Vec<_>>(),
        }))
        .collect::<Vec<_>>())
}

fn transaction_json(r: &TxRecord, encoding: &str) -> RpcResult {
    let msg = &r.tx.message;
    // static keys, then the addresses loaded from lookup tables: what every index refers to
    let keys: Vec<String> = r.loaded.all_keys(msg).iter().map(|k| k.to_string()).collect();
    let n_static = msg.static_account_keys().len();
    let n_loaded_writable = r.loaded.writable.len();
    let h = msg.header();
    let parsed = encoding == "jsonParsed";
    let transaction = match encoding {
        "json" | "jsonParsed" => {
            let instructions: Vec<Value> = msg
                .instructions()
                .iter()
                .map(|ix| {
                    if parsed {
                        json!({
                            "programId": keys.get(ix.program_id_index as usize),
                            "accounts": ix.accounts.iter().map(|a| keys.get(*a as usize)).collect::<Vec<_>>(),
                            "data": bs58::encode(&ix.data).into_string(),
                            "stackHeight": null,
                        })
                    } else {
                        json!({
                            "programIdIndex": ix.program_id_index,
                            "accounts": ix.accounts,
                            "data": bs58::encode(&ix.data).into_string(),
                            "stackHeight": null,
                        })
                    }
                })
                .collect();
            let account_keys: Value = if parsed {
                json!(keys
                    .iter()
                    .enumerate()
                    .map(|(i, k)| json!({
                        "pubkey": k,
                        "signer": i < h.num_required_signatures as usize,
                        "writable": if i < n_static { is_writable(msg, i) } else { i < n_static + n_loaded_writable },
                        "source": if i < n_static { "transaction" } else { "lookupTable" },
                    }))
                    .collect::<Vec<_>>())
            } else {
                json!(keys[..n_static])
            };
            let mut message = json!({
                "accountKeys": account_keys,
                "recentBlockhash": msg.recent_blockhash().to_string(),
                "instructions": instructions,
            });
            if !parsed {
                message["header"] = json!({
                    "numRequiredSignatures": h.num_required_signatures,
                    "numReadonlySignedAccounts": h.num_readonly_signed_accounts,
                    "numReadonlyUnsignedAccounts": h.num_readonly_unsigned_accounts,
                });
            }
            if let Some(lookups) = msg.address_table_lookups() {
                message["addressTableLookups"] = json!(lookups
                    .iter()
                    .map(|l| json!({
                        "accountKey": l.account_key.to_string(),
                        "writableIndexes": l.writable_indexes,
                        "readonlyIndexes": l.readonly_indexes,
                    }))
                    .collect::<Vec<_>>());
            }
            json!({
                "signatures": r.tx.signatures.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
                "message": message,
            })
        }
        "base64" => json!([B64.encode(bincode::serialize(&r.tx).map_err(bc)?), "base64"]),
        "base58" => json!([bs58::encode(bincode::serialize(&r.tx).map_err(bc)?).into_string(), "base58"]),
        other => return Err(RpcError::invalid_params(format!("Invalid params: unsupported encoding {other}"))),
    };
    let version = match msg {
        VersionedMessage::Legacy(_) => json!("legacy"),
        VersionedMessage::V0(_) => json!(0),
    };
    let mut meta = json!({
        "err": tx_err_json(&r.err),
        "status": status_json(&r.err),
        "fee": r.fee,
        "preBalances": r.pre_balances,
        "postBalances": r.post_balances,
        "innerInstructions": if parsed { parsed_inner(&r.inner_instructions, &keys) } else { r.inner_instructions.clone() },
        "logMessages": r.logs,
        "preTokenBalances": r.pre_token_balances,
        "postTokenBalances": r.post_token_balances,
        "rewards": [],
        "loadedAddresses": {"writable": r.loaded.writable, "readonly": r.loaded.readonly},
        "computeUnitsConsumed": r.units,
    });
    if let Some(rd) = &r.return_data {
        meta["returnData"] = rd.clone();
    }
    Ok(json!({
        "slot": r.slot,
        "blockTime": r.block_time,
        "version": version,
        "transaction": transaction,
        "meta": meta,
    }))
}
