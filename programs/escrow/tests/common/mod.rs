//! Shared harness: the real escrow code runs natively inside solana-program-test, next to the
//! SPL Token, Token-2022 and Associated Token programs that program-test ships as SBF binaries.
//!
//! Cast: Alice buys, Bob sells, Carol arbitrates, Pat is the platform service key,
//! Trent owns the treasury wallet, Mallory is an outsider.
#![allow(dead_code, deprecated)]

use anchor_lang::prelude::{AccountInfo, Pubkey};
use anchor_lang::solana_program::entrypoint::ProgramResult;
use anchor_lang::solana_program::program_pack::Pack;
use anchor_lang::{AccountDeserialize, InstructionData, ToAccountMetas};
use anchor_spl::associated_token::{
    get_associated_token_address_with_program_id, spl_associated_token_account,
};
use anchor_spl::token::spl_token;
use anchor_spl::token_2022::spl_token_2022::{
    self,
    extension::{transfer_fee, ExtensionType, StateWithExtensions},
    state::{Account as TokenAccountState, Mint as MintState},
};
use escrow::errors::EscrowError;
use escrow::state::{Config, Order};
use escrow::{ConfigArgs, UpdateConfigArgs};
use solana_sysvar::program_stubs;
use solana_program_test::{processor, BanksClientError, ProgramTest, ProgramTestContext};
use solana_sdk::{
    bpf_loader_upgradeable::{self, UpgradeableLoaderState},
    clock::Clock,
    compute_budget::ComputeBudgetInstruction,
    instruction::{Instruction, InstructionError},
    signature::Keypair,
    signer::Signer,
    system_instruction, system_program,
    transaction::{Transaction, TransactionError},
};

pub const DECIMALS: u8 = 6;
pub const FEE_BPS: u16 = 250; // 2.5%
pub const REVIEW_WINDOW: i64 = 3 * 24 * 3600;
pub const START_TIME: i64 = 1_750_000_000;
pub const ALICE_START: u64 = 1_000_000_000; // 1000 USDC
pub const DAY: i64 = 24 * 3600;
/// Longest review window the test config accepts (seconds).
pub const MAX_REVIEW_WINDOW: i64 = 30 * DAY;
/// Longest delivery window the test config accepts (seconds).
pub const MAX_DELIVERY_WINDOW: i64 = 90 * DAY;
/// How long the co-signed fund terms of `Env::fund` stay valid (the service's payment window), seconds.
pub const PAYMENT_WINDOW: i64 = 15 * 60;

/// Who may initialise the config: the upgrade authority recorded in the program's ProgramData
/// account at genesis (the way solana-test-validator's `--upgradeable-program` sets it up).
#[derive(Clone, Copy, Debug)]
pub enum Deployment {
    /// ProgramData names this key as upgrade authority.
    UpgradeableBy(Pubkey),
    /// ProgramData exists but the program is immutable (no upgrade authority).
    Immutable,
    /// No ProgramData account at all.
    NoProgramData,
}

/// Address of the escrow program's ProgramData account: `[program id]` under the upgradeable loader.
pub fn program_data_address() -> Pubkey {
    Pubkey::find_program_address(&[escrow::ID.as_ref()], &bpf_loader_upgradeable::ID).0
}

/// A ProgramData account (upgradeable loader state, no program bytes) naming `authority`.
pub fn program_data_account(authority: Option<Pubkey>) -> solana_sdk::account::Account {
    let state = UpgradeableLoaderState::ProgramData { slot: 0, upgrade_authority_address: authority };
    let data = bincode::serialize(&state).unwrap();
    let lamports = solana_sdk::rent::Rent::default().minimum_balance(data.len());
    solana_sdk::account::Account { lamports, data, owner: bpf_loader_upgradeable::ID, executable: false, rent_epoch: 0 }
}

/// Anchor's `entry` wants `&'info [AccountInfo<'info>]`; program-test hands a shorter borrow.
/// Leaking the (tiny) slice per instruction gives it the lifetime it asks for.
fn process(program_id: &Pubkey, accounts: &[AccountInfo], data: &[u8]) -> ProgramResult {
    let accounts = Box::leak(Box::new(accounts.to_vec()));
    escrow::entry(program_id, accounts, data)
}

/// program-test's syscall stubs print `sol_log_data` to stdout; the wrapper puts events into the
/// transaction logs instead (as "Program log: Program data: <base64>", since a native program can
/// only append "Program log:" lines), so tests can decode them. Installed once per test binary.
fn install_event_log_stubs() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let stubs = std::sync::Arc::new(EventLogStubs { inner: std::sync::OnceLock::new() });
        let inner = program_stubs::set_syscall_stubs(Box::new(SharedStubs(stubs.clone())));
        let _ = stubs.inner.set(inner);
    });
}

struct EventLogStubs {
    inner: std::sync::OnceLock<Box<dyn program_stubs::SyscallStubs>>,
}

struct SharedStubs(std::sync::Arc<EventLogStubs>);

impl SharedStubs {
    fn inner(&self) -> &dyn program_stubs::SyscallStubs {
        loop {
            if let Some(inner) = self.0.inner.get() {
                return inner.as_ref();
            }
            std::hint::spin_loop();
        }
    }
}

impl program_stubs::SyscallStubs for SharedStubs {
    fn sol_log(&self, message: &str) {
        self.inner().sol_log(message)
    }
    fn sol_log_compute_units(&self) {
        self.inner().sol_log_compute_units()
    }
    fn sol_remaining_compute_units(&self) -> u64 {
        self.inner().sol_remaining_compute_units()
    }
    fn sol_invoke_signed(&self, instruction: &Instruction, account_infos: &[AccountInfo], signers_seeds: &[&[&[u8]]]) -> ProgramResult {
        self.inner().sol_invoke_signed(instruction, account_infos, signers_seeds)
    }
    fn sol_get_sysvar(&self, sysvar_id_addr: *const u8, var_addr: *mut u8, offset: u64, length: u64) -> u64 {
        self.inner().sol_get_sysvar(sysvar_id_addr, var_addr, offset, length)
    }
    fn sol_get_clock_sysvar(&self, var_addr: *mut u8) -> u64 {
        self.inner().sol_get_clock_sysvar(var_addr)
    }
    fn sol_get_epoch_schedule_sysvar(&self, var_addr: *mut u8) -> u64 {
        self.inner().sol_get_epoch_schedule_sysvar(var_addr)
    }
    fn sol_get_fees_sysvar(&self, var_addr: *mut u8) -> u64 {
        self.inner().sol_get_fees_sysvar(var_addr)
    }
    fn sol_get_rent_sysvar(&self, var_addr: *mut u8) -> u64 {
        self.inner().sol_get_rent_sysvar(var_addr)
    }
    fn sol_get_epoch_rewards_sysvar(&self, var_addr: *mut u8) -> u64 {
        self.inner().sol_get_epoch_rewards_sysvar(var_addr)
    }
    fn sol_get_last_restart_slot(&self, var_addr: *mut u8) -> u64 {
        self.inner().sol_get_last_restart_slot(var_addr)
    }
    fn sol_get_epoch_stake(&self, vote_address: *const u8) -> u64 {
        self.inner().sol_get_epoch_stake(vote_address)
    }
    unsafe fn sol_memcpy(&self, dst: *mut u8, src: *const u8, n: usize) {
        self.inner().sol_memcpy(dst, src, n)
    }
    unsafe fn sol_memmove(&self, dst: *mut u8, src: *const u8, n: usize) {
        self.inner().sol_memmove(dst, src, n)
    }
    unsafe fn sol_memcmp(&self, s1: *const u8, s2: *const u8, n: usize, result: *mut i32) {
        self.inner().sol_memcmp(s1, s2, n, result)
    }
    unsafe fn sol_memset(&self, s: *mut u8, c: u8, n: usize) {
        self.inner().sol_memset(s, c, n)
    }
    fn sol_get_return_data(&self) -> Option<(Pubkey, Vec<u8>)> {
        self.inner().sol_get_return_data()
    }
    fn sol_set_return_data(&self, data: &[u8]) {
        self.inner().sol_set_return_data(data)
    }
    fn sol_log_data(&self, fields: &[&[u8]]) {
        use anchor_lang::__private::base64::{engine::general_purpose::STANDARD, Engine};
        let joined = fields.iter().map(|f| STANDARD.encode(f)).collect::<Vec<_>>().join(" ");
        self.inner().sol_log(&format!("Program data: {joined}"))
    }
    fn sol_get_processed_sibling_instruction(&self, index: usize) -> Option<Instruction> {
        self.inner().sol_get_processed_sibling_instruction(index)
    }
    fn sol_get_stack_height(&self) -> u64 {
        self.inner().sol_get_stack_height()
    }
}

#[derive(Clone, Copy, Debug)]
pub struct TestMint {
    pub mint: Pubkey,
    pub token_program: Pubkey,
}

/// An order's addresses, derived the same way the service derives them.
#[derive(Clone, Copy, Debug)]
pub struct OrderRef {
    pub id: [u8; 16],
    pub pda: Pubkey,
    pub vault: Pubkey,
    pub mint: TestMint,
    pub buyer: Pubkey,
    pub seller: Pubkey,
    pub amount: u64,
    /// Who pays (and gets back) the rent of the order account and the vault: the buyer, or a
    /// fee sponsor (`fund_milestone`'s `rent_payer`).
    pub rent_payer: Pubkey,
}

pub struct Env {
    pub ctx: ProgramTestContext,
    pub admin: Keypair,
    pub platform: Keypair,
    pub carol: Keypair,
    pub trent: Keypair,
    pub alice: Keypair,
    pub bob: Keypair,
    pub mallory: Keypair,
    /// SPL Token, 6 decimals, allow-listed.
    pub usdc: TestMint,
    /// Token-2022 with only a harmless extension (mint close authority), allow-listed.
    pub t22: TestMint,
    /// Token-2022 with a permanent delegate, allow-listed (must still be refused).
    pub t22_delegate: TestMint,
    /// Token-2022 with a transfer fee, allow-listed (must still be refused).
    pub t22_fee: TestMint,
    /// SPL Token, not allow-listed.
    pub stray: TestMint,
    pub config: Pubkey,
    nonce: u32,
    next_order: u128,
}

pub type TxResult = Result<(), BanksClientError>;

pub fn kp(k: &Keypair) -> Keypair {
    k.insecure_clone()
}

impl Env {
    /// Everyone funded with SOL, four mints, Alice holding 1000 of each, config initialised
    /// (fee 2.5%, 3-day review window).
    pub async fn new() -> Env {
        let mut env = Env::without_config().await;
        env.initialize_default_config().await;
        env
    }

    /// Everything but the config: for tests of `initialize_config` itself. The admin is the
    /// program's upgrade authority.
    pub async fn without_config() -> Env {
        let admin = Keypair::new();
        Env::deployed(admin, |admin| Deployment::UpgradeableBy(admin)).await
    }

    /// Everything but the config, with the ProgramData account `deployment(admin key)` describes.
    pub async fn deployed(admin: Keypair, deployment: impl FnOnce(Pubkey) -> Deployment) -> Env {
        let mut pt = ProgramTest::new("escrow", escrow::ID, processor!(process));
        pt.prefer_bpf(false);
        match deployment(admin.pubkey()) {
            Deployment::UpgradeableBy(authority) => pt.add_account(program_data_address(), program_data_account(Some(authority))),
            Deployment::Immutable => pt.add_account(program_data_address(), program_data_account(None)),
            Deployment::NoProgramData => {}
        }
        let ctx = pt.start_with_context().await;
        install_event_log_stubs();
        let mut env = Env {
            ctx,
            admin,
            platform: Keypair::new(),
            carol: Keypair::new(),
            trent: Keypair::new(),
            alice: Keypair::new(),
            bob: Keypair::new(),
            mallory: Keypair::new(),
            usdc: TestMint { mint: Pubkey::default(), token_program: spl_token::ID },
            t22: TestMint { mint: Pubkey::default(), token_program: spl_token_2022::ID },
            t22_delegate: TestMint { mint: Pubkey::default(), token_program: spl_token_2022::ID },
            t22_fee: TestMint { mint: Pubkey::default(), token_program: spl_token_2022::ID },
            stray: TestMint { mint: Pubkey::default(), token_program: spl_token::ID },
            config: Pubkey::find_program_address(&[escrow::CONFIG_SEED], &escrow::ID).0,
            nonce: 0,
            next_order: 1,
        };
        env.setup().await;
        env
    }

    pub fn default_config_args(&self) -> ConfigArgs {
        ConfigArgs {
            platform_authority: self.platform.pubkey(),
            arbiter: self.carol.pubkey(),
            treasury: self.trent.pubkey(),
            fee_bps: FEE_BPS,
            default_review_window: REVIEW_WINDOW,
            max_review_window: MAX_REVIEW_WINDOW,
            max_delivery_window: MAX_DELIVERY_WINDOW,
            allowed_mints: vec![self.usdc.mint, self.t22.mint, self.t22_delegate.mint, self.t22_fee.mint],
        }
    }

    pub async fn initialize_default_config(&mut self) {
        let args = self.default_config_args();
        let admin = kp(&self.admin);
        self.send(vec![self.ix_initialize_config(&admin.pubkey(), args)], &[&admin]).await.unwrap();
    }

    /// SOL for everyone, four mints, token accounts, Alice holding 1000 of each.
    async fn setup(&mut self) {
        let env = self;
        env.warp_to(START_TIME).await;
        let people: Vec<Pubkey> = [&env.admin, &env.platform, &env.carol, &env.trent, &env.alice, &env.bob, &env.mallory]
            .iter()
            .map(|k| k.pubkey())
            .collect();
        let ixs: Vec<Instruction> = people
            .iter()
            .map(|p| system_instruction::transfer(&env.ctx.payer.pubkey(), p, 10_000_000_000))
            .collect();
        env.send(ixs, &[]).await.unwrap();

        env.usdc = env.create_mint(spl_token::ID, &[]).await;
        env.t22 = env.create_mint(spl_token_2022::ID, &[ExtensionType::MintCloseAuthority]).await;
        env.t22_delegate = env.create_mint(spl_token_2022::ID, &[ExtensionType::PermanentDelegate]).await;
        env.t22_fee = env.create_mint(spl_token_2022::ID, &[ExtensionType::TransferFeeConfig]).await;
        env.stray = env.create_mint(spl_token::ID, &[]).await;
        for m in [env.usdc, env.t22, env.t22_delegate, env.t22_fee, env.stray] {
            for owner in [env.alice.pubkey(), env.bob.pubkey(), env.trent.pubkey(), env.mallory.pubkey()] {
                env.create_ata(owner, m).await;
            }
            let alice = env.alice.pubkey();
            env.mint_to(m, alice, ALICE_START).await;
        }

    }

    // ---------- plumbing ----------

    /// Sends one transaction paid by the program-test payer. A unique compute-unit limit
    /// keeps byte-identical retries (double release) from being deduplicated by the bank.
    pub async fn send(&mut self, mut ixs: Vec<Instruction>, signers: &[&Keypair]) -> TxResult {
        self.nonce += 1;
        ixs.insert(0, ComputeBudgetInstruction::set_compute_unit_limit(1_400_000 - self.nonce));
        let payer = kp(&self.ctx.payer);
        let mut all: Vec<&Keypair> = vec![&payer];
        all.extend_from_slice(signers);
        let blockhash = self.ctx.banks_client.get_latest_blockhash().await.unwrap();
        let tx = Transaction::new_signed_with_payer(&ixs, Some(&payer.pubkey()), &all, blockhash);
        self.ctx.banks_client.process_transaction(tx).await
    }

    /// Like `send`, but returns the program logs of a successful transaction.
    pub async fn send_with_logs(&mut self, mut ixs: Vec<Instruction>, signers: &[&Keypair]) -> Vec<String> {
        self.nonce += 1;
        ixs.insert(0, ComputeBudgetInstruction::set_compute_unit_limit(1_400_000 - self.nonce));
        let payer = kp(&self.ctx.payer);
        let mut all: Vec<&Keypair> = vec![&payer];
        all.extend_from_slice(signers);
        let blockhash = self.ctx.banks_client.get_latest_blockhash().await.unwrap();
        let tx = Transaction::new_signed_with_payer(&ixs, Some(&payer.pubkey()), &all, blockhash);
        // This path runs on the working bank directly, while `send` goes through the banks
        // server's queue: right after a queued transaction, its account locks can still be
        // held for a moment (AccountInUse). Retrying is safe: a locked-out tx did not execute.
        for _ in 0..50 {
            let out = self.ctx.banks_client.process_transaction_with_metadata(tx.clone()).await.unwrap();
            match out.result {
                Err(solana_sdk::transaction::TransactionError::AccountInUse) => {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await
                }
                result => {
                    result.unwrap();
                    return out.metadata.unwrap().log_messages;
                }
            }
        }
        panic!("accounts stayed locked")
    }

    pub async fn now(&mut self) -> i64 {
        self.ctx.banks_client.get_sysvar::<Clock>().await.unwrap().unix_timestamp
    }

    pub async fn warp_to(&mut self, unix_timestamp: i64) {
        let mut clock = self.ctx.banks_client.get_sysvar::<Clock>().await.unwrap();
        clock.unix_timestamp = unix_timestamp;
        self.ctx.set_sysvar(&clock);
    }

    pub async fn warp_by(&mut self, seconds: i64) {
        let now = self.now().await;
        self.warp_to(now + seconds).await;
    }

    pub async fn lamports(&mut self, address: Pubkey) -> u64 {
        self.ctx.banks_client.get_balance(address).await.unwrap()
    }

    pub async fn exists(&mut self, address: Pubkey) -> bool {
        self.ctx.banks_client.get_account(address).await.unwrap().is_some()
    }

    /// The program owning `address` (panics when the account does not exist).
    pub async fn owner(&mut self, address: Pubkey) -> Pubkey {
        self.ctx.banks_client.get_account(address).await.unwrap().expect("account exists").owner
    }

    pub async fn config(&mut self) -> Config {
        let acc = self.ctx.banks_client.get_account(self.config).await.unwrap().unwrap();
        Config::try_deserialize(&mut acc.data.as_slice()).unwrap()
    }

    pub async fn order(&mut self, o: &OrderRef) -> Option<Order> {
        let acc = self.ctx.banks_client.get_account(o.pda).await.unwrap()?;
        Some(Order::try_deserialize(&mut acc.data.as_slice()).unwrap())
    }

    // ---------- tokens ----------

    pub async fn create_mint(&mut self, token_program: Pubkey, extensions: &[ExtensionType]) -> TestMint {
        let mint = Keypair::new();
        let authority = self.admin.pubkey();
        let space = if token_program == spl_token::ID {
            spl_token::state::Mint::LEN
        } else {
            ExtensionType::try_calculate_account_len::<MintState>(extensions).unwrap()
        };
        let rent = self.ctx.banks_client.get_rent().await.unwrap().minimum_balance(space);
        let mut ixs = vec![system_instruction::create_account(
            &self.ctx.payer.pubkey(),
            &mint.pubkey(),
            rent,
            space as u64,
            &token_program,
        )];
        for ext in extensions {
            ixs.push(match ext {
                ExtensionType::MintCloseAuthority => spl_token_2022::instruction::initialize_mint_close_authority(
                    &token_program,
                    &mint.pubkey(),
                    Some(&authority),
                )
                .unwrap(),
                ExtensionType::PermanentDelegate => spl_token_2022::instruction::initialize_permanent_delegate(
                    &token_program,
                    &mint.pubkey(),
                    &authority,
                )
                .unwrap(),
                ExtensionType::TransferFeeConfig => transfer_fee::instruction::initialize_transfer_fee_config(
                    &token_program,
                    &mint.pubkey(),
                    Some(&authority),
                    Some(&authority),
                    100,
                    1_000_000,
                )
                .unwrap(),
                ExtensionType::NonTransferable => {
                    spl_token_2022::instruction::initialize_non_transferable_mint(&token_program, &mint.pubkey()).unwrap()
                }
                ExtensionType::TransferHook => spl_token_2022::extension::transfer_hook::instruction::initialize(
                    &token_program,
                    &mint.pubkey(),
                    Some(authority),
                    Some(Keypair::new().pubkey()),
                )
                .unwrap(),
                ExtensionType::DefaultAccountState => {
                    spl_token_2022::extension::default_account_state::instruction::initialize_default_account_state(
                        &token_program,
                        &mint.pubkey(),
                        &spl_token_2022::state::AccountState::Frozen,
                    )
                    .unwrap()
                }
                ExtensionType::Pausable => {
                    spl_token_2022::extension::pausable::instruction::initialize(&token_program, &mint.pubkey(), &authority)
                        .unwrap()
                }
                ExtensionType::ConfidentialTransferMint => {
                    spl_token_2022::extension::confidential_transfer::instruction::initialize_mint(
                        &token_program,
                        &mint.pubkey(),
                        Some(authority),
                        true,
                        None,
                    )
                    .unwrap()
                }
                other => panic!("harness cannot build {other:?}"),
            });
        }
        // Default-frozen accounts need a freeze authority.
        let freeze = extensions.contains(&ExtensionType::DefaultAccountState).then_some(&authority);
        ixs.push(
            spl_token_2022::instruction::initialize_mint2(&token_program, &mint.pubkey(), &authority, freeze, DECIMALS)
                .unwrap(),
        );
        self.send(ixs, &[&mint]).await.unwrap();
        TestMint { mint: mint.pubkey(), token_program }
    }

    pub fn ata(&self, owner: Pubkey, m: TestMint) -> Pubkey {
        get_associated_token_address_with_program_id(&owner, &m.mint, &m.token_program)
    }

    pub async fn create_ata(&mut self, owner: Pubkey, m: TestMint) -> Pubkey {
        let ix = spl_associated_token_account::instruction::create_associated_token_account(
            &self.ctx.payer.pubkey(),
            &owner,
            &m.mint,
            &m.token_program,
        );
        self.send(vec![ix], &[]).await.unwrap();
        self.ata(owner, m)
    }

    pub async fn mint_to(&mut self, m: TestMint, owner: Pubkey, amount: u64) {
        let ix = spl_token_2022::instruction::mint_to_checked(
            &m.token_program,
            &m.mint,
            &self.ata(owner, m),
            &self.admin.pubkey(),
            &[],
            amount,
            DECIMALS,
        )
        .unwrap();
        let admin = kp(&self.admin);
        self.send(vec![ix], &[&admin]).await.unwrap();
    }

    /// Token balance of a token account; 0 when it does not exist (a closed vault).
    pub async fn balance_of(&mut self, token_account: Pubkey) -> u64 {
        match self.ctx.banks_client.get_account(token_account).await.unwrap() {
            None => 0,
            Some(acc) => StateWithExtensions::<TokenAccountState>::unpack(&acc.data).unwrap().base.amount,
        }
    }

    pub async fn balance(&mut self, owner: Pubkey, m: TestMint) -> u64 {
        let ata = self.ata(owner, m);
        self.balance_of(ata).await
    }

    /// Plain token transfer (e.g. an outsider sending tokens into a vault unasked).
    pub async fn transfer_tokens(&mut self, m: TestMint, from: &Keypair, to: Pubkey, amount: u64) {
        let ix = spl_token_2022::instruction::transfer_checked(
            &m.token_program,
            &self.ata(from.pubkey(), m),
            &m.mint,
            &to,
            &from.pubkey(),
            &[],
            amount,
            DECIMALS,
        )
        .unwrap();
        self.send(vec![ix], &[from]).await.unwrap();
    }

    // ---------- orders ----------

    pub fn order_ref(&mut self, m: TestMint, amount: u64) -> OrderRef {
        let id = self.next_order.to_be_bytes();
        self.next_order += 1;
        let pda = Pubkey::find_program_address(&[escrow::ORDER_SEED, &id], &escrow::ID).0;
        OrderRef {
            id,
            pda,
            vault: get_associated_token_address_with_program_id(&pda, &m.mint, &m.token_program),
            mint: m,
            buyer: self.alice.pubkey(),
            seller: self.bob.pubkey(),
            amount,
            rent_payer: self.alice.pubkey(),
        }
    }

    /// Alice funds an order for Bob with Pat's co-signature; panics on failure.
    pub async fn funded_order(&mut self, m: TestMint, amount: u64) -> OrderRef {
        let o = self.order_ref(m, amount);
        let deadline = self.now().await + 7 * DAY;
        self.fund(&o, deadline, 0).await.unwrap();
        o
    }

    /// Alice funds `o` with Pat's co-signature on terms valid for PAYMENT_WINDOW from now.
    pub async fn fund(&mut self, o: &OrderRef, delivery_deadline: i64, review_window: i64) -> TxResult {
        let expires_at = self.now().await + PAYMENT_WINDOW;
        self.fund_until(o, delivery_deadline, review_window, expires_at).await
    }

    /// Like `fund`, with the terms' expiry (unix seconds) given.
    pub async fn fund_until(&mut self, o: &OrderRef, delivery_deadline: i64, review_window: i64, expires_at: i64) -> TxResult {
        let ix = self.ix_fund(o, delivery_deadline, review_window, expires_at);
        let (alice, pat) = (kp(&self.alice), kp(&self.platform));
        self.send(vec![ix], &[&alice, &pat]).await
    }

    pub async fn deliver(&mut self, o: &OrderRef, by: &Keypair) -> TxResult {
        let ix = self.ix_mark_delivered(o, by.pubkey());
        self.send(vec![ix], &[by]).await
    }

    pub async fn release(&mut self, o: &OrderRef, by: &Keypair) -> TxResult {
        let ix = self.ix_release(o, by.pubkey());
        self.send(vec![ix], &[by]).await
    }

    pub async fn claim(&mut self, o: &OrderRef, by: &Keypair) -> TxResult {
        let ix = self.ix_claim(o, by.pubkey());
        self.send(vec![ix], &[by]).await
    }

    pub async fn dispute(&mut self, o: &OrderRef, by: &Keypair) -> TxResult {
        let ix = self.ix_open_dispute(o, by.pubkey());
        self.send(vec![ix], &[by]).await
    }

    pub async fn resolve(&mut self, o: &OrderRef, by: &Keypair, buyer_bps: u16) -> TxResult {
        let ix = self.ix_resolve_dispute(o, by.pubkey(), buyer_bps);
        self.send(vec![ix], &[by]).await
    }

    pub async fn refund(&mut self, o: &OrderRef, by: &Keypair) -> TxResult {
        let ix = self.ix_refund(o, by.pubkey());
        self.send(vec![ix], &[by]).await
    }

    // ---------- instruction builders (accounts exactly as a client would pass them) ----------

    pub fn ix_initialize_config(&self, admin: &Pubkey, args: ConfigArgs) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: escrow::accounts::InitializeConfig {
                admin: *admin,
                config: self.config,
                program_data: program_data_address(),
                system_program: system_program::ID,
            }
            .to_account_metas(None),
            data: escrow::instruction::InitializeConfig { args }.data(),
        }
    }

    pub fn ix_migrate_config(&self, authority: Pubkey, args: escrow::MigrateConfigArgs) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: escrow::accounts::MigrateConfig {
                authority,
                config: self.config,
                program_data: program_data_address(),
                system_program: system_program::ID,
            }
            .to_account_metas(None),
            data: escrow::instruction::MigrateConfig { args }.data(),
        }
    }

    pub fn ix_migrate_order(&self, authority: Pubkey, order: Pubkey) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: escrow::accounts::MigrateOrder {
                authority,
                order,
                program_data: program_data_address(),
                system_program: system_program::ID,
            }
            .to_account_metas(None),
            data: escrow::instruction::MigrateOrder {}.data(),
        }
    }

    /// Replaces `address`'s data with `data` (owner: the escrow program), rent-exempt for its size:
    /// what an earlier version of the program would have written there.
    pub async fn write_program_account(&mut self, address: Pubkey, data: Vec<u8>) {
        let lamports = self.ctx.banks_client.get_rent().await.unwrap().minimum_balance(data.len());
        let account = solana_sdk::account::Account { lamports, data, owner: escrow::ID, executable: false, rent_epoch: 0 };
        self.ctx.set_account(&address, &account.into());
    }

    /// Rewrites the live config byte by byte in the first release's layout (version 0, commit
    /// 9c8bb43 `state/config.rs`: admin, platform_authority, arbiter, treasury, fee_bps u16,
    /// default_review_window i64, allowed_mints Vec<Pubkey> (max 8), bump; `8 + INIT_SPACE` = 407
    /// bytes), as that release's `initialize_config` wrote it. Built by hand, not with the program's
    /// own legacy structs, so a wrong legacy struct cannot agree with itself.
    pub async fn downgrade_config_to_v0(&mut self) -> Vec<u8> {
        use anchor_lang::Discriminator;
        let c = self.config().await;
        let mut data = Config::DISCRIMINATOR.to_vec();
        for key in [c.admin, c.platform_authority, c.arbiter, c.treasury] {
            data.extend_from_slice(key.as_ref());
        }
        data.extend_from_slice(&c.fee_bps.to_le_bytes());
        data.extend_from_slice(&c.default_review_window.to_le_bytes());
        data.extend_from_slice(&(c.allowed_mints.len() as u32).to_le_bytes());
        for m in &c.allowed_mints {
            data.extend_from_slice(m.as_ref());
        }
        data.push(c.bump);
        data.resize(8 + 4 * 32 + 2 + 8 + 4 + 8 * 32 + 1, 0);
        assert_eq!(data.len(), 407);
        let address = self.config;
        self.write_program_account(address, data.clone()).await;
        data
    }

    /// Like `downgrade_config_to_v0`, in the unreleased layout main had between issue 8 and the
    /// versioning (windows inserted after default_review_window, 423 bytes), what a dev localnet
    /// ledger may hold.
    pub async fn downgrade_config_to_unversioned_windows(&mut self) -> Vec<u8> {
        use anchor_lang::Discriminator;
        let c = self.config().await;
        let mut data = Config::DISCRIMINATOR.to_vec();
        for key in [c.admin, c.platform_authority, c.arbiter, c.treasury] {
            data.extend_from_slice(key.as_ref());
        }
        data.extend_from_slice(&c.fee_bps.to_le_bytes());
        data.extend_from_slice(&c.default_review_window.to_le_bytes());
        data.extend_from_slice(&c.max_review_window.to_le_bytes());
        data.extend_from_slice(&c.max_delivery_window.to_le_bytes());
        data.extend_from_slice(&(c.allowed_mints.len() as u32).to_le_bytes());
        for m in &c.allowed_mints {
            data.extend_from_slice(m.as_ref());
        }
        data.push(c.bump);
        data.resize(423, 0);
        let address = self.config;
        self.write_program_account(address, data.clone()).await;
        data
    }

    /// Rewrites an open order in the first release's layout (version 0, `state/order.rs` at
    /// 9c8bb43: order_id .. bump without any version byte, 236 bytes).
    pub async fn downgrade_order_to_v0(&mut self, o: &OrderRef) -> Vec<u8> {
        let acc = self.ctx.banks_client.get_account(o.pda).await.unwrap().expect("open order");
        assert_eq!(acc.data.len(), escrow::state::Order::LEN);
        assert_eq!(acc.data[236], escrow::state::ORDER_VERSION);
        let data = acc.data[..236].to_vec();
        self.write_program_account(o.pda, data.clone()).await;
        data
    }

    /// Rewrites an open order in version 1's layout (issue 20 up to issue 24, `state/order.rs` at
    /// b7f6bf8: version 0's 236 bytes, then the version byte 1; 237 bytes), what `fund` of the
    /// program before milestones wrote.
    pub async fn downgrade_order_to_v1(&mut self, o: &OrderRef) -> Vec<u8> {
        let acc = self.ctx.banks_client.get_account(o.pda).await.unwrap().expect("open order");
        assert_eq!(acc.data.len(), escrow::state::Order::LEN);
        let mut data = acc.data[..236].to_vec();
        data.push(1);
        self.write_program_account(o.pda, data.clone()).await;
        data
    }

    pub fn ix_update_config(&self, admin: &Pubkey, args: UpdateConfigArgs) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: escrow::accounts::UpdateConfig { admin: *admin, config: self.config }.to_account_metas(None),
            data: escrow::instruction::UpdateConfig { args }.data(),
        }
    }

    pub fn fund_accounts(&self, o: &OrderRef) -> escrow::accounts::Fund {
        escrow::accounts::Fund {
            buyer: o.buyer,
            platform_authority: self.platform.pubkey(),
            seller: o.seller,
            config: self.config,
            order: o.pda,
            mint: o.mint.mint,
            buyer_token_account: self.ata(o.buyer, o.mint),
            vault: o.vault,
            token_program: o.mint.token_program,
            associated_token_program: spl_associated_token_account::ID,
            system_program: system_program::ID,
        }
    }

    pub fn ix_fund(&self, o: &OrderRef, delivery_deadline: i64, review_window: i64, expires_at: i64) -> Instruction {
        self.ix_fund_with(o, self.fund_accounts(o), delivery_deadline, review_window, expires_at)
    }

    pub fn ix_fund_with(
        &self,
        o: &OrderRef,
        accounts: escrow::accounts::Fund,
        delivery_deadline: i64,
        review_window: i64,
        expires_at: i64,
    ) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: accounts.to_account_metas(None),
            data: escrow::instruction::Fund {
                order_id: o.id,
                amount: o.amount,
                delivery_deadline,
                review_window,
                expires_at,
            }
            .data(),
        }
    }

    pub fn ix_mark_delivered(&self, o: &OrderRef, authority: Pubkey) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: escrow::accounts::MarkDelivered { authority, config: self.config, order: o.pda }
                .to_account_metas(None),
            data: escrow::instruction::MarkDelivered {}.data(),
        }
    }

    pub fn release_accounts(&self, o: &OrderRef, authority: Pubkey) -> escrow::accounts::Release {
        escrow::accounts::Release {
            authority,
            config: self.config,
            order: o.pda,
            mint: o.mint.mint,
            vault: o.vault,
            seller_token_account: self.ata(o.seller, o.mint),
            treasury_token_account: self.ata(self.trent.pubkey(), o.mint),
            rent_payer: o.rent_payer,
            token_program: o.mint.token_program,
        }
    }

    pub fn ix_release(&self, o: &OrderRef, authority: Pubkey) -> Instruction {
        self.ix_release_with(self.release_accounts(o, authority))
    }

    pub fn ix_release_with(&self, accounts: escrow::accounts::Release) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: accounts.to_account_metas(None),
            data: escrow::instruction::Release {}.data(),
        }
    }

    pub fn claim_accounts(&self, o: &OrderRef, payer: Pubkey) -> escrow::accounts::Claim {
        escrow::accounts::Claim {
            payer,
            config: self.config,
            order: o.pda,
            mint: o.mint.mint,
            vault: o.vault,
            seller_token_account: self.ata(o.seller, o.mint),
            treasury_token_account: self.ata(self.trent.pubkey(), o.mint),
            rent_payer: o.rent_payer,
            token_program: o.mint.token_program,
        }
    }

    pub fn ix_claim(&self, o: &OrderRef, payer: Pubkey) -> Instruction {
        self.ix_claim_with(self.claim_accounts(o, payer))
    }

    pub fn ix_claim_with(&self, accounts: escrow::accounts::Claim) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: accounts.to_account_metas(None),
            data: escrow::instruction::Claim {}.data(),
        }
    }

    pub fn ix_open_dispute(&self, o: &OrderRef, authority: Pubkey) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: escrow::accounts::OpenDispute { authority, config: self.config, order: o.pda }
                .to_account_metas(None),
            data: escrow::instruction::OpenDispute {}.data(),
        }
    }

    pub fn resolve_accounts(&self, o: &OrderRef, arbiter: Pubkey) -> escrow::accounts::ResolveDispute {
        escrow::accounts::ResolveDispute {
            arbiter,
            config: self.config,
            order: o.pda,
            mint: o.mint.mint,
            vault: o.vault,
            buyer_token_account: self.ata(o.buyer, o.mint),
            seller_token_account: self.ata(o.seller, o.mint),
            treasury_token_account: self.ata(self.trent.pubkey(), o.mint),
            rent_payer: o.rent_payer,
            token_program: o.mint.token_program,
        }
    }

    pub fn ix_resolve_dispute(&self, o: &OrderRef, arbiter: Pubkey, buyer_bps: u16) -> Instruction {
        self.ix_resolve_with(self.resolve_accounts(o, arbiter), buyer_bps)
    }

    pub fn ix_resolve_with(&self, accounts: escrow::accounts::ResolveDispute, buyer_bps: u16) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: accounts.to_account_metas(None),
            data: escrow::instruction::ResolveDispute { buyer_bps }.data(),
        }
    }

    pub fn refund_accounts(&self, o: &OrderRef, authority: Pubkey) -> escrow::accounts::Refund {
        escrow::accounts::Refund {
            authority,
            config: self.config,
            order: o.pda,
            mint: o.mint.mint,
            vault: o.vault,
            buyer_token_account: self.ata(o.buyer, o.mint),
            rent_payer: o.rent_payer,
            token_program: o.mint.token_program,
        }
    }

    pub fn ix_refund(&self, o: &OrderRef, authority: Pubkey) -> Instruction {
        self.ix_refund_with(self.refund_accounts(o, authority))
    }

    pub fn ix_refund_with(&self, accounts: escrow::accounts::Refund) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: accounts.to_account_metas(None),
            data: escrow::instruction::Refund {}.data(),
        }
    }

    // ---------- issue 24: milestones, revisions, extensions, settlement ----------

    /// An order ref for milestone `index` of the order whose first milestone is `parent`.
    pub fn milestone_ref(&mut self, parent: &OrderRef, amount: u64) -> OrderRef {
        let mut o = self.order_ref(parent.mint, amount);
        o.buyer = parent.buyer;
        o.seller = parent.seller;
        o.rent_payer = parent.rent_payer;
        o
    }

    pub fn fund_milestone_accounts(&self, o: &OrderRef) -> escrow::accounts::FundMilestone {
        let f = self.fund_accounts(o);
        escrow::accounts::FundMilestone {
            buyer: f.buyer,
            platform_authority: f.platform_authority,
            rent_payer: o.rent_payer,
            seller: f.seller,
            config: f.config,
            order: f.order,
            mint: f.mint,
            buyer_token_account: f.buyer_token_account,
            vault: f.vault,
            token_program: f.token_program,
            associated_token_program: f.associated_token_program,
            system_program: f.system_program,
        }
    }

    /// Terms for milestone `index` of `parent` funded into `o`: deadline 7 days, default review
    /// window, terms valid for PAYMENT_WINDOW, `revisions` included.
    pub async fn milestone_args(&mut self, o: &OrderRef, parent: [u8; 16], index: u8, revisions: u8) -> escrow::FundMilestoneArgs {
        let now = self.now().await;
        escrow::FundMilestoneArgs {
            escrow_id: o.id,
            parent_order_id: parent,
            milestone_index: index,
            amount: o.amount,
            delivery_deadline: now + 7 * DAY,
            review_window: 0,
            expires_at: now + PAYMENT_WINDOW,
            revisions_included: revisions,
        }
    }

    pub fn ix_fund_milestone_with(&self, accounts: escrow::accounts::FundMilestone, args: escrow::FundMilestoneArgs) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: accounts.to_account_metas(None),
            data: escrow::instruction::FundMilestone { args }.data(),
        }
    }

    pub fn ix_fund_milestone(&self, o: &OrderRef, args: escrow::FundMilestoneArgs) -> Instruction {
        self.ix_fund_milestone_with(self.fund_milestone_accounts(o), args)
    }

    /// Alice funds milestone `index` of `parent` into `o` with Pat's co-signature.
    pub async fn fund_milestone(&mut self, o: &OrderRef, parent: [u8; 16], index: u8, revisions: u8) -> TxResult {
        let args = self.milestone_args(o, parent, index, revisions).await;
        let ix = self.ix_fund_milestone(o, args);
        let (alice, pat) = (kp(&self.alice), kp(&self.platform));
        self.send(vec![ix], &[&alice, &pat]).await
    }

    /// A funded one-milestone order with `revisions` included (fund_milestone, index 1).
    pub async fn funded_with_revisions(&mut self, m: TestMint, amount: u64, revisions: u8) -> OrderRef {
        let o = self.order_ref(m, amount);
        self.fund_milestone(&o, o.id, 1, revisions).await.unwrap();
        o
    }

    pub fn ix_request_revision(&self, o: &OrderRef, authority: Pubkey) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: escrow::accounts::RequestRevision { authority, config: self.config, order: o.pda }
                .to_account_metas(None),
            data: escrow::instruction::RequestRevision {}.data(),
        }
    }

    pub async fn request_revision(&mut self, o: &OrderRef, by: &Keypair) -> TxResult {
        let ix = self.ix_request_revision(o, by.pubkey());
        self.send(vec![ix], &[by]).await
    }

    pub fn ix_extend_deadline(&self, o: &OrderRef, authority: Pubkey, new_deadline: i64) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: escrow::accounts::ExtendDeadline { authority, config: self.config, order: o.pda }
                .to_account_metas(None),
            data: escrow::instruction::ExtendDeadline { new_deadline }.data(),
        }
    }

    pub async fn extend_deadline(&mut self, o: &OrderRef, by: &Keypair, new_deadline: i64) -> TxResult {
        let ix = self.ix_extend_deadline(o, by.pubkey(), new_deadline);
        self.send(vec![ix], &[by]).await
    }

    pub fn ix_propose_settlement(&self, o: &OrderRef, authority: Pubkey, buyer_bps: u16, expires_at: i64, proposed_by: u8) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: escrow::accounts::ProposeSettlement { authority, config: self.config, order: o.pda }
                .to_account_metas(None),
            data: escrow::instruction::ProposeSettlement { buyer_bps, expires_at, proposed_by }.data(),
        }
    }

    /// `by` proposes for `party` (PARTY_BUYER / PARTY_SELLER) a split valid until `expires_at`.
    pub async fn propose(&mut self, o: &OrderRef, by: &Keypair, party: u8, buyer_bps: u16, expires_at: i64) -> TxResult {
        let ix = self.ix_propose_settlement(o, by.pubkey(), buyer_bps, expires_at, party);
        self.send(vec![ix], &[by]).await
    }

    pub fn ix_withdraw_settlement(&self, o: &OrderRef, authority: Pubkey) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: escrow::accounts::WithdrawSettlement { authority, config: self.config, order: o.pda }
                .to_account_metas(None),
            data: escrow::instruction::WithdrawSettlement {}.data(),
        }
    }

    pub async fn withdraw(&mut self, o: &OrderRef, by: &Keypair) -> TxResult {
        let ix = self.ix_withdraw_settlement(o, by.pubkey());
        self.send(vec![ix], &[by]).await
    }

    pub fn accept_accounts(&self, o: &OrderRef, authority: Pubkey) -> escrow::accounts::AcceptSettlement {
        escrow::accounts::AcceptSettlement {
            authority,
            config: self.config,
            order: o.pda,
            mint: o.mint.mint,
            vault: o.vault,
            buyer_token_account: self.ata(o.buyer, o.mint),
            seller_token_account: self.ata(o.seller, o.mint),
            treasury_token_account: self.ata(self.trent.pubkey(), o.mint),
            rent_payer: o.rent_payer,
            token_program: o.mint.token_program,
        }
    }

    pub fn ix_accept_with(&self, accounts: escrow::accounts::AcceptSettlement, buyer_bps: u16) -> Instruction {
        Instruction {
            program_id: escrow::ID,
            accounts: accounts.to_account_metas(None),
            data: escrow::instruction::AcceptSettlement { buyer_bps }.data(),
        }
    }

    pub async fn accept(&mut self, o: &OrderRef, by: &Keypair, buyer_bps: u16) -> TxResult {
        let ix = self.ix_accept_with(self.accept_accounts(o, by.pubkey()), buyer_bps);
        self.send(vec![ix], &[by]).await
    }
}

// ---------- error assertions ----------

/// The custom program error code a failed transaction carried, if any.
pub fn custom_code(result: TxResult) -> Option<u32> {
    match result.expect_err("transaction should have failed").unwrap() {
        TransactionError::InstructionError(_, InstructionError::Custom(code)) => Some(code),
        _ => None,
    }
}

pub fn escrow_code(e: EscrowError) -> u32 {
    anchor_lang::error::ERROR_CODE_OFFSET + e as u32
}

#[track_caller]
pub fn assert_escrow_err(result: TxResult, expected: EscrowError) {
    let name = format!("{expected:?}");
    let code = escrow_code(expected);
    match result {
        Ok(()) => panic!("expected {name}, but the transaction succeeded"),
        Err(e) => {
            let got = e.unwrap();
            assert_eq!(
                got,
                TransactionError::InstructionError(1, InstructionError::Custom(code)),
                "expected {name} ({code})"
            );
        }
    }
}

#[track_caller]
pub fn assert_anchor_err(result: TxResult, expected: anchor_lang::error::ErrorCode) {
    let name = format!("{expected:?}");
    let code = expected as u32;
    match result {
        Ok(()) => panic!("expected {name}, but the transaction succeeded"),
        Err(e) => assert_eq!(
            e.unwrap(),
            TransactionError::InstructionError(1, InstructionError::Custom(code)),
            "expected {name} ({code})"
        ),
    }
}

/// The failure must be exactly `expected` raised by the escrow instruction (index 1, after the
/// compute-budget instruction `send` prepends), e.g. a token or system program error bubbling up
/// from a CPI, or a runtime error such as `InvalidSeeds`.
#[track_caller]
pub fn assert_ix_err(result: TxResult, expected: InstructionError) {
    match result {
        Ok(()) => panic!("expected {expected:?}, but the transaction succeeded"),
        Err(e) => assert_eq!(e.unwrap(), TransactionError::InstructionError(1, expected)),
    }
}

/// System program: the account to create exists already (`SystemError::AccountAlreadyInUse`).
pub const SYSTEM_ACCOUNT_ALREADY_IN_USE: InstructionError = InstructionError::Custom(0);
/// SPL Token / Token-2022: `TokenError::InsufficientFunds`.
pub const TOKEN_INSUFFICIENT_FUNDS: InstructionError = InstructionError::Custom(1);

/// Decodes the first Anchor event of type `E` from `Program data:` log lines.
pub fn find_event<E: anchor_lang::Event + anchor_lang::AnchorDeserialize>(logs: &[String]) -> Option<E> {
    use anchor_lang::__private::base64::{engine::general_purpose::STANDARD, Engine};
    let data = |l: &String| {
        let l = l.strip_prefix("Program log: ").unwrap_or(l);
        l.strip_prefix("Program data: ").map(str::to_owned)
    };
    logs.iter().filter_map(data).find_map(|b64| {
        let bytes = STANDARD.decode(b64).ok()?;
        let rest = bytes.strip_prefix(E::DISCRIMINATOR)?;
        E::deserialize(&mut &rest[..]).ok()
    })
}

