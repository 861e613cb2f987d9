//! Black-box tests of the bazaar-localnet binary over HTTP JSON-RPC and the PubSub websocket.

mod common;

use std::time::Duration;

use base64::Engine as _;
use common::*;
use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use solana_sdk::{
    native_token::LAMPORTS_PER_SOL,
    pubkey::Pubkey,
    signature::{Keypair, Signer},
};

#[test]
fn basics_and_errors_keep_the_server_alive() {
    let n = start();
    assert_eq!(result(n.port, "getHealth", json!([])), json!("ok"));
    assert!(result(n.port, "getVersion", json!([]))["solana-core"].as_str().unwrap().starts_with("2."));
    assert_eq!(result(n.port, "getMinimumBalanceForRentExemption", json!([0])), json!(890_880));

    assert_eq!(post(n.port, "{oops")["error"]["code"], json!(-32700));
    assert_eq!(post(n.port, "42")["error"]["code"], json!(-32600));
    assert_eq!(call(n.port, "noSuchMethod", json!([]))["error"]["code"], json!(-32601));
    assert_eq!(call(n.port, "getBalance", json!(["not-a-key"]))["error"]["code"], json!(-32602));
    assert_eq!(call(n.port, "getBalance", json!([]))["error"]["code"], json!(-32602));
    assert_eq!(call(n.port, "sendTransaction", json!(["%%%", {"encoding": "base64"}]))["error"]["code"], json!(-32602));
    assert_eq!(call(n.port, "sendTransaction", json!([B64.encode([7u8; 90]), {"encoding": "base64"}]))["error"]["code"], json!(-32602));
    assert_eq!(call(n.port, "localnet_advanceClock", json!([-5]))["error"]["code"], json!(-32602));
    let batch = post(n.port, r#"[{"jsonrpc":"2.0","id":1,"method":"getSlot"},{"jsonrpc":"2.0","id":2,"method":"nope"}]"#);
    assert!(batch[0]["result"].is_u64());
    assert_eq!(batch[1]["error"]["code"], json!(-32601));
    assert_eq!(result(n.port, "getHealth", json!([])), json!("ok"));
}

#[test]
fn transfers_are_executed_indexed_and_preflighted() {
    let n = start();
    let a = Keypair::new();
    let b = Keypair::new().pubkey();
    let sig = airdrop(n.port, &a.pubkey(), 2 * LAMPORTS_PER_SOL);
    assert_eq!(result(n.port, "getBalance", json!([a.pubkey().to_string()]))["value"], json!(2 * LAMPORTS_PER_SOL));
    let st = result(n.port, "getSignatureStatuses", json!([[sig], {"searchTransactionHistory": true}]));
    assert_eq!(st["value"][0]["confirmationStatus"], json!("finalized"));

    let tx = transfer_tx(n.port, &a, &b, 1_000_000);
    let sent = send(n.port, &tx, json!({}));
    let sig = sent["result"].as_str().unwrap_or_else(|| panic!("{sent}")).to_string();
    assert_eq!(result(n.port, "getBalance", json!([b.to_string()]))["value"], json!(1_000_000));
    let got = result(n.port, "getTransaction", json!([sig, {"encoding": "json"}]));
    assert_eq!(got["meta"]["err"], Value::Null);
    assert_eq!(got["meta"]["fee"], json!(5000));
    assert_eq!(got["meta"]["preBalances"][0], json!(2 * LAMPORTS_PER_SOL));
    assert_eq!(got["meta"]["postBalances"][1], json!(1_000_000));
    assert_eq!(got["transaction"]["message"]["accountKeys"][1], json!(b.to_string()));
    let got64 = result(n.port, "getTransaction", json!([sig, {"encoding": "base64"}]));
    assert_eq!(got64["transaction"][1], json!("base64"));
    let sigs = result(n.port, "getSignaturesForAddress", json!([b.to_string()]));
    assert_eq!(sigs[0]["signature"], json!(sig));

    // Preflight failure: insufficient funds -> -32002 with logs.
    let too_much = transfer_tx(n.port, &a, &Keypair::new().pubkey(), 50 * LAMPORTS_PER_SOL);
    let err = send(n.port, &too_much, json!({}));
    assert_eq!(err["error"]["code"], json!(-32002), "{err}");
    assert!(err["error"]["data"]["logs"].as_array().unwrap().iter().any(|l| l.as_str().unwrap().contains("insufficient lamports")));
    // skipPreflight: the failing transaction lands, fee charged, error recorded.
    let landed = send(n.port, &too_much, json!({"skipPreflight": true}));
    let sig = landed["result"].as_str().unwrap_or_else(|| panic!("{landed}")).to_string();
    let st = result(n.port, "getSignatureStatuses", json!([[sig]]));
    assert_eq!(st["value"][0]["err"]["InstructionError"][0], json!(0));

    // Simulation reports logs and units without committing.
    let sim_tx = transfer_tx(n.port, &a, &Keypair::new().pubkey(), 1_000_000);
    let wire = B64.encode(bincode::serialize(&sim_tx).unwrap());
    let sim = result(n.port, "simulateTransaction", json!([wire, {"encoding": "base64", "sigVerify": true}]));
    assert_eq!(sim["value"]["err"], Value::Null);
    assert!(!sim["value"]["logs"].as_array().unwrap().is_empty());

    // Bad signature.
    let mut forged = transfer_tx(n.port, &a, &b, 1);
    forged.signatures[0] = solana_sdk::signature::Signature::from([3u8; 64]);
    assert_eq!(send(n.port, &forged, json!({}))["error"]["code"], json!(-32003));
}

#[test]
fn clock_advances_and_blockhashes_survive_the_warp() {
    let n = start();
    let before = result(n.port, "localnet_getClock", json!([]));
    let after = result(n.port, "localnet_advanceClock", json!([7 * 24 * 3600]));
    let dt = after["unix_timestamp"].as_i64().unwrap() - before["unix_timestamp"].as_i64().unwrap();
    assert!(dt >= 7 * 24 * 3600, "{before} -> {after}");
    assert!(after["slot"].as_u64().unwrap() > before["slot"].as_u64().unwrap());
    assert_eq!(result(n.port, "localnet_getClock", json!([]))["unix_timestamp"], after["unix_timestamp"]);
    let a = Keypair::new();
    airdrop(n.port, &a.pubkey(), LAMPORTS_PER_SOL);
    let tx = transfer_tx(n.port, &a, &Keypair::new().pubkey(), 1_000_000);
    assert!(send(n.port, &tx, json!({}))["result"].is_string());
}

#[test]
fn signature_subscribe_notifies() {
    let n = start();
    let a = Keypair::new();
    let sig = airdrop(n.port, &a.pubkey(), LAMPORTS_PER_SOL);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", n.port + 1)).await.unwrap();
        let url = format!("ws://127.0.0.1:{}", n.port + 1);
        let (mut ws, _) = tokio_tungstenite::client_async(url, stream).await.unwrap();
        use tokio_tungstenite::tungstenite::Message;
        ws.send(Message::Text(json!({"jsonrpc":"2.0","id":1,"method":"signatureSubscribe","params":[sig, {"commitment":"confirmed"}]}).to_string()))
            .await
            .unwrap();
        let mut msgs = vec![];
        for _ in 0..2 {
            match tokio::time::timeout(Duration::from_secs(10), ws.next()).await.unwrap().unwrap().unwrap() {
                Message::Text(t) => msgs.push(serde_json::from_str::<Value>(&t).unwrap()),
                other => panic!("unexpected {other:?}"),
            }
        }
        let sub = msgs[0]["result"].as_u64().expect("subscription id");
        assert_eq!(msgs[1]["method"], json!("signatureNotification"));
        assert_eq!(msgs[1]["params"]["subscription"], json!(sub));
        assert_eq!(msgs[1]["params"]["result"]["value"]["err"], Value::Null);
        ws.send(Message::Text(json!({"jsonrpc":"2.0","id":2,"method":"slotSubscribe"}).to_string())).await.unwrap();
        match tokio::time::timeout(Duration::from_secs(10), ws.next()).await.unwrap().unwrap().unwrap() {
            Message::Text(t) => assert!(serde_json::from_str::<Value>(&t).unwrap()["result"].is_u64()),
            other => panic!("unexpected {other:?}"),
        }
    });
}

#[test]
fn ledger_dir_keeps_accounts_across_restarts() {
    let dir = std::env::temp_dir().join(format!("bazaar-localnet-ledger-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let who = Keypair::new().pubkey();
    {
        let mut n = start_with(&["--ledger", dir.to_str().unwrap()]);
        airdrop(n.port, &who, 1_234_567);
        result(n.port, "localnet_advanceClock", json!([5000]));
        // SIGTERM: the node writes its snapshot before exiting.
        unsafe { libc::kill(n.child.id() as i32, libc::SIGTERM) };
        let _ = n.child.wait();
    }
    assert!(dir.join("snapshot.json").exists());
    let n = start_with(&["--ledger", dir.to_str().unwrap()]);
    assert_eq!(result(n.port, "getBalance", json!([who.to_string()]))["value"], json!(1_234_567));
    let clock = result(n.port, "localnet_getClock", json!([]));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    assert!(clock["unix_timestamp"].as_i64().unwrap() >= now + 4990, "{clock}");
    drop(n);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn blockhash_outlives_heavy_status_polling() {
    let n = start();
    let a = Keypair::new();
    airdrop(n.port, &a.pubkey(), LAMPORTS_PER_SOL);
    // Sign first, then poll hard (reads are served without driving the bank's blockhash ticker).
    let tx = transfer_tx(n.port, &a, &Keypair::new().pubkey(), 1_000_000);
    for _ in 0..1000 {
        call(n.port, "getBalance", json!([a.pubkey().to_string()]));
        call(n.port, "getSignatureStatuses", json!([[tx.signatures[0].to_string()]]));
        call(n.port, "getBlockHeight", json!([]));
    }
    let sent = send(n.port, &tx, json!({}));
    assert!(sent["result"].is_string(), "{sent}");
}

#[test]
#[allow(deprecated)] // solana_sdk's re-export of the loader-v3 interface
fn the_escrow_program_data_names_the_upgrade_authority_given_at_start() {
    use solana_sdk::bpf_loader_upgradeable::{self, UpgradeableLoaderState};
    let authority = Keypair::new().pubkey();
    let escrow_id: Pubkey = "AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r".parse().unwrap();
    let address = Pubkey::find_program_address(&[escrow_id.as_ref()], &bpf_loader_upgradeable::ID).0;
    let get = |port| result(port, "getAccountInfo", json!([address.to_string(), {"encoding": "base64"}]));

    let node = start_with(&["--escrow-upgrade-authority", &authority.to_string()]);
    let info = get(node.port);
    assert_eq!(info["value"]["owner"], json!(bpf_loader_upgradeable::ID.to_string()));
    let data = B64.decode(info["value"]["data"][0].as_str().unwrap()).unwrap();
    let state: UpgradeableLoaderState = bincode::deserialize(&data).unwrap();
    assert_eq!(state, UpgradeableLoaderState::ProgramData { slot: 0, upgrade_authority_address: Some(authority) });

    // Without the flag there is no ProgramData account (nobody can create a fresh config).
    let bare = start();
    assert_eq!(get(bare.port)["value"], Value::Null);
}
