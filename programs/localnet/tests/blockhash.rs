//! Black-box tests of blockhash lifetime and block height: as on a validator, slots and block
//! height follow wall-clock time (one per 400 ms, plus `localnet_advanceClock` warps), at most one
//! new blockhash per block, and a blockhash valid for 150 blocks whatever the request rate, with
//! `getLatestBlockhash.lastValidBlockHeight`, `isBlockhashValid`, `getBlockHeight` and what
//! `sendTransaction` accepts agreeing at every moment.

mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine as _;
use common::*;
use serde_json::{json, Value};
use solana_sdk::{
    native_token::LAMPORTS_PER_SOL,
    signature::{Keypair, Signer},
};

/// MAX_PROCESSING_AGE: blocks a blockhash stays valid after the block it was handed out at.
const LIFETIME: u64 = 150;
/// Nominal slot length.
const SLOT: Duration = Duration::from_millis(400);

/// Steady request traffic from another thread: getLatestBlockhash, simulateTransaction and
/// sendTransaction (a transfer to a fresh account) back to back. A refused simulation or send is
/// kept and reported by `stop`; a failed connection (the node is gone) ends the thread.
struct Hammer {
    stop: Arc<AtomicBool>,
    calls: Arc<AtomicU64>,
    handle: Option<std::thread::JoinHandle<Option<String>>>,
}

impl Hammer {
    fn start(port: u16) -> Self {
        let payer = Keypair::new();
        airdrop(port, &payer.pubkey(), 100 * LAMPORTS_PER_SOL);
        let stop = Arc::new(AtomicBool::new(false));
        let calls = Arc::new(AtomicU64::new(0));
        let handle = std::thread::spawn({
            let (stop, calls) = (stop.clone(), calls.clone());
            move || {
                // BlockhashNotFound is an answer when the test warped the chain past the blockhash
                // meanwhile: the height must then be past its lastValidBlockHeight.
                let expired = |last_valid: u64| try_call(port, "getBlockHeight", json!([])).is_ok_and(|h| h["result"].as_u64() > Some(last_valid));
                while !stop.load(Ordering::Relaxed) {
                    let Ok(latest) = try_call(port, "getLatestBlockhash", json!([])) else { break };
                    let value = &latest["result"]["value"];
                    let (Some(hash), Some(last_valid)) = (value["blockhash"].as_str(), value["lastValidBlockHeight"].as_u64()) else {
                        return Some(format!("getLatestBlockhash: {latest}"));
                    };
                    let tx = transfer_on(hash.parse().unwrap(), &payer, &Keypair::new().pubkey(), 1_000_000);
                    let wire = B64.encode(bincode::serialize(&tx).unwrap());
                    let Ok(sim) = try_call(port, "simulateTransaction", json!([wire, {"encoding": "base64"}])) else { break };
                    let err = &sim["result"]["value"]["err"];
                    if !(err.is_null() || err == "BlockhashNotFound" && expired(last_valid)) {
                        return Some(format!("simulateTransaction: {sim}"));
                    }
                    let Ok(sent) = try_call(port, "sendTransaction", json!([wire, {"encoding": "base64"}])) else { break };
                    if !(sent["result"].is_string() || sent["error"]["data"]["err"] == "BlockhashNotFound" && expired(last_valid)) {
                        return Some(format!("sendTransaction: {sent}"));
                    }
                    calls.fetch_add(3, Ordering::Relaxed);
                }
                None
            }
        });
        Hammer { stop, calls, handle: Some(handle) }
    }

    /// Stop the thread; returns how many calls it made. Panics if one of them was refused.
    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            if let Some(refused) = h.join().expect("hammer thread") {
                panic!("the hammer thread's {refused}");
            }
        }
        self.calls.load(Ordering::Relaxed)
    }
}

impl Drop for Hammer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn slots_in(d: Duration) -> u64 {
    (d.as_millis() / SLOT.as_millis()) as u64
}

#[test]
fn a_blockhash_lives_150_blocks_under_steady_traffic_and_a_warp_past_them_expires_it() {
    let n = start();
    let payer = Keypair::new();
    airdrop(n.port, &payer.pubkey(), 10 * LAMPORTS_PER_SOL);
    let hammer = Hammer::start(n.port);

    let h_pre = block_height(n.port);
    let t_a = Instant::now();
    let (hash0, last_valid) = latest_blockhash(n.port);
    let h0 = block_height(n.port);
    let t_b = Instant::now();
    // Valid through the block 150 after the one it was handed out at.
    assert!(h_pre + LIFETIME <= last_valid && last_valid <= h0 + LIFETIME, "{h_pre} {h0} {last_valid}");
    let lands = transfer_on(hash0, &payer, &Keypair::new().pubkey(), 1_000_000);
    let refused = transfer_on(hash0, &payer, &Keypair::new().pubkey(), 1_000_000);

    // 2,000 requests back to back while the hammer thread sends transactions.
    let mut seen = HashSet::from([hash0]);
    for i in 0..2000 {
        match i % 4 {
            0 | 2 => {
                seen.insert(latest_blockhash(n.port).0);
            }
            1 => {
                let tx = transfer_on(latest_blockhash(n.port).0, &payer, &Keypair::new().pubkey(), 1_000_000);
                let wire = B64.encode(bincode::serialize(&tx).unwrap());
                let sim = result(n.port, "simulateTransaction", json!([wire, {"encoding": "base64"}]));
                assert_eq!(sim["value"]["err"], Value::Null, "{sim}");
            }
            _ => {
                block_height(n.port);
            }
        }
    }
    let t_c = Instant::now();
    let h1 = block_height(n.port);
    let t_d = Instant::now();

    // The height moved with time (one block per 400 ms), not with the number of requests...
    let (lo, hi) = (slots_in(t_c - t_b).saturating_sub(1), slots_in(t_d - t_a) + 1);
    assert!((lo..=hi).contains(&(h1 - h0)), "height moved {} in {:?}..{:?}: expected {lo}..={hi}", h1 - h0, t_c - t_b, t_d - t_a);
    // ...and a new blockhash comes with a new block only.
    assert!(seen.len() as u64 <= h1 - h0 + 1, "{} blockhashes handed out over {} blocks", seen.len(), h1 - h0);
    assert!(h1 <= last_valid, "precondition: the 2,000 requests took a minute ({:?})", t_c - t_b);
    // So the blockhash from before them is still valid, and lands.
    assert!(blockhash_valid(n.port, &hash0), "valid until height {last_valid}, height is {h1}");
    let sent = send(n.port, &lands, json!({}));
    let sig = sent["result"].as_str().unwrap_or_else(|| panic!("{sent}")).to_string();
    let st = result(n.port, "getSignatureStatuses", json!([[sig]]));
    assert_eq!(st["value"][0]["err"], Value::Null, "{st}");

    // A warp past its lifetime (61 s = 152 slots) expires it: the height passes lastValidBlockHeight,
    // isBlockhashValid says false and the node refuses it, with or without preflight.
    result(n.port, "localnet_advanceClock", json!([61]));
    let h2 = block_height(n.port);
    assert!(h2 >= h1 + 152 && h2 > last_valid, "{h1} -> {h2}, last valid {last_valid}");
    assert!(!blockhash_valid(n.port, &hash0));
    for cfg in [json!({}), json!({"skipPreflight": true})] {
        let err = send(n.port, &refused, cfg.clone());
        assert_eq!(err["error"]["code"], json!(-32002), "{cfg}: {err}");
        assert_eq!(err["error"]["data"]["err"], json!("BlockhashNotFound"), "{cfg}: {err}");
    }
    let st = result(n.port, "getSignatureStatuses", json!([[refused.signatures[0].to_string()]]));
    assert_eq!(st["value"][0], Value::Null);
    // A fresh blockhash works again.
    let (fresh, fresh_last_valid) = latest_blockhash(n.port);
    assert!(fresh_last_valid >= h2 + LIFETIME);
    let sent = send(n.port, &transfer_on(fresh, &payer, &Keypair::new().pubkey(), 1_000_000), json!({}));
    assert!(sent["result"].is_string(), "{sent}");
    assert!(hammer.stop() > 0, "the hammer thread made no calls");
}

#[test]
fn is_blockhash_valid_send_transaction_and_block_height_agree_through_a_blockhash_lifetime() {
    let n = start();
    let payer = Keypair::new();
    airdrop(n.port, &payer.pubkey(), 200 * LAMPORTS_PER_SOL);
    let hammer = Hammer::start(n.port);
    let (hash, last_valid) = latest_blockhash(n.port);
    let (mut landed, mut steps) = (0, 0);
    // Walk the chain forward in 1 s warps (2 slots each, plus the slots wall time adds) until the
    // height is past lastValidBlockHeight. Reads bracket each check: a blockhash found valid at
    // some moment between reading h_a and h_b had height <= last_valid at that moment, so
    // h_a <= last_valid; one found expired had height > last_valid, so h_b > last_valid.
    loop {
        let h_a = block_height(n.port);
        let valid = blockhash_valid(n.port, &hash);
        let sent = send(n.port, &transfer_on(hash, &payer, &Keypair::new().pubkey(), 1_000_000), json!({}));
        let h_b = block_height(n.port);
        let accepted = sent["result"].is_string();
        if !accepted {
            assert_eq!(sent["error"]["data"]["err"], json!("BlockhashNotFound"), "{sent}");
        }
        let at = format!("step {steps}: height {h_a}..{h_b}, last valid {last_valid}, valid {valid}, sent {sent}");
        if valid {
            assert!(h_a <= last_valid, "isBlockhashValid true past lastValidBlockHeight: {at}");
        } else {
            assert!(h_b > last_valid, "isBlockhashValid false before lastValidBlockHeight: {at}");
        }
        if accepted {
            assert!(h_a <= last_valid, "a transaction landed past lastValidBlockHeight: {at}");
            landed += 1;
        } else {
            assert!(h_b > last_valid, "BlockhashNotFound before lastValidBlockHeight: {at}");
        }
        if h_a > last_valid {
            break;
        }
        steps += 1;
        // Each step moves the height by at least 2: the blockhash cannot outlive 150 blocks.
        assert!(steps <= LIFETIME / 2 + 1, "still valid after {steps} warps: {at}");
        result(n.port, "localnet_advanceClock", json!([1]));
    }
    assert!(landed > 0, "the blockhash never landed a transaction");
    assert!(hammer.stop() > 0);
}

#[test]
fn the_same_transaction_again_is_a_duplicate_as_on_a_validator_and_identical_airdrops_all_pay() {
    let n = start();
    let payer = Keypair::new();
    let to = Keypair::new().pubkey();
    // The same airdrop three times in a row (within one block they share the blockhash): each is
    // its own transaction and each pays.
    let sigs: HashSet<String> = (0..3).map(|_| airdrop(n.port, &payer.pubkey(), LAMPORTS_PER_SOL)).collect();
    assert_eq!(sigs.len(), 3);
    assert_eq!(balance(n.port, &payer.pubkey()), 3 * LAMPORTS_PER_SOL);

    let tx = transfer_tx(n.port, &payer, &to, 1_000_000);
    let first = send(n.port, &tx, json!({}));
    assert!(first["result"].is_string(), "{first}");
    // Again with preflight: the simulation refuses it while its blockhash is valid...
    let again = send(n.port, &tx, json!({}));
    assert_eq!(again["error"]["code"], json!(-32002), "{again}");
    assert_eq!(again["error"]["data"]["err"], json!("AlreadyProcessed"), "{again}");
    // ...without preflight (a rebroadcast) the answer is its signature; nothing runs twice.
    assert_eq!(send(n.port, &tx, json!({"skipPreflight": true}))["result"], first["result"]);
    assert_eq!(balance(n.port, &to), 1_000_000);
    // Once its blockhash expired: BlockhashNotFound with preflight, still its signature without.
    result(n.port, "localnet_advanceClock", json!([61]));
    assert_eq!(send(n.port, &tx, json!({}))["error"]["data"]["err"], json!("BlockhashNotFound"));
    assert_eq!(send(n.port, &tx, json!({"skipPreflight": true}))["result"], first["result"]);
    assert_eq!(balance(n.port, &to), 1_000_000);
}
