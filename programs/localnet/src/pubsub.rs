//! The PubSub websocket (port P+1): Solana's subscription API in the wire format of its RPC
//! (agave `rpc_pubsub`), as @solana/web3.js 1.x `Connection.on*` methods speak it.
//!
//! | method | notification | when |
//! |---|---|---|
//! | `accountSubscribe [pubkey, {encoding, commitment, dataSlice}]` | `accountNotification` `{context: {slot}, value: UiAccount}` | after every transaction that stores the account (a writable account of a successful transaction, the fee payer of a failed one) and `localnet_setAccount`; a closed account as `{lamports: 0, owner: system, data: empty}` |
//! | `programSubscribe [program, {encoding, commitment, filters, dataSlice}]` | `programNotification` `{context: {slot}, value: {pubkey, account: UiAccount}}` | same, for stored accounts owned by `program` (still open) that pass every filter (`dataSize`, `memcmp` base58/base64) |
//! | `signatureSubscribe [signature, {commitment}]` | `signatureNotification` `{context: {slot}, value: {err}}` | once, when processed (at once when it already is); the subscription ends with it |
//! | `logsSubscribe ["all" \| {mentions: [key]}, {commitment}]` | `logsNotification` `{context: {slot}, value: {signature, err, logs}}` | every transaction (mentioning `key`) |
//! | `slotSubscribe []` | `slotNotification` `{parent, root, slot}` | every new slot (a warp: one notification for its last slot) |
//! | `rootSubscribe []` | `rootNotification` `slot` | every new root (= every slot: all is finalized at once) |
//!
//! Each has its `*Unsubscribe [id]` answering `true`, or `-32602 "Invalid subscription id."` for an
//! id this connection does not hold (a signature subscription ends once it has notified, as on a
//! validator). Not implemented (`-32601 Method not found`, as on a validator started without the
//! flags that enable them): `blockSubscribe`, `voteSubscribe`, `slotsUpdatesSubscribe`.
//! `enableReceivedNotification` is ignored: transactions run when sent, so there is no "received
//! but not processed" moment. Every commitment is accepted and treated alike (everything is
//! finalized at once). A connection that falls more than `NOTE_BUFFER` transactions behind misses
//! the notifications in between (a validator drops them too); clients recover by reading state.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Map, Value};
use solana_sdk::{account::Account, pubkey::Pubkey, signature::Signature};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message as WsMessage;

use crate::chain::{encode_account, matches_filters, validate_filters, AccountNote, Note, SigNote};
use crate::rpc::*;
use crate::App;

/// Notes a connection may fall behind before it misses some (the broadcast channel's capacity).
pub const NOTE_BUFFER: usize = 4096;

/// One subscription of a connection.
enum Sub {
    Signature(Signature),
    /// None = all transactions
    Logs(Option<Pubkey>),
    Account { key: Pubkey, cfg: Map<String, Value> },
    Program { program: Pubkey, cfg: Map<String, Value>, filters: Vec<Value> },
    Slot,
    Root,
}

const UNSUBSCRIBE: [&str; 6] =
    ["accountUnsubscribe", "programUnsubscribe", "signatureUnsubscribe", "logsUnsubscribe", "slotUnsubscribe", "rootUnsubscribe"];

fn notification(method: &str, sub: u64, result: Value) -> String {
    json!({"jsonrpc": "2.0", "method": method, "params": {"result": result, "subscription": sub}}).to_string()
}

fn sig_notification(sub: u64, note: &SigNote) -> String {
    notification("signatureNotification", sub, json!({"context": {"slot": note.slot}, "value": {"err": note.err}}))
}

/// The state a closed (deleted) account is reported with: 0 lamports, owned by the system program.
fn closed_account() -> Account {
    Account { lamports: 0, data: vec![], owner: Pubkey::default(), executable: false, rent_epoch: 0 }
}

/// The config object at `params[i]` (empty when absent or null). Errors: not an object.
fn config_at(params: &[Value], i: usize) -> Result<Map<String, Value>, RpcError> {
    Params(params).config(i)
}

/// Check an encoding/dataSlice config by encoding an empty account with it.
fn check_encoding(cfg: &Map<String, Value>) -> Result<(), RpcError> {
    encode_account(&closed_account(), cfg, None, false).map(|_| ())
}

/// Parse a `*Subscribe` request into a subscription. Errors: bad params (-32602), unknown or
/// unsupported method (-32601).
fn parse_subscribe(method: &str, params: &[Value]) -> Result<Sub, RpcError> {
    let p = Params(params);
    match method {
        "signatureSubscribe" => Ok(Sub::Signature(parse_signature(p.str(0, "a base58 signature")?)?)),
        "logsSubscribe" => match params.first() {
            Some(Value::String(s)) if s == "all" || s == "allWithVotes" => Ok(Sub::Logs(None)),
            Some(f) => match f.get("mentions").and_then(Value::as_array).map(Vec::as_slice) {
                Some([Value::String(k)]) => Ok(Sub::Logs(Some(parse_pubkey(k)?))),
                Some(_) => Err(RpcError::invalid_params("Invalid Request: Only 1 address supported")),
                None => Err(RpcError::invalid_params("Invalid params: expected \"all\" or {mentions: [pubkey]}")),
            },
            None => Err(RpcError::invalid_params("Invalid params: expected a logs filter")),
        },
        "accountSubscribe" => {
            let key = p.pubkey(0)?;
            let cfg = config_at(params, 1)?;
            check_encoding(&cfg)?;
            Ok(Sub::Account { key, cfg })
        }
        "programSubscribe" => {
            let program = p.pubkey(0)?;
            let cfg = config_at(params, 1)?;
            check_encoding(&cfg)?;
            let filters = match cfg.get("filters") {
                None | Some(Value::Null) => vec![],
                Some(Value::Array(f)) => f.clone(),
                Some(_) => return Err(RpcError::invalid_params("Invalid params: filters must be an array")),
            };
            validate_filters(&filters)?;
            Ok(Sub::Program { program, cfg, filters })
        }
        "slotSubscribe" => Ok(Sub::Slot),
        "rootSubscribe" => Ok(Sub::Root),
        _ => Err(RpcError::new(METHOD_NOT_FOUND, "Method not found")),
    }
}

/// The notifications one stored account produces for this connection's account and program
/// subscriptions.
fn account_notifications(subs: &HashMap<u64, Sub>, slot: u64, acc: &AccountNote, out: &mut Vec<String>) {
    let ctx = json!({"slot": slot});
    for (sub, s) in subs {
        match s {
            Sub::Account { key, cfg } if *key == acc.pubkey => {
                let closed = closed_account();
                let a = acc.account.as_ref().unwrap_or(&closed);
                if let Ok(value) = encode_account(a, cfg, acc.decimals, false) {
                    out.push(notification("accountNotification", *sub, json!({"context": ctx, "value": value})));
                }
            }
            Sub::Program { program, cfg, filters } => {
                // A closed account belongs to the system program now: no longer the program's.
                let Some(a) = acc.account.as_ref().filter(|a| a.owner == *program && a.lamports > 0) else { continue };
                if !matches_filters(&a.data, filters).unwrap_or(false) {
                    continue;
                }
                if let Ok(account) = encode_account(a, cfg, acc.decimals, false) {
                    let value = json!({"pubkey": acc.pubkey.to_string(), "account": account});
                    out.push(notification("programNotification", *sub, json!({"context": ctx, "value": value})));
                }
            }
            _ => {}
        }
    }
}

/// The notifications a chain note produces for this connection (signature subscriptions that
/// fired are removed).
fn note_notifications(subs: &mut HashMap<u64, Sub>, note: &Note) -> Vec<String> {
    let mut out = vec![];
    match note {
        Note::Tx(tx) => {
            let fired: Vec<u64> =
                subs.iter().filter(|(_, s)| matches!(s, Sub::Signature(sig) if *sig == tx.signature)).map(|(k, _)| *k).collect();
            for sub in fired {
                subs.remove(&sub);
                out.push(sig_notification(sub, tx));
            }
            for (sub, s) in subs.iter() {
                if let Sub::Logs(filter) = s {
                    if filter.is_none_or(|k| tx.keys.contains(&k)) {
                        let value = json!({"signature": tx.signature.to_string(), "err": tx.err, "logs": tx.logs});
                        out.push(notification("logsNotification", *sub, json!({"context": {"slot": tx.slot}, "value": value})));
                    }
                }
            }
            for acc in &tx.accounts {
                account_notifications(subs, tx.slot, acc, &mut out);
            }
        }
        Note::Accounts { slot, accounts } => {
            for acc in accounts.iter() {
                account_notifications(subs, *slot, acc, &mut out);
            }
        }
    }
    out
}

/// Answer one request of the connection: the response, then any notification due at once
/// (a signature already processed).
async fn handle_request(app: &App, subs: &mut HashMap<u64, Sub>, slots: &mut tokio::sync::watch::Receiver<u64>, req: &Value) -> Vec<String> {
    let Some(id) = req.get("id").cloned() else { return vec![] };
    let Some(method) = req.get("method").and_then(Value::as_str) else {
        return vec![response(id, Err(RpcError::new(INVALID_REQUEST, "Invalid request"))).to_string()];
    };
    let params = match req.get("params") {
        None | Some(Value::Null) => vec![],
        Some(Value::Array(a)) => a.clone(),
        Some(_) => return vec![response(id, Err(RpcError::invalid_params("Invalid params: params must be an array"))).to_string()],
    };
    if UNSUBSCRIBE.contains(&method) {
        let res = match params.first().and_then(Value::as_u64) {
            None => Err(RpcError::invalid_params("Invalid params: expected [subscription id]")),
            Some(sub) if subs.remove(&sub).is_some() => Ok(json!(true)),
            Some(_) => Err(RpcError::invalid_params("Invalid subscription id.")),
        };
        return vec![response(id, res).to_string()];
    }
    let sub = match parse_subscribe(method, &params) {
        Ok(s) => s,
        Err(e) => return vec![response(id, Err(e)).to_string()],
    };
    let n = app.next_sub.fetch_add(1, Ordering::Relaxed);
    let mut out = vec![response(id, Ok(json!(n))).to_string()];
    match sub {
        Sub::Signature(sig) => match app.status(sig).await {
            Some(note) => out.push(sig_notification(n, &note)),
            None => {
                subs.insert(n, Sub::Signature(sig));
            }
        },
        Sub::Slot | Sub::Root => {
            // Notify from the next slot on, not the one already current.
            slots.borrow_and_update();
            subs.insert(n, sub);
        }
        other => {
            subs.insert(n, other);
        }
    }
    out
}

/// One PubSub websocket connection (see the module docs).
pub async fn ws_connection(stream: TcpStream, app: Arc<App>) {
    let Ok(ws) = tokio_tungstenite::accept_async(stream).await else { return };
    let (mut sink, mut source) = ws.split();
    let mut notes = app.notify.notes.subscribe();
    let mut slots = app.notify.slots.subscribe();
    let mut shutdown = app.shutdown.clone();
    let mut subs: HashMap<u64, Sub> = HashMap::new();
    loop {
        let wants_slots = subs.values().any(|s| matches!(s, Sub::Slot | Sub::Root));
        let out: Vec<String> = tokio::select! {
            _ = shutdown.changed() => {
                let frame = tokio_tungstenite::tungstenite::protocol::CloseFrame {
                    code: tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode::Normal,
                    reason: "node shutting down".into(),
                };
                let _ = sink.send(WsMessage::Close(Some(frame))).await;
                let _ = sink.flush().await;
                return;
            }
            msg = source.next() => {
                let text = match msg {
                    Some(Ok(WsMessage::Text(t))) => t,
                    Some(Ok(WsMessage::Binary(b))) => String::from_utf8_lossy(&b).into_owned(),
                    Some(Ok(WsMessage::Close(_))) | None | Some(Err(_)) => break,
                    Some(Ok(_)) => continue, // ping/pong: tungstenite answers pings itself
                };
                match serde_json::from_str::<Value>(&text) {
                    Ok(req) => handle_request(&app, &mut subs, &mut slots, &req).await,
                    Err(_) => vec![response(Value::Null, Err(RpcError::new(PARSE_ERROR, "Parse error"))).to_string()],
                }
            }
            note = notes.recv() => match note {
                Ok(note) => note_notifications(&mut subs, &note),
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
                Err(_) => break,
            },
            changed = slots.changed(), if wants_slots => {
                if changed.is_err() {
                    break;
                }
                let slot = *slots.borrow_and_update();
                subs.iter()
                    .filter_map(|(sub, s)| match s {
                        Sub::Slot => Some(notification("slotNotification", *sub, json!({"parent": slot.saturating_sub(1), "root": slot, "slot": slot}))),
                        Sub::Root => Some(notification("rootNotification", *sub, json!(slot))),
                        _ => None,
                    })
                    .collect()
            }
        };
        for o in out {
            if sink.send(WsMessage::Text(o)).await.is_err() {
                return;
            }
        }
    }
}
