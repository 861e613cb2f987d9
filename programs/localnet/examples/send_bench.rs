//! What the `--ledger` write-ahead log costs: sequential sendTransaction throughput and latency
//! with and without a ledger, plus the restart (recovery) time after a SIGKILL.
//!
//! ```text
//! cargo build -p bazaar-localnet --manifest-path programs/Cargo.toml
//! cargo run -p bazaar-localnet --manifest-path programs/Cargo.toml --example send_bench -- [N] [PORT]
//! ```
//! N transfers per mode (default 500), HTTP port PORT (default 18103; the websocket takes PORT+1).
//! The node binary is `$BAZAAR_LOCALNET_BIN`, else `$CARGO_TARGET_DIR/debug/bazaar-localnet`
//! (default target dir `~/.cache/bazaar/cargo-target`). The ledger goes to a temp directory.
//! Prints one line per mode; figures go in the README by hand (no timing assertions anywhere).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde_json::{json, Value};
use solana_sdk::{
    hash::Hash,
    native_token::LAMPORTS_PER_SOL,
    signature::{Keypair, Signer},
    transaction::Transaction,
};

fn binary() -> PathBuf {
    if let Some(b) = std::env::var_os("BAZAAR_LOCALNET_BIN") {
        return b.into();
    }
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| {
        PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/bazaar/cargo-target")
    });
    target.join("debug/bazaar-localnet")
}

/// The node process; SIGKILLed when dropped (also when the bench panics).
struct Node(Child);

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start the node and wait for its ready line; returns it with the time that took.
fn start(port: u16, ledger: Option<&PathBuf>) -> (Node, Duration) {
    let t = Instant::now();
    let mut cmd = Command::new(binary());
    cmd.args(["--port", &port.to_string(), "--bind", "127.0.0.1"]);
    if let Some(dir) = ledger {
        cmd.arg("--ledger").arg(dir);
    }
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::inherit()).spawn().expect("spawn bazaar-localnet");
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    loop {
        line.clear();
        assert!(out.read_line(&mut line).unwrap() > 0, "bazaar-localnet exited before it was ready");
        if line.starts_with("bazaar-localnet listening on") {
            break;
        }
    }
    let ready = t.elapsed();
    std::thread::spawn(move || {
        let mut sink = vec![];
        let _ = out.read_to_end(&mut sink);
    });
    (Node(child), ready)
}

fn rpc(port: u16, method: &str, params: Value) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_nodelay(true).unwrap();
    write!(
        s,
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut resp = String::new();
    s.read_to_string(&mut resp).unwrap();
    let v: Value = serde_json::from_str(resp.split_once("\r\n\r\n").unwrap().1).unwrap();
    assert!(v.get("error").is_none(), "{method}: {v}");
    v["result"].clone()
}

fn blockhash(port: u16) -> Hash {
    rpc(port, "getLatestBlockhash", json!([]))["value"]["blockhash"].as_str().unwrap().parse().unwrap()
}

#[allow(deprecated)]
fn transfer(from: &Keypair, hash: Hash) -> String {
    let ix = solana_sdk::system_instruction::transfer(&from.pubkey(), &Keypair::new().pubkey(), 1_000_000);
    let tx = Transaction::new_signed_with_payer(&[ix], Some(&from.pubkey()), &[from], hash);
    base64::engine::general_purpose::STANDARD.encode(bincode::serialize(&tx).unwrap())
}

struct Run {
    tps: f64,
    p50_ms: f64,
    p99_ms: f64,
    max_ms: f64,
}

/// N sequential sendTransaction calls (default preflight) of fresh transfers; only the send is timed.
fn run(port: u16, n: usize) -> Run {
    let payer = Keypair::new();
    rpc(port, "requestAirdrop", json!([payer.pubkey().to_string(), 100_000 * LAMPORTS_PER_SOL]));
    let mut hash = blockhash(port);
    for _ in 0..20 {
        rpc(port, "sendTransaction", json!([transfer(&payer, hash), {"encoding": "base64"}]));
    }
    let mut lat = Vec::with_capacity(n);
    let mut busy = Duration::ZERO;
    for i in 0..n {
        if i % 50 == 0 {
            hash = blockhash(port);
        }
        let wire = transfer(&payer, hash);
        let t = Instant::now();
        rpc(port, "sendTransaction", json!([wire, {"encoding": "base64"}]));
        let d = t.elapsed();
        busy += d;
        lat.push(d.as_secs_f64() * 1e3);
    }
    lat.sort_by(f64::total_cmp);
    Run { tps: n as f64 / busy.as_secs_f64(), p50_ms: lat[n / 2], p99_ms: lat[(n * 99 / 100).min(n - 1)], max_ms: lat[n - 1] }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map(|a| a.parse().expect("N")).unwrap_or(500);
    let port: u16 = args.next().map(|a| a.parse().expect("PORT")).unwrap_or(18103);
    println!("binary {}, {n} sequential sendTransaction per mode", binary().display());

    let (node, _) = start(port, None);
    let mem = run(port, n);
    drop(node);
    println!(
        "memory only : {:7.1} tx/s  p50 {:6.2} ms  p99 {:6.2} ms  max {:7.1} ms",
        mem.tps, mem.p50_ms, mem.p99_ms, mem.max_ms
    );

    let dir = std::env::temp_dir().join(format!("bazaar-localnet-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (node, _) = start(port, Some(&dir));
    let wal = run(port, n);
    let count = rpc(port, "getTransactionCount", json!([]));
    let wal_bytes = std::fs::metadata(dir.join("wal.log")).map(|m| m.len()).unwrap_or(0);
    drop(node); // SIGKILL: recovery replays the whole log
    println!(
        "--ledger    : {:7.1} tx/s  p50 {:6.2} ms  p99 {:6.2} ms  max {:7.1} ms  (log {} KiB, {count} transactions)",
        wal.tps,
        wal.p50_ms,
        wal.p99_ms,
        wal.max_ms,
        wal_bytes / 1024
    );
    let (mut node, ready) = start(port, Some(&dir));
    assert_eq!(rpc(port, "getTransactionCount", json!([])), count, "recovered transaction count");
    let snapshot_bytes = std::fs::metadata(dir.join("snapshot.json")).map(|m| m.len()).unwrap_or(0);
    println!(
        "restart after SIGKILL: ready in {:.2} s (replay + compaction into a {} KiB snapshot)",
        ready.as_secs_f64(),
        snapshot_bytes / 1024
    );
    let t = Instant::now();
    unsafe { libc::kill(node.0.id() as i32, libc::SIGTERM) };
    let _ = node.0.wait();
    println!("SIGTERM (final compaction) to exit: {:.2} s", t.elapsed().as_secs_f64());
    let _ = std::fs::remove_dir_all(&dir);
}
