//! The chain: a solana-program-test `ProgramTestContext` plus the indexes an RPC node keeps
//! (transactions by signature, signatures by address, known accounts), and the JSON-RPC
//! methods over them (`methods`: one module per method group and the dispatch table;
//! `Chain::handle` looks a method up there).
//!
//! With `--ledger`, every state change is appended to a write-ahead log and fsynced before it is
//! reported (see `ledger.rs`), and the history is restored at start.
//!
//! All access is serialized: the chain lives on its own thread with its own current-thread
//! tokio runtime (see `spawn_actor`).
//!
//! Slots, block height and blockhashes follow wall-clock time as on a validator: one block per
//! 400 ms slot (plus the slots `localnet_advanceClock` warps), each block registers exactly one new
//! blockhash in the bank, and a blockhash is valid for `MAX_PROCESSING_AGE` (150) blocks after the
//! one it was registered in, whatever the request rate. The node keeps the slot and block height
//! itself (the bank stays at its first slot; the on-chain `Clock` is written by the node) and
//! registers blockhashes through program-test's own blockhash ticker, which it drives on a
//! paused tokio clock: the ticker (a task sleeping 6.4 ms between registrations) never runs on
//! its own, only when `register_blockhash` advances the paused clock past its sleep. So the
//! bank's age of a blockhash (registrations since) equals the blocks since, and
//! `lastValidBlockHeight`, `isBlockhashValid`, `getBlockHeight` and what `sendTransaction`
//! accepts agree at every moment (see `advance_blocks`).

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::{json, Map, Value};
use solana_program_test::{ProgramTest, ProgramTestContext};
use solana_sdk::{
    account::{Account, AccountSharedData},
    clock::Clock,
    hash::Hash,
    message::VersionedMessage,
    native_token::LAMPORTS_PER_SOL,
    pubkey::Pubkey,
    signature::{Keypair, Signature, Signer},
    transaction::{TransactionError, VersionedTransaction},
};

use solana_banks_interface::BanksTransactionResultWithSimulation;

use crate::ledger::{ChainPos, Ledger, Recovered, StoredAccount};
use crate::record::{Loaded, TxRecord};
use crate::rpc::*;
use crate::tokens;

mod methods;

const B64: base64::engine::GeneralPurpose = base64::engine::general_purpose::STANDARD;
pub const SOLANA_CORE_VERSION: &str = "2.3.13";
/// Lamports the faucet (requestAirdrop) starts with: 500 million SOL.
const FAUCET_LAMPORTS: u64 = 500_000_000 * LAMPORTS_PER_SOL;
/// Slot length (milliseconds): a block per slot of wall-clock time, and advanced seconds into slots.
const MS_PER_SLOT: u64 = 400;
/// Blocks a blockhash stays valid after the block it was registered in (`MAX_PROCESSING_AGE`).
const BLOCKHASH_LIFETIME: u64 = solana_sdk::clock::MAX_PROCESSING_AGE as u64;
/// Polls of the bank's latest blockhash while waiting for program-test's ticker to register one.
const TICKER_POLLS: usize = 1000;
/// Upper bound of slots one advanceClock moves (keeps warps cheap; time moves exactly anyway).
const MAX_WARP_SLOTS: u64 = 500_000;
/// Largest single clock advance accepted (100 years, in seconds).
const MAX_ADVANCE_SECONDS: i64 = 100 * 366 * 24 * 3600;
/// Slots and block heights a restart skips past the last recorded ones: one blockhash lifetime
/// (MAX_PROCESSING_AGE = 150 blocks) + 1, so every `lastValidBlockHeight` handed out before the
/// restart is already passed, matching the fact that those blockhashes are gone (the blockhash
/// queue is not persisted).
const RESTART_GAP: u64 = 151;
/// SPL Memo (v2+), loaded by program-test; tells apart otherwise identical airdrops.
const MEMO_PROGRAM_ID: Pubkey = solana_sdk::pubkey!("MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr");
/// Size of an address lookup table's metadata; the addresses (32 bytes each) follow it.
const LOOKUP_TABLE_META_SIZE: usize = 56;
/// Byte range of `last_extended_slot` (u64 LE) in a lookup table's metadata (after the u32 type
/// tag and the u64 `deactivation_slot`).
const LOOKUP_TABLE_LAST_EXTENDED: std::ops::Range<usize> = 12..20;
/// The address lookup table program (core BPF, loaded by program-test).
const LOOKUP_TABLE_PROGRAM_ID: Pubkey = solana_sdk::pubkey!("AddressLookupTab1e1111111111111111111111111");
/// Entries of the `SlotHashes` sysvar (`MAX_ENTRIES`): the slots a lookup table may be derived from.
const SLOT_HASHES_ENTRIES: u64 = 512;

/// What a websocket signature, logs, account or program subscription needs to hear about one
/// committed transaction.
#[derive(Clone, Debug)]
pub struct SigNote {
    pub signature: Signature,
    pub slot: u64,
    pub err: Value,
    /// Transaction logs (empty for status look-ups).
    pub logs: Vec<String>,
    /// Static account keys of the transaction (empty for status look-ups).
    pub keys: Vec<Pubkey>,
    /// Post-state of the accounts the transaction stored (empty for status look-ups): every
    /// writable account of a successful transaction, only the fee payer of a failed one, as a
    /// validator stores them (accountSubscribe / programSubscribe notify these).
    pub accounts: Vec<AccountNote>,
}

/// One stored account as the subscriptions see it: `account` None = deleted (closed, 0 lamports);
/// `decimals` of its mint when it is a token account (for `jsonParsed`).
#[derive(Clone, Debug)]
pub struct AccountNote {
    pub pubkey: Pubkey,
    pub account: Option<Account>,
    pub decimals: Option<u8>,
}

/// What the chain broadcasts to the websocket connections.
#[derive(Clone, Debug)]
pub enum Note {
    /// A committed transaction (successful or failed).
    Tx(std::sync::Arc<SigNote>),
    /// Accounts written outside a transaction (`localnet_setAccount`) at `slot`.
    Accounts { slot: u64, accounts: std::sync::Arc<Vec<AccountNote>> },
}

/// The channels the chain notifies the websocket side through: every state change (`Note`), and
/// the current slot (a watch: subscribers see the latest one, a warp is one change).
#[derive(Clone)]
pub struct Notifiers {
    pub notes: tokio::sync::broadcast::Sender<Note>,
    pub slots: tokio::sync::watch::Sender<u64>,
}

pub struct Chain {
    ctx: ProgramTestContext,
    faucet: Keypair,
    genesis_hash: Hash,
    txs: HashMap<Signature, TxRecord>,
    /// Signatures of `txs` in execution order (the snapshot keeps this order).
    history: Vec<Signature>,
    by_address: HashMap<Pubkey, Vec<Signature>>,
    /// Every address seen in a committed transaction (getProgramAccounts /
    /// getTokenAccountsByOwner scan these, banks has no account index).
    known: BTreeSet<Pubkey>,
    decimals: HashMap<Pubkey, u8>,
    /// Seconds added by localnet_advanceClock on top of wall-clock time.
    clock_offset: i64,
    tx_count: u64,
    notify: Notifiers,
    /// The `--ledger` directory's log and snapshot; None = memory only.
    ledger: Option<Ledger>,
    /// The on-chain `Clock` as last written to the bank (the slot, epoch and unix time reported).
    clock: Clock,
    /// Block height as reported (getBlockHeight, lastValidBlockHeight...): one per block, so it
    /// moves with the slot; continues across restarts (see `resume`). Not the bank's own height.
    height: u64,
    /// Wall-clock slot timer: started at `slot_timer`, it has produced `timer_slots` slots so far
    /// (see `catch_up`). A monotonic clock: a change of the system time does not move slots.
    slot_timer: std::time::Instant,
    timer_slots: u64,
    /// Blockhashes registered in the bank, oldest first, with the block height each was registered
    /// at; only those still valid (height <= registered + BLOCKHASH_LIFETIME) are kept. The last
    /// one is the bank's latest blockhash.
    recent: VecDeque<(Hash, u64)>,
    /// How far to advance the paused tokio clock for program-test's ticker to register one
    /// blockhash: its sleep (one program-test slot, 6.4 ms) plus the timer wheel's 1 ms resolution.
    ticker_period: Duration,
    accounts_cache: std::cell::RefCell<HashMap<Pubkey, Option<Account>>>,
    /// Node slot the `SlotHashes` sysvar was last written for (see `refresh_slot_hashes`).
    slot_hashes_at: Option<u64>,
}

/// Owners whose accounts are genesis/builtin state and never persisted.
fn is_builtin_owned(owner: &Pubkey) -> bool {
    const SKIP: [Pubkey; 6] = [
        solana_sdk::pubkey!("Sysvar1111111111111111111111111111111111111"),
        solana_sdk::pubkey!("NativeLoader1111111111111111111111111111111"),
        solana_sdk::pubkey!("BPFLoader1111111111111111111111111111111111"),
        solana_sdk::pubkey!("BPFLoader2111111111111111111111111111111111"),
        solana_sdk::pubkey!("BPFLoaderUpgradeab1e11111111111111111111111"),
        solana_sdk::pubkey!("Feature111111111111111111111111111111111111"),
    ];
    SKIP.contains(owner)
}

/// Clean up the logs of natively executed programs (see native.rs).
fn fix_logs(logs: Vec<String>) -> Vec<String> {
    #[cfg(feature = "escrow")]
    let logs = crate::native::clean_native_logs_of(logs, &[escrow::ID, cpi_caller::ID]);
    logs
}

fn wall_now() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}

/// Wall-clock time, unix milliseconds.
fn wall_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// Whether a message uses a durable nonce (its first instruction is the system program's
/// AdvanceNonceAccount): then its "recent blockhash" is the nonce value, which the bank checks
/// against the nonce account instead of the blockhash queue.
fn uses_durable_nonce(msg: &VersionedMessage) -> bool {
    let Some(ix) = msg.instructions().first() else { return false };
    let is_system = msg.static_account_keys().get(ix.program_id_index as usize) == Some(&solana_sdk::system_program::ID);
    // SystemInstruction is bincode: a u32 LE variant index; AdvanceNonceAccount is 4.
    is_system && ix.data.get(..4) == Some(&4u32.to_le_bytes()[..])
}

fn bc(e: impl std::fmt::Display) -> RpcError {
    RpcError::internal(e)
}

fn tx_err_json(err: &Option<TransactionError>) -> Value {
    match err {
        None => Value::Null,
        Some(e) => serde_json::to_value(e).unwrap_or_else(|_| json!(e.to_string())),
    }
}

fn status_json(err: &Option<TransactionError>) -> Value {
    match err {
        None => json!({"Ok": null}),
        Some(_) => json!({"Err": tx_err_json(err)}),
    }
}

impl Chain {
    /// Start the bank. With a ledger directory, its state is recovered first (accounts become
    /// genesis accounts, the transaction history is re-indexed, the position continues, see
    /// `resume`) and compacted into a fresh snapshot before the node serves anything.
    /// `genesis`: extra accounts present from slot 0 (e.g. the escrow's ProgramData, see native.rs);
    /// they are recreated at every start, never read from the ledger.
    ///
    /// Errors: the ledger cannot be opened or recovered (locked, unreadable, corrupt).
    pub async fn start(
        notify: Notifiers,
        ledger_dir: Option<std::path::PathBuf>,
        genesis: Vec<(Pubkey, Account)>,
        test_programs: bool,
    ) -> anyhow::Result<Self> {
        let mut pt = ProgramTest::default();
        let (ledger, mut recovered) = match &ledger_dir {
            Some(dir) => {
                let (l, r) = Ledger::open(dir)?;
                (Some(l), r)
            }
            None => (None, Recovered::default()),
        };
        let mut known = BTreeSet::new();
        for (key, acc) in std::mem::take(&mut recovered.accounts) {
            pt.add_account(key, acc);
            known.insert(key);
        }
        for (key, account) in genesis {
            pt.add_account(key, account);
        }
        pt.prefer_bpf(false);
        #[cfg(feature = "escrow")]
        pt.add_program("escrow", escrow::ID, crate::escrow_builtin!());
        if test_programs {
            // Test-only programs (never deployed), for the tests that need a program of their own.
            pt.add_program("bazaar_cpi_caller", cpi_caller::ID, solana_program_test::processor!(cpi_caller::process_instruction));
        }
        let faucet = Keypair::new();
        pt.add_account(faucet.pubkey(), Account::new(FAUCET_LAMPORTS, 0, &Pubkey::default()));
        let ctx = pt.start_with_context().await;
        crate::native::install_log_stubs();
        let genesis_hash = ctx.genesis_config().hash();
        let poh = &ctx.genesis_config().poh_config;
        let ticker_period = poh.target_tick_duration * ctx.genesis_config().ticks_per_slot as u32 + Duration::from_millis(1);
        let clock = ctx.banks_client.get_sysvar::<Clock>().await?;
        let height = ctx.banks_client.get_root_block_height().await?;
        let latest = ctx.banks_client.get_latest_blockhash().await?;
        let mut chain = Chain {
            ctx,
            faucet,
            genesis_hash,
            txs: HashMap::new(),
            history: vec![],
            by_address: HashMap::new(),
            known,
            decimals: HashMap::new(),
            clock_offset: recovered.pos.clock_offset,
            tx_count: recovered.pos.tx_count,
            notify,
            ledger,
            clock,
            height,
            slot_timer: std::time::Instant::now(),
            timer_slots: 0,
            recent: VecDeque::from([(latest, height)]),
            ticker_period,
            accounts_cache: std::cell::RefCell::new(HashMap::new()),
            slot_hashes_at: None,
        };
        if recovered.existed {
            chain.resume(recovered.pos);
        }
        for r in std::mem::take(&mut recovered.transactions) {
            chain.index(r);
        }
        chain.catch_up().await.map_err(|e| anyhow::anyhow!(e.message))?;
        // Record where this run starts (its slot and heights are above everything the last run
        // reported, and a next restart must start above this run's) and empty the log.
        chain.persist().await?;
        Ok(chain)
    }

    /// Continue from the last recorded position: the slot and the reported block height move past
    /// it by the slots of wall-clock time since that record (the blocks the chain went on
    /// producing after it, unrecorded, until the node stopped) plus `RESTART_GAP`; the clock is
    /// never behind it (nor behind wall time + offset). The bank's only blockhash is new, at the
    /// new height: every `lastValidBlockHeight` handed out before the restart reads as passed.
    fn resume(&mut self, pos: ChainPos) {
        let since = if pos.wall_ms == 0 { 0 } else { wall_ms().saturating_sub(pos.wall_ms) / MS_PER_SLOT };
        let gap = since.saturating_add(RESTART_GAP);
        self.height = pos.block_height.saturating_add(gap);
        self.recent = self.recent.back().map(|(hash, _)| (*hash, self.height)).into_iter().collect();
        let unix_timestamp = pos.unix_timestamp.max(wall_now().saturating_add(self.clock_offset));
        self.set_clock(pos.slot.saturating_add(gap).max(self.clock.slot), unix_timestamp);
    }

    /// Where the chain stands (what a log record carries).
    fn pos(&self) -> ChainPos {
        ChainPos {
            slot: self.clock.slot,
            block_height: self.height,
            unix_timestamp: self.clock.unix_timestamp,
            clock_offset: self.clock_offset,
            tx_count: self.tx_count,
            wall_ms: wall_ms(),
        }
    }

    /// Add a committed transaction to the indexes (by signature, by address, execution order).
    fn index(&mut self, r: TxRecord) {
        let sig = r.tx.signatures[0];
        if self.txs.contains_key(&sig) {
            return;
        }
        for k in r.loaded.all_keys(&r.tx.message) {
            self.known.insert(k);
            let sigs = self.by_address.entry(k).or_default();
            if sigs.last() != Some(&sig) {
                sigs.push(sig);
            }
        }
        self.history.push(sig);
        self.txs.insert(sig, r);
    }

    /// Write the on-chain `Clock` (slot, with its epoch, and unix time) when it changes.
    fn set_clock(&mut self, slot: u64, unix_timestamp: i64) {
        let schedule = &self.ctx.genesis_config().epoch_schedule;
        let mut clock = self.clock.clone();
        clock.slot = slot;
        clock.epoch = schedule.get_epoch(slot);
        clock.leader_schedule_epoch = schedule.get_leader_schedule_epoch(slot);
        clock.unix_timestamp = unix_timestamp;
        if clock.epoch != self.clock.epoch {
            clock.epoch_start_timestamp = unix_timestamp;
        }
        if clock != self.clock {
            self.ctx.set_sysvar(&clock);
            self.clock = clock;
            self.notify.slots.send_if_modified(|s| std::mem::replace(s, slot) != slot);
        }
        // Also after registrations alone: they rewrite the RecentBlockhashes sysvar account.
        self.state_changed();
    }

    /// Bring the chain to the present: produce the blocks of the 400 ms slots wall-clock time has
    /// completed since the last call (see `advance_blocks`) and keep the on-chain unix time at
    /// wall time + advanced seconds, never backwards. Runs before every request and on the idle
    /// tick, so everything a request reports is current.
    ///
    /// Errors: internal, when program-test's ticker does not register a blockhash.
    pub async fn catch_up(&mut self) -> Result<(), RpcError> {
        let due = (self.slot_timer.elapsed().as_millis() / MS_PER_SLOT as u128) as u64;
        let slots = due.saturating_sub(self.timer_slots);
        self.timer_slots = self.timer_slots.max(due);
        let unix_timestamp = self.clock.unix_timestamp.max(wall_now().saturating_add(self.clock_offset));
        if slots > 0 {
            self.advance_blocks(slots).await?;
        }
        if slots > 0 || unix_timestamp != self.clock.unix_timestamp {
            self.set_clock(self.clock.slot + slots, unix_timestamp);
        }
        Ok(())
    }

    /// Produce `slots` blocks, one per slot: the block height moves by `slots` and each block
    /// registers one new blockhash in the bank. The bank expires a blockhash once more than
    /// `BLOCKHASH_LIFETIME` registrations followed it, so that many blocks + 1 expire every older
    /// blockhash: a larger jump (an idle node catching up, a warp) registers only that many, the
    /// last ones at the last heights, which keeps "registrations since" equal to "blocks since"
    /// for every blockhash still valid. The caller writes the slot (`set_clock`).
    async fn advance_blocks(&mut self, slots: u64) -> Result<(), RpcError> {
        let registrations = slots.min(BLOCKHASH_LIFETIME + 1);
        self.height += slots - registrations;
        for _ in 0..registrations {
            self.height += 1;
            self.register_blockhash().await?;
        }
        while self.recent.front().is_some_and(|(_, at)| at + BLOCKHASH_LIFETIME < self.height) {
            self.recent.pop_front();
        }
        Ok(())
    }

    /// Register one new blockhash in the bank, at the current height: advance the paused tokio
    /// clock past the sleep of program-test's blockhash ticker, which then runs once (it re-arms
    /// its sleep from the advanced time, so one advance is one registration), and wait until the
    /// bank shows the new blockhash.
    ///
    /// Errors: internal, when the ticker does not run (program-test changed its ticker).
    async fn register_blockhash(&mut self) -> Result<(), RpcError> {
        let before = self.ctx.banks_client.get_latest_blockhash().await.map_err(bc)?;
        if self.recent.back().is_some_and(|(latest, _)| *latest != before) {
            // Nothing else registers blockhashes while the clock is paused; say so if it happens.
            eprintln!("bazaar-localnet: the bank registered a blockhash on its own; blockhash ages may be off by one");
        }
        tokio::time::advance(self.ticker_period).await;
        for _ in 0..TICKER_POLLS {
            let hash = self.ctx.banks_client.get_latest_blockhash().await.map_err(bc)?;
            if hash != before {
                self.recent.push_back((hash, self.height));
                return Ok(());
            }
            tokio::task::yield_now().await;
        }
        Err(RpcError::internal("program-test's blockhash ticker did not register a blockhash"))
    }

    /// The block height a blockhash is valid through (`lastValidBlockHeight`); None when it is
    /// not a blockhash of the last `BLOCKHASH_LIFETIME` blocks.
    fn last_valid_height(&self, hash: &Hash) -> Option<u64> {
        self.recent.iter().find(|(h, _)| h == hash).map(|(_, at)| at + BLOCKHASH_LIFETIME)
    }

    async fn ctx_json(&self, value: Value) -> RpcResult {
        Ok(json!({"context": {"apiVersion": SOLANA_CORE_VERSION, "slot": self.clock.slot}, "value": value}))
    }

    /// Account reads are cached until the next state change (all of which go through this
    /// actor: transactions, setAccount, warps, clock updates), for the same reason as the clock.
    async fn account(&self, key: &Pubkey) -> Result<Option<Account>, RpcError> {
        if let Some(a) = self.accounts_cache.borrow().get(key) {
            return Ok(a.clone());
        }
        let a = self.ctx.banks_client.get_account(*key).await.map_err(bc)?;
        self.accounts_cache.borrow_mut().insert(*key, a.clone());
        Ok(a)
    }

    fn state_changed(&self) {
        self.accounts_cache.borrow_mut().clear();
    }

    async fn mint_decimals(&mut self, mint: &Pubkey) -> Option<u8> {
        if let Some(d) = self.decimals.get(mint) {
            return Some(*d);
        }
        let acc = self.account(mint).await.ok()??;
        let m = tokens::parse_mint(&acc.owner, &acc.data)?;
        self.decimals.insert(*mint, m.decimals);
        Some(m.decimals)
    }

    async fn account_json(&mut self, acc: &Account, cfg: &Map<String, Value>) -> Result<Value, RpcError> {
        let decimals = self.token_decimals(acc).await;
        encode_account(acc, cfg, decimals, true)
    }

    /// Decimals of the mint of a token account (None for anything else).
    async fn token_decimals(&mut self, acc: &Account) -> Option<u8> {
        let mint = tokens::parse_token_account(&acc.owner, &acc.data)?.mint;
        self.mint_decimals(&mint).await
    }

    async fn token_balances(&mut self, keys: &[Pubkey]) -> Vec<Value> {
        let mut out = vec![];
        for (i, k) in keys.iter().enumerate() {
            let Ok(Some(acc)) = self.account(k).await else { continue };
            let Some(ta) = tokens::parse_token_account(&acc.owner, &acc.data) else { continue };
            let Some(dec) = self.mint_decimals(&ta.mint).await else { continue };
            out.push(json!({
                "accountIndex": i,
                "mint": ta.mint.to_string(),
                "owner": ta.owner.to_string(),
                "programId": acc.owner.to_string(),
                "uiTokenAmount": tokens::token_amount_json(ta.amount, dec),
            }));
        }
        out
    }

    async fn balances(&self, keys: &[Pubkey]) -> Vec<u64> {
        let mut out = vec![];
        for k in keys {
            out.push(self.account(k).await.ok().flatten().map_or(0, |a| a.lamports));
        }
        out
    }

    /// isBlockhashValid: the blockhash is one of the last `BLOCKHASH_LIFETIME` blocks' and the
    /// block height has not passed its `lastValidBlockHeight`. The bank agrees (see
    /// `advance_blocks`); its fee lookup does not (it knows the last 300 blockhashes).
    fn is_blockhash_valid(&self, hash: &Hash) -> bool {
        self.last_valid_height(hash).is_some_and(|last| self.height <= last)
    }

    /// Whether a transaction on this message may be executed as far as its blockhash goes: a valid
    /// blockhash, or a durable nonce, which the bank checks against the nonce account (its
    /// fee lookup answers None for a nonce that does not match; version 0 messages go to the bank
    /// as they are).
    async fn blockhash_usable(&self, msg: &VersionedMessage) -> Result<bool, RpcError> {
        if self.is_blockhash_valid(msg.recent_blockhash()) {
            return Ok(true);
        }
        if !uses_durable_nonce(msg) {
            return Ok(false);
        }
        match msg {
            VersionedMessage::Legacy(m) => Ok(self.ctx.banks_client.get_fee_for_message(m.clone()).await.map_err(bc)?.is_some()),
            VersionedMessage::V0(_) => Ok(true),
        }
    }

    /// Simulate a transaction on the bank, without committing it. The bank's simulation refuses
    /// blockhashes more than MAX_PROCESSING_AGE - MAX_TRANSACTION_FORWARDING_DELAY (144) blocks
    /// old, a validator's margin for forwarding the transaction to the leader; this node executes
    /// what it is sent itself, up to the full 150 blocks, so a transaction on a valid blockhash is
    /// simulated on the latest one instead, which gives the same result and keeps preflight in
    /// line with isBlockhashValid. (The simulation does not verify signatures; callers do.)
    async fn simulate(&mut self, tx: &VersionedTransaction) -> Result<BanksTransactionResultWithSimulation, RpcError> {
        self.refresh_slot_hashes(&tx.message);
        let mut tx = tx.clone();
        if self.is_blockhash_valid(tx.message.recent_blockhash()) {
            tx.message.set_recent_blockhash(self.latest_blockhash()?.0);
        }
        self.ctx.banks_client.simulate_transaction(tx).await.map_err(bc)
    }

    /// getFeeForMessage: lamports (5000 per signature), None when the blockhash is not usable.
    async fn fee_for(&self, msg: &VersionedMessage) -> Result<Option<u64>, RpcError> {
        if !self.blockhash_usable(msg).await? {
            return Ok(None);
        }
        match msg {
            VersionedMessage::Legacy(m) => self.ctx.banks_client.get_fee_for_message(m.clone()).await.map_err(bc),
            VersionedMessage::V0(m) => Ok(Some(5000 * m.header.num_required_signatures as u64)),
        }
    }

    /// The latest blockhash (the current block's) and its `lastValidBlockHeight`: the current
    /// height + `BLOCKHASH_LIFETIME`.
    fn latest_blockhash(&self) -> Result<(Hash, u64), RpcError> {
        let (hash, at) = self.recent.back().copied().ok_or_else(|| RpcError::internal("no valid blockhash"))?;
        Ok((hash, at + BLOCKHASH_LIFETIME))
    }

    /// Post-state of every account a committed transaction may have written: its writable static
    /// keys and the writable addresses it loaded from lookup tables (all of them also for a failed
    /// transaction: unchanged ones are written back as they were, harmless for the ledger).
    async fn writable_post_state(&mut self, msg: &VersionedMessage, loaded: &Loaded) -> Result<Vec<(Pubkey, Option<Account>)>, RpcError> {
        let mut keys: Vec<Pubkey> = msg
            .static_account_keys()
            .iter()
            .enumerate()
            .filter(|(i, _)| is_writable(msg, *i))
            .map(|(_, k)| *k)
            .collect();
        keys.extend(loaded.writable.iter().filter_map(|k| k.parse::<Pubkey>().ok()));
        let mut out = vec![];
        for key in keys {
            self.known.insert(key);
            out.push((key, self.account(&key).await?));
        }
        Ok(out)
    }

    /// The addresses a version 0 message loads from its lookup tables, read from the tables as
    /// they are before it runs (a legacy message loads none). An index past a table's end is
    /// skipped: the bank refuses such a message before it runs, so it is never recorded.
    async fn resolve_lookups(&self, msg: &VersionedMessage) -> Result<Loaded, RpcError> {
        let mut loaded = Loaded::default();
        for lookup in msg.address_table_lookups().unwrap_or_default() {
            let Some(table) = self.account(&lookup.account_key).await? else { continue };
            let addresses = table.data.get(LOOKUP_TABLE_META_SIZE..).unwrap_or_default();
            let at = |i: &u8| {
                let at = *i as usize * 32;
                addresses.get(at..at + 32).and_then(|b| Pubkey::try_from(b).ok()).map(|k| k.to_string())
            };
            loaded.writable.extend(lookup.writable_indexes.iter().filter_map(at));
            loaded.readonly.extend(lookup.readonly_indexes.iter().filter_map(at));
        }
        Ok(loaded)
    }

    /// Write the `SlotHashes` sysvar for the node's slot (the last `SLOT_HASHES_ENTRIES` slots,
    /// newest first) before a message that uses lookup tables or calls their program runs: the
    /// program accepts a table derived from any of those slots (web3.js derives it from
    /// `getSlot`) and measures a deactivated table's cool-down with them. Written only then, and
    /// once per slot; the hashes are stand-ins (nothing here reads them).
    fn refresh_slot_hashes(&mut self, msg: &VersionedMessage) {
        let uses_tables = msg.address_table_lookups().is_some_and(|l| !l.is_empty())
            || msg.static_account_keys().contains(&LOOKUP_TABLE_PROGRAM_ID);
        let slot = self.clock.slot;
        if !uses_tables || self.slot_hashes_at == Some(slot) {
            return;
        }
        let entries: Vec<(u64, Hash)> = (0..SLOT_HASHES_ENTRIES)
            .map_while(|i| slot.checked_sub(i))
            .map(|s| (s, solana_sdk::hash::hashv(&[b"slot", &s.to_le_bytes()])))
            .collect();
        #[allow(deprecated)]
        self.ctx.set_sysvar(&solana_sdk::slot_hashes::SlotHashes::new(&entries));
        self.slot_hashes_at = Some(slot);
        self.state_changed();
    }

    /// Make a lookup table extended by the transaction that just ran usable from the next
    /// transaction on. The program records the extension at `Clock.slot` (the node's slot), while
    /// the bank that loads addresses compares it with its own slot, which stays at its first one
    /// here (see the module docs): left as is, extended addresses would never become active. So
    /// `last_extended_slot` is rewritten to 0 in every table the transaction wrote. A validator
    /// makes new addresses usable one slot later; this node, at once.
    fn settle_lookup_tables(&mut self, post: &mut [(Pubkey, Option<Account>)]) {
        for (key, acc) in post.iter_mut() {
            let Some(acc) = acc else { continue };
            if acc.owner != LOOKUP_TABLE_PROGRAM_ID || acc.data.len() < LOOKUP_TABLE_META_SIZE {
                continue;
            }
            if acc.data[LOOKUP_TABLE_LAST_EXTENDED].iter().all(|b| *b == 0) {
                continue;
            }
            acc.data[LOOKUP_TABLE_LAST_EXTENDED].fill(0);
            self.ctx.set_account(key, &AccountSharedData::from(acc.clone()));
            self.state_changed();
        }
    }

    /// What the ledger persists of those post-states: all but builtin-owned and executable accounts
    /// (genesis state, recreated at start). Empty without a ledger.
    fn stored_accounts(&self, post: &[(Pubkey, Option<Account>)]) -> Vec<StoredAccount> {
        if self.ledger.is_none() {
            return vec![];
        }
        post.iter()
            .filter(|(_, acc)| !acc.as_ref().is_some_and(|a| is_builtin_owned(&a.owner) || a.executable))
            .map(|(key, acc)| StoredAccount::new(key, acc.as_ref()))
            .collect()
    }

    /// The subscriptions' view of stored accounts (token accounts with their mint's decimals).
    async fn account_notes(&mut self, post: Vec<(Pubkey, Option<Account>)>) -> Vec<AccountNote> {
        let mut out = Vec::with_capacity(post.len());
        for (pubkey, account) in post {
            let decimals = match &account {
                Some(a) => self.token_decimals(a).await,
                None => None,
            };
            out.push(AccountNote { pubkey, account, decimals });
        }
        out
    }

    /// Append a state change (already applied to the bank) to the write-ahead log and fsync it;
    /// a no-op without a ledger. Call before the change is reported to anyone. If it cannot be
    /// made durable the node exits (as a database that cannot write its WAL does) rather than
    /// report something a restart would not have.
    async fn log(&mut self, accounts: Result<Vec<StoredAccount>, RpcError>, tx: Option<&TxRecord>) {
        if self.ledger.is_none() {
            return;
        }
        let pos = self.pos();
        let res = match accounts {
            Ok(accounts) => self.ledger.as_mut().map_or(Ok(()), |l| l.append(pos, &accounts, tx)),
            Err(e) => Err(anyhow::anyhow!(e.message)),
        };
        if let Err(e) = res {
            let dir = self.ledger.as_ref().map(|l| l.dir().display().to_string()).unwrap_or_default();
            eprintln!("bazaar-localnet: cannot write the ledger log in {dir}: {e}; stopping, the change was not reported");
            std::process::exit(70);
        }
    }

    /// Compact the log into a new snapshot when it has grown enough (see `Ledger::should_compact`).
    /// Runs between commands, never inside a state change. A failure is logged; the log still
    /// holds everything and compaction is retried later.
    pub async fn maybe_compact(&mut self) {
        if self.ledger.as_ref().is_some_and(Ledger::should_compact) {
            if let Err(e) = self.persist().await {
                eprintln!("bazaar-localnet: ledger compaction failed (the log still has every change): {e}");
            }
        }
    }

    /// Process one transaction (already decoded and signature-checked) and index it.
    /// Returns Err(err, logs) when it was not committed at all.
    async fn execute(
        &mut self,
        tx: VersionedTransaction,
        inner: Option<Value>,
    ) -> Result<Signature, (TransactionError, Vec<String>)> {
        // What isBlockhashValid says is what the node executes (the bank agrees, see the module docs).
        match self.blockhash_usable(&tx.message).await {
            Ok(true) => {}
            Ok(false) => return Err((TransactionError::BlockhashNotFound, vec![])),
            Err(e) => return Err((TransactionError::AccountNotFound, vec![e.message])),
        }
        // banks' process result has no CPI trace; a simulation on the same state has it.
        let inner_instructions = match inner {
            Some(v) => v,
            None => match self.simulate(&tx).await {
                Ok(sim) => inner_json(sim.simulation_details.and_then(|d| d.inner_instructions)),
                Err(_) => json!([]),
            },
        };
        self.refresh_slot_hashes(&tx.message);
        let loaded = self.resolve_lookups(&tx.message).await.unwrap_or_default();
        let keys: Vec<Pubkey> = loaded.all_keys(&tx.message);
        let fee = self.fee_for(&tx.message).await.ok().flatten().unwrap_or(0);
        let pre_balances = self.balances(&keys).await;
        let pre_token_balances = self.token_balances(&keys).await;
        let signature = tx.signatures[0];
        let res = self
            .ctx
            .banks_client
            .process_transaction_with_metadata(tx.clone())
            .await
            .map_err(|e| (TransactionError::AccountNotFound, vec![format!("banks error: {e}")]))?;
        self.state_changed();
        let Some(meta) = res.metadata else {
            return Err((res.result.unwrap_err_or(TransactionError::AccountNotFound), vec![]));
        };
        let post_balances = self.balances(&keys).await;
        let post_token_balances = self.token_balances(&keys).await;
        let clock = self.clock.clone();
        let err = res.result.err();
        self.tx_count += 1;
        let mut post = self.writable_post_state(&tx.message, &loaded).await;
        if err.is_none() {
            if let Ok(p) = post.as_mut() {
                self.settle_lookup_tables(p);
            }
        }
        let written = post.as_ref().map(|p| self.stored_accounts(p)).map_err(Clone::clone);
        // A failed transaction stores only its fee payer (the fee is charged; nothing else changed).
        let stored: Vec<(Pubkey, Option<Account>)> = match post {
            Ok(p) if err.is_none() => p,
            Ok(p) => p.into_iter().take(1).collect(),
            Err(_) => vec![],
        };
        let accounts = self.account_notes(stored).await;
        let return_data = meta.return_data.as_ref().map(|rd| {
            json!({"programId": rd.program_id.to_string(), "data": [B64.encode(&rd.data), "base64"]})
        });
        let logs = fix_logs(meta.log_messages);
        let note = SigNote { signature, slot: clock.slot, err: tx_err_json(&err), logs: logs.clone(), keys: keys.clone(), accounts };
        let record = TxRecord {
            slot: clock.slot,
            block_time: clock.unix_timestamp,
            tx,
            err,
            fee,
            pre_balances,
            post_balances,
            pre_token_balances,
            post_token_balances,
            logs,
            units: meta.compute_units_consumed,
            return_data,
            inner_instructions,
            loaded,
        };
        // On disk before anyone can see it (status look-ups, subscriptions, the answer).
        self.log(written, Some(&record)).await;
        self.index(record);
        let _ = self.notify.notes.send(Note::Tx(std::sync::Arc::new(note)));
        Ok(signature)
    }

    pub fn is_processed(&self, sig: &Signature) -> Option<SigNote> {
        self.txs.get(sig).map(|r| SigNote { signature: *sig, slot: r.slot, err: tx_err_json(&r.err), logs: vec![], keys: vec![], accounts: vec![] })
    }

    /// One periodic tick (idle node): produce the blocks due, compact the ledger log when due.
    pub async fn tick(&mut self) {
        if let Err(e) = self.catch_up().await {
            eprintln!("bazaar-localnet: {}", e.message);
        }
        self.maybe_compact().await;
    }

    /// Compact: write the ledger's account image, the transaction history and the chain position
    /// as its new snapshot, then empty its log. A no-op without a ledger. Reads no account from
    /// the bank (see `Ledger::write_snapshot`), so it does not age blockhashes however large.
    pub async fn persist(&mut self) -> anyhow::Result<()> {
        if self.ledger.is_none() {
            return Ok(());
        }
        let pos = self.pos();
        let transactions: Vec<&TxRecord> = self.history.iter().map(|sig| &self.txs[sig]).collect();
        match self.ledger.as_mut() {
            Some(ledger) => ledger.write_snapshot(pos, &transactions),
            None => Ok(()),
        }
    }

    /// Answer one JSON-RPC call, after bringing the chain to the present (`catch_up`): the
    /// method's handler from the dispatch table (`methods::METHODS`), or -32601 "Method not
    /// found" for a name it does not hold.
    pub async fn handle(&mut self, method: &str, params: &[Value]) -> RpcResult {
        self.catch_up().await?;
        match methods::handler(method) {
            Some(handler) => handler(self, Params(params)).await,
            None => Err(RpcError::new(METHOD_NOT_FOUND, "Method not found")),
        }
    }
}

trait UnwrapErrOr<E> {
    fn unwrap_err_or(self, default: E) -> E;
}
impl<E> UnwrapErrOr<E> for Result<(), E> {
    fn unwrap_err_or(self, default: E) -> E {
        self.err().unwrap_or(default)
    }
}

/// RPC form of recorded CPI instructions: [{index, instructions: [{programIdIndex, accounts, data, stackHeight}]}].
fn inner_json(inner: Option<Vec<solana_sdk::inner_instruction::InnerInstructions>>) -> Value {
    let Some(lists) = inner else { return json!([]) };
    json!(lists
        .iter()
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| json!({
            "index": i,
            "instructions": l.iter().map(|ii| json!({
                "programIdIndex": ii.instruction.program_id_index,
                "accounts": ii.instruction.accounts,
                "data": bs58::encode(&ii.instruction.data).into_string(),
                "stackHeight": ii.stack_height,
            })).collect::<Vec<_>>(),
        }))
        .collect::<Vec<_>>())
}

/// An account in the RPC's `UiAccount` shape: `{data, executable, lamports, owner, rentEpoch,
/// space}` with `data` in `cfg.encoding` (absent or "binary": a bare base58 string, "base58",
/// "base64", "jsonParsed": SPL Token / Token-2022 accounts and mints parsed, the rest base64) after
/// `cfg.dataSlice`. `decimals`: of the mint when `acc` is a token account (jsonParsed needs it).
/// `strict`: refuse base58 of more than 128 bytes as getAccountInfo does (a notification encodes
/// it anyway). Errors: unsupported encoding, base58 too long (strict).
pub fn encode_account(acc: &Account, cfg: &Map<String, Value>, decimals: Option<u8>, strict: bool) -> Result<Value, RpcError> {
    let encoding = cfg_str(cfg, "encoding");
    let mut data: &[u8] = &acc.data;
    if let Some(slice) = cfg.get("dataSlice") {
        let off = slice.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize;
        let len = slice.get("length").and_then(Value::as_u64).unwrap_or(0) as usize;
        let start = off.min(data.len());
        let end = start.saturating_add(len).min(data.len());
        data = &data[start..end];
    }
    let data_json = match encoding {
        None | Some("binary") => json!(bs58::encode(data).into_string()),
        Some("base58") => {
            if strict && data.len() > 128 {
                return Err(RpcError::invalid_params(
                    "Encoded binary (base 58) data should be less than 128 bytes, please use Base64 encoding.",
                ));
            }
            json!([bs58::encode(data).into_string(), "base58"])
        }
        Some("base64") => json!([B64.encode(data), "base64"]),
        Some("jsonParsed") => {
            let mut parsed = None;
            if tokens::is_token_program(&acc.owner) && cfg.get("dataSlice").is_none() {
                parsed = tokens::parsed_json(&acc.owner, &acc.data, |_| decimals);
            }
            parsed.unwrap_or_else(|| json!([B64.encode(data), "base64"]))
        }
        Some(other) => return Err(RpcError::invalid_params(format!("Invalid params: unsupported encoding {other}"))),
    };
    Ok(json!({
        "data": data_json,
        "executable": acc.executable,
        "lamports": acc.lamports,
        "owner": acc.owner.to_string(),
        "rentEpoch": acc.rent_epoch,
        "space": acc.data.len(),
    }))
}

/// Whether account data passes getProgramAccounts / programSubscribe filters (`{dataSize: n}`,
/// `{memcmp: {offset, bytes, encoding?: "base58" | "base64"}}`, all must hold).
/// Errors: a filter of another shape, undecodable memcmp bytes (only filters reached are checked;
/// see `validate_filters`).
pub fn matches_filters(data: &[u8], filters: &[Value]) -> Result<bool, RpcError> {
    for f in filters {
        if let Some(size) = f.get("dataSize").and_then(Value::as_u64) {
            if data.len() as u64 != size {
                return Ok(false);
            }
        } else if let Some(m) = f.get("memcmp") {
            let off = m.get("offset").and_then(Value::as_u64).unwrap_or(0) as usize;
            let raw = m.get("bytes").and_then(Value::as_str).unwrap_or("");
            let bytes = match m.get("encoding").and_then(Value::as_str) {
                Some("base64") => B64.decode(raw).map_err(|_| RpcError::invalid_params("Invalid memcmp bytes"))?,
                _ => bs58::decode(raw).into_vec().map_err(|_| RpcError::invalid_params("Invalid memcmp bytes"))?,
            };
            if data.len() < off + bytes.len() || data[off..off + bytes.len()] != bytes[..] {
                return Ok(false);
            }
        } else {
            return Err(RpcError::invalid_params("Invalid filter"));
        }
    }
    Ok(true)
}

/// Check every filter's shape (programSubscribe refuses bad filters at subscription time).
pub fn validate_filters(filters: &[Value]) -> Result<(), RpcError> {
    for f in filters {
        matches_filters(&[], std::slice::from_ref(f))?;
    }
    Ok(())
}

fn is_writable(msg: &VersionedMessage, i: usize) -> bool {
    let h = msg.header();
    let n = msg.static_account_keys().len();
    let sigs = h.num_required_signatures as usize;
    if i < sigs {
        i < sigs - h.num_readonly_signed_accounts as usize
    } else {
        i < n - h.num_readonly_unsigned_accounts as usize
    }
}

/// Commands for the chain thread.
pub enum Cmd {
    Rpc {
        method: String,
        params: Vec<Value>,
        reply: tokio::sync::oneshot::Sender<RpcResult>,
    },
    Status {
        signature: Signature,
        reply: tokio::sync::oneshot::Sender<Option<SigNote>>,
    },
    /// Write the ledger snapshot now (on shutdown).
    Persist { reply: tokio::sync::oneshot::Sender<()> },
}

/// Start the chain on its own thread; returns the command sender once the chain is ready.
pub fn spawn_actor(
    notify: Notifiers,
    ledger: Option<std::path::PathBuf>,
    genesis: Vec<(Pubkey, Account)>,
    test_programs: bool,
) -> anyhow::Result<std::sync::mpsc::Sender<Cmd>> {
    let (tx, rx) = std::sync::mpsc::channel::<Cmd>();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<anyhow::Result<()>>();
    std::thread::Builder::new().name("chain".into()).spawn(move || {
        // A paused clock: program-test's blockhash ticker only runs when `register_blockhash`
        // advances it (see the module docs). Nothing on this runtime may sleep: a paused runtime
        // with nothing to do jumps its clock to the next timer, which would run the ticker.
        let rt = match tokio::runtime::Builder::new_current_thread().enable_all().start_paused(true).build() {
            Ok(rt) => rt,
            Err(e) => {
                let _ = ready_tx.send(Err(e.into()));
                return;
            }
        };
        let mut chain = match rt.block_on(Chain::start(notify, ledger, genesis, test_programs)) {
            Ok(c) => c,
            Err(e) => {
                let _ = ready_tx.send(Err(e));
                return;
            }
        };
        let _ = ready_tx.send(Ok(()));
        loop {
            match rx.recv_timeout(Duration::from_millis(400)) {
                Ok(Cmd::Rpc { method, params, reply }) => {
                    let fut = chain.handle(&method, &params);
                    let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rt.block_on(fut)))
                        .unwrap_or_else(|_| Err(RpcError::internal(format!("panic while handling {method}"))));
                    let _ = reply.send(res);
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rt.block_on(chain.maybe_compact())));
                }
                Ok(Cmd::Status { signature, reply }) => {
                    let _ = reply.send(chain.is_processed(&signature));
                }
                Ok(Cmd::Persist { reply }) => {
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        if let Err(e) = rt.block_on(chain.persist()) {
                            eprintln!("bazaar-localnet: ledger snapshot failed: {e}");
                        }
                    }));
                    let _ = reply.send(());
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                    // Idle: produce the blocks due and compact the ledger when due.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| rt.block_on(chain.tick())));
                }
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            }
        }
    })?;
    ready_rx.recv()??;
    Ok(tx)
}
