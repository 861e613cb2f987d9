//! Black-box tests of the PubSub websocket (port + 1): the subscriptions' wire format (as agave's
//! `rpc_pubsub` sends it) and which state changes notify which subscription.

mod common;

use std::net::TcpStream;
use std::time::Duration;

use base64::Engine as _;
use common::*;
use serde_json::{json, Value};
use solana_sdk::{
    native_token::LAMPORTS_PER_SOL,
    pubkey::Pubkey,
    signature::{Keypair, Signer},
};
use tokio_tungstenite::tungstenite::{self, Message};

const SYSTEM: &str = "11111111111111111111111111111111";

/// A blocking websocket client (tungstenite) on the node's PubSub port.
struct Ws {
    ws: tungstenite::WebSocket<TcpStream>,
    next_id: u64,
}

impl Ws {
    fn connect(port: u16) -> Ws {
        let stream = TcpStream::connect(("127.0.0.1", port + 1)).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let (ws, _) = tungstenite::client(format!("ws://127.0.0.1:{}", port + 1), stream).unwrap();
        Ws { ws, next_id: 1 }
    }

    /// The next text message (panics after 10 s).
    fn next(&mut self) -> Value {
        loop {
            match self.ws.read().expect("a message within 10 s") {
                Message::Text(t) => return serde_json::from_str(&t).unwrap(),
                _ => continue,
            }
        }
    }

    /// Send a request; return its whole response (the next message: nothing else is in flight).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.ws.send(Message::Text(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string())).unwrap();
        let r = self.next();
        assert_eq!(r["id"], json!(id), "{r}");
        r
    }

    fn subscribe(&mut self, method: &str, params: Value) -> u64 {
        let r = self.request(method, params);
        r["result"].as_u64().unwrap_or_else(|| panic!("{method}: {r}"))
    }

    /// The next notification: (subscription, method, result).
    fn notification(&mut self) -> (u64, String, Value) {
        let n = self.next();
        assert_eq!(n["jsonrpc"], json!("2.0"), "{n}");
        assert!(n.get("id").is_none(), "{n}");
        let p = &n["params"];
        assert_eq!(p.as_object().unwrap().len(), 2, "params: exactly result and subscription: {n}");
        (p["subscription"].as_u64().unwrap(), n["method"].as_str().unwrap().to_string(), p["result"].clone())
    }
}

/// The keys of a JSON object, sorted.
fn keys(v: &Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().unwrap_or_else(|| panic!("not an object: {v}")).keys().cloned().collect();
    k.sort();
    k
}

const UI_ACCOUNT: [&str; 6] = ["data", "executable", "lamports", "owner", "rentEpoch", "space"];

#[test]
fn account_subscribe_notifies_every_stored_write_in_the_rpc_format() {
    let n = start();
    let mut ws = Ws::connect(n.port);
    let payer = Keypair::new();
    let to = Keypair::new();
    let bystander = Keypair::new().pubkey();
    let sub_payer = ws.subscribe("accountSubscribe", json!([payer.pubkey().to_string(), {"encoding": "base64", "commitment": "confirmed"}]));
    let sub_to = ws.subscribe("accountSubscribe", json!([to.pubkey().to_string()])); // default encoding: bare base58
    let sub_system = ws.subscribe("accountSubscribe", json!([SYSTEM, {"encoding": "base64"}])); // read-only in every transfer
    assert_ne!(sub_payer, sub_to);

    airdrop(n.port, &payer.pubkey(), 2 * LAMPORTS_PER_SOL);
    let (sub, method, result) = ws.notification();
    assert_eq!((sub, method.as_str()), (sub_payer, "accountNotification"));
    assert_eq!(keys(&result), ["context", "value"]);
    assert_eq!(keys(&result["context"]), ["slot"], "no apiVersion in a notification's context");
    assert!(result["context"]["slot"].as_u64().unwrap() > 0);
    assert_eq!(keys(&result["value"]), UI_ACCOUNT);
    assert_eq!(result["value"]["lamports"], json!(2 * LAMPORTS_PER_SOL));
    assert_eq!(result["value"]["owner"], json!(SYSTEM));
    assert_eq!(result["value"]["data"], json!(["", "base64"]));
    assert_eq!(result["value"]["executable"], json!(false));
    assert_eq!(result["value"]["space"], json!(0));

    send_transfer(n.port, &payer, &to.pubkey(), LAMPORTS_PER_SOL);
    let mut got: Vec<(u64, Value)> = (0..2).map(|_| ws.notification()).map(|(s, _, r)| (s, r)).collect();
    got.sort_by_key(|(s, _)| *s);
    assert_eq!(got[0].0, sub_payer);
    assert_eq!(got[0].1["value"]["lamports"], json!(LAMPORTS_PER_SOL - 5000));
    assert_eq!(got[1].0, sub_to);
    assert_eq!(got[1].1["value"]["lamports"], json!(LAMPORTS_PER_SOL));
    assert_eq!(got[1].1["value"]["data"], json!(""), "default encoding (binary): a bare base58 string");

    // A failed transaction stores only its fee payer: `to` (writable, untouched) does not notify.
    let failing = transfer_tx(n.port, &to, &bystander, 50 * LAMPORTS_PER_SOL);
    assert!(send(n.port, &failing, json!({"skipPreflight": true}))["result"].is_string());
    let (sub, _, result) = ws.notification();
    assert_eq!(sub, sub_to);
    assert_eq!(result["value"]["lamports"], json!(LAMPORTS_PER_SOL - 5000));

    // Emptying an account closes it: reported with 0 lamports, owned by the system program.
    send_transfer(n.port, &to, &bystander, LAMPORTS_PER_SOL - 10_000);
    let (sub, _, result) = ws.notification();
    assert_eq!(sub, sub_to);
    assert_eq!(result["value"]["lamports"], json!(0), "{result}");
    assert_eq!(result["value"]["owner"], json!(SYSTEM));
    assert_eq!(result["value"]["data"], json!(""));

    // Unsubscribed: silent; the read-only system program never notified (the next message is the
    // payer's, whose note comes after both transfers).
    assert_eq!(ws.request("accountUnsubscribe", json!([sub_to]))["result"], json!(true));
    let again = ws.request("accountUnsubscribe", json!([sub_to]));
    assert_eq!(again["error"], json!({"code": -32602, "message": "Invalid subscription id."}));
    airdrop(n.port, &to.pubkey(), 1_000_000);
    send_transfer(n.port, &payer, &bystander, 1_000_000);
    let (sub, _, _) = ws.notification();
    assert_eq!(sub, sub_payer, "neither the unsubscribed account nor a read-only one notifies");
    let _ = sub_system;
}

#[test]
fn program_subscribe_notifies_accounts_of_the_program_that_pass_the_filters() {
    let n = start();
    let mut ws = Ws::connect(n.port);
    let program = Keypair::new().pubkey();
    let tagged = Keypair::new().pubkey();
    let other = Keypair::new().pubkey();
    let tag = [7u8, 7, 7, 7];
    let mut data = vec![0u8; 40];
    data[8..12].copy_from_slice(&tag);
    let set = |key: &Pubkey, data: &[u8], owner: &Pubkey, lamports: u64| {
        result(n.port, "localnet_setAccount", json!([key.to_string(), {"lamports": lamports, "data": B64.encode(data), "owner": owner.to_string()}]));
    };
    let memcmp = json!({"memcmp": {"offset": 8, "bytes": bs58::encode(tag).into_string()}});
    let memcmp64 = json!({"memcmp": {"offset": 8, "bytes": B64.encode(tag), "encoding": "base64"}});
    let sub_all = ws.subscribe("programSubscribe", json!([program.to_string(), {"encoding": "base64", "commitment": "confirmed"}]));
    let sub_tag = ws.subscribe("programSubscribe", json!([program.to_string(), {"encoding": "base64", "filters": [memcmp, {"dataSize": 40}]}]));
    let sub_tag64 = ws.subscribe("programSubscribe", json!([program.to_string(), {"encoding": "base58", "filters": [memcmp64]}]));
    let sub_size = ws.subscribe("programSubscribe", json!([program.to_string(), {"encoding": "base64", "filters": [{"dataSize": 41}]}]));

    set(&tagged, &data, &program, 1_000_000);
    let mut got: Vec<(u64, String, Value)> = (0..3).map(|_| ws.notification()).collect();
    got.sort_by_key(|(s, _, _)| *s);
    assert_eq!(got.iter().map(|(s, _, _)| *s).collect::<Vec<_>>(), [sub_all, sub_tag, sub_tag64], "dataSize 41 does not match");
    for (_, method, result) in &got {
        assert_eq!(method, "programNotification");
        assert_eq!(keys(result), ["context", "value"]);
        assert_eq!(keys(&result["context"]), ["slot"]);
        assert_eq!(keys(&result["value"]), ["account", "pubkey"]);
        assert_eq!(result["value"]["pubkey"], json!(tagged.to_string()));
        assert_eq!(keys(&result["value"]["account"]), UI_ACCOUNT);
        assert_eq!(result["value"]["account"]["owner"], json!(program.to_string()));
        assert_eq!(result["value"]["account"]["lamports"], json!(1_000_000));
        assert_eq!(result["value"]["account"]["space"], json!(40));
    }
    assert_eq!(got[0].2["value"]["account"]["data"], json!([B64.encode(&data), "base64"]));
    assert_eq!(got[2].2["value"]["account"]["data"], json!([bs58::encode(&data).into_string(), "base58"]));

    // Another program's account, and an account of the program without the tag.
    set(&other, &data, &Keypair::new().pubkey(), 1_000_000);
    set(&other, &[1u8; 41], &program, 2_000_000);
    let mut got: Vec<(u64, Value)> = (0..2).map(|_| ws.notification()).map(|(s, _, r)| (s, r)).collect();
    got.sort_by_key(|(s, _)| *s);
    assert_eq!(got.iter().map(|(s, _)| *s).collect::<Vec<_>>(), [sub_all, sub_size]);
    assert_eq!(got[0].1["value"]["pubkey"], json!(other.to_string()));

    // Closed (0 lamports): no longer the program's account, no program notification; the next
    // message is the one of the following change.
    set(&tagged, &[], &program, 0);
    set(&tagged, &data, &program, 3_000_000);
    let mut got: Vec<(u64, Value)> = (0..3).map(|_| ws.notification()).map(|(s, _, r)| (s, r)).collect();
    got.sort_by_key(|(s, _)| *s);
    assert!(got.iter().all(|(_, r)| r["value"]["account"]["lamports"] == json!(3_000_000)), "{got:?}");

    // A transaction: a program-owned account it writes notifies (the system program's accounts).
    let sys = ws.subscribe("programSubscribe", json!([SYSTEM, {"encoding": "base64", "filters": [{"dataSize": 0}]}]));
    let who = Keypair::new().pubkey();
    airdrop(n.port, &who, 1_000_000);
    let mut seen = vec![];
    for _ in 0..2 {
        let (sub, _, r) = ws.notification();
        assert_eq!(sub, sys);
        seen.push(r["value"]["pubkey"].as_str().unwrap().to_string());
    }
    assert!(seen.contains(&who.to_string()), "{seen:?}");

    // Bad subscriptions are refused at once.
    let bad_filter = ws.request("programSubscribe", json!([program.to_string(), {"filters": [{"nope": 1}]}]));
    assert_eq!(bad_filter["error"]["code"], json!(-32602), "{bad_filter}");
    let bad_bytes = ws.request("programSubscribe", json!([program.to_string(), {"filters": [{"memcmp": {"offset": 0, "bytes": "0OIl"}}]}]));
    assert_eq!(bad_bytes["error"]["code"], json!(-32602), "{bad_bytes}");
    let bad_encoding = ws.request("programSubscribe", json!([program.to_string(), {"encoding": "base85"}]));
    assert_eq!(bad_encoding["error"]["code"], json!(-32602), "{bad_encoding}");
    let bad_key = ws.request("programSubscribe", json!(["not-a-key"]));
    assert_eq!(bad_key["error"]["code"], json!(-32602), "{bad_key}");
    assert_eq!(ws.request("programUnsubscribe", json!([sub_all]))["result"], json!(true));
}

#[test]
fn signature_slot_and_root_subscriptions() {
    let n = start();
    let mut ws = Ws::connect(n.port);
    let payer = Keypair::new();
    airdrop(n.port, &payer.pubkey(), LAMPORTS_PER_SOL);

    // Pending signature: notified once when processed, then the subscription is gone.
    let tx = transfer_tx(n.port, &payer, &Keypair::new().pubkey(), 1_000_000);
    let sub = ws.subscribe("signatureSubscribe", json!([tx.signatures[0].to_string(), {"commitment": "finalized"}]));
    assert!(send(n.port, &tx, json!({}))["result"].is_string());
    let (got, method, result) = ws.notification();
    assert_eq!((got, method.as_str()), (sub, "signatureNotification"));
    assert_eq!(keys(&result), ["context", "value"]);
    assert_eq!(result["value"], json!({"err": null}));
    let gone = ws.request("signatureUnsubscribe", json!([sub]));
    assert_eq!(gone["error"]["message"], json!("Invalid subscription id."));

    let slot = ws.subscribe("slotSubscribe", json!([]));
    let (got, method, result) = ws.notification();
    assert_eq!((got, method.as_str()), (slot, "slotNotification"));
    assert_eq!(keys(&result), ["parent", "root", "slot"]);
    let s = result["slot"].as_u64().unwrap();
    assert_eq!(result["parent"], json!(s - 1));
    assert!(result["root"].as_u64().unwrap() <= s);
    assert_eq!(ws.request("slotUnsubscribe", json!([slot]))["result"], json!(true));

    let root = ws.subscribe("rootSubscribe", json!([]));
    let (got, method, result) = ws.notification();
    assert_eq!((got, method.as_str()), (root, "rootNotification"));
    assert!(result.as_u64().unwrap() > s);
    assert_eq!(ws.request("rootUnsubscribe", json!([root]))["result"], json!(true));

    // Not provided (a validator without --rpc-pubsub-enable-block-subscription / vote subscription).
    for m in ["blockSubscribe", "voteSubscribe", "slotsUpdatesSubscribe"] {
        assert_eq!(ws.request(m, json!([]))["error"]["code"], json!(-32601), "{m}");
    }
    assert_eq!(ws.request("accountUnsubscribe", json!(["x"]))["error"]["code"], json!(-32602));
}
