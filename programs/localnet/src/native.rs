//! Native (non-SBF) execution of the escrow program with real transaction logs.
//!
//! Since agave 2.2, `msg!` in a natively built program is a plain `println!` (solana-msg), and
//! program-test leaves `sol_log_data` (Anchor's `emit!`) at the default stub, which also prints.
//! Clients need both in the transaction logs ("Program log: ..." for Anchor errors,
//! "Program data: ..." for events), so while the escrow program runs:
//! - stdout (fd 1) is redirected into a memfd; captured lines are appended to the transaction's
//!   log collector as "Program log: <line>" before every CPI / event and when the program returns;
//! - a syscall-stub wrapper around program-test's stubs writes `sol_log_data` as "Program data:".

use std::cell::{Cell, RefCell};
use std::io::Write;

use solana_program_test::InvokeContext;
use solana_sdk::{
    account_info::AccountInfo, entrypoint::ProgramResult, instruction::Instruction, pubkey::Pubkey,
};
use solana_sysvar::program_stubs::{set_syscall_stubs, SyscallStubs};

thread_local! {
    /// The InvokeContext of the native instruction running on this thread (null outside).
    static IC: Cell<*mut ()> = const { Cell::new(std::ptr::null_mut()) };
    static CAPTURE: RefCell<Option<Capture>> = const { RefCell::new(None) };
}

struct Capture {
    memfd: i32,
    saved_stdout: i32,
}

/// Append one raw line to the running transaction's log collector.
fn log_raw(line: &str) {
    let ptr = IC.with(|c| c.get());
    if ptr.is_null() {
        return;
    }
    // SAFETY: set by `with_invoke_context` for the duration of the builtin call on this thread;
    // program-test itself keeps the same raw pointer in a thread-local.
    let ic = unsafe { &mut *(ptr as *mut InvokeContext) };
    if let Some(lc) = ic.get_log_collector() {
        lc.borrow_mut().log(line);
    }
}

/// Move whatever the program printed so far into the transaction logs.
fn flush_captured() {
    let _ = std::io::stdout().flush();
    let text = CAPTURE.with(|c| {
        let c = c.borrow();
        let cap = c.as_ref()?;
        let mut out = Vec::new();
        let mut buf = [0u8; 8192];
        unsafe {
            libc::lseek(cap.memfd, 0, libc::SEEK_SET);
            loop {
                let n = libc::read(cap.memfd, buf.as_mut_ptr() as *mut libc::c_void, buf.len());
                if n <= 0 {
                    break;
                }
                out.extend_from_slice(&buf[..n as usize]);
            }
            libc::ftruncate(cap.memfd, 0);
            libc::lseek(cap.memfd, 0, libc::SEEK_SET);
        }
        Some(String::from_utf8_lossy(&out).into_owned())
    });
    if let Some(text) = text {
        for line in text.lines() {
            log_raw(&format!("Program log: {line}"));
        }
    }
}

/// Redirects stdout into a memfd until dropped.
pub struct CaptureGuard(bool);

impl CaptureGuard {
    pub fn begin() -> Self {
        let already = CAPTURE.with(|c| c.borrow().is_some());
        if already {
            return CaptureGuard(false);
        }
        let _ = std::io::stdout().flush();
        unsafe {
            let name = b"bazaar-localnet-msg\0";
            let memfd = libc::memfd_create(name.as_ptr() as *const libc::c_char, libc::MFD_CLOEXEC);
            if memfd < 0 {
                return CaptureGuard(false);
            }
            let saved = libc::dup(1);
            if saved < 0 || libc::dup2(memfd, 1) < 0 {
                libc::close(memfd);
                if saved >= 0 {
                    libc::close(saved);
                }
                return CaptureGuard(false);
            }
            CAPTURE.with(|c| *c.borrow_mut() = Some(Capture { memfd, saved_stdout: saved }));
        }
        CaptureGuard(true)
    }
}

impl Drop for CaptureGuard {
    fn drop(&mut self) {
        if !self.0 {
            return;
        }
        flush_captured();
        let _ = std::io::stdout().flush();
        if let Some(cap) = CAPTURE.with(|c| c.borrow_mut().take()) {
            unsafe {
                libc::dup2(cap.saved_stdout, 1);
                libc::close(cap.saved_stdout);
                libc::close(cap.memfd);
            }
        }
    }
}

/// Run `f` with `ic` published for the stubs (restores the previous value afterwards).
pub fn with_invoke_context<R>(ic: *mut InvokeContext, f: impl FnOnce() -> R) -> R {
    let prev = IC.with(|c| c.replace(ic as *mut ()));
    struct Restore(*mut ());
    impl Drop for Restore {
        fn drop(&mut self) {
            IC.with(|c| c.set(self.0));
        }
    }
    let _restore = Restore(prev);
    f()
}

/// Builtin entry for the escrow program: like program-test's `processor!`, plus log capture.
#[cfg(feature = "escrow")]
#[macro_export]
macro_rules! escrow_builtin {
    () => {
        Some(|vm, _arg0, _arg1, _arg2, _arg3, _arg4| {
            let vm = unsafe {
                &mut *((vm as *mut u64).offset(-(solana_program_test::get_runtime_environment_key() as isize))
                    as *mut solana_program_test::EbpfVm<solana_program_test::InvokeContext>)
            };
            let ic = vm.context_object_pointer as *mut solana_program_test::InvokeContext;
            vm.program_result = $crate::native::with_invoke_context(ic, || {
                solana_program_test::invoke_builtin_function($crate::native::escrow_process, unsafe { &mut *ic })
            })
            .map_err(|err| solana_program_test::EbpfError::SyscallError(err))
            .into();
        })
    };
}

#[cfg(feature = "escrow")]
pub fn escrow_process(program_id: &Pubkey, accounts: &[AccountInfo], data: &[u8]) -> ProgramResult {
    // Anchor's entry wants `&'info [AccountInfo<'info>]`; the builtin hands out shorter
    // lifetimes. Leaking the small Vec per instruction is fine for a dev node.
    let accounts = Box::leak(Box::new(accounts.to_vec()));
    let _capture = CaptureGuard::begin();
    escrow::entry(program_id, accounts, data)
}

/// The escrow program's ProgramData account, as `solana-test-validator --upgradeable-program <id>
/// <so> <authority>` would create it: the upgradeable loader's `ProgramData` state naming
/// `upgrade_authority`, at `[escrow::ID]` under the loader (no program bytes: the program itself
/// runs as a native builtin). `initialize_config` requires its upgrade authority as signer.
/// Returns the address and the account, for the chain's genesis.
#[cfg(feature = "escrow")]
#[allow(deprecated)] // solana_sdk's re-export of the loader-v3 interface, as program-test 2.3 uses it
pub fn escrow_program_data(upgrade_authority: Pubkey) -> (Pubkey, solana_sdk::account::Account) {
    use solana_sdk::bpf_loader_upgradeable::{self, UpgradeableLoaderState};
    let address = Pubkey::find_program_address(&[escrow::ID.as_ref()], &bpf_loader_upgradeable::ID).0;
    let state = UpgradeableLoaderState::ProgramData { slot: 0, upgrade_authority_address: Some(upgrade_authority) };
    let data = bincode::serialize(&state).expect("ProgramData serializes");
    let lamports = solana_sdk::rent::Rent::default().minimum_balance(data.len());
    let account = solana_sdk::account::Account { lamports, data, owner: bpf_loader_upgradeable::ID, executable: false, rent_epoch: 0 };
    (address, account)
}

/// Delegates every syscall to program-test's stubs, except that captured stdout is flushed into
/// the logs first and `sol_log_data` is logged as "Program data: ..." like the real runtime.
struct LogStubs {
    inner: Box<dyn SyscallStubs>,
}

struct NoStubs;
impl SyscallStubs for NoStubs {}

/// Wrap the currently installed syscall stubs (call after program-test installed its own).
pub fn install_log_stubs() {
    let inner = set_syscall_stubs(Box::new(NoStubs));
    set_syscall_stubs(Box::new(LogStubs { inner }));
}

impl SyscallStubs for LogStubs {
    fn sol_log(&self, message: &str) {
        flush_captured();
        self.inner.sol_log(message)
    }
    fn sol_log_compute_units(&self) {
        flush_captured();
        self.inner.sol_log_compute_units()
    }
    fn sol_remaining_compute_units(&self) -> u64 {
        self.inner.sol_remaining_compute_units()
    }
    fn sol_invoke_signed(
        &self,
        instruction: &Instruction,
        account_infos: &[AccountInfo],
        signers_seeds: &[&[&[u8]]],
    ) -> ProgramResult {
        flush_captured();
        self.inner.sol_invoke_signed(instruction, account_infos, signers_seeds)
    }
    fn sol_get_sysvar(&self, sysvar_id_addr: *const u8, var_addr: *mut u8, offset: u64, length: u64) -> u64 {
        self.inner.sol_get_sysvar(sysvar_id_addr, var_addr, offset, length)
    }
    fn sol_get_clock_sysvar(&self, var_addr: *mut u8) -> u64 {
        self.inner.sol_get_clock_sysvar(var_addr)
    }
    fn sol_get_epoch_schedule_sysvar(&self, var_addr: *mut u8) -> u64 {
        self.inner.sol_get_epoch_schedule_sysvar(var_addr)
    }
    fn sol_get_fees_sysvar(&self, var_addr: *mut u8) -> u64 {
        self.inner.sol_get_fees_sysvar(var_addr)
    }
    fn sol_get_rent_sysvar(&self, var_addr: *mut u8) -> u64 {
        self.inner.sol_get_rent_sysvar(var_addr)
    }
    fn sol_get_epoch_rewards_sysvar(&self, var_addr: *mut u8) -> u64 {
        self.inner.sol_get_epoch_rewards_sysvar(var_addr)
    }
    fn sol_get_last_restart_slot(&self, var_addr: *mut u8) -> u64 {
        self.inner.sol_get_last_restart_slot(var_addr)
    }
    fn sol_get_epoch_stake(&self, vote_address: *const u8) -> u64 {
        self.inner.sol_get_epoch_stake(vote_address)
    }
    unsafe fn sol_memcpy(&self, dst: *mut u8, src: *const u8, n: usize) {
        self.inner.sol_memcpy(dst, src, n)
    }
    unsafe fn sol_memmove(&self, dst: *mut u8, src: *const u8, n: usize) {
        self.inner.sol_memmove(dst, src, n)
    }
    unsafe fn sol_memcmp(&self, s1: *const u8, s2: *const u8, n: usize, result: *mut i32) {
        self.inner.sol_memcmp(s1, s2, n, result)
    }
    unsafe fn sol_memset(&self, s: *mut u8, c: u8, n: usize) {
        self.inner.sol_memset(s, c, n)
    }
    fn sol_get_return_data(&self) -> Option<(Pubkey, Vec<u8>)> {
        self.inner.sol_get_return_data()
    }
    fn sol_set_return_data(&self, data: &[u8]) {
        self.inner.sol_set_return_data(data)
    }
    fn sol_log_data(&self, fields: &[&[u8]]) {
        use base64::Engine as _;
        flush_captured();
        if IC.with(|c| c.get().is_null()) {
            return self.inner.sol_log_data(fields);
        }
        let b64 = base64::engine::general_purpose::STANDARD;
        let joined = fields.iter().map(|f| b64.encode(f)).collect::<Vec<_>>().join(" ");
        log_raw(&format!("Program data: {joined}"));
    }
    fn sol_get_processed_sibling_instruction(&self, index: usize) -> Option<Instruction> {
        self.inner.sol_get_processed_sibling_instruction(index)
    }
    fn sol_get_stack_height(&self) -> u64 {
        self.inner.sol_get_stack_height()
    }
}

fn parse_invoke(line: &str) -> Option<(&str, u32)> {
    let rest = line.strip_prefix("Program ")?;
    let (prog, depth) = rest.split_once(" invoke [")?;
    Some((prog, depth.strip_suffix(']')?.parse().ok()?))
}

fn parse_end(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("Program ")?;
    let (prog, tail) = rest.split_once(' ')?;
    (tail == "success" || tail.starts_with("failed")).then_some(prog)
}

/// Make the logs of a natively executed program look like a validator's:
/// - program-test and the runtime both log "invoke [1]" and "success"/"failed" for the native
///   program itself: keep one of each pair;
/// - for a CPI made by the native program, program-test's stub logs an extra
///   "Program P invoke [d]" (the caller's depth) right before the runtime's "invoke [d+1]", and an
///   extra "success"/"failed" after the runtime's: drop both.
///
/// Anchor's event parser keeps a program stack from these lines and throws on unbalanced ones.
#[cfg_attr(not(test), allow(dead_code))] // the single-program form the unit tests use
pub fn clean_native_logs(logs: Vec<String>, native: &Pubkey) -> Vec<String> {
    clean_native_logs_of(logs, &[*native])
}

/// `clean_native_logs` for several natively executed programs at once (one may call another).
pub fn clean_native_logs_of(logs: Vec<String>, natives: &[Pubkey]) -> Vec<String> {
    let natives: Vec<String> = natives.iter().map(|p| p.to_string()).collect();
    let is_native = |p: Option<&String>| p.is_some_and(|p| natives.contains(p));
    let mut out: Vec<String> = Vec::with_capacity(logs.len());
    let mut stack: Vec<String> = Vec::new();
    for (i, line) in logs.iter().enumerate() {
        if let Some((prog, depth)) = parse_invoke(line) {
            let caller_native = is_native(stack.last());
            let bogus_cpi = caller_native
                && logs.get(i + 1).and_then(|n| parse_invoke(n)).is_some_and(|(p, d)| p == prog && d == depth + 1);
            let duplicate = out.last() == Some(line) && is_native(Some(&prog.to_string()));
            if bogus_cpi || duplicate {
                continue;
            }
            stack.push(prog.to_string());
        } else if let Some(prog) = parse_end(line) {
            if out.last() == Some(line) && (is_native(Some(&prog.to_string())) || is_native(stack.last())) {
                continue;
            }
            stack.pop();
        }
        out.push(line.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_logs_are_balanced() {
        let e = Pubkey::new_unique();
        let t = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA";
        let raw: Vec<String> = [
            format!("Program {e} invoke [1]"),
            format!("Program {e} invoke [1]"),
            "Program log: Instruction: Release".into(),
            format!("Program {t} invoke [1]"),
            format!("Program {t} invoke [2]"),
            "Program log: Instruction: TransferChecked".into(),
            format!("Program {t} consumed 6174 of 199859 compute units"),
            format!("Program {t} success"),
            format!("Program {t} success"),
            "Program data: AAAA".into(),
            format!("Program {e} success"),
            format!("Program {e} success"),
        ]
        .into();
        let want: Vec<String> = [
            format!("Program {e} invoke [1]"),
            "Program log: Instruction: Release".into(),
            format!("Program {t} invoke [2]"),
            "Program log: Instruction: TransferChecked".into(),
            format!("Program {t} consumed 6174 of 199859 compute units"),
            format!("Program {t} success"),
            "Program data: AAAA".into(),
            format!("Program {e} success"),
        ]
        .into();
        assert_eq!(clean_native_logs(raw, &e), want);
    }

    #[test]
    fn other_programs_are_untouched() {
        let e = Pubkey::new_unique();
        let s = "11111111111111111111111111111111";
        let raw: Vec<String> = vec![format!("Program {s} invoke [1]"), format!("Program {s} success")];
        assert_eq!(clean_native_logs(raw.clone(), &e), raw);
    }
}
