/**
 * Start-up failures a person can act on. Each known cause becomes ONE line that names it and the
 * variable to change (no stack trace); anything else is printed whole (a bug to report).
 *
 * | cause                                  | variable            | raised by                                  |
 * |----------------------------------------|---------------------|--------------------------------------------|
 * | a bad value                            | the one named       | config.ts (ConfigError)                    |
 * | `DATA_DIR` is a file / not writable    | DATA_DIR            | ensureDataDir (npm start, server entry)   |
 * | the HTTP port is taken                 | PORT                | npm start (before the localnet), listen()  |
 * | the localnet port (or port + 1) taken  | SOLANA_RPC_PORT     | npm start, before spawning the localnet    |
 * | cargo missing (localnet must be built) | BAZAAR_LOCALNET_BIN, SOLANA_RPC_URL | scripts/localnet-process.ts |
 * | the database unreachable / refusing    | DATABASE_URL        | probeDatabase, before migrating            |
 *
 * Also the start-up's file work that configuration parsing does not do (config.ts is pure):
 * `loadServerConfig` creates DATA_DIR and, on first start, the secrets kept there.
 */
import { randomBytes } from 'node:crypto';
import { accessSync, chmodSync, constants, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import type pg from 'pg';
import { connectPgClient } from './db/host-list.js';
import { readChainFile } from './chain/keys.js';
import { ConfigError, dataDirOf, loadConfig, storedSecretsNeeded, type Config, type LoadConfigOptions } from './config.js';

/** A start-up failure with a known cause: `message` is the one line to print. */
export class StartupError extends Error {
  constructor(
    message: string,
    /** the variable that fixes it */
    readonly variable?: string,
  ) {
    super(message);
    this.name = 'StartupError';
  }
}

/**
 * Make sure DATA_DIR is a writable directory (created, with parents, when missing). Throws
 * StartupError naming DATA_DIR when it is a file, cannot be created, or cannot be written.
 */
export function ensureDataDir(dir: string): void {
  if (existsSync(dir) && !statSync(dir).isDirectory()) {
    throw new StartupError(`DATA_DIR=${dir} is a file, not a directory: set DATA_DIR to a directory (it is created when missing)`, 'DATA_DIR');
  }
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'error';
    const why = code === 'ENOTDIR' ? 'a parent of it is a file' : code === 'EACCES' || code === 'EPERM' || code === 'EROFS' ? 'not writable' : code;
    throw new StartupError(`DATA_DIR=${dir} cannot be used (${why}, ${code}): set DATA_DIR to a writable directory`, 'DATA_DIR');
  }
}

/**
 * The server's configuration at start-up: DATA_DIR made usable (ensureDataDir), the secrets the service
 * keeps there read or, on first start, created (keys/jwt-secret unless JWT_SECRET is set;
 * keys/custody-seed when CUSTODY_ENABLED and CUSTODY_SEED is unset), the bootstrap's chain.json read,
 * then the environment parsed (config.ts `loadConfig`, which touches no file). Throws StartupError
 * (DATA_DIR) or ConfigError.
 */
export function loadServerConfig(env: NodeJS.ProcessEnv = process.env, opts: Omit<LoadConfigOptions, 'stored'> = {}): Config {
  const dataDir = dataDirOf(env);
  ensureDataDir(dataDir);
  const needs = storedSecretsNeeded(env);
  const chain = readChainFile(dataDir);
  return loadConfig(env, {
    ...opts,
    stored: {
      ...(needs.jwtSecret ? { jwtSecret: loadOrCreateJwtSecret(dataDir) } : {}),
      ...(needs.custodySeed ? { custodySeed: loadOrCreateCustodySeed(dataDir) } : {}),
      ...(chain ? { chain: { currencies: chain.currencies, programId: chain.programId } } : {}),
    },
  });
}

/** DATA_DIR/keys/jwt-secret: read, or created on first start (48 random bytes, base64url; file 0600, directory 0700). */
export function loadOrCreateJwtSecret(dataDir: string): string {
  return loadOrCreateSecret(dataDir, 'jwt-secret', () => randomBytes(48).toString('base64url'));
}

/**
 * DATA_DIR/keys/custody-seed: read, or created on first start (32 random bytes as hex, file 0600).
 * The seed is the root of every deposit address: back it up. Losing it loses the tokens still at
 * deposit addresses (not yet swept); changing it orphans every address already handed out.
 */
export function loadOrCreateCustodySeed(dataDir: string): string {
  return loadOrCreateSecret(dataDir, 'custody-seed', () => randomBytes(32).toString('hex'));
}

function loadOrCreateSecret(dataDir: string, name: string, generate: () => string): string {
  const dir = path.join(dataDir, 'keys');
  const file = path.join(dir, name);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const secret = generate();
  writeFileSync(file, secret + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  return secret;
}

/** True when nothing listens on `host:port` (we could bind it). */
export function portFree(port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host, exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

/** Throw StartupError naming PORT when the HTTP port is taken. */
export async function ensureHttpPortFree(port: number, host: string): Promise<void> {
  if (port !== 0 && !(await portFree(port, host))) throw httpPortInUse(port, host);
}

const httpPortInUse = (port: number, host: string) =>
  new StartupError(`the HTTP port ${host}:${port} is already in use: stop what runs there or set PORT to a free port`, 'PORT');

/** Throw StartupError naming SOLANA_RPC_PORT when the localnet port or its websocket port (+1) is taken. */
export async function ensureLocalnetPortsFree(port: number): Promise<void> {
  for (const p of [port, port + 1]) {
    if (!(await portFree(p, '127.0.0.1'))) {
      throw new StartupError(
        `the localnet port 127.0.0.1:${p} is already in use (the localnet needs SOLANA_RPC_PORT and the next one): ` +
          'stop what runs there (another npm start?) or set SOLANA_RPC_PORT to a free port',
        'SOLANA_RPC_PORT',
      );
    }
  }
}

/** `postgres://user:secret@host/db` without the password, for messages (also a libpq host list `h1:p1,h2:p2`). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    const m = /^([a-z][a-z0-9+.-]*:\/\/)(?:([^:@/]*)(?::[^@/]*)?@)?([^/?#]*)(.*)$/i.exec(url);
    if (m) return `${m[1]}${m[2] !== undefined ? `${m[2]}${url.slice(m[1]!.length).split('@')[0]!.includes(':') ? ':***' : ''}@` : ''}${m[3]}${m[4]}`;
    return '(unparsable URL)';
  }
}

/**
 * Connect to DATABASE_URL once (timeout `timeoutMs`) and run `SELECT 1`, so that an unreachable or
 * refusing server is reported as one line before the migration engine reports it with a wasm stack.
 * Throws StartupError naming DATABASE_URL.
 */
export async function probeDatabase(url: string, timeoutMs = 5_000): Promise<void> {
  // a libpq host list (`h1:p1,h2:p2 ... target_session_attrs=read-write`) is followed to its read-write server
  let client: pg.Client | null = null;
  try {
    client = await connectPgClient(url, { connectionTimeoutMillis: timeoutMs });
    client.on('error', () => undefined);
    await client.query('SELECT 1');
  } catch (err) {
    const e = err as { code?: string; message?: string };
    const why =
      e.code === 'ECONNREFUSED'
        ? 'connection refused (is PostgreSQL running there?)'
        : e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN'
          ? 'unknown host'
          : e.code === '28P01' || e.code === '28000'
            ? 'authentication failed'
            : e.code === '3D000'
              ? 'the database does not exist'
              : `${e.code ? `${e.code}: ` : ''}${(e.message ?? String(err)).split('\n')[0]}`;
    throw new StartupError(`cannot use the database at DATABASE_URL=${redactUrl(url)}: ${why}; fix DATABASE_URL or start the database`, 'DATABASE_URL');
  } finally {
    await client?.end().catch(() => undefined);
  }
}

/**
 * The one line for a known start-up failure, or null for an unexpected error. `port`/`host`: the
 * HTTP listener (an EADDRINUSE from listen() names PORT).
 */
export function startupFailureLine(err: unknown, ctx: { port?: number; host?: string } = {}): string | null {
  if (err instanceof StartupError || err instanceof ConfigError) return err.message;
  const e = err as NodeJS.ErrnoException & { port?: number; address?: string };
  if (e?.code === 'EADDRINUSE' && e.syscall === 'listen') {
    return httpPortInUse(e.port ?? ctx.port ?? 0, e.address ?? ctx.host ?? '127.0.0.1').message;
  }
  if (e?.code === 'EACCES' && e.syscall === 'listen') {
    return `the HTTP port ${e.port ?? ctx.port} needs privileges to bind (ports below 1024): set PORT to 1024 or above`;
  }
  return null;
}

/**
 * Print a start-up failure to stderr: `[bazaar] error: <line>` for a known cause, the whole error
 * (stack included) otherwise.
 */
export function reportStartupFailure(err: unknown, ctx: { port?: number; host?: string } = {}): void {
  const line = startupFailureLine(err, ctx);
  if (line) process.stderr.write(`[bazaar] error: ${line}\n`);
  else console.error(err);
}
