/**
 * Typed configuration. `loadConfig(env)` reads the environment (documented defaults below);
 * tests build a Config directly (`testConfig()` in tests/helpers/app.ts). Config is a plain object
 * passed into createApp/main, never read from process.env elsewhere.
 *
 * | env | default | meaning |
 * |---|---|---|
 * | PORT | 3000 | HTTP port |
 * | HOST | 127.0.0.1 | bind address |
 * | PUBLIC_BASE_URL | http://localhost:PORT | external origin; SIWS `uri`, token metadata URLs |
 * | DATA_DIR | ./data | PGlite database, keys, chain.json |
 * | DATABASE_URL | (unset: PGlite in DATA_DIR/pglite) | postgres:// URL |
 * | JWT_SECRET | generated once into DATA_DIR/keys/jwt-secret | HS256 key (>= 32 bytes) |
 * | JWT_TTL_SECONDS | 3600 | access token lifetime |
 * | SIWS_DOMAIN | host of PUBLIC_BASE_URL | SIWS domain the message must carry |
 * | SIWS_CHAIN_ID | localnet | SIWS chainId |
 * | LOGIN_NONCE_TTL_SECONDS | 300 | nonce lifetime |
 * | SOLANA_RPC_URL | http://127.0.0.1:8899 | JSON-RPC endpoint |
 * | ESCROW_PROGRAM_ID | (chain.json / IDL address) | escrow program |
 * | SERVICE_KEYPAIR_PATH | DATA_DIR/keys/service.json | service keypair file |
 * | CURRENCIES | from DATA_DIR/chain.json | `CODE:mint:decimals,...` |
 * | CATEGORIES | design,development,writing,marketing,video,music,data,business,other | category slugs |
 * | PUBLIC_MARKETPLACE | false | anonymous GETs of listing/marketplace routes |
 * | CORS_ORIGINS | (none) | comma-separated allowed origins, `*` for any |
 * | BODY_LIMIT | 100kb | JSON body limit |
 * | AUTH_RATE_LIMIT_PER_MINUTE | 20 | per IP, on request_login and verify_login |
 * | CUSTODY_ENABLED | false | custodial accounts: deposit, withdraw, custodial order payment (modules/custody/README.md) |
 * | CUSTODY_SEED | generated once into DATA_DIR/keys/custody-seed | hex master seed (16..64 bytes) of the deposit addresses; read only when custody is on |
 * | CUSTODY_MIN_DEPOSIT | 0.01 of each currency | `CODE:ui_amount,...` smaller deposits are recorded, not credited |
 * | CUSTODY_MIN_WITHDRAWAL | 1 of each currency | `CODE:ui_amount,...` |
 * | CUSTODY_WITHDRAWAL_FEE | 0 | `CODE:ui_amount,...` flat fee per withdrawal, kept by the service |
 * | CUSTODY_POLL_INTERVAL_MS | 5000 | deposit watcher + transfer reconciler interval; 0 = start-up pass only |
 * | HTTP_HEADERS_TIMEOUT_MS | 10000 | time to receive the request line and headers; also closes connections that never send a byte (slowloris) |
 * | HTTP_REQUEST_TIMEOUT_MS | 30000 | time to receive a whole request (headers + body): a Content-Length larger than what is sent ends as 408 |
 * | HTTP_KEEP_ALIVE_TIMEOUT_MS | 5000 | idle time of a keep-alive connection between requests; behind a load balancer set it above the balancer's idle timeout |
 * | HTTP_MAX_CONNECTIONS | 500 | open connections; more are closed at once (below the usual 1024 open-files limit, leaving room for the database pool and RPC sockets) |
 * | HTTP_TIMEOUT_CHECK_INTERVAL_MS | 1000 | how often Node checks the headers/request timeouts (their granularity) |
 * | SHUTDOWN_TIMEOUT_MS | 25000 | SIGTERM/SIGINT drain deadline: in-flight requests, workers and the database close within it (exit 0), else exit 1 |
 * | DB_POOL_MAX | 10 | PostgreSQL connections in the pool |
 * | DB_POOL_TIMEOUT_MS | 5000 | wait for a free pool connection, then 503 service-unavailable |
 * | DB_POOL_QUEUE_MAX | 100 | queries waiting for a pool connection at most; one more is 503 service-unavailable at once |
 * | DB_STATEMENT_TIMEOUT_MS | 10000 | PostgreSQL statement_timeout per connection, then 503 |
 * | DB_LOCK_TIMEOUT_MS | 3000 | PostgreSQL lock_timeout per connection, then 503 |
 * | DB_IDLE_IN_TRANSACTION_TIMEOUT_MS | 60000 | PostgreSQL idle_in_transaction_session_timeout per connection |
 * | READY_TIMEOUT_MS | 1000 | /readyz database probe (own connection, off the shared pool) |
 * | LOG_LEVEL | info | pino level (`silent` in tests) |
 * | TRUST_PROXY | 0 | reverse proxies in front (client IP from X-Forwarded-For); `true` = 1 |
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface CurrencyConfig {
  code: string;
  mint: string;
  decimals: number;
  tokenProgram?: string;
}

export interface CategoryConfig {
  slug: string;
  name: string;
}

export interface Config {
  port: number;
  host: string;
  publicBaseUrl: string;
  dataDir: string;
  databaseUrl?: string;
  jwtSecret: string;
  jwtTtlSeconds: number;
  siwsDomain: string;
  siwsChainId: string;
  loginNonceTtlSeconds: number;
  /** accepted clock skew for SIWS issuedAt / notBefore (seconds) */
  clockSkewSeconds: number;
  solanaRpcUrl: string;
  escrowProgramId?: string;
  serviceKeypairPath: string;
  currencies: CurrencyConfig[];
  categories: CategoryConfig[];
  publicMarketplace: boolean;
  corsOrigins: string[];
  bodyLimit: string;
  authRateLimitPerMinute: number;
  custodyEnabled: boolean;
  /** hex master seed of the deposit addresses (set when custody is enabled; see loadOrCreateCustodySeed) */
  custodySeed?: string;
  /** per currency code, UI amounts as decimal text (e.g. { USDC: '0.01' }); defaults in modules/custody */
  custodyMinDeposit?: Record<string, string>;
  custodyMinWithdrawal?: Record<string, string>;
  custodyWithdrawalFee?: Record<string, string>;
  /** deposit watcher + transfer reconciler interval, ms (0 = only the start-up pass) */
  custodyPollIntervalMs?: number;
  logLevel: string;
  /** number of reverse proxies in front (Express 'trust proxy' hops); 0 = none */
  trustProxy: number;
  /** HTTP server limits (http/server.ts); milliseconds but maxConnections */
  http: HttpLimits;
  /** PostgreSQL pool and timeouts (db/postgres.ts; PGlite has none, see db/client.ts) */
  db: DbLimits;
  /** /readyz database probe timeout, ms */
  readyTimeoutMs: number;
  /** drain deadline after SIGTERM/SIGINT, ms (main.ts) */
  shutdownTimeoutMs: number;
}

/** Node HTTP server limits, set when the server is created (http/server.ts). */
export interface HttpLimits {
  /** ms to receive request line + headers, from the connection's first byte (or its opening) */
  headersTimeoutMs: number;
  /** ms to receive the whole request (headers + body) */
  requestTimeoutMs: number;
  /** ms a keep-alive connection may idle between requests */
  keepAliveTimeoutMs: number;
  /** open connections at most; more are closed at once */
  maxConnections: number;
  /** ms between Node's checks of the headers/request timeouts */
  timeoutCheckIntervalMs: number;
}

/** PostgreSQL pool size and per-connection timeouts (ms), db/postgres.ts PgLimits. */
export interface DbLimits {
  poolMax: number;
  poolTimeoutMs: number;
  /** queries that may wait for a connection (db/postgres.ts BoundedPool); optional for callers that build limits by hand */
  poolQueueMax?: number;
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  idleInTransactionTimeoutMs: number;
}

/** Defaults of the HTTP, database, readiness and shutdown limits (see the table above). */
export const DEFAULT_LIMITS = {
  http: {
    headersTimeoutMs: 10_000,
    requestTimeoutMs: 30_000,
    keepAliveTimeoutMs: 5_000,
    maxConnections: 500,
    timeoutCheckIntervalMs: 1_000,
  } satisfies HttpLimits,
  db: {
    poolMax: 10,
    poolTimeoutMs: 5_000,
    poolQueueMax: 100,
    statementTimeoutMs: 10_000,
    lockTimeoutMs: 3_000,
    idleInTransactionTimeoutMs: 60_000,
  } satisfies DbLimits,
  readyTimeoutMs: 1_000,
  shutdownTimeoutMs: 25_000,
} as const;

export const DEFAULT_CATEGORIES = ['design', 'development', 'writing', 'marketing', 'video', 'music', 'data', 'business', 'other'];

const titleCase = (slug: string) =>
  slug
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(' ');

export const categoriesFromSlugs = (slugs: string[]): CategoryConfig[] =>
  slugs.map((slug) => ({ slug, name: titleCase(slug) }));

/** `USDC:<mint>:6,SOL:So111...:9` */
export function parseCurrencies(spec: string): CurrencyConfig[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const [code, mint, decimals, tokenProgram] = entry.split(':');
      if (!code || !mint || decimals === undefined || !/^\d+$/.test(decimals)) {
        throw new Error(`CURRENCIES: bad entry "${entry}" (want CODE:mint:decimals)`);
      }
      return { code: code.toUpperCase(), mint, decimals: Number(decimals), ...(tokenProgram ? { tokenProgram } : {}) };
    });
}

const bool = (v: string | undefined, dflt: boolean) =>
  v === undefined || v === '' ? dflt : ['1', 'true', 'yes', 'on'].includes(v.toLowerCase());

const int = (name: string, v: string | undefined, dflt: number) => {
  if (v === undefined || v === '') return dflt;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${name} must be a non-negative integer, got "${v}"`);
  return n;
};

/** JWT_SECRET or DATA_DIR/keys/jwt-secret (created on first start, 0600). */
export function loadOrCreateJwtSecret(dataDir: string): string {
  const dir = path.join(dataDir, 'keys');
  const file = path.join(dir, 'jwt-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, secret + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  return secret;
}

/**
 * CUSTODY_SEED or DATA_DIR/keys/custody-seed (32 random bytes as hex, created on first start, 0600).
 * The seed is the root of every deposit address: back it up. Losing it loses the tokens still at
 * deposit addresses (not yet swept); changing it orphans every address already handed out.
 */
export function loadOrCreateCustodySeed(dataDir: string): string {
  const dir = path.join(dataDir, 'keys');
  const file = path.join(dir, 'custody-seed');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const seed = randomBytes(32).toString('hex');
  writeFileSync(file, seed + '\n', { mode: 0o600 });
  chmodSync(file, 0o600);
  return seed;
}

/** `USDC:0.01,SOL:0.001` -> { USDC: '0.01', SOL: '0.001' } (UI amounts as decimal text). */
export function parseCurrencyAmounts(name: string, spec: string | undefined): Record<string, string> | undefined {
  if (!spec) return undefined;
  const out: Record<string, string> = {};
  for (const entry of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [code, amount] = entry.split(':');
    if (!code || !amount || !/^\d+(\.\d+)?$/.test(amount)) throw new Error(`${name}: bad entry "${entry}" (want CODE:amount, e.g. USDC:0.5)`);
    out[code.toUpperCase()] = amount;
  }
  return out;
}

/** Currencies written by the dev bootstrap into DATA_DIR/chain.json (empty when absent). */
export function currenciesFromChainFile(dataDir: string): { currencies: CurrencyConfig[]; programId?: string } {
  const file = path.join(dataDir, 'chain.json');
  if (!existsSync(file)) return { currencies: [] };
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { currencies?: CurrencyConfig[]; programId?: string };
  return { currencies: parsed.currencies ?? [], programId: parsed.programId };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const port = int('PORT', env.PORT, 3000);
  const dataDir = path.resolve(env.DATA_DIR || './data');
  const publicBaseUrl = (env.PUBLIC_BASE_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  const chainFile = currenciesFromChainFile(dataDir);
  const jwtSecret = env.JWT_SECRET || loadOrCreateJwtSecret(dataDir);
  if (Buffer.byteLength(jwtSecret) < 32) throw new Error('JWT_SECRET must be at least 32 bytes');
  const custodyEnabled = bool(env.CUSTODY_ENABLED, false);
  return {
    port,
    host: env.HOST || '127.0.0.1',
    publicBaseUrl,
    dataDir,
    databaseUrl: env.DATABASE_URL || undefined,
    jwtSecret,
    jwtTtlSeconds: int('JWT_TTL_SECONDS', env.JWT_TTL_SECONDS, 3600),
    siwsDomain: env.SIWS_DOMAIN || new URL(publicBaseUrl).host,
    siwsChainId: env.SIWS_CHAIN_ID || 'localnet',
    loginNonceTtlSeconds: int('LOGIN_NONCE_TTL_SECONDS', env.LOGIN_NONCE_TTL_SECONDS, 300),
    clockSkewSeconds: int('CLOCK_SKEW_SECONDS', env.CLOCK_SKEW_SECONDS, 60),
    solanaRpcUrl: env.SOLANA_RPC_URL || 'http://127.0.0.1:8899',
    escrowProgramId: env.ESCROW_PROGRAM_ID || chainFile.programId,
    serviceKeypairPath: env.SERVICE_KEYPAIR_PATH || path.join(dataDir, 'keys', 'service.json'),
    currencies: env.CURRENCIES ? parseCurrencies(env.CURRENCIES) : chainFile.currencies,
    categories: categoriesFromSlugs(
      env.CATEGORIES ? env.CATEGORIES.split(',').map((s) => s.trim()).filter(Boolean) : DEFAULT_CATEGORIES,
    ),
    publicMarketplace: bool(env.PUBLIC_MARKETPLACE, false),
    corsOrigins: (env.CORS_ORIGINS || '').split(',').map((s) => s.trim()).filter(Boolean),
    bodyLimit: env.BODY_LIMIT || '100kb',
    authRateLimitPerMinute: int('AUTH_RATE_LIMIT_PER_MINUTE', env.AUTH_RATE_LIMIT_PER_MINUTE, 20),
    custodyEnabled,
    ...(custodyEnabled
      ? {
          custodySeed: env.CUSTODY_SEED || loadOrCreateCustodySeed(dataDir),
          custodyMinDeposit: parseCurrencyAmounts('CUSTODY_MIN_DEPOSIT', env.CUSTODY_MIN_DEPOSIT),
          custodyMinWithdrawal: parseCurrencyAmounts('CUSTODY_MIN_WITHDRAWAL', env.CUSTODY_MIN_WITHDRAWAL),
          custodyWithdrawalFee: parseCurrencyAmounts('CUSTODY_WITHDRAWAL_FEE', env.CUSTODY_WITHDRAWAL_FEE),
          custodyPollIntervalMs: int('CUSTODY_POLL_INTERVAL_MS', env.CUSTODY_POLL_INTERVAL_MS, 5_000),
        }
      : {}),
    logLevel: env.LOG_LEVEL || 'info',
    trustProxy: env.TRUST_PROXY === 'true' ? 1 : int('TRUST_PROXY', env.TRUST_PROXY === 'false' ? '0' : env.TRUST_PROXY, 0),
    http: httpLimits(env),
    db: {
      poolMax: positive('DB_POOL_MAX', env.DB_POOL_MAX, DEFAULT_LIMITS.db.poolMax),
      poolTimeoutMs: positive('DB_POOL_TIMEOUT_MS', env.DB_POOL_TIMEOUT_MS, DEFAULT_LIMITS.db.poolTimeoutMs),
      poolQueueMax: int('DB_POOL_QUEUE_MAX', env.DB_POOL_QUEUE_MAX, DEFAULT_LIMITS.db.poolQueueMax),
      statementTimeoutMs: positive('DB_STATEMENT_TIMEOUT_MS', env.DB_STATEMENT_TIMEOUT_MS, DEFAULT_LIMITS.db.statementTimeoutMs),
      lockTimeoutMs: positive('DB_LOCK_TIMEOUT_MS', env.DB_LOCK_TIMEOUT_MS, DEFAULT_LIMITS.db.lockTimeoutMs),
      idleInTransactionTimeoutMs: positive(
        'DB_IDLE_IN_TRANSACTION_TIMEOUT_MS',
        env.DB_IDLE_IN_TRANSACTION_TIMEOUT_MS,
        DEFAULT_LIMITS.db.idleInTransactionTimeoutMs,
      ),
    },
    readyTimeoutMs: positive('READY_TIMEOUT_MS', env.READY_TIMEOUT_MS, DEFAULT_LIMITS.readyTimeoutMs),
    shutdownTimeoutMs: positive('SHUTDOWN_TIMEOUT_MS', env.SHUTDOWN_TIMEOUT_MS, DEFAULT_LIMITS.shutdownTimeoutMs),
  };
}

/** A limit that must be > 0 (0 would mean "no limit" to Node and PostgreSQL: not allowed here). */
function positive(name: string, v: string | undefined, dflt: number): number {
  const n = int(name, v, dflt);
  if (n === 0) throw new Error(`${name} must be greater than 0`);
  return n;
}

/** HTTP_* limits; headers timeout must not exceed the request timeout (Node refuses that). */
export function httpLimits(env: NodeJS.ProcessEnv): HttpLimits {
  const d = DEFAULT_LIMITS.http;
  const limits = {
    headersTimeoutMs: positive('HTTP_HEADERS_TIMEOUT_MS', env.HTTP_HEADERS_TIMEOUT_MS, d.headersTimeoutMs),
    requestTimeoutMs: positive('HTTP_REQUEST_TIMEOUT_MS', env.HTTP_REQUEST_TIMEOUT_MS, d.requestTimeoutMs),
    keepAliveTimeoutMs: positive('HTTP_KEEP_ALIVE_TIMEOUT_MS', env.HTTP_KEEP_ALIVE_TIMEOUT_MS, d.keepAliveTimeoutMs),
    maxConnections: positive('HTTP_MAX_CONNECTIONS', env.HTTP_MAX_CONNECTIONS, d.maxConnections),
    timeoutCheckIntervalMs: positive('HTTP_TIMEOUT_CHECK_INTERVAL_MS', env.HTTP_TIMEOUT_CHECK_INTERVAL_MS, d.timeoutCheckIntervalMs),
  };
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new Error('HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS');
  }
  return limits;
}
