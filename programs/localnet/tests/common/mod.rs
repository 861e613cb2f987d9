//! Helpers shared by the black-box tests: start the bazaar-localnet binary on a free port pair,
//! talk JSON-RPC to it over plain HTTP, build and send signed transfers.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};
use solana_sdk::{
    hash::Hash,
    pubkey::Pubkey,
    signature::{Keypair, Signer},
    transaction::Transaction,
};

pub const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

/// A running node; killed (SIGKILL) and reaped when dropped.
pub struct Node {
    pub child: Child,
    pub port: u16,
}

impl Node {
    /// SIGKILL the node and wait until it is gone (no shutdown hook runs).
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM the node (graceful shutdown) and wait until it exits.
    pub fn terminate(&mut self) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let _ = self.child.wait();
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.kill9();
    }
}

pub fn free_port_pair() -> u16 {
    for _ in 0..100 {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let p = l.local_addr().unwrap().port();
        drop(l);
        if p < 65000 && TcpListener::bind(("127.0.0.1", p + 1)).is_ok() && TcpListener::bind(("127.0.0.1", p)).is_ok() {
            return p;
        }
    }
    panic!("no free port pair");
}

pub fn start() -> Node {
    start_with(&[])
}

pub fn start_with(extra: &[&str]) -> Node {
    start_env(extra, &[])
}

/// Start with extra arguments and environment variables; panics when the node does not get ready.
pub fn start_env(extra: &[&str], env: &[(&str, &str)]) -> Node {
    try_start(extra, env).unwrap_or_else(|e| panic!("bazaar-localnet exited before it was ready: {e}"))
}

/// Start the node; Err(exit status and stderr) when it exits before printing its ready line.
pub fn try_start(extra: &[&str], env: &[(&str, &str)]) -> Result<Node, String> {
    let port = free_port_pair();
    let mut child = Command::new(env!("CARGO_BIN_EXE_bazaar-localnet"))
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .args(extra)
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn bazaar-localnet");
    // Forward stderr to ours (so failures show up in the test output) and keep a copy.
    let stderr = child.stderr.take().unwrap();
    let (err_tx, err_rx) = std::sync::mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("[localnet] {line}");
            let _ = err_tx.send(line);
        }
    });
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let start = Instant::now();
    let mut line = String::new();
    loop {
        line.clear();
        if out.read_line(&mut line).unwrap() == 0 {
            let status = child.wait().unwrap();
            std::thread::sleep(Duration::from_millis(100));
            let err: Vec<String> = err_rx.try_iter().collect();
            return Err(format!("{status}: {}", err.join("\n")));
        }
        if line.starts_with("bazaar-localnet listening on http://") {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(60), "not ready in time");
    }
    // Keep draining stdout so the child never blocks on a full pipe.
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = out.read_to_end(&mut sink);
    });
    Ok(Node { child, port })
}

/// POST a raw body, return the parsed JSON reply.
pub fn post(port: u16, body: &str) -> Value {
    try_post(port, body).unwrap_or_else(|e| panic!("POST to 127.0.0.1:{port}: {e}"))
}

/// POST a raw body; Err when the connection fails or the answer is not a 200 with JSON.
pub fn try_post(port: u16, body: &str) -> Result<Value, String> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    write!(
        s,
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
        body.len(),
        body
    )
    .map_err(|e| e.to_string())?;
    let mut resp = String::new();
    s.read_to_string(&mut resp).map_err(|e| e.to_string())?;
    let (head, body) = resp.split_once("\r\n\r\n").ok_or("not an http response")?;
    if !head.starts_with("HTTP/1.1 200") {
        return Err(head.to_string());
    }
    serde_json::from_str(body).map_err(|e| format!("bad json {e}: {body}"))
}

pub fn call(port: u16, method: &str, params: Value) -> Value {
    post(port, &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string())
}

/// `call` that reports a failed connection instead of panicking.
pub fn try_call(port: u16, method: &str, params: Value) -> Result<Value, String> {
    try_post(port, &json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string())
}

pub fn result(port: u16, method: &str, params: Value) -> Value {
    let r = call(port, method, params);
    assert!(r.get("error").is_none(), "{method}: {r}");
    r["result"].clone()
}

pub fn blockhash(port: u16) -> Hash {
    result(port, "getLatestBlockhash", json!([]))["value"]["blockhash"].as_str().unwrap().parse().unwrap()
}

pub fn airdrop(port: u16, to: &Pubkey, lamports: u64) -> String {
    result(port, "requestAirdrop", json!([to.to_string(), lamports])).as_str().unwrap().to_string()
}

pub fn balance(port: u16, who: &Pubkey) -> u64 {
    result(port, "getBalance", json!([who.to_string()]))["value"].as_u64().unwrap()
}

#[allow(deprecated)]
pub fn transfer_tx(port: u16, from: &Keypair, to: &Pubkey, lamports: u64) -> Transaction {
    let ix = solana_sdk::system_instruction::transfer(&from.pubkey(), to, lamports);
    Transaction::new_signed_with_payer(&[ix], Some(&from.pubkey()), &[from], blockhash(port))
}

pub fn send(port: u16, tx: &Transaction, cfg: Value) -> Value {
    let wire = B64.encode(bincode::serialize(tx).unwrap());
    let mut cfg = cfg;
    cfg["encoding"] = json!("base64");
    call(port, "sendTransaction", json!([wire, cfg]))
}

/// Send a transfer and return its signature (panics on an RPC error).
pub fn send_transfer(port: u16, from: &Keypair, to: &Pubkey, lamports: u64) -> String {
    let sent = send(port, &transfer_tx(port, from, to, lamports), json!({}));
    sent["result"].as_str().unwrap_or_else(|| panic!("sendTransaction: {sent}")).to_string()
}

/// A fresh, empty directory under the system temp dir (removed first if it exists).
pub fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("bazaar-localnet-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// signatureSubscribe over the PubSub websocket (port + 1); returns the first notification's
/// `params.result` (panics if none arrives within 10 s).
pub fn signature_notification(port: u16, sig: &str) -> Value {
    use futures::{SinkExt, StreamExt};
    use tokio_tungstenite::tungstenite::Message;
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let stream = tokio::net::TcpStream::connect(("127.0.0.1", port + 1)).await.unwrap();
        let (mut ws, _) = tokio_tungstenite::client_async(format!("ws://127.0.0.1:{}", port + 1), stream).await.unwrap();
        let req = json!({"jsonrpc": "2.0", "id": 1, "method": "signatureSubscribe", "params": [sig, {"commitment": "finalized"}]});
        ws.send(Message::Text(req.to_string())).await.unwrap();
        loop {
            let msg = tokio::time::timeout(Duration::from_secs(10), ws.next()).await.expect("no notification").unwrap().unwrap();
            let Message::Text(t) = msg else { continue };
            let v: Value = serde_json::from_str(&t).unwrap();
            if v["method"] == json!("signatureNotification") {
                return v["params"]["result"].clone();
            }
        }
    })
}

/// getLatestBlockhash: (blockhash, lastValidBlockHeight).
pub fn latest_blockhash(port: u16) -> (Hash, u64) {
    let v = result(port, "getLatestBlockhash", json!([]))["value"].clone();
    (v["blockhash"].as_str().unwrap().parse().unwrap(), v["lastValidBlockHeight"].as_u64().unwrap())
}

pub fn block_height(port: u16) -> u64 {
    result(port, "getBlockHeight", json!([])).as_u64().unwrap()
}

/// isBlockhashValid.
pub fn blockhash_valid(port: u16, hash: &Hash) -> bool {
    result(port, "isBlockhashValid", json!([hash.to_string()]))["value"].as_bool().unwrap()
}

/// A transfer signed on the given blockhash (not the latest one).
#[allow(deprecated)]
pub fn transfer_on(hash: Hash, from: &Keypair, to: &Pubkey, lamports: u64) -> Transaction {
    let ix = solana_sdk::system_instruction::transfer(&from.pubkey(), to, lamports);
    Transaction::new_signed_with_payer(&[ix], Some(&from.pubkey()), &[from], hash)
}
