//! Durable `--ledger` storage: a write-ahead log of every state change plus a snapshot it is
//! compacted into.
//!
//! Files in the ledger directory (see the README, "Ledger"):
//! - `wal.log`: one frame per state change, appended and `fdatasync`ed before the node answers
//!   (so anything reported, e.g. a `finalized` signature, is on disk). A frame is
//!   `len: u32 LE | crc32(payload): u32 LE | payload`, the payload a JSON [`Record`]: a sequence
//!   number, the chain position after the change, the post-state of every account the change
//!   wrote, and for transactions the full transaction record (what getTransaction answers).
//! - `snapshot.json`: the [`Snapshot`] the log is compacted into (accounts, transaction history in
//!   execution order, chain position, and the sequence number of the last record it includes).
//!   Written to a temporary file, fsynced, renamed over the old one, and the directory fsynced;
//!   only then is the log truncated. Records at or below the snapshot's sequence number are
//!   skipped at replay, so a crash between the rename and the truncation is harmless.
//! - `LOCK`: held (`flock`) by the running node, so two nodes never write the same ledger.
//!
//! Recovery: snapshot, then the log's records in order. A damaged frame at the end of the log
//! (incomplete, or with a bad checksum or impossible length and nothing but zero bytes after it,
//! as a file system may leave in an extended but unwritten tail) is a write the crash cut short:
//! it was never acknowledged, so it is dropped and the file truncated before it. A damaged frame
//! with data after it is not something a crash produces: the node refuses to start rather than
//! silently drop acknowledged transactions, and leaves the file alone.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::{Deserialize, Serialize};
use solana_sdk::{account::Account, pubkey::Pubkey};

use crate::record::TxRecord;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;

pub const SNAPSHOT_FILE: &str = "snapshot.json";
/// Snapshot name (format version 1: accounts and clock offset only) before the write-ahead log.
const LEGACY_SNAPSHOT_FILE: &str = "accounts.json";
pub const WAL_FILE: &str = "wal.log";
const LOCK_FILE: &str = "LOCK";
const SNAPSHOT_VERSION: u32 = 2;
/// Frame header: payload length (u32 LE) + CRC-32 (IEEE) of the payload (u32 LE).
const FRAME_HEADER: usize = 8;
/// Largest payload accepted at replay (a transaction record is a few KiB); a larger length field
/// is damage, not a record.
const MAX_RECORD: usize = 64 << 20;
/// By default the log is compacted once it is at least this large (bytes) and at least as large
/// as the last snapshot, so compaction costs at most about one extra write of everything logged.
/// `BAZAAR_LOCALNET_COMPACT_BYTES=N` replaces that rule by "once the log has N bytes" (the tests
/// use 1: compact after every record).
const DEFAULT_COMPACT_BYTES: u64 = 8 << 20;

/// Where the chain stands after a change: persisted with every record so that after a restart
/// slots, block heights, the clock and the transaction count continue instead of starting over.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChainPos {
    pub slot: u64,
    /// Block height as reported over RPC (the node counts it, see chain.rs), not the bank's.
    pub block_height: u64,
    /// On-chain `Clock.unix_timestamp`, unix seconds.
    pub unix_timestamp: i64,
    /// Seconds added by `localnet_advanceClock` on top of wall-clock time.
    pub clock_offset: i64,
    /// Transactions committed so far (getTransactionCount).
    pub tx_count: u64,
    /// Wall-clock time of the record, unix milliseconds (0 in records of older nodes). Slots and
    /// block height move with wall time between records, so a restart adds the slots since then.
    #[serde(default)]
    pub wall_ms: u64,
}

/// An account's state as stored: `lamports == 0` means the account no longer exists.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct StoredAccount {
    pub pubkey: String,
    pub lamports: u64,
    pub owner: String,
    pub executable: bool,
    /// Account data, base64.
    pub data: String,
}

impl StoredAccount {
    /// The stored form of `key`'s state; `None` (a deleted or never-funded account) is stored
    /// as zero lamports.
    pub fn new(key: &Pubkey, account: Option<&Account>) -> Self {
        match account {
            Some(a) => StoredAccount {
                pubkey: key.to_string(),
                lamports: a.lamports,
                owner: a.owner.to_string(),
                executable: a.executable,
                data: B64.encode(&a.data),
            },
            None => StoredAccount {
                pubkey: key.to_string(),
                lamports: 0,
                owner: Pubkey::default().to_string(),
                executable: false,
                data: String::new(),
            },
        }
    }

    /// Decode; `None` as the account for a deleted one.
    fn decode(&self) -> anyhow::Result<(Pubkey, Option<Account>)> {
        let key: Pubkey = self.pubkey.parse().map_err(|_| anyhow::anyhow!("bad pubkey {}", self.pubkey))?;
        if self.lamports == 0 {
            return Ok((key, None));
        }
        let owner: Pubkey = self.owner.parse().map_err(|_| anyhow::anyhow!("bad owner {}", self.owner))?;
        let mut acc = Account::new(self.lamports, 0, &owner);
        acc.data = B64.decode(&self.data)?;
        acc.executable = self.executable;
        Ok((key, Some(acc)))
    }
}

/// One write-ahead log record (the JSON payload of a frame).
#[derive(Serialize)]
struct RecordOut<'a> {
    seq: u64,
    pos: ChainPos,
    accounts: &'a [StoredAccount],
    #[serde(skip_serializing_if = "Option::is_none")]
    tx: Option<&'a TxRecord>,
}

#[derive(Deserialize)]
struct RecordIn {
    seq: u64,
    pos: ChainPos,
    #[serde(default)]
    accounts: Vec<StoredAccount>,
    #[serde(default)]
    tx: Option<TxRecord>,
}

/// `snapshot.json`. Version 1 files (`accounts.json`: version, clock_offset, accounts) read as a
/// snapshot without history or position.
#[derive(Serialize)]
struct SnapshotOut<'a> {
    version: u32,
    seq: u64,
    clock_offset: i64,
    pos: ChainPos,
    accounts: Vec<&'a StoredAccount>,
    transactions: &'a [&'a TxRecord],
}

#[derive(Deserialize)]
struct SnapshotIn {
    version: u32,
    #[serde(default)]
    seq: u64,
    #[serde(default)]
    clock_offset: i64,
    #[serde(default)]
    pos: Option<ChainPos>,
    accounts: Vec<StoredAccount>,
    #[serde(default)]
    transactions: Vec<TxRecord>,
}

/// The state found on disk at start.
#[derive(Default)]
pub struct Recovered {
    /// False for a new (empty) ledger directory.
    pub existed: bool,
    /// Live accounts (snapshot + every logged account state, the last one winning).
    pub accounts: BTreeMap<Pubkey, Account>,
    /// Transaction records in execution order.
    pub transactions: Vec<TxRecord>,
    /// Position after the last change.
    pub pos: ChainPos,
    /// Records replayed from the log (after the snapshot).
    pub replayed: usize,
    /// Bytes of a torn tail dropped from the log.
    pub dropped_bytes: u64,
}

/// An open ledger directory: the write-ahead log appender and the snapshot writer.
pub struct Ledger {
    dir: PathBuf,
    wal: File,
    /// Current size of the log (bytes).
    wal_bytes: u64,
    /// Sequence number of the last record appended (or recovered).
    seq: u64,
    /// Size of the last snapshot written (bytes).
    snapshot_bytes: u64,
    /// Every persisted account as of the last record: the snapshot's accounts with every logged
    /// account state applied, i.e. exactly what a replay rebuilds. Compaction writes it as is,
    /// so it never reads the bank (a banks call per account; before blocks followed wall time,
    /// each call could also register a blockhash and expire the ones clients held).
    image: BTreeMap<Pubkey, StoredAccount>,
    /// `BAZAAR_LOCALNET_COMPACT_BYTES`: fixed compaction threshold (bytes), else the default rule.
    compact_at: Option<u64>,
    /// Held for the node's lifetime (flock is released when the process dies, even by SIGKILL).
    _lock: File,
}

/// How a frame at some offset of the log reads.
enum Frame {
    Ok { payload_end: usize },
    /// Header or payload runs past the end of the file.
    Truncated,
    /// Length field absurd or checksum mismatch.
    Bad { end: Option<usize>, why: &'static str },
}

fn read_frame(buf: &[u8], off: usize) -> Frame {
    if buf.len() - off < FRAME_HEADER {
        return Frame::Truncated;
    }
    let len = u32::from_le_bytes(buf[off..off + 4].try_into().unwrap()) as usize;
    let crc = u32::from_le_bytes(buf[off + 4..off + 8].try_into().unwrap());
    if len == 0 || len > MAX_RECORD {
        return Frame::Bad { end: None, why: "impossible record length" };
    }
    let end = off + FRAME_HEADER + len;
    if end > buf.len() {
        return Frame::Truncated;
    }
    if crc32fast::hash(&buf[off + FRAME_HEADER..end]) != crc {
        return Frame::Bad { end: Some(end), why: "checksum mismatch" };
    }
    Frame::Ok { payload_end: end }
}

fn sync_dir(dir: &Path) -> std::io::Result<()> {
    File::open(dir)?.sync_all()
}

impl Ledger {
    /// Open (creating it if needed) the ledger in `dir`, lock it, and recover its state:
    /// snapshot + log replay. A torn log tail is dropped (the file is truncated before it).
    ///
    /// Errors: the directory is locked by another node; the snapshot cannot be parsed; the log
    /// is damaged before its tail ("corrupt"; the file is left untouched); I/O errors.
    pub fn open(dir: &Path) -> anyhow::Result<(Ledger, Recovered)> {
        std::fs::create_dir_all(dir)?;
        let lock = OpenOptions::new().create(true).truncate(false).write(true).open(dir.join(LOCK_FILE))?;
        // SAFETY: flock on a file descriptor we own.
        if unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            anyhow::bail!("ledger {} is in use by another bazaar-localnet", dir.display());
        }
        let mut rec = Recovered::default();
        let mut image = BTreeMap::new();
        let mut seq = 0;
        let mut snapshot_bytes = 0;
        let snap_file = [SNAPSHOT_FILE, LEGACY_SNAPSHOT_FILE].iter().map(|f| dir.join(f)).find(|p| p.exists());
        if let Some(file) = snap_file {
            let bytes = std::fs::read(&file)?;
            snapshot_bytes = bytes.len() as u64;
            let snap: SnapshotIn =
                serde_json::from_slice(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            if snap.version > SNAPSHOT_VERSION {
                anyhow::bail!("{}: snapshot version {} is newer than this node ({SNAPSHOT_VERSION})", file.display(), snap.version);
            }
            rec.existed = true;
            seq = snap.seq;
            rec.pos = snap.pos.unwrap_or(ChainPos { clock_offset: snap.clock_offset, ..Default::default() });
            for a in snap.accounts {
                if let (key, Some(acc)) = a.decode().map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))? {
                    rec.accounts.insert(key, acc);
                    image.insert(key, a);
                }
            }
            rec.transactions = snap.transactions;
        }

        let wal_path = dir.join(WAL_FILE);
        let mut buf = vec![];
        if wal_path.exists() {
            File::open(&wal_path)?.read_to_end(&mut buf)?;
        }
        let mut off = 0;
        while off < buf.len() {
            let end = match read_frame(&buf, off) {
                Frame::Ok { payload_end } => payload_end,
                Frame::Truncated => break,
                Frame::Bad { end, why } => {
                    // Torn iff nothing but zeros follows: after the frame's end when its length
                    // is plausible, else after its header.
                    let rest = end.unwrap_or((off + FRAME_HEADER).min(buf.len()));
                    let torn = buf[rest..].iter().all(|b| *b == 0);
                    if torn {
                        break;
                    }
                    anyhow::bail!(
                        "{}: corrupt record at byte {off} ({why}) with {} more bytes after it; a crash only \
                         tears the last record, so this file was damaged otherwise. It is left as it is: move \
                         it away to start from {SNAPSHOT_FILE} alone, or remove the ledger directory",
                        wal_path.display(),
                        buf.len() - off
                    );
                }
            };
            let r: RecordIn = serde_json::from_slice(&buf[off + FRAME_HEADER..end]).map_err(|e| {
                anyhow::anyhow!("{}: corrupt record at byte {off} (checksum ok, unreadable: {e})", wal_path.display())
            })?;
            off = end;
            if r.seq <= seq {
                continue; // already in the snapshot (crash between snapshot rename and log truncation)
            }
            seq = r.seq;
            rec.existed = true;
            rec.replayed += 1;
            rec.pos = r.pos;
            for a in r.accounts {
                match a.decode().map_err(|e| anyhow::anyhow!("{}: record {}: {e}", wal_path.display(), r.seq))? {
                    (key, Some(acc)) => {
                        rec.accounts.insert(key, acc);
                        image.insert(key, a);
                    }
                    (key, None) => {
                        rec.accounts.remove(&key);
                        image.remove(&key);
                    }
                }
            }
            rec.transactions.extend(r.tx);
        }
        let wal = OpenOptions::new().create(true).append(true).open(&wal_path)?;
        if off < buf.len() {
            // Drop the torn tail so new records follow the last complete one.
            rec.dropped_bytes = (buf.len() - off) as u64;
            wal.set_len(off as u64)?;
            wal.sync_all()?;
            eprintln!(
                "bazaar-localnet: {}: dropped a torn last record ({} bytes, never acknowledged)",
                wal_path.display(),
                rec.dropped_bytes
            );
        }
        sync_dir(dir)?;
        let compact_at = std::env::var("BAZAAR_LOCALNET_COMPACT_BYTES").ok().and_then(|v| v.parse().ok());
        let ledger = Ledger {
            dir: dir.to_path_buf(),
            wal,
            wal_bytes: off as u64,
            seq,
            snapshot_bytes,
            image,
            compact_at,
            _lock: lock,
        };
        Ok((ledger, rec))
    }

    /// Append one record (the position after the change, the post-state of every account it
    /// wrote, and the transaction record if it was a transaction) and fsync it. Only once this
    /// returns Ok may the change be reported to anyone.
    pub fn append(&mut self, pos: ChainPos, accounts: &[StoredAccount], tx: Option<&TxRecord>) -> anyhow::Result<()> {
        let seq = self.seq + 1;
        let payload = serde_json::to_vec(&RecordOut { seq, pos, accounts, tx })?;
        if payload.len() > MAX_RECORD {
            anyhow::bail!("record of {} bytes exceeds the {MAX_RECORD}-byte limit", payload.len());
        }
        let mut frame = Vec::with_capacity(FRAME_HEADER + payload.len());
        frame.extend_from_slice(&(payload.len() as u32).to_le_bytes());
        frame.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        frame.extend_from_slice(&payload);
        self.wal.write_all(&frame)?;
        self.wal.sync_data()?;
        self.seq = seq;
        self.wal_bytes += frame.len() as u64;
        for a in accounts {
            let key: Pubkey = a.pubkey.parse().map_err(|_| anyhow::anyhow!("bad pubkey {}", a.pubkey))?;
            match a.lamports {
                0 => self.image.remove(&key),
                _ => self.image.insert(key, a.clone()),
            };
        }
        Ok(())
    }

    /// True when the log has grown enough to be worth compacting (see `DEFAULT_COMPACT_BYTES`).
    pub fn should_compact(&self) -> bool {
        let threshold = self.compact_at.unwrap_or(DEFAULT_COMPACT_BYTES.max(self.snapshot_bytes));
        self.wal_bytes > 0 && self.wal_bytes >= threshold
    }

    /// Write the new snapshot (the account image, `transactions`: every transaction record in
    /// execution order, and `pos`: the position now; together the state after every record
    /// appended so far), then empty the log. Synchronous, no bank access. On error the old
    /// snapshot and the log are still intact and complete.
    pub fn write_snapshot(&mut self, pos: ChainPos, transactions: &[&TxRecord]) -> anyhow::Result<()> {
        let bytes = serde_json::to_vec(&SnapshotOut {
            version: SNAPSHOT_VERSION,
            seq: self.seq,
            clock_offset: pos.clock_offset,
            pos,
            accounts: self.image.values().collect(),
            transactions,
        })?;
        let file = self.dir.join(SNAPSHOT_FILE);
        let tmp = self.dir.join(format!("{SNAPSHOT_FILE}.tmp"));
        {
            let mut f = File::create(&tmp)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
        }
        std::fs::rename(&tmp, &file)?;
        sync_dir(&self.dir)?;
        // The snapshot now covers every record: the log can go (a crash before this point
        // replays records the snapshot already has, which their sequence numbers skip).
        self.wal.set_len(0)?;
        self.wal.sync_all()?;
        self.wal_bytes = 0;
        self.snapshot_bytes = bytes.len() as u64;
        let legacy = self.dir.join(LEGACY_SNAPSHOT_FILE);
        if legacy.exists() {
            let _ = std::fs::remove_file(legacy);
        }
        Ok(())
    }

    /// The ledger directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}
