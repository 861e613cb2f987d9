/**
 * Launcher for `bazaar-localnet` (programs/localnet): a Solana JSON-RPC + websocket server over
 * solana-program-test with the Bazaar escrow program loaded at its declared id. Used by the tests
 * (tests/helpers/localnet.ts) and by the main job (`npm start`, server/scripts/start.ts).
 *
 * `startLocalnet()` spawns the built binary ($CARGO_TARGET_DIR/debug/bazaar-localnet; it runs
 * `cargo build -p bazaar-localnet` first when the binary is missing), waits until it prints
 * its ready line, and returns the endpoints plus the dev-only clock controls.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadStartConfig } from '../src/config.js';
import { StartupError } from '../src/startup.js';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Where cargo puts the build (CARGO_TARGET_DIR; shared across clones, see docs/design.md) and the
 * binary to run (BAZAAR_LOCALNET_BIN, then never rebuilt), read when first needed: a bad value is
 * reported by the caller (npm start's one-line errors), not thrown while this module loads.
 */
function binary() {
  const c = loadStartConfig(process.env);
  return { cargoTargetDir: c.cargoTargetDir, localnetBinary: c.localnetBinary, given: c.localnetBinaryGiven };
}

/** Sources the binary is built from (the localnet and the escrow program it embeds). */
const sourceDirs = [
  'programs/localnet/src',
  'programs/localnet/Cargo.toml',
  'programs/escrow/src',
  'programs/escrow/Cargo.toml',
  'programs/tests/cpi-caller/src',
  'programs/tests/cpi-caller/Cargo.toml',
];

function newestSourceMtimeMs(): number {
  let newest = 0;
  for (const rel of sourceDirs) {
    const p = join(repoRoot, rel);
    if (!existsSync(p)) continue;
    const st = statSync(p);
    if (st.isFile()) {
      newest = Math.max(newest, st.mtimeMs);
      continue;
    }
    for (const f of readdirSync(p, { recursive: true }) as string[]) {
      const fst = statSync(join(p, f));
      if (fst.isFile()) newest = Math.max(newest, fst.mtimeMs);
    }
  }
  return newest;
}

/** True when the binary is missing or older than one of its sources. */
export function localnetNeedsBuild(): boolean {
  const { localnetBinary, given } = binary();
  if (!existsSync(localnetBinary)) return true;
  if (given) return false;
  return statSync(localnetBinary).mtimeMs < newestSourceMtimeMs();
}

export interface LocalnetClock {
  /** Current slot of the working bank. */
  slot: number;
  /** On-chain `Clock.unix_timestamp`, in unix seconds. */
  unix_timestamp: number;
}

export interface Localnet {
  /** HTTP JSON-RPC endpoint, e.g. `http://127.0.0.1:8899`. */
  rpcUrl: string;
  /** PubSub websocket endpoint (`port + 1`), e.g. `ws://127.0.0.1:8900`. */
  wsUrl: string;
  /** the node's process id (benchmarks read its CPU time from /proc); absent for a node this process did not start */
  pid?: number;
  /** Kill the server (SIGTERM, then SIGKILL after 3 s) and wait for it to exit. */
  stop(): Promise<void>;
  /** Move the on-chain clock forward by `seconds` (seconds, >= 0); the slot moves too. */
  advanceClock(seconds: number): Promise<void>;
  /** Read the on-chain clock (`unix_timestamp` in unix seconds). */
  getClock(): Promise<LocalnetClock>;
}

export interface StartLocalnetOptions {
  /** HTTP port; the websocket uses `port + 1`. Default: a free pair picked at random. */
  port?: number;
  /** How long to wait for the ready line, in milliseconds (default 60 000). */
  readyTimeoutMs?: number;
  /**
   * Ledger directory (`--ledger`): touched accounts and the clock offset are snapshotted there and
   * reloaded on the next start, so state survives restarts. Default: none (memory only).
   */
  ledgerDir?: string;
  /** Called once if the node exits on its own (not through `stop()`), with its exit code. */
  onExit?: (code: number | null) => void;
  /**
   * Base58 key recorded as the escrow program's upgrade authority in its ProgramData account
   * (`--escrow-upgrade-authority`): the only key that can `initialize_config` on this localnet.
   * Default: none (no ProgramData account; a config already in the ledger keeps working).
   */
  escrowUpgradeAuthority?: string;
  /**
   * Also load the test-only programs natively (`--test-programs`: the CPI caller of
   * programs/tests/cpi-caller). Tests only; default false.
   */
  testPrograms?: boolean;
}

/**
 * Build the binary with cargo (blocking); a no-op when it is up to date. Throws StartupError when
 * cargo is not installed and no binary exists (naming BAZAAR_LOCALNET_BIN and SOLANA_RPC_URL).
 */
export function ensureLocalnetBuilt(): void {
  if (!localnetNeedsBuild()) return;
  const { cargoTargetDir, localnetBinary } = binary();
  const r = spawnSync(
    'cargo',
    ['build', '-p', 'bazaar-localnet', '--manifest-path', join(repoRoot, 'programs', 'Cargo.toml')],
    { stdio: 'inherit', env: { ...process.env, CARGO_TARGET_DIR: cargoTargetDir } },
  );
  if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    if (existsSync(localnetBinary)) {
      console.warn('cargo is not on PATH; using the existing, possibly older localnet binary');
      return;
    }
    throw new StartupError(
      'cargo (Rust) is not on PATH, and the localnet must be built once: install Rust with rustup, or set ' +
        'BAZAAR_LOCALNET_BIN to a built bazaar-localnet, or SOLANA_RPC_URL to use another Solana RPC',
      'BAZAAR_LOCALNET_BIN',
    );
  }
  if (r.status !== 0 || !existsSync(localnetBinary)) {
    if (existsSync(localnetBinary)) {
      console.warn(`cargo build -p bazaar-localnet failed (exit ${r.status}); using the existing, older binary`);
      return;
    }
    throw new Error(`cargo build -p bazaar-localnet failed (exit ${r.status})`);
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((ok) => {
    const srv = createServer();
    srv.once('error', () => ok(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => ok(true)));
  });
}

/** A port P such that P and P + 1 are both free on 127.0.0.1. */
export async function freePortPair(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const p = 20_000 + Math.floor(Math.random() * 40_000);
    if ((await portFree(p)) && (await portFree(p + 1))) return p;
  }
  throw new Error('no free port pair found');
}

/** One JSON-RPC call; throws on a JSON-RPC error. */
export async function rpcCall<T = unknown>(rpcUrl: string, method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { code: number; message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.code} ${body.error.message}`);
  return body.result as T;
}

/** Start a localnet and wait until it serves requests. */
export async function startLocalnet(opts: StartLocalnetOptions = {}): Promise<Localnet> {
  ensureLocalnetBuilt();
  const port = opts.port ?? (await freePortPair());
  const rpcUrl = `http://127.0.0.1:${port}`;
  const wsUrl = `ws://127.0.0.1:${port + 1}`;
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    ...(opts.ledgerDir ? ['--ledger', opts.ledgerDir] : []),
    ...(opts.escrowUpgradeAuthority ? ['--escrow-upgrade-authority', opts.escrowUpgradeAuthority] : []),
    ...(opts.testPrograms ? ['--test-programs'] : []),
  ];
  const child: ChildProcess = spawn(binary().localnetBinary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stopping = false;
  // Never leave an orphan node behind when the test process exits without calling stop().
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let output = '';
  let exited = false;
  let ready = false;
  const exitPromise = new Promise<void>((ok) =>
    child.once('exit', (code) => {
      exited = true;
      process.removeListener('exit', killOnExit);
      if (!stopping && ready) opts.onExit?.(code);
      ok();
    }),
  );

  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`bazaar-localnet not ready after ${opts.readyTimeoutMs ?? 60_000} ms:\n${output}`));
    }, opts.readyTimeoutMs ?? 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('bazaar-localnet listening on')) {
        clearTimeout(timer);
        ready = true;
        ok();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => {
      output += c.toString();
      if (output.length > 100_000) output = output.slice(-50_000);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`bazaar-localnet exited early (code ${code}):\n${output}`));
    });
  });
  // Keep draining the pipes so the child never blocks on a full pipe.
  child.stdout!.removeAllListeners('data');
  child.stdout!.resume();
  child.stderr!.resume();

  return {
    rpcUrl,
    wsUrl,
    pid: child.pid,
    async stop() {
      if (exited) return;
      stopping = true;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 3_000);
      await exitPromise;
      clearTimeout(t);
    },
    async advanceClock(seconds: number) {
      await rpcCall(rpcUrl, 'localnet_advanceClock', [Math.floor(seconds)]);
    },
    getClock() {
      return rpcCall<LocalnetClock>(rpcUrl, 'localnet_getClock');
    },
  };
}
