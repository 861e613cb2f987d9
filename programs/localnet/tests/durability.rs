//! Black-box durability tests of `--ledger`: what the node reported as finalized must survive a
//! SIGKILL, under steady RPC traffic, together with the transaction history; a torn last record
//! of the write-ahead log is dropped, damage anywhere else stops the node instead of losing data.

mod common;

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use common::*;
use serde_json::{json, Value};
use solana_sdk::{
    native_token::LAMPORTS_PER_SOL,
    pubkey::Pubkey,
    signature::{Keypair, Signer},
};

/// Steady RPC traffic: a thread calling getSlot and getLatestBlockhash back to back, so the node
/// is never idle (the old node only wrote its snapshot after 400 ms without requests).
struct Traffic {
    stop: Arc<AtomicBool>,
    calls: Arc<AtomicU64>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Traffic {
    fn start(port: u16) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let calls = Arc::new(AtomicU64::new(0));
        let handle = std::thread::spawn({
            let (stop, calls) = (stop.clone(), calls.clone());
            move || {
                while !stop.load(Ordering::Relaxed) {
                    // The node is killed under us: a failed call ends the loop.
                    if try_call(port, "getSlot", json!([])).is_err()
                        || try_call(port, "getLatestBlockhash", json!([])).is_err()
                    {
                        break;
                    }
                    calls.fetch_add(2, Ordering::Relaxed);
                }
            }
        });
        Traffic { stop, calls, handle: Some(handle) }
    }

    /// Stop the thread; returns how many calls it made.
    fn stop(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.calls.load(Ordering::Relaxed)
    }
}

fn ledger_args(dir: &Path) -> [&str; 2] {
    ["--ledger", dir.to_str().unwrap()]
}

fn statuses(port: u16, sigs: &[String]) -> Vec<Value> {
    let st = result(port, "getSignatureStatuses", json!([sigs, {"searchTransactionHistory": true}]));
    st["value"].as_array().unwrap().clone()
}

fn assert_finalized(port: u16, sigs: &[String]) {
    for (sig, st) in sigs.iter().zip(statuses(port, sigs)) {
        assert_eq!(st["confirmationStatus"], json!("finalized"), "{sig}: {st}");
        assert_eq!(st["err"], Value::Null, "{sig}: {st}");
    }
}

fn wal(dir: &Path) -> std::path::PathBuf {
    dir.join("wal.log")
}

#[test]
fn finalized_transactions_and_their_history_survive_kill_9_under_steady_traffic() {
    const N: usize = 8;
    let dir = temp_dir("kill9");
    let payer = Keypair::new();
    let recipients: Vec<Pubkey> = (0..N).map(|_| Keypair::new().pubkey()).collect();
    let amount = |i: usize| 1_000_000 + i as u64;
    let mut sigs: Vec<String> = vec![];
    let (slot_before, height_before, count_before);
    {
        let mut n = start_with(&ledger_args(&dir));
        let traffic = Traffic::start(n.port);
        let funding = airdrop(n.port, &payer.pubkey(), 10 * LAMPORTS_PER_SOL);
        slot_before = result(n.port, "getSlot", json!([])).as_u64().unwrap();
        height_before = result(n.port, "getBlockHeight", json!([])).as_u64().unwrap();
        for (i, to) in recipients.iter().enumerate() {
            sigs.push(send_transfer(n.port, &payer, to, amount(i)));
        }
        count_before = result(n.port, "getTransactionCount", json!([])).as_u64().unwrap();
        sigs.insert(0, funding);
        // SIGKILL right after the last answer, while the traffic thread is still polling.
        n.kill9();
        assert!(traffic.stop() > 0, "the traffic thread made no calls");
    }

    let n = start_with(&ledger_args(&dir));
    // Every signature the node answered is finalized, with its balances.
    assert_finalized(n.port, &sigs);
    for (i, to) in recipients.iter().enumerate() {
        assert_eq!(balance(n.port, to), amount(i), "recipient {i}");
    }
    let spent: u64 = (0..N).map(amount).sum::<u64>() + N as u64 * 5000;
    assert_eq!(balance(n.port, &payer.pubkey()), 10 * LAMPORTS_PER_SOL - spent);
    // History: the per-address index (newest first) and the transaction records.
    let history = result(n.port, "getSignaturesForAddress", json!([payer.pubkey().to_string()]));
    let listed: Vec<&str> = history.as_array().unwrap().iter().map(|h| h["signature"].as_str().unwrap()).collect();
    let newest_first: Vec<&str> = sigs.iter().rev().map(String::as_str).collect();
    assert_eq!(listed, newest_first);
    for (i, to) in recipients.iter().enumerate() {
        let mine = result(n.port, "getSignaturesForAddress", json!([to.to_string()]));
        assert_eq!(mine[0]["signature"], json!(sigs[i + 1]));
        assert_eq!(mine[0]["confirmationStatus"], json!("finalized"));
        let tx = result(n.port, "getTransaction", json!([sigs[i + 1], {"encoding": "json"}]));
        assert_eq!(tx["meta"]["err"], Value::Null);
        assert_eq!(tx["meta"]["postBalances"][1], json!(amount(i)));
        assert_eq!(tx["transaction"]["message"]["accountKeys"][1], json!(to.to_string()));
        assert!(tx["slot"].as_u64().unwrap() >= slot_before);
    }
    // A subscription to an old signature is answered at once, as for any processed one.
    assert_eq!(signature_notification(n.port, &sigs[N])["value"]["err"], Value::Null);
    let parsed = result(n.port, "getTransaction", json!([sigs[0], {"encoding": "jsonParsed"}]));
    assert_eq!(parsed["meta"]["postBalances"][1], json!(10 * LAMPORTS_PER_SOL));
    // Slots, block height and the transaction count do not go backwards.
    assert!(result(n.port, "getSlot", json!([])).as_u64().unwrap() > slot_before);
    assert!(result(n.port, "getBlockHeight", json!([])).as_u64().unwrap() > height_before);
    assert!(result(n.port, "getTransactionCount", json!([])).as_u64().unwrap() >= count_before);
    // A resend of an old transaction is recognised, a new one spends the restored balance.
    let next = send_transfer(n.port, &payer, &recipients[0], 7);
    assert_eq!(balance(n.port, &recipients[0]), amount(0) + 7);
    assert_finalized(n.port, &[next]);
    drop(n);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn history_survives_compaction_sigterm_and_restarts() {
    let dir = temp_dir("compact");
    let payer = Keypair::new();
    let to = Keypair::new().pubkey();
    // Compact after every record: the crash lands between compactions.
    let env = [("BAZAAR_LOCALNET_COMPACT_BYTES", "1")];
    let mut sigs = vec![];
    let failed;
    {
        let mut n = start_env(&ledger_args(&dir), &env);
        sigs.push(airdrop(n.port, &payer.pubkey(), LAMPORTS_PER_SOL));
        for i in 0..3 {
            sigs.push(send_transfer(n.port, &payer, &to, 1_000_000 + i));
        }
        let failing = transfer_tx(n.port, &payer, &to, 50 * LAMPORTS_PER_SOL);
        let landed = send(n.port, &failing, json!({"skipPreflight": true}));
        failed = landed["result"].as_str().unwrap_or_else(|| panic!("{landed}")).to_string();
        result(n.port, "localnet_advanceClock", json!([3600]));
        // Requests are served in order, so once this answers the compaction after the last
        // change is done: the snapshot has every transaction and the log is empty.
        result(n.port, "getHealth", json!([]));
        let snapshot: Value = serde_json::from_slice(&std::fs::read(dir.join("snapshot.json")).unwrap()).unwrap();
        assert_eq!(snapshot["transactions"].as_array().unwrap().len(), sigs.len() + 1);
        assert_eq!(std::fs::metadata(wal(&dir)).unwrap().len(), 0);
        n.kill9();
    }
    {
        let mut n = start_env(&ledger_args(&dir), &env);
        assert_finalized(n.port, &sigs);
        assert_eq!(balance(n.port, &to), 3_000_003);
        // A transaction that landed with an error keeps its error.
        let st = &statuses(n.port, std::slice::from_ref(&failed))[0];
        assert_eq!(st["err"]["InstructionError"][0], json!(0), "{st}");
        let tx = result(n.port, "getTransaction", json!([failed, {"encoding": "json"}]));
        assert_eq!(tx["meta"]["err"], st["err"]);
        assert!(tx["meta"]["logMessages"].as_array().unwrap().iter().any(|l| l.as_str().unwrap().contains("insufficient lamports")));
        sigs.push(send_transfer(n.port, &payer, &to, 5));
        n.terminate();
    }
    assert!(dir.join("snapshot.json").exists());
    let n = start_with(&ledger_args(&dir));
    assert_finalized(n.port, &sigs);
    assert_eq!(balance(n.port, &to), 3_000_008);
    let history = result(n.port, "getSignaturesForAddress", json!([to.to_string()]));
    assert_eq!(history.as_array().unwrap().len(), 5);
    // The clock offset survives too (the advanced hour).
    let clock = result(n.port, "localnet_getClock", json!([]));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    assert!(clock["unix_timestamp"].as_i64().unwrap() >= now + 3590, "{clock}");
    drop(n);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_torn_last_record_is_dropped_and_the_ledger_stays_usable() {
    let dir = temp_dir("torn");
    let payer = Keypair::new();
    let to = Keypair::new().pubkey();
    let mut sigs = vec![];
    {
        let mut n = start_with(&ledger_args(&dir));
        sigs.push(airdrop(n.port, &payer.pubkey(), LAMPORTS_PER_SOL));
        sigs.push(send_transfer(n.port, &payer, &to, 1_000_000));
        n.kill9();
    }
    // A write cut short by the crash: a frame header promising more bytes than follow, then the
    // zeros a file system may leave in an extended but unwritten tail.
    {
        let mut f = std::fs::OpenOptions::new().append(true).open(wal(&dir)).expect("wal.log exists");
        f.write_all(&4096u32.to_le_bytes()).unwrap();
        f.write_all(&[0xAB; 20]).unwrap();
        f.write_all(&[0u8; 4096]).unwrap();
    }
    let lost;
    {
        let mut n = start_with(&ledger_args(&dir));
        assert_finalized(n.port, &sigs);
        assert_eq!(balance(n.port, &to), 1_000_000);
        // One more record, then cut its last bytes off: a torn write of a real record.
        lost = send_transfer(n.port, &payer, &to, 2);
        n.kill9();
    }
    let len = std::fs::metadata(wal(&dir)).unwrap().len();
    assert!(len > 3, "the last transfer is in the log");
    std::fs::OpenOptions::new().write(true).open(wal(&dir)).unwrap().set_len(len - 3).unwrap();
    {
        let mut n = start_with(&ledger_args(&dir));
        assert_finalized(n.port, &sigs);
        assert_eq!(statuses(n.port, std::slice::from_ref(&lost))[0], Value::Null);
        assert_eq!(balance(n.port, &to), 1_000_000);
        // Records appended after the dropped tail are read back on the next start.
        sigs.push(send_transfer(n.port, &payer, &to, 3));
        n.kill9();
    }
    let n = start_with(&ledger_args(&dir));
    assert_finalized(n.port, &sigs);
    assert_eq!(balance(n.port, &to), 1_000_003);
    drop(n);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_damaged_record_before_the_tail_stops_the_node_instead_of_dropping_history() {
    let dir = temp_dir("damaged");
    let payer = Keypair::new();
    {
        let mut n = start_with(&ledger_args(&dir));
        airdrop(n.port, &payer.pubkey(), LAMPORTS_PER_SOL);
        for i in 0..3 {
            send_transfer(n.port, &payer, &Keypair::new().pubkey(), 1_000_000 + i);
        }
        n.kill9();
    }
    // Flip one byte inside the first record; complete records follow it, so this is not a torn
    // tail: silently dropping it (and everything after) would lose confirmed transactions.
    let mut bytes = std::fs::read(wal(&dir)).expect("wal.log exists");
    bytes[40] ^= 0x55;
    std::fs::write(wal(&dir), &bytes).unwrap();
    let err = match try_start(&ledger_args(&dir), &[]) {
        Ok(_) => panic!("the node started on a damaged log"),
        Err(e) => e,
    };
    assert!(err.contains("wal.log") && err.contains("corrupt"), "{err}");
    // The damaged file is left as it was for the operator.
    assert_eq!(std::fs::read(wal(&dir)).unwrap(), bytes);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_ledger_is_used_by_one_node_at_a_time() {
    let dir = temp_dir("locked");
    let first = start_with(&ledger_args(&dir));
    let err = match try_start(&ledger_args(&dir), &[]) {
        Ok(_) => panic!("a second node opened a ledger in use"),
        Err(e) => e,
    };
    assert!(err.contains("in use"), "{err}");
    drop(first);
    // SIGKILL releases the lock with the process.
    let n = start_with(&ledger_args(&dir));
    assert_eq!(result(n.port, "getHealth", json!([])), json!("ok"));
    drop(n);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_version_1_accounts_json_ledger_is_read_and_migrated() {
    let dir = temp_dir("v1");
    std::fs::create_dir_all(&dir).unwrap();
    let who = Keypair::new().pubkey();
    let v1 = json!({"version": 1, "clock_offset": 7200, "accounts": [{
        "pubkey": who.to_string(), "lamports": 4242, "owner": "11111111111111111111111111111111",
        "executable": false, "data": "",
    }]});
    std::fs::write(dir.join("accounts.json"), v1.to_string()).unwrap();
    let n = start_with(&ledger_args(&dir));
    assert_eq!(balance(n.port, &who), 4242);
    let clock = result(n.port, "localnet_getClock", json!([]));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    assert!(clock["unix_timestamp"].as_i64().unwrap() >= now + 7190, "{clock}");
    // Rewritten in the current format at start.
    assert!(dir.join("snapshot.json").exists() && !dir.join("accounts.json").exists());
    drop(n);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn compaction_does_not_expire_the_blockhashes_clients_hold() {
    let dir = temp_dir("compact-blockhash");
    let payer = Keypair::new();
    {
        // 2,000 accounts in the ledger: 100 transactions of 20 transfers each.
        let mut n = start_with(&ledger_args(&dir));
        airdrop(n.port, &payer.pubkey(), 100 * LAMPORTS_PER_SOL);
        for _ in 0..100 {
            #[allow(deprecated)]
            let ixs: Vec<_> = (0..20)
                .map(|_| solana_sdk::system_instruction::transfer(&payer.pubkey(), &Keypair::new().pubkey(), 1_000_000))
                .collect();
            let tx = solana_sdk::transaction::Transaction::new_signed_with_payer(
                &ixs,
                Some(&payer.pubkey()),
                &[&payer],
                blockhash(n.port),
            );
            let sent = send(n.port, &tx, json!({}));
            assert!(sent["result"].is_string(), "{sent}");
        }
        n.terminate();
    }
    // Compact after every record: ten compactions of that ledger while a signed transaction waits.
    let n = start_env(&ledger_args(&dir), &[("BAZAAR_LOCALNET_COMPACT_BYTES", "1")]);
    let waiting = transfer_tx(n.port, &payer, &Keypair::new().pubkey(), 1_000_000);
    for _ in 0..10 {
        airdrop(n.port, &Keypair::new().pubkey(), 1_000_000);
    }
    let sent = send(n.port, &waiting, json!({}));
    assert!(sent["result"].is_string(), "the blockhash expired during compaction: {sent}");
    drop(n);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn blockhashes_handed_out_after_the_last_record_read_as_expired_after_kill_9() {
    let dir = temp_dir("restart-height");
    let (hash, last_valid);
    {
        let mut n = start_with(&ledger_args(&dir));
        airdrop(n.port, &Keypair::new().pubkey(), LAMPORTS_PER_SOL);
        // The last record is that airdrop. From here on nothing changes state, but the block
        // height keeps moving with time (a block per 400 ms): wait for a few blocks (5 s at most)
        // and hand out a blockhash valid beyond the recorded height + 150.
        let recorded = block_height(n.port);
        for _ in 0..100 {
            if block_height(n.port) >= recorded + 3 {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        (hash, last_valid) = latest_blockhash(n.port);
        n.kill9();
    }
    // Blockhashes are not persisted: whatever was handed out before the crash can never land,
    // and a client waiting for "block height > lastValidBlockHeight" must be told so.
    let n = start_with(&ledger_args(&dir));
    let height = block_height(n.port);
    assert!(height > last_valid, "height {height} after restart, a blockhash from before valid until {last_valid}");
    assert!(!blockhash_valid(n.port, &hash));
    drop(n);
    let _ = std::fs::remove_dir_all(&dir);
}
