/**
 * Configuration: every environment variable Bazaar reads is defined ONCE here, in `ENV_VARS` (name,
 * default, meaning), and read only here:
 *
 * - `loadConfig(env, { dev })`: the server's typed Config (server/src/main.ts, `npm start`);
 * - `loadStartConfig(env)`: what `npm start` itself needs (localnet port, cargo, chain bootstrap);
 * - `loadToolConfig(env)`: what the scripts need (`npm run demo`, dev-login, chain:bootstrap,
 *   db:migrate, api-key).
 *
 * A variable left unset reads as its documented default (`literal` defaults are parsed like a set
 * value, so the docs cannot drift from the behaviour). The README's configuration table is generated
 * from ENV_VARS (`npm run docs:config`; the test suite fails when it is stale), and a test sets each
 * variable to its `example` and checks that a loader's result changes (a documented variable that
 * nothing reads fails it). Tests build a Config directly (`testConfig()` in tests/helpers/app.ts).
 *
 * Errors: a bad value throws ConfigError naming the variable (npm start prints it as one line).
 *
 * Pure: environment in, typed configuration out. Nothing here reads or writes a file: what the service
 * keeps under DATA_DIR (the JWT key, the custody seed, the bootstrap's chain.json) is read, or created on
 * first start, by start-up (startup.ts `loadServerConfig`) and passed in as `LoadConfigOptions.stored`.
 */
import { DEFAULT_STANDBY_MAX_LAG_MS, type StandbyReadSettings } from './db/read-routing.js';
import { homedir } from 'node:os';
import path from 'node:path';
import { authDefaults, DISPUTE_DEFAULTS, STREAM_DEFAULTS } from '@bazaar/contract';
import type { CurrencyInfo } from './lib/currency.js';
import { websocketUrlFor } from './lib/rpc-url.js';
import type { OrdersSettings } from './modules/orders/orders.settings.js';
import type { TracingSettings } from './tracing.js';

/**
 * What the service may spend on chain per UTC day (modules/budget, docs/threat-model.md#who-pays-for-what-on-chain): the daily budget in
 * lamports, per-account and per-IP caps of the actions that cost it SOL, and the lowest listing price per
 * currency (UI amounts as decimal text). 0 as a cap = the action is refused.
 */
export interface SpendingSettings {
  dailyLamports: number;
  listingCreatePerUser: number;
  listingCreatePerIp: number;
  listingRenamePerUser: number;
  withdrawalPerUser: number;
  listingMinPrice: Record<string, string>;
}

/** Defaults of the spending variables (ENV_VARS); `listingMinPrice` as the env var's text. */
export const SPENDING_DEFAULTS = {
  dailyLamports: 5_000_000_000,
  listingCreatePerUser: 20,
  listingCreatePerIp: 100,
  listingRenamePerUser: 20,
  withdrawalPerUser: 10,
  listingMinPrice: 'USDC:0.1,SOL:0.001',
} as const;

/**
 * Fee sponsorship (issue 26 item 5; modules/orders sponsorship.ts, README "Fee sponsorship"): a dedicated
 * sponsor key pays the network fee and the escrow accounts' rent of signed-in buyers' wallet orders, within
 * per-account and per-IP counts and a daily lamport budget of its own (fees + rent, counted when signed).
 */
export interface FeeSponsorshipSettings {
  enabled: boolean;
  /** the sponsor's keypair file (FEE_SPONSOR_KEYPAIR_PATH; default DATA_DIR/keys/sponsor.json, created on first start) */
  keypairPath: string;
  /** true when keypairPath is the default one (then it is created when missing) */
  defaultKeypair: boolean;
  /** lamports of fees + rent the sponsor may commit per UTC day */
  dailyLamports: number;
  /** sponsored fund transactions per account (= the buyer's wallet) per UTC day */
  perUser: number;
  /** sponsored fund transactions per client IP per UTC day */
  perIp: number;
}

/** Defaults of FEE_SPONSORSHIP_* (ENV_VARS). */
export const FEE_SPONSORSHIP_DEFAULTS = {
  dailyLamports: 1_000_000_000,
  perUser: 5,
  perIp: 20,
} as const;

/** Who reads a variable: the server (loadConfig), `npm start` (loadStartConfig), the scripts (loadToolConfig). */
export type EnvReader = 'server' | 'npm start' | 'scripts';

/** One documented environment variable. */
export interface EnvVar {
  name: string;
  /** the default: `{ literal }` is what an unset variable reads as; `{ computed }` describes a derived default */
  default: { literal: string } | { computed: string };
  /** what it does (Markdown) */
  meaning: string;
  /** a valid non-default value (tests set it and expect the readers' results to change) */
  example: string;
  /** variables the example needs to take effect (e.g. CUSTODY_ENABLED for the custody settings) */
  with?: Record<string, string>;
  readers: readonly EnvReader[];
  /** README table section */
  group: 'service' | 'login' | 'chain' | 'spending' | 'orders' | 'custody' | 'events' | 'limits' | 'npm start and scripts';
}

/** Defaults of the HTTP, database, readiness and shutdown limits (ENV_VARS reads them). */
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
    poolQueueMax: 1000,
    statementTimeoutMs: 10_000,
    lockTimeoutMs: 3_000,
    idleInTransactionTimeoutMs: 60_000,
  } satisfies DbLimits,
  readyTimeoutMs: 1_000,
  shutdownTimeoutMs: 25_000,
} as const;

/**
 * Webhook delivery defaults (modules/webhooks). `maxPerUser`: endpoints one user may register (each
 * event fans out to every endpoint; Stripe allows 16 per account).
 */
export const WEBHOOK_DEFAULTS = { timeoutMs: 10_000, intervalMs: 1_000, concurrency: 32, maxPerUser: 16 } as const;

/** Webhook settings (WEBHOOK_* variables). */
export interface WebhookSettings {
  allowPrivateUrls: boolean;
  /** ms */
  timeoutMs: number;
  /** ms; 0 = the worker does not run */
  intervalMs: number;
  concurrency: number;
  /** endpoints per user (more: 409 conflict); absent: WEBHOOK_DEFAULTS.maxPerUser */
  maxPerUser?: number;
}

/** Limits of GET /events/stream (EVENTS_STREAM_* variables; modules/events/events.stream.ts). */
export interface EventStreamSettings {
  /** open streams per user on one process (more: 429) */
  maxPerUser: number;
  /** events one connection replays before it ends with `replay_limit` */
  replayMax: number;
  /** re-check of a stream's credential, ms */
  recheckMs: number;
}

export const DEFAULT_CATEGORIES = ['design', 'development', 'writing', 'marketing', 'video', 'music', 'data', 'business', 'other'];

/** Origins (CORS) and SIWS domains a local frontend has under `npm start` (any port). */
export const DEV_LOCAL_ORIGINS = ['http://localhost:*', 'http://127.0.0.1:*'] as const;
export const DEV_LOCAL_SIWS_DOMAINS = ['localhost:*', '127.0.0.1:*'] as const;

const lit = (v: string | number) => ({ literal: String(v) });
const computed = (text: string) => ({ computed: text });
const S = ['server'] as const;

/** Every environment variable, in README order. */
export const ENV_VARS: readonly EnvVar[] = [
  // service
  { name: 'PORT', group: 'service', default: lit(3000), meaning: 'HTTP port of the server', example: '4123', readers: ['server', 'npm start'] },
  { name: 'HOST', group: 'service', default: lit('127.0.0.1'), meaning: 'bind address of the server', example: '0.0.0.0', readers: ['server', 'npm start'] },
  {
    name: 'PUBLIC_BASE_URL',
    group: 'service',
    default: computed('`http://localhost:PORT`'),
    meaning:
      'external origin of the service: default SIWS domain and uri, token metadata URLs, Solana Pay links and icon ' +
      '(wallets accept Solana Pay links to https URLs only), the server named by the served `/openapi.json` (unset: the request\'s origin)',
    example: 'https://api.example.com',
    readers: S,
  },
  {
    name: 'DATA_DIR',
    group: 'service',
    default: lit('./data'),
    meaning: 'PGlite database, dev keys, `chain.json`, localnet ledger (a writable directory; created when missing)',
    example: '/tmp/bazaar-example-data',
    readers: ['server', 'npm start', 'scripts'],
  },
  {
    name: 'DATABASE_URL',
    group: 'service',
    default: computed('unset: PGlite in `DATA_DIR/pglite`'),
    meaning:
      '`postgres://…` of a real PostgreSQL server (via `@prisma/adapter-pg`); a libpq host list with `target_session_attrs=read-write` (`postgres://h1:5432,h2:5432/db?target_session_attrs=read-write`, what `pg_autoctl show uri` prints) follows the primary across a failover (README "Deployment")',
    example: 'postgres://bazaar@127.0.0.1:5432/bazaar',
    readers: ['server', 'scripts'],
  },
  {
    name: 'DATABASE_STANDBY_READS',
    group: 'service',
    default: lit('off'),
    meaning:
      'PostgreSQL only: `on` sends anonymous search and public listing reads (GET, no credential) to a standby of the `DATABASE_URL` host list (libpq `target_session_attrs=prefer-standby`: a standby when one answers, else the primary) while its replay lag, sampled every second, is within `DATABASE_STANDBY_MAX_LAG_MS`; credentialed reads and writes always use the primary (README "PostgreSQL with automatic failover")',
    example: 'on',
    readers: ['server'],
  },
  { name: 'DATABASE_STANDBY_MAX_LAG_MS', group: 'service', default: lit(String(DEFAULT_STANDBY_MAX_LAG_MS)), meaning: 'staleness bound of standby reads: a replay lag past it (or unknown) sends them to the primary', example: '500', with: { DATABASE_STANDBY_READS: 'on' }, readers: ['server'] },
  {
    name: 'CORS_ORIGINS',
    group: 'service',
    default: computed('none; under `npm start` with the embedded localnet: `http://localhost:*,http://127.0.0.1:*`'),
    meaning:
      'comma-separated origins browsers may call the API from (`*` any origin, `scheme://host:*` any port; credentials, ' +
      'i.e. the session cookie, only for an origin listed exactly); the ' +
      'Solana Pay endpoints and `/icon.svg` allow any origin whatever this says',
    example: 'https://app.example.com',
    readers: S,
  },
  { name: 'PUBLIC_MARKETPLACE', group: 'service', default: lit('false'), meaning: 'anonymous reads of the routes the contract marks `public_marketplace` (listing reads, search, browse, similar listings, categories, currencies)', example: 'true', readers: S },
  {
    name: 'ACTIONS_ENABLED',
    group: 'service',
    default: computed('`false`; under `npm start`: `true`'),
    meaning:
      'serve the Solana Actions (blinks): `/actions.json` and `/api/actions/...` (anonymous by design: README "Share a listing as a blink"); ' +
      'off: they answer 404',
    example: 'true',
    with: { ACTIONS_ENABLED: 'false' },
    readers: ['server', 'npm start'],
  },
  { name: 'ACTIONS_RATE_LIMIT_PER_MINUTE', group: 'service', default: lit(60), meaning: 'requests per minute per client IP (IPv6: per /64) to the Solana Actions routes, all together (429 with Retry-After beyond)', example: '30', readers: S },
  { name: 'CATEGORIES', group: 'service', default: lit(DEFAULT_CATEGORIES.join(',')), meaning: 'category slugs (`GET /categories`)', example: 'design,other', readers: S },
  { name: 'LOG_LEVEL', group: 'service', default: lit('info'), meaning: 'pino log level (`silent` in tests)', example: 'debug', readers: S },
  {
    name: 'LEADER_LEASE_TTL_MS',
    group: 'service',
    default: lit(15_000),
    meaning:
      'lease of the background loops (payment watcher, crank, reconcilers, custody worker, purges): with several replicas on one ' +
      'database, one holds it and runs them; a replica that dies is replaced after at most this long, ms (`server/src/modules/leader/README.md`)',
    example: '30000',
    readers: S,
  },
  { name: 'LEADER_LEASE_RENEW_MS', group: 'service', default: lit(5_000), meaning: 'how often the holder renews the lease and the others try to take it, ms (below `LEADER_LEASE_TTL_MS`)', example: '2000', readers: S },
  { name: 'TRUST_PROXY', group: 'service', default: lit(0), meaning: 'reverse proxies in front (client IP from `X-Forwarded-For`); `true` = 1. With 0 behind a proxy every client shares one login rate-limit bucket: the start-up banner says which IP is used and the first request with `X-Forwarded-For` logs a warning', example: '1', readers: S },
  // metrics and traces (server/src/metrics.ts, server/src/tracing.ts; README "Metrics and traces")
  {
    name: 'METRICS_PORT',
    group: 'service',
    default: computed('unset: no metrics listener; under `npm start` with the embedded localnet: `9464`'),
    meaning: 'port of a listener of its own serving only `GET /metrics` (Prometheus text format) on `METRICS_HOST`; not the public port, not behind its proxy',
    example: '9465',
    readers: S,
  },
  { name: 'METRICS_HOST', group: 'service', default: lit('127.0.0.1'), meaning: 'bind address of the metrics listener (`0.0.0.0` to let a Prometheus on another host scrape it; then firewall it or set `METRICS_TOKEN`)', example: '0.0.0.0', with: { METRICS_PORT: '9465' }, readers: S },
  {
    name: 'METRICS_TOKEN',
    group: 'service',
    default: computed('unset: `/metrics` is not served on the main port'),
    meaning: 'serve `GET /metrics` on the main port too, to `Authorization: Bearer <token>` only (401 otherwise); the metrics port then asks for it as well. At least 16 characters',
    example: 'example-metrics-token-0123456789',
    readers: S,
  },
  {
    name: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    group: 'service',
    default: computed('unset: tracing off (no spans, no trace ids)'),
    meaning: 'OpenTelemetry: export traces over OTLP/HTTP to `<endpoint>/v1/traces` (spans of HTTP requests, Prisma queries, chain JSON-RPC calls); log lines and problem bodies then carry `trace_id`',
    example: 'http://127.0.0.1:4318',
    readers: S,
  },
  { name: 'OTEL_SERVICE_NAME', group: 'service', default: lit('bazaar'), meaning: 'OpenTelemetry `service.name` of the exported spans', example: 'bazaar-eu-1', with: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, readers: S },
  // login
  { name: 'JWT_SECRET', group: 'login', default: computed('generated once into `DATA_DIR/keys/jwt-secret`'), meaning: 'HS256 key of the access tokens (at least 32 bytes)', example: 'example-secret-example-secret-example-secret', readers: S },
  { name: 'JWT_TTL_SECONDS', group: 'login', default: lit(authDefaults.jwtTtlSeconds), meaning: 'access token lifetime, seconds (`expires_in` of a login)', example: '7200', readers: S },
  { name: 'LOGIN_NONCE_TTL_SECONDS', group: 'login', default: lit(authDefaults.nonceTtlSeconds), meaning: 'lifetime of a login nonce, seconds', example: '120', readers: S },
  {
    name: 'SIWS_DOMAINS',
    group: 'login',
    default: computed('host of `PUBLIC_BASE_URL`; under `npm start` with the embedded localnet also `localhost:*,127.0.0.1:*`'),
    meaning:
      'comma-separated domains a SIWS message may carry (`host`, `host:port`, `host:*` = any port); the first ' +
      'plain one is the default `domain` of `request_login`. A frontend on its own origin (e.g. `localhost:5173`) needs its host here',
    example: 'app.example.com,localhost:5173',
    readers: S,
  },
  { name: 'SIWS_CHAIN_ID', group: 'login', default: lit('localnet'), meaning: 'cluster of SIWS `chainId` (`mainnet`, `devnet`, `testnet`, `localnet`; `solana:` prefix accepted)', example: 'devnet', readers: S },
  { name: 'SIWS_CLOCK_SKEW_SECONDS', group: 'login', default: lit(authDefaults.clockSkewSeconds), meaning: 'clock skew allowed on the SIWS Issued At / Expiration Time / Not Before fields, seconds', example: '30', readers: S },
  { name: 'AUTH_RATE_LIMIT_PER_MINUTE', group: 'login', default: lit(authDefaults.rateLimitPerIpPerMinute), meaning: 'requests per minute per client IP, counted per login route (`request_login`, `verify_login`)', example: '30', readers: S },
  { name: 'AUTH_ADDRESS_RATE_LIMIT_PER_MINUTE', group: 'login', default: lit(authDefaults.rateLimitPerAddressPerMinute), meaning: '`verify_login` requests per minute per wallet address whose signature does not verify with that address (a request the wallet signed is never refused by it: naming an address cannot lock its owner out)', example: '5', readers: S },
  // chain
  {
    name: 'SOLANA_RPC_URL',
    group: 'chain',
    default: computed('unset: `npm start` runs the localnet; the server uses `http://127.0.0.1:SOLANA_RPC_PORT`'),
    meaning: 'any Solana JSON-RPC endpoint (then no localnet is started)',
    example: 'https://api.devnet.solana.com',
    readers: ['server', 'npm start', 'scripts'],
  },
  {
    name: 'SOLANA_WS_URL',
    group: 'chain',
    default: computed('from `SOLANA_RPC_URL` as web3.js derives it: `http` -> `ws`, `https` -> `wss`, an explicit port + 1 (the localnet: `ws://127.0.0.1:SOLANA_RPC_PORT+1`)'),
    meaning:
      'Solana PubSub websocket: the payment watcher subscribes to the escrow program\'s order accounts there and sees a payment as it lands ' +
      '(polling only as a fallback, see `ORDER_WATCHER_FALLBACK_INTERVAL_MS`); `off`: no subscription, poll every `ORDER_WATCHER_INTERVAL_MS`',
    example: 'wss://example.solana-rpc.test/ws',
    readers: S,
  },
  {
    name: 'SOLANA_RPC_URLS',
    group: 'chain',
    default: computed('unset: the one provider of `SOLANA_RPC_URL`'),
    meaning:
      'several Solana JSON-RPC providers of the same cluster, comma-separated, in order of preference (README "Several RPC providers"): ' +
      'requests go to the first healthy one, fail over to the next on an outage, and answers from a node behind the others are refused; ' +
      'replaces `SOLANA_RPC_URL` (set one of the two)',
    example: 'https://rpc-a.example.com/KEY,https://rpc-b.example.com/?api-key=KEY',
    readers: S,
  },
  {
    name: 'SOLANA_WS_URLS',
    group: 'chain',
    default: computed('each derived from its `SOLANA_RPC_URLS` entry as for `SOLANA_WS_URL`'),
    meaning: 'the providers\' PubSub websockets, comma-separated, same order and count as `SOLANA_RPC_URLS` (the payment subscription follows the selected provider); `off`: no subscription',
    example: 'wss://rpc-a.example.com/KEY,wss://rpc-b.example.com/?api-key=KEY',
    with: { SOLANA_RPC_URLS: 'https://rpc-a.example.com/KEY,https://rpc-b.example.com/?api-key=KEY' },
    readers: S,
  },
  { name: 'SOLANA_RPC_HEALTH_INTERVAL_MS', group: 'chain', default: lit(500), meaning: 'with several providers: ms between the starts of health checks of every provider (`getHealth` + `getSlot`, two requests per provider per check, so four a second at 500 ms; a check may take 1 s; a provider whose check is still in flight is skipped). A fault is seen by the first check after it and judged 1 s later: a longer interval delays failover by as much', example: '1000', readers: S },
  { name: 'SOLANA_RPC_MAX_SLOT_LAG', group: 'chain', default: lit(10), meaning: 'with several providers: slots a provider may lag the highest slot known before it is taken out and its answers are refused as stale (10 slots = 4 s; for a provider that advances, but slowly: one whose slot stands still for 1 s while another moves 2 slots past it is out then, whatever this lag)', example: '25', readers: S },
  { name: 'SOLANA_RPC_ATTEMPT_TIMEOUT_MS', group: 'chain', default: lit(2_000), meaning: 'with several providers: ms one request waits for a provider before asking the next (the last one asked gets the rest of the request\'s 15 s)', example: '5000', readers: S },
  {
    name: 'SOLANA_PUBLIC_RPC_URL',
    group: 'chain',
    default: computed('the RPC URL the server uses (`SOLANA_RPC_URL`, or the embedded localnet\'s `http://127.0.0.1:SOLANA_RPC_PORT`)'),
    meaning:
      'JSON-RPC URL of the same cluster as browsers reach it, published by `GET /network` for wallets and explorer links ' +
      '(set it when the server\'s own URL is private or carries an API key)',
    example: 'https://api.devnet.solana.com',
    readers: S,
  },
  {
    name: 'SOLANA_BLOCKHASH_REUSE_MS',
    group: 'chain',
    default: lit(1_000),
    meaning:
      'ms one recent blockhash (getLatestBlockhash + getBlockHeight) serves the buyers\' fund transactions built after it, shared by concurrent requests; ' +
      'a fund transaction\'s `valid_until` counts from when that blockhash was asked for; `0`: a fresh one per transaction (transactions a party signs for an order action always get a fresh one)',
    example: '0',
    readers: S,
  },
  { name: 'SOLANA_RPC_PORT', group: 'chain', default: lit(8899), meaning: 'port of the embedded localnet (its websocket uses the next one)', example: '18115', readers: ['server', 'npm start', 'scripts'] },
  { name: 'CHAIN_BOOTSTRAP', group: 'chain', default: lit('false'), meaning: '`1`: run the dev bootstrap (keys, test USDC mint, escrow config, `chain.json`) against `SOLANA_RPC_URL` too', example: '1', readers: ['npm start'] },
  { name: 'ESCROW_PROGRAM_ID', group: 'chain', default: computed('from `DATA_DIR/chain.json`, else the IDL address'), meaning: 'escrow program id', example: 'Fg6PaFpoGXkYsidMpWTK6W2BeZ7FEfcYkg476zPFsLnS', readers: ['server', 'scripts'] },
  { name: 'SERVICE_KEYPAIR_PATH', group: 'chain', default: computed('`DATA_DIR/keys/service.json`'), meaning: 'service keypair file (platform authority and arbiter)', example: '/etc/bazaar/service.json', readers: S },
  { name: 'CURRENCIES', group: 'chain', default: computed('from `DATA_DIR/chain.json`'), meaning: 'payment currencies `CODE:mint:decimals,…` (`GET /currencies`)', example: 'USDC:EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v:6', readers: S },
  // orders
  { name: 'ORDER_PAYMENT_TTL_SECONDS', group: 'orders', default: lit(900), meaning: 'payment window of a new order, seconds (`payment_expires_at`)', example: '600', readers: S },
  { name: 'ORDER_REVIEW_WINDOW_SECONDS', group: 'orders', default: lit(259_200), meaning: 'review window after delivery before auto-release, seconds (snapshotted per order)', example: '86400', readers: S },
  { name: 'ORDER_MAX_UNPAID_PER_BUYER', group: 'orders', default: lit(3), meaning: 'unpaid orders a buyer may hold at once', example: '5', readers: S },
  {
    name: 'ORDER_MAX_UNPAID_PER_IP',
    group: 'orders',
    default: lit(10),
    meaning: 'unpaid orders (listing holds) one client network may hold at once: an IPv4 address or an IPv6 /64 (429 `too-many-holds`); API keys are not counted. Behind a proxy set `TRUST_PROXY`, else every client is the proxy',
    example: '20',
    readers: S,
  },
  {
    name: 'ORDER_PAYMENT_TTL_CONTESTED_SECONDS',
    group: 'orders',
    default: lit(300),
    meaning: 'shorter payment window, seconds, for a new order on a contested listing (an unpaid hold on it lapsed within `ORDER_HOLD_COOLDOWN_SECONDS`) or from a network holding half of `ORDER_MAX_UNPAID_PER_IP` already (at most `ORDER_PAYMENT_TTL_SECONDS`)',
    example: '180',
    readers: S,
  },
  {
    name: 'ORDER_HOLD_COOLDOWN_SECONDS',
    group: 'orders',
    default: lit(3_600),
    meaning: 'after a wallet order expires unpaid, its buyer (user, wallet or client network) may not order that listing again for this long, seconds (409 `hold-cooldown`); `0` = no cool-down',
    example: '1800',
    readers: S,
  },
  {
    name: 'ORDER_EXTENSION_PROPOSAL_TTL_SECONDS',
    group: 'orders',
    default: lit(259_200),
    meaning: 'a deadline extension the seller proposes lapses after this long unless the buyer accepts or declines it, seconds (service clock; `extension.expired`)',
    example: '86400',
    readers: S,
  },
  {
    name: 'ORDER_SETTLEMENT_PROPOSAL_TTL_SECONDS',
    group: 'orders',
    default: lit(259_200),
    meaning: 'a settlement proposal lapses after this long unless the other party accepts it, seconds (chain clock, written into the escrow by `propose_settlement`; at most the program\'s 7 days; `settlement.expired`)',
    example: '86400',
    readers: S,
  },
  { name: 'ORDER_WATCHER_INTERVAL_MS', group: 'orders', default: lit(2_000), meaning: 'payment watcher and crank interval, ms (`0` = off); the watcher polls at this pace only while it has no live websocket subscription', example: '1000', readers: S },
  {
    name: 'ORDER_WATCHER_FALLBACK_INTERVAL_MS',
    group: 'orders',
    default: lit(10_000),
    meaning: 'payment watcher full pass while its websocket subscription is live, ms (notifications trigger passes at once; this catches one the RPC dropped)',
    example: '30000',
    readers: S,
  },
  { name: 'ORDER_RECONCILE_INTERVAL_MS', group: 'orders', default: lit(30_000), meaning: 'reconciler interval, ms (`0` = start-up pass only)', example: '10000', readers: S },
  { name: 'ORDER_INFLIGHT_WAIT_MS', group: 'orders', default: lit(5_000), meaning: 'how long an order action waits for another in flight on the same order before 409, ms', example: '2000', readers: S },
  { name: 'ORDER_IDEMPOTENCY_LEASE_MS', group: 'orders', default: lit(10_000), meaning: 'lease of a running `POST /orders` Idempotency-Key, ms (a key whose request died is retryable after it)', example: '20000', readers: S },
  { name: 'SOLANA_PAY_LABEL', group: 'orders', default: lit('Bazaar'), meaning: 'label of the Solana Pay transaction request (wallets show it)', example: 'My Market', readers: S },
  {
    name: 'SOLANA_PAY_ICON',
    group: 'orders',
    default: computed('`PUBLIC_BASE_URL/icon.svg` (served by the service)'),
    meaning: 'icon of the Solana Pay transaction request: an absolute http(s) URL of an SVG, PNG or WebP image',
    example: 'https://cdn.example.com/market.png',
    readers: S,
  },
  // tips (modules/tips)
  {
    name: 'TIP_MAX_PERCENT_OF_ORDER',
    group: 'orders',
    default: lit(100),
    meaning: 'a tip is at most this percent of its order\'s amount (409 `tip-not-allowed` `above_maximum`): no fee is taken on tips, so the cap bounds a fee-free channel between buyer and seller, and a slip of the finger',
    example: '20',
    readers: S,
  },
  { name: 'TIP_WATCHER_INTERVAL_MS', group: 'orders', default: lit(5_000), meaning: 'background check of pending tips, ms (a tip the buyer sent herself is confirmed, one never sent expires); `0` = only at start-up', example: '2000', readers: S },
  // dispute desk (modules/disputes)
  {
    name: 'DISPUTE_EVIDENCE_HOURS',
    group: 'orders',
    default: lit(DISPUTE_DEFAULTS.evidenceHours),
    meaning: 'hours after a dispute opens during which both parties may submit evidence (then 409 `evidence-closed`; `evidence_due_at`)',
    example: '48',
    readers: S,
  },
  {
    name: 'DISPUTE_ATTENTION_HOURS',
    group: 'orders',
    default: lit(DISPUTE_DEFAULTS.attentionHours),
    meaning: 'hours a dispute may stay open without a ruling before it needs attention (`needs_attention` in the arbiter\'s queue, `countDisputesNeedingAttention`)',
    example: '24',
    readers: S,
  },
  // custody
  { name: 'CUSTODY_ENABLED', group: 'custody', default: lit('false'), meaning: 'custodial accounts (off: the custodial routes answer 404 `custody-disabled`); see `server/src/modules/custody/README.md`', example: 'true', readers: S },
  {
    name: 'CUSTODY_SEED',
    group: 'custody',
    default: computed('generated once into `DATA_DIR/keys/custody-seed` (0600)'),
    meaning: 'hex master seed (16..64 bytes) of the deposit addresses; back it up, changing it orphans the addresses handed out',
    example: 'ab'.repeat(32),
    with: { CUSTODY_ENABLED: 'true' },
    readers: S,
  },
  { name: 'CUSTODY_MIN_DEPOSIT', group: 'custody', default: computed('0.01 of each currency'), meaning: '`CODE:ui_amount,…`; smaller deposits are recorded, not credited', example: 'USDC:1', with: { CUSTODY_ENABLED: 'true' }, readers: S },
  { name: 'CUSTODY_MIN_WITHDRAWAL', group: 'custody', default: computed('0.01 of each currency'), meaning: '`CODE:ui_amount,…`', example: 'USDC:5', with: { CUSTODY_ENABLED: 'true' }, readers: S },
  { name: 'CUSTODY_WITHDRAWAL_FEE', group: 'custody', default: computed('0 of each currency'), meaning: '`CODE:ui_amount,…` flat fee per withdrawal, kept by the service', example: 'USDC:0.1', with: { CUSTODY_ENABLED: 'true' }, readers: S },
  { name: 'CUSTODY_POLL_INTERVAL_MS', group: 'custody', default: lit(5_000), meaning: 'deposit watcher and transfer reconciler interval, ms (`0` = start-up pass only)', example: '1000', with: { CUSTODY_ENABLED: 'true' }, readers: S },
  // spending: what the service pays on chain (modules/budget, docs/threat-model.md#who-pays-for-what-on-chain)
  { name: 'CHAIN_DAILY_BUDGET_LAMPORTS', group: 'spending', default: lit(SPENDING_DEFAULTS.dailyLamports), meaning: 'lamports the service keypair may spend per UTC day on rent and fees (listing mints and renames, withdrawals, payout accounts, payout and custody transactions, fee sponsorship); beyond it user-started actions answer 503 (`reason: chain_budget_exhausted`) until the next UTC day; warnings are logged at 50, 80 and 100 %, the state is in `/readyz` (`chain_budget`)', example: '20000000000', readers: S },
  { name: 'LISTING_CREATE_DAILY_LIMIT', group: 'spending', default: lit(SPENDING_DEFAULTS.listingCreatePerUser), meaning: 'listings (token mints) one account may create per UTC day (more: 429)', example: '50', readers: S },
  { name: 'LISTING_CREATE_DAILY_LIMIT_PER_IP', group: 'spending', default: lit(SPENDING_DEFAULTS.listingCreatePerIp), meaning: 'listings created per client IP per UTC day, all accounts together (more: 429)', example: '500', readers: S },
  { name: 'LISTING_RENAME_DAILY_LIMIT', group: 'spending', default: lit(SPENDING_DEFAULTS.listingRenamePerUser), meaning: 'title changes that rewrite a token name on chain, per account per UTC day (more: 429)', example: '50', readers: S },
  { name: 'LISTING_MIN_PRICE', group: 'spending', default: lit(SPENDING_DEFAULTS.listingMinPrice), meaning: '`CODE:ui_amount,…` lowest listing price per currency, so the platform fee of an order covers the fees the service pays for it', example: 'USDC:1,SOL:0.01', readers: S },
  {
    name: 'FEE_SPONSORSHIP',
    group: 'spending',
    default: computed('`off`; under `npm start` with the embedded localnet: `on`'),
    meaning: 'fee sponsorship (README "Fee sponsorship"): `on` makes a dedicated sponsor key the fee payer and rent payer of signed-in buyers\' wallet fund transactions (USDC and other tokens, not wrapped SOL), so a wallet with 0 SOL can buy; the rent comes back to the sponsor when the escrow closes',
    example: 'on',
    readers: S,
  },
  { name: 'FEE_SPONSOR_KEYPAIR_PATH', group: 'spending', default: computed('`DATA_DIR/keys/sponsor.json` (created on first start when missing)'), meaning: 'the sponsor\'s keypair file (solana-keygen JSON); a key of its own, not the service key, so its balance caps what sponsorship can ever cost; fund it with SOL', example: '/etc/bazaar/sponsor.json', with: { FEE_SPONSORSHIP: 'on' }, readers: S },
  { name: 'FEE_SPONSORSHIP_DAILY_LAMPORTS', group: 'spending', default: lit(FEE_SPONSORSHIP_DEFAULTS.dailyLamports), meaning: 'lamports of network fees + escrow rent the sponsor may commit per UTC day (counted when it signs; the rent comes back at close but is not credited back); beyond it 503 `sponsorship-budget-exhausted` until the next UTC day, or the buyer pays himself when his wallet holds the SOL', example: '5000000000', with: { FEE_SPONSORSHIP: 'on' }, readers: S },
  { name: 'FEE_SPONSORSHIP_DAILY_LIMIT', group: 'spending', default: lit(FEE_SPONSORSHIP_DEFAULTS.perUser), meaning: 'sponsored fund transactions per account (its wallet) per UTC day; more: 429 `sponsorship-limit`, or the buyer pays himself when his wallet holds the SOL', example: '10', with: { FEE_SPONSORSHIP: 'on' }, readers: S },
  { name: 'FEE_SPONSORSHIP_DAILY_LIMIT_PER_IP', group: 'spending', default: lit(FEE_SPONSORSHIP_DEFAULTS.perIp), meaning: 'sponsored fund transactions per client IP per UTC day, all accounts together; more: 429 `sponsorship-limit`', example: '50', with: { FEE_SPONSORSHIP: 'on' }, readers: S },
  { name: 'CUSTODY_WITHDRAWAL_DAILY_LIMIT', group: 'spending', default: lit(SPENDING_DEFAULTS.withdrawalPerUser), meaning: 'custodial withdrawals one account may request per UTC day (more: 429)', example: '20', readers: S },
  // events
  {
    name: 'WEBHOOK_ALLOW_PRIVATE_URLS',
    group: 'events',
    default: computed('`false`; under `npm start` with the embedded localnet: `true`'),
    meaning: 'webhook URLs may resolve to loopback, private and link-local addresses (SSRF guard off: development only)',
    example: 'true',
    readers: S,
  },
  { name: 'WEBHOOK_TIMEOUT_MS', group: 'events', default: lit(WEBHOOK_DEFAULTS.timeoutMs), meaning: 'time a webhook receiver has to answer (connect + response), ms', example: '5000', readers: S },
  { name: 'WEBHOOK_WORKER_INTERVAL_MS', group: 'events', default: lit(WEBHOOK_DEFAULTS.intervalMs), meaning: 'webhook fan-out and delivery pass interval, ms (`0` = off); a local commit wakes it at once', example: '500', readers: S },
  { name: 'CHAT_RATE_LIMIT_PER_MINUTE', group: 'events', default: lit(30), meaning: 'chat messages per sender per minute, custom offers included (more: 429)', example: '10', readers: S },
  { name: 'EVENTS_RETENTION_DAYS', group: 'events', default: lit(30), meaning: 'days events and finished webhook deliveries are kept (`0` = forever); the newest event of each resource and events a pending delivery needs are kept longer; the money events revenue reports read are never deleted', example: '90', readers: S },
  { name: 'WEBHOOK_CONCURRENCY', group: 'events', default: lit(WEBHOOK_DEFAULTS.concurrency), meaning: 'webhook deliveries in flight at once per process', example: '64', readers: S },
  {
    name: 'WEBHOOK_MAX_PER_USER',
    group: 'events',
    default: lit(WEBHOOK_DEFAULTS.maxPerUser),
    meaning: 'webhook endpoints one user may register (each event fans out to every endpoint); one more answers 409 `webhook-limit-reached`',
    example: '4',
    readers: S,
  },
  {
    name: 'EVENTS_STREAM_MAX_PER_USER',
    group: 'events',
    default: lit(STREAM_DEFAULTS.maxPerUser),
    meaning: 'open `GET /events/stream` connections per user on one replica (all the user\'s credentials together); one more answers 429',
    example: '2',
    readers: S,
  },
  {
    name: 'EVENTS_STREAM_REPLAY_MAX',
    group: 'events',
    default: lit(STREAM_DEFAULTS.replayMax),
    meaning: 'events a stream replays after `Last-Event-ID` on one connection; with more waiting it ends with `stream.closed` (`replay_limit`) and the client resumes from its last id or pages `GET /events`',
    example: '200',
    readers: S,
  },
  {
    name: 'EVENTS_STREAM_RECHECK_SECONDS',
    group: 'events',
    default: lit(STREAM_DEFAULTS.recheckSeconds),
    meaning: 'how often an open stream\'s credential is re-read from the database (a revocation on another replica ends the stream within this time; on the same replica at once)',
    example: '10',
    readers: S,
  },
  // limits
  { name: 'BODY_LIMIT', group: 'limits', default: lit('100kb'), meaning: 'JSON body limit (larger: 413)', example: '1mb', readers: S },
  { name: 'HTTP_HEADERS_TIMEOUT_MS', group: 'limits', default: lit(DEFAULT_LIMITS.http.headersTimeoutMs), meaning: 'time to receive the request line and headers; also closes connections that never send a byte', example: '2000', readers: S },
  { name: 'HTTP_REQUEST_TIMEOUT_MS', group: 'limits', default: lit(DEFAULT_LIMITS.http.requestTimeoutMs), meaning: 'time to receive a whole request (headers + body)', example: '40000', readers: S },
  { name: 'HTTP_KEEP_ALIVE_TIMEOUT_MS', group: 'limits', default: lit(DEFAULT_LIMITS.http.keepAliveTimeoutMs), meaning: 'idle time of a keep-alive connection; behind a load balancer set it above the balancer\'s', example: '65000', readers: S },
  { name: 'HTTP_MAX_CONNECTIONS', group: 'limits', default: lit(DEFAULT_LIMITS.http.maxConnections), meaning: 'open connections; more are closed at once', example: '100', readers: S },
  { name: 'HTTP_TIMEOUT_CHECK_INTERVAL_MS', group: 'limits', default: lit(DEFAULT_LIMITS.http.timeoutCheckIntervalMs), meaning: 'how often Node checks the two timeouts above (their granularity)', example: '250', readers: S },
  { name: 'DB_POOL_MAX', group: 'limits', default: lit(DEFAULT_LIMITS.db.poolMax), meaning: 'PostgreSQL connections in the pool', example: '4', readers: S },
  { name: 'DB_POOL_TIMEOUT_MS', group: 'limits', default: lit(DEFAULT_LIMITS.db.poolTimeoutMs), meaning: 'wait for a pool connection, then 503', example: '750', readers: S },
  { name: 'DB_POOL_QUEUE_MAX', group: 'limits', default: lit(DEFAULT_LIMITS.db.poolQueueMax), meaning: 'queries waiting for a pool connection at most; one more is 503 `service-unavailable` at once (`0` = none wait). Before that bound, a query whose expected wait (queries ahead / connections handed back per second) exceeds DB_POOL_TIMEOUT_MS is refused the same way at once instead of timing out later', example: '20', readers: S },
  { name: 'DB_STATEMENT_TIMEOUT_MS', group: 'limits', default: lit(DEFAULT_LIMITS.db.statementTimeoutMs), meaning: 'PostgreSQL `statement_timeout` per connection, then 503', example: '1500', readers: S },
  { name: 'DB_LOCK_TIMEOUT_MS', group: 'limits', default: lit(DEFAULT_LIMITS.db.lockTimeoutMs), meaning: 'PostgreSQL `lock_timeout` per connection, then 503', example: '500', readers: S },
  { name: 'DB_IDLE_IN_TRANSACTION_TIMEOUT_MS', group: 'limits', default: lit(DEFAULT_LIMITS.db.idleInTransactionTimeoutMs), meaning: 'PostgreSQL `idle_in_transaction_session_timeout` per connection', example: '9000', readers: S },
  { name: 'READY_TIMEOUT_MS', group: 'limits', default: lit(DEFAULT_LIMITS.readyTimeoutMs), meaning: '`/readyz` timeout of each check', example: '300', readers: S },
  { name: 'SHUTDOWN_TIMEOUT_MS', group: 'limits', default: lit(DEFAULT_LIMITS.shutdownTimeoutMs), meaning: 'drain deadline after SIGTERM/SIGINT (exit 0 within it, else 1)', example: '8000', readers: S },
  // npm start and scripts
  { name: 'CARGO_TARGET_DIR', group: 'npm start and scripts', default: computed('`$HOME/.cache/bazaar/cargo-target`'), meaning: 'where cargo builds the localnet (shared across clones)', example: '/tmp/bazaar-example-target', readers: ['npm start'] },
  { name: 'BAZAAR_LOCALNET_BIN', group: 'npm start and scripts', default: computed('`CARGO_TARGET_DIR/debug/bazaar-localnet`, built with cargo when missing or stale'), meaning: 'a prebuilt localnet binary (then cargo is never run)', example: '/usr/local/bin/bazaar-localnet', readers: ['npm start'] },
  { name: 'BAZAAR_URL', group: 'npm start and scripts', default: lit('http://127.0.0.1:3000'), meaning: 'the service `npm run demo`, `npm run web:wallet` and `server/scripts/dev-login.ts` talk to', example: 'http://127.0.0.1:4123', readers: ['scripts'] },
  { name: 'CHROMIUM_PATH', group: 'npm start and scripts', default: lit('/usr/bin/chromium'), meaning: 'the Chromium `npm run web:wallet` opens (the browser test suites read it too)', example: '/opt/chromium/chrome', readers: ['scripts'] },
];

/** Variables of earlier versions: setting one is refused with the new name (a silent no-op would mislead). */
export const RENAMED_VARS: Readonly<Record<string, string>> = {
  SIWS_DOMAIN: 'SIWS_DOMAINS',
  CLOCK_SKEW_SECONDS: 'SIWS_CLOCK_SKEW_SECONDS',
};

const VAR = new Map(ENV_VARS.map((v) => [v.name, v]));

/** A value refused at start-up: names the variable, one line (npm start prints just the message). */
export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** The raw text of a documented variable: set and non-empty, else its literal default, else undefined. */
function raw(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const def = VAR.get(name);
  if (!def) throw new Error(`${name} is not in ENV_VARS (document it there before reading it)`);
  const v = env[name];
  if (v !== undefined && v !== '') return v;
  return 'literal' in def.default ? def.default.literal : undefined;
}

const bool = (env: NodeJS.ProcessEnv, name: string): boolean => {
  const v = raw(env, name)!.toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new ConfigError(name, `${name} must be true or false (1/0, yes/no, on/off), got "${v}"`);
};

const int = (env: NodeJS.ProcessEnv, name: string): number => {
  const v = raw(env, name)!;
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(n)) throw new ConfigError(name, `${name} must be a non-negative integer, got "${v}"`);
  return n;
};

/** A limit that must be > 0 (0 would mean "no limit" to Node and PostgreSQL: not allowed here). */
const positive = (env: NodeJS.ProcessEnv, name: string): number => {
  const n = int(env, name);
  if (n === 0) throw new ConfigError(name, `${name} must be greater than 0`);
  return n;
};

const port = (env: NodeJS.ProcessEnv, name: string): number => {
  const n = int(env, name);
  if (n > 65_535) throw new ConfigError(name, `${name} must be a TCP port (0..65535), got ${n}`);
  return n;
};

const list = (env: NodeJS.ProcessEnv, name: string): string[] | undefined => {
  const v = raw(env, name);
  return v === undefined ? undefined : v.split(',').map((s) => s.trim()).filter(Boolean);
};

function httpUrl(name: string, value: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ConfigError(name, `${name} must be an absolute http(s) URL, got "${value}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError(name, `${name} must be an http(s) URL, got "${value}"`);
  return url;
}

/** SOLANA_WS_URL: `off` -> null, unset -> derived from the RPC URL as web3.js does, else a ws(s) URL. */
function wsUrl(value: string | undefined, rpcUrl: string): string | null {
  if (value?.toLowerCase() === 'off') return null;
  if (value === undefined) httpUrl('SOLANA_RPC_URL', rpcUrl);
  const url = value ?? websocketUrlFor(rpcUrl);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('SOLANA_WS_URL', `SOLANA_WS_URL must be a ws:// or wss:// URL or off, got "${url}"`);
  }
  if (parsed.protocol !== 'ws:' && parsed.protocol !== 'wss:') throw new ConfigError('SOLANA_WS_URL', `SOLANA_WS_URL must be a ws:// or wss:// URL or off, got "${url}"`);
  return url;
}

/**
 * SOLANA_RPC_URLS: at least one http(s) URL, no duplicates; not together with a different SOLANA_RPC_URL.
 * Undefined when unset (one provider).
 */
function rpcProviders(env: NodeJS.ProcessEnv): string[] | undefined {
  const urls = list(env, 'SOLANA_RPC_URLS');
  if (urls === undefined) return undefined;
  if (!urls.length) throw new ConfigError('SOLANA_RPC_URLS', 'SOLANA_RPC_URLS must name at least one http(s) URL');
  for (const u of urls) httpUrl('SOLANA_RPC_URLS', u);
  if (new Set(urls).size !== urls.length) throw new ConfigError('SOLANA_RPC_URLS', 'SOLANA_RPC_URLS names the same URL twice');
  const single = raw(env, 'SOLANA_RPC_URL');
  if (single !== undefined && single !== urls[0]) {
    throw new ConfigError('SOLANA_RPC_URLS', 'set SOLANA_RPC_URLS (several providers) or SOLANA_RPC_URL (one), not both');
  }
  return urls;
}

/** SOLANA_WS_URLS: `off` -> null, unset -> undefined (derived per provider), else one ws(s) URL per RPC URL. */
function wsProviders(env: NodeJS.ProcessEnv, rpcUrls: string[]): string[] | null | undefined {
  const v = raw(env, 'SOLANA_WS_URLS');
  if (v === undefined) return raw(env, 'SOLANA_WS_URL')?.toLowerCase() === 'off' ? null : undefined;
  if (v.trim().toLowerCase() === 'off') return null;
  const urls = list(env, 'SOLANA_WS_URLS')!;
  if (urls.length !== rpcUrls.length) {
    throw new ConfigError('SOLANA_WS_URLS', `SOLANA_WS_URLS must name one websocket per SOLANA_RPC_URLS entry (${rpcUrls.length}), got ${urls.length}`);
  }
  for (const u of urls) {
    let parsed: URL | null = null;
    try {
      parsed = new URL(u);
    } catch {
      /* reported below */
    }
    if (parsed?.protocol !== 'ws:' && parsed?.protocol !== 'wss:') throw new ConfigError('SOLANA_WS_URLS', `SOLANA_WS_URLS must list ws:// or wss:// URLs or be off, got "${u}"`);
  }
  return urls;
}

export interface CategoryConfig {
  slug: string;
  name: string;
}

/** Orders module settings (ORDER_*, SOLANA_PAY_*): the type is the orders module's own; defaults only in ENV_VARS. */
export type { OrdersSettings };

export interface Config {
  port: number;
  host: string;
  /** external origin, no trailing slash */
  publicBaseUrl: string;
  /** PUBLIC_BASE_URL was set; else publicBaseUrl is its default and /openapi.json names the request's origin */
  publicBaseUrlSet?: boolean;
  dataDir: string;
  databaseUrl?: string;
  /** DATABASE_STANDBY_READS / DATABASE_STANDBY_MAX_LAG_MS (db/read-routing.ts); off on PGlite */
  standbyReads?: StandbyReadSettings;
  /** started by `npm start` with the embedded localnet: local origins and SIWS domains allowed by default */
  devDefaults: boolean;
  jwtSecret: string;
  /** access token lifetime, seconds */
  jwtTtlSeconds: number;
  /** allowed SIWS domains (`host`, `host:port`, `host:*`); the first plain one is the default */
  siwsDomains: string[];
  /** cluster of the SIWS chainId, bare or `solana:` prefixed */
  siwsChainId: string;
  /** nonce lifetime, seconds */
  loginNonceTtlSeconds: number;
  /** accepted clock skew for the SIWS time fields, seconds */
  clockSkewSeconds: number;
  solanaRpcUrl: string;
  /** SOLANA_PUBLIC_RPC_URL: the cluster's RPC URL as browsers reach it (GET /network); unset: solanaRpcUrl */
  solanaPublicRpcUrl?: string;
  /** PubSub websocket of the RPC (SOLANA_WS_URL, default derived from solanaRpcUrl); null = off (poll only) */
  solanaWsUrl?: string | null;
  /** SOLANA_RPC_URLS: several providers in preference order (the first is also `solanaRpcUrl`); absent: one provider */
  solanaRpcUrls?: string[];
  /** SOLANA_WS_URLS: their websockets (same order); null = off; absent = derived from each RPC URL */
  solanaWsUrls?: string[] | null;
  /** health checks and failover of several providers (chain/rpc-pool.ts) */
  rpcPool?: { healthIntervalMs: number; maxSlotLag: number; attemptTimeoutMs: number };
  /** SOLANA_BLOCKHASH_REUSE_MS: ms a recent blockhash serves the fund transactions built after it (chain/escrow.ts recentBlockhash); absent: 0 */
  blockhashReuseMs?: number;
  escrowProgramId?: string;
  serviceKeypairPath: string;
  currencies: CurrencyInfo[];
  categories: CategoryConfig[];
  publicMarketplace: boolean;
  /** ACTIONS_ENABLED: the Solana Actions routes are served (http/actions) */
  actionsEnabled?: boolean;
  /** ACTIONS_RATE_LIMIT_PER_MINUTE: per client network, all action routes together */
  actionsRateLimitPerMinute?: number;
  /** allowed browser origins: exact, `*`, or `scheme://host:*` (any port) */
  corsOrigins: string[];
  bodyLimit: string;
  /** login requests per minute per client IP, per login route */
  authRateLimitPerMinute: number;
  /** verify_login requests per minute per wallet address not signed by that address's key (http/security.ts authRateLimit) */
  authAddressRateLimitPerMinute: number;
  orders: OrdersSettings;
  custodyEnabled: boolean;
  /** hex master seed of the deposit addresses (CUSTODY_SEED, else DATA_DIR/keys/custody-seed: startup.ts loadOrCreateCustodySeed) */
  custodySeed?: string;
  /** per currency code, UI amounts as decimal text (e.g. { USDC: '0.01' }); defaults in modules/custody */
  custodyMinDeposit?: Record<string, string>;
  custodyMinWithdrawal?: Record<string, string>;
  custodyWithdrawalFee?: Record<string, string>;
  /** deposit watcher + transfer reconciler interval, ms (0 = only the start-up pass) */
  custodyPollIntervalMs?: number;
  /** webhooks (WEBHOOK_*); absent: WEBHOOK_DEFAULTS, private URLs refused */
  webhooks?: WebhookSettings;
  /** event stream limits (EVENTS_STREAM_*); absent: contract STREAM_DEFAULTS */
  eventStreams?: EventStreamSettings;
  /** chat messages per sender per minute (absent: 30) */
  chatRateLimitPerMinute?: number;
  /** DISPUTE_* (modules/disputes); absent: contract DISPUTE_DEFAULTS */
  disputes?: { evidenceHours: number; attentionHours: number };
  /** TIP_* (modules/tips); absent: its TIPS_DEFAULTS */
  tips?: { maxPercentOfOrder: number; watcherIntervalMs: number };
  /** what the service may spend on chain (CHAIN_DAILY_BUDGET_LAMPORTS, *_DAILY_LIMIT*, LISTING_MIN_PRICE); absent: SPENDING_DEFAULTS */
  spending?: SpendingSettings;
  /** FEE_SPONSORSHIP*; absent: off */
  feeSponsorship?: FeeSponsorshipSettings;
  /** days events are kept (modules/events/events.retention.ts); 0 or absent: forever */
  eventsRetentionDays?: number;
  /** leader lease of the background loops, ms (LEADER_LEASE_*; absent: modules/leader LEADER_LEASE_DEFAULTS) */
  leaderLease?: { ttlMs: number; renewMs: number };
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
  /** where GET /metrics is served (http/metrics.ts); absent: nowhere */
  metrics?: MetricsSettings;
  /** OpenTelemetry export (tracing.ts); absent or null: tracing off */
  tracing?: TracingSettings | null;
}

/** METRICS_PORT / METRICS_HOST / METRICS_TOKEN (http/metrics.ts). */
export interface MetricsSettings {
  /** the metrics listener's port; null: none */
  port: number | null;
  host: string;
  /** Bearer token of /metrics on the main port (and the metrics port); null: not on the main port */
  token: string | null;
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

const titleCase = (slug: string) =>
  slug
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(' ');

export const categoriesFromSlugs = (slugs: string[]): CategoryConfig[] =>
  slugs.map((slug) => ({ slug, name: titleCase(slug) }));

/** `USDC:<mint>:6,SOL:So111...:9` */
export function parseCurrencies(spec: string): CurrencyInfo[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const [code, mint, decimals, tokenProgram] = entry.split(':');
      if (!code || !mint || decimals === undefined || !/^\d+$/.test(decimals)) {
        throw new ConfigError('CURRENCIES', `CURRENCIES: bad entry "${entry}" (want CODE:mint:decimals)`);
      }
      return { code: code.toUpperCase(), mint, decimals: Number(decimals), ...(tokenProgram ? { tokenProgram } : {}) };
    });
}

/** `USDC:0.01,SOL:0.001` -> { USDC: '0.01', SOL: '0.001' } (UI amounts as decimal text). */
export function parseCurrencyAmounts(name: string, spec: string | undefined): Record<string, string> | undefined {
  if (!spec) return undefined;
  const out: Record<string, string> = {};
  for (const entry of spec.split(',').map((s) => s.trim()).filter(Boolean)) {
    const [code, amount] = entry.split(':');
    if (!code || !amount || !/^\d+(\.\d+)?$/.test(amount)) throw new ConfigError(name, `${name}: bad entry "${entry}" (want CODE:amount, e.g. USDC:0.5)`);
    out[code.toUpperCase()] = amount;
  }
  return out;
}

/** DATA_DIR as an absolute path (not created here). */
export const dataDirOf = (env: NodeJS.ProcessEnv): string => path.resolve(raw(env, 'DATA_DIR')!);

/** The embedded localnet's RPC URL for SOLANA_RPC_PORT. */
const localnetRpcUrl = (env: NodeJS.ProcessEnv) => `http://127.0.0.1:${port(env, 'SOLANA_RPC_PORT')}`;

/**
 * What the service keeps under DATA_DIR, as start-up read (or created) it: each value is used when its
 * variable is unset. The parse never reads these files itself.
 */
export interface StoredSettings {
  /** DATA_DIR/keys/jwt-secret (JWT_SECRET unset) */
  jwtSecret?: string;
  /** DATA_DIR/keys/custody-seed (CUSTODY_ENABLED, CUSTODY_SEED unset) */
  custodySeed?: string;
  /** DATA_DIR/chain.json of the dev bootstrap: its currencies (CURRENCIES unset) and program id (ESCROW_PROGRAM_ID unset) */
  chain?: { currencies: CurrencyInfo[]; programId?: string };
}

export interface LoadConfigOptions {
  /**
   * `npm start` with the embedded localnet (no SOLANA_RPC_URL): unset CORS_ORIGINS allows local
   * origins (DEV_LOCAL_ORIGINS) and unset SIWS_DOMAINS adds local hosts (DEV_LOCAL_SIWS_DOMAINS).
   */
  dev?: boolean;
  /** what start-up read from DATA_DIR (startup.ts loadServerConfig); absent: nothing */
  stored?: StoredSettings;
}

/**
 * The secrets this environment takes from DATA_DIR, for start-up to read or create before parsing: the
 * JWT key unless JWT_SECRET is set, the custody seed when CUSTODY_ENABLED and CUSTODY_SEED is unset.
 * Throws ConfigError for a CUSTODY_ENABLED that is not a boolean.
 */
export function storedSecretsNeeded(env: NodeJS.ProcessEnv): { jwtSecret: boolean; custodySeed: boolean } {
  return {
    jwtSecret: raw(env, 'JWT_SECRET') === undefined,
    custodySeed: bool(env, 'CUSTODY_ENABLED') && raw(env, 'CUSTODY_SEED') === undefined,
  };
}

/**
 * The server's configuration from `env` (see ENV_VARS) and what start-up read from DATA_DIR
 * (`opts.stored`). Pure: touches no file. Throws ConfigError on a bad value, and names JWT_SECRET when
 * neither it nor a stored key is given. With custody on and no seed given, `custodySeed` is absent (the
 * composition root refuses to build custody without one).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, opts: LoadConfigOptions = {}): Config {
  const dev = opts.dev ?? false;
  const httpPort = port(env, 'PORT');
  const dataDir = dataDirOf(env);
  const publicBaseUrl = (raw(env, 'PUBLIC_BASE_URL') ?? `http://localhost:${httpPort}`).replace(/\/+$/, '');
  const publicHost = httpUrl('PUBLIC_BASE_URL', publicBaseUrl).host;
  const chainFile = opts.stored?.chain ?? { currencies: [] };
  const jwtSecret = raw(env, 'JWT_SECRET') ?? opts.stored?.jwtSecret;
  if (jwtSecret === undefined) {
    throw new ConfigError('JWT_SECRET', 'JWT_SECRET is unset and no DATA_DIR/keys/jwt-secret was read: set JWT_SECRET (at least 32 bytes) or start the server, which creates the file');
  }
  if (Buffer.byteLength(jwtSecret) < 32) throw new ConfigError('JWT_SECRET', 'JWT_SECRET must be at least 32 bytes');
  for (const [old, now] of Object.entries(RENAMED_VARS)) {
    if (env[old]) throw new ConfigError(now, `${old} was renamed ${now}: rename it in your environment`);
  }
  const siwsDomains = list(env, 'SIWS_DOMAINS') ?? [publicHost, ...(dev ? DEV_LOCAL_SIWS_DOMAINS : [])];
  if (!siwsDomains.some((d) => !d.endsWith(':*'))) {
    throw new ConfigError('SIWS_DOMAINS', 'SIWS_DOMAINS must name at least one plain domain (host or host:port): the first is the default domain of request_login');
  }
  const siwsChainId = raw(env, 'SIWS_CHAIN_ID')!;
  if (!/^(solana:)?(mainnet|devnet|testnet|localnet)$/.test(siwsChainId)) {
    throw new ConfigError('SIWS_CHAIN_ID', `SIWS_CHAIN_ID must be mainnet, devnet, testnet or localnet, got "${siwsChainId}"`);
  }
  const custodyEnabled = bool(env, 'CUSTODY_ENABLED');
  const rpcUrls = rpcProviders(env);
  if (!rpcUrls && raw(env, 'SOLANA_WS_URLS') !== undefined) {
    throw new ConfigError('SOLANA_WS_URLS', 'SOLANA_WS_URLS goes with SOLANA_RPC_URLS (one websocket per provider); with one provider set SOLANA_WS_URL');
  }
  const solanaRpcUrl = rpcUrls?.[0] ?? raw(env, 'SOLANA_RPC_URL') ?? localnetRpcUrl(env);
  const trustProxyText = raw(env, 'TRUST_PROXY')!;
  return {
    port: httpPort,
    host: raw(env, 'HOST')!,
    publicBaseUrl,
    publicBaseUrlSet: raw(env, 'PUBLIC_BASE_URL') !== undefined,
    dataDir,
    databaseUrl: raw(env, 'DATABASE_URL'),
    standbyReads: { enabled: bool(env, 'DATABASE_STANDBY_READS'), maxLagMs: int(env, 'DATABASE_STANDBY_MAX_LAG_MS') },
    devDefaults: dev,
    jwtSecret,
    jwtTtlSeconds: positive(env, 'JWT_TTL_SECONDS'),
    siwsDomains,
    siwsChainId,
    loginNonceTtlSeconds: positive(env, 'LOGIN_NONCE_TTL_SECONDS'),
    clockSkewSeconds: int(env, 'SIWS_CLOCK_SKEW_SECONDS'),
    solanaRpcUrl,
    solanaWsUrl: wsUrl(raw(env, 'SOLANA_WS_URL'), solanaRpcUrl),
    ...(rpcUrls ? { solanaRpcUrls: rpcUrls, solanaWsUrls: wsProviders(env, rpcUrls) } : {}),
    rpcPool: {
      healthIntervalMs: positive(env, 'SOLANA_RPC_HEALTH_INTERVAL_MS'),
      maxSlotLag: int(env, 'SOLANA_RPC_MAX_SLOT_LAG'),
      attemptTimeoutMs: positive(env, 'SOLANA_RPC_ATTEMPT_TIMEOUT_MS'),
    },
    blockhashReuseMs: int(env, 'SOLANA_BLOCKHASH_REUSE_MS'),
    solanaPublicRpcUrl: raw(env, 'SOLANA_PUBLIC_RPC_URL') === undefined ? undefined : httpUrl('SOLANA_PUBLIC_RPC_URL', raw(env, 'SOLANA_PUBLIC_RPC_URL')!).toString().replace(/\/$/, ''),
    escrowProgramId: raw(env, 'ESCROW_PROGRAM_ID') ?? chainFile.programId,
    serviceKeypairPath: raw(env, 'SERVICE_KEYPAIR_PATH') ?? path.join(dataDir, 'keys', 'service.json'),
    currencies: raw(env, 'CURRENCIES') ? parseCurrencies(raw(env, 'CURRENCIES')!) : chainFile.currencies,
    categories: categoriesFromSlugs(list(env, 'CATEGORIES')!),
    publicMarketplace: bool(env, 'PUBLIC_MARKETPLACE'),
    actionsEnabled: raw(env, 'ACTIONS_ENABLED') === undefined ? false : bool(env, 'ACTIONS_ENABLED'),
    actionsRateLimitPerMinute: positive(env, 'ACTIONS_RATE_LIMIT_PER_MINUTE'),
    corsOrigins: list(env, 'CORS_ORIGINS') ?? (dev ? [...DEV_LOCAL_ORIGINS] : []),
    bodyLimit: raw(env, 'BODY_LIMIT')!,
    authRateLimitPerMinute: positive(env, 'AUTH_RATE_LIMIT_PER_MINUTE'),
    authAddressRateLimitPerMinute: positive(env, 'AUTH_ADDRESS_RATE_LIMIT_PER_MINUTE'),
    orders: ordersSettings(env, publicBaseUrl),
    custodyEnabled,
    ...(custodyEnabled
      ? {
          custodySeed: raw(env, 'CUSTODY_SEED') ?? opts.stored?.custodySeed,
          custodyMinDeposit: parseCurrencyAmounts('CUSTODY_MIN_DEPOSIT', raw(env, 'CUSTODY_MIN_DEPOSIT')),
          custodyMinWithdrawal: parseCurrencyAmounts('CUSTODY_MIN_WITHDRAWAL', raw(env, 'CUSTODY_MIN_WITHDRAWAL')),
          custodyWithdrawalFee: parseCurrencyAmounts('CUSTODY_WITHDRAWAL_FEE', raw(env, 'CUSTODY_WITHDRAWAL_FEE')),
          custodyPollIntervalMs: int(env, 'CUSTODY_POLL_INTERVAL_MS'),
        }
      : {}),
    chatRateLimitPerMinute: positive(env, 'CHAT_RATE_LIMIT_PER_MINUTE'),
    tips: { maxPercentOfOrder: positive(env, 'TIP_MAX_PERCENT_OF_ORDER'), watcherIntervalMs: int(env, 'TIP_WATCHER_INTERVAL_MS') },
    disputes: { evidenceHours: positive(env, 'DISPUTE_EVIDENCE_HOURS'), attentionHours: positive(env, 'DISPUTE_ATTENTION_HOURS') },
    spending: {
      dailyLamports: int(env, 'CHAIN_DAILY_BUDGET_LAMPORTS'),
      listingCreatePerUser: int(env, 'LISTING_CREATE_DAILY_LIMIT'),
      listingCreatePerIp: int(env, 'LISTING_CREATE_DAILY_LIMIT_PER_IP'),
      listingRenamePerUser: int(env, 'LISTING_RENAME_DAILY_LIMIT'),
      withdrawalPerUser: int(env, 'CUSTODY_WITHDRAWAL_DAILY_LIMIT'),
      listingMinPrice: parseCurrencyAmounts('LISTING_MIN_PRICE', raw(env, 'LISTING_MIN_PRICE')) ?? {},
    },
    feeSponsorship: feeSponsorshipSettings(env, dataDir, dev),
    eventsRetentionDays: int(env, 'EVENTS_RETENTION_DAYS'),
    leaderLease: leaderLease(env),
    webhooks: {
      allowPrivateUrls: raw(env, 'WEBHOOK_ALLOW_PRIVATE_URLS') !== undefined ? bool(env, 'WEBHOOK_ALLOW_PRIVATE_URLS') : dev,
      timeoutMs: positive(env, 'WEBHOOK_TIMEOUT_MS'),
      intervalMs: int(env, 'WEBHOOK_WORKER_INTERVAL_MS'),
      concurrency: positive(env, 'WEBHOOK_CONCURRENCY'),
      maxPerUser: positive(env, 'WEBHOOK_MAX_PER_USER'),
    },
    eventStreams: {
      maxPerUser: positive(env, 'EVENTS_STREAM_MAX_PER_USER'),
      replayMax: positive(env, 'EVENTS_STREAM_REPLAY_MAX'),
      recheckMs: positive(env, 'EVENTS_STREAM_RECHECK_SECONDS') * 1000,
    },
    logLevel: raw(env, 'LOG_LEVEL')!,
    trustProxy: trustProxyText === 'true' ? 1 : trustProxyText === 'false' ? 0 : int(env, 'TRUST_PROXY'),
    http: httpLimits(env),
    db: {
      poolMax: positive(env, 'DB_POOL_MAX'),
      poolTimeoutMs: positive(env, 'DB_POOL_TIMEOUT_MS'),
      poolQueueMax: int(env, 'DB_POOL_QUEUE_MAX'),
      statementTimeoutMs: positive(env, 'DB_STATEMENT_TIMEOUT_MS'),
      lockTimeoutMs: positive(env, 'DB_LOCK_TIMEOUT_MS'),
      idleInTransactionTimeoutMs: positive(env, 'DB_IDLE_IN_TRANSACTION_TIMEOUT_MS'),
    },
    readyTimeoutMs: positive(env, 'READY_TIMEOUT_MS'),
    shutdownTimeoutMs: positive(env, 'SHUTDOWN_TIMEOUT_MS'),
    metrics: metricsSettings(env, dev),
    tracing: tracingSettings(env),
  };
}

/** FEE_SPONSORSHIP*: on by default only under `npm start` with the embedded localnet (`dev`). */
function feeSponsorshipSettings(env: NodeJS.ProcessEnv, dataDir: string, dev: boolean): FeeSponsorshipSettings {
  const keypairPath = raw(env, 'FEE_SPONSOR_KEYPAIR_PATH');
  return {
    enabled: raw(env, 'FEE_SPONSORSHIP') !== undefined ? bool(env, 'FEE_SPONSORSHIP') : dev,
    keypairPath: keypairPath ?? path.join(dataDir, 'keys', 'sponsor.json'),
    defaultKeypair: keypairPath === undefined,
    dailyLamports: int(env, 'FEE_SPONSORSHIP_DAILY_LAMPORTS'),
    perUser: int(env, 'FEE_SPONSORSHIP_DAILY_LIMIT'),
    perIp: int(env, 'FEE_SPONSORSHIP_DAILY_LIMIT_PER_IP'),
  };
}

/** Default metrics port under `npm start` (the port OpenTelemetry's Prometheus exporter uses). */
export const DEV_METRICS_PORT = 9464;

/** METRICS_*: the listener's port (dev: DEV_METRICS_PORT), its host, the main port's token (16+ characters). */
function metricsSettings(env: NodeJS.ProcessEnv, dev: boolean): MetricsSettings {
  const token = raw(env, 'METRICS_TOKEN') ?? null;
  if (token !== null && (token.length < 16 || /\s/.test(token))) {
    throw new ConfigError('METRICS_TOKEN', 'METRICS_TOKEN must be at least 16 characters without spaces');
  }
  const given = raw(env, 'METRICS_PORT');
  return { port: given !== undefined ? port(env, 'METRICS_PORT') : dev ? DEV_METRICS_PORT : null, host: raw(env, 'METRICS_HOST')!, token };
}

/** OTEL_EXPORTER_OTLP_ENDPOINT (an http(s) URL) and OTEL_SERVICE_NAME; null when the endpoint is unset. */
function tracingSettings(env: NodeJS.ProcessEnv): TracingSettings | null {
  const endpoint = raw(env, 'OTEL_EXPORTER_OTLP_ENDPOINT');
  if (endpoint === undefined) return null;
  httpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint);
  return { endpoint, serviceName: raw(env, 'OTEL_SERVICE_NAME')! };
}

/** LEADER_LEASE_TTL_MS and LEADER_LEASE_RENEW_MS: both > 0, the renewal interval below the TTL. */
function leaderLease(env: NodeJS.ProcessEnv): { ttlMs: number; renewMs: number } {
  const ttlMs = positive(env, 'LEADER_LEASE_TTL_MS');
  const renewMs = positive(env, 'LEADER_LEASE_RENEW_MS');
  if (renewMs >= ttlMs) {
    throw new ConfigError('LEADER_LEASE_RENEW_MS', `LEADER_LEASE_RENEW_MS (${renewMs}) must be below LEADER_LEASE_TTL_MS (${ttlMs}): the lease would lapse between renewals`);
  }
  return { ttlMs, renewMs };
}

/**
 * ORDER_* and SOLANA_PAY_* (defaults as documented in ENV_VARS); the icon defaults to the one the
 * service serves, `publicBaseUrl/icon.svg`, and must be an http(s) URL of an SVG, PNG or WebP file
 * (the Solana Pay spec: wallets reject other icons). Throws ConfigError.
 */
export function ordersSettings(env: NodeJS.ProcessEnv, publicBaseUrl: string): OrdersSettings {
  const solanaPayIcon = raw(env, 'SOLANA_PAY_ICON') ?? `${publicBaseUrl.replace(/\/+$/, '')}/icon.svg`;
  if (!/\.(svg|png|webp)$/i.test(httpUrl('SOLANA_PAY_ICON', solanaPayIcon).pathname)) {
    throw new ConfigError('SOLANA_PAY_ICON', `SOLANA_PAY_ICON must end in .svg, .png or .webp (wallets refuse other icons), got "${solanaPayIcon}"`);
  }
  return {
    paymentTtlSeconds: positive(env, 'ORDER_PAYMENT_TTL_SECONDS'),
    reviewWindowSeconds: int(env, 'ORDER_REVIEW_WINDOW_SECONDS'),
    maxUnpaidOrdersPerBuyer: positive(env, 'ORDER_MAX_UNPAID_PER_BUYER'),
    maxUnpaidOrdersPerIp: positive(env, 'ORDER_MAX_UNPAID_PER_IP'),
    contestedPaymentTtlSeconds: Math.min(positive(env, 'ORDER_PAYMENT_TTL_CONTESTED_SECONDS'), positive(env, 'ORDER_PAYMENT_TTL_SECONDS')),
    holdCooldownSeconds: int(env, 'ORDER_HOLD_COOLDOWN_SECONDS'),
    extensionProposalTtlSeconds: positive(env, 'ORDER_EXTENSION_PROPOSAL_TTL_SECONDS'),
    // the program refuses a settlement proposal living longer than 7 days (MAX_PROPOSAL_LIFETIME)
    settlementProposalTtlSeconds: Math.min(positive(env, 'ORDER_SETTLEMENT_PROPOSAL_TTL_SECONDS'), 7 * 86_400),
    watcherIntervalMs: int(env, 'ORDER_WATCHER_INTERVAL_MS'),
    watcherFallbackIntervalMs: positive(env, 'ORDER_WATCHER_FALLBACK_INTERVAL_MS'),
    reconcileIntervalMs: int(env, 'ORDER_RECONCILE_INTERVAL_MS'),
    inflightWaitMs: int(env, 'ORDER_INFLIGHT_WAIT_MS'),
    idempotencyLeaseMs: positive(env, 'ORDER_IDEMPOTENCY_LEASE_MS'),
    solanaPayLabel: raw(env, 'SOLANA_PAY_LABEL')!,
    solanaPayIcon,
  };
}

/** HTTP_* limits; headers timeout must not exceed the request timeout (Node refuses that). */
export function httpLimits(env: NodeJS.ProcessEnv): HttpLimits {
  const limits = {
    headersTimeoutMs: positive(env, 'HTTP_HEADERS_TIMEOUT_MS'),
    requestTimeoutMs: positive(env, 'HTTP_REQUEST_TIMEOUT_MS'),
    keepAliveTimeoutMs: positive(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS'),
    maxConnections: positive(env, 'HTTP_MAX_CONNECTIONS'),
    timeoutCheckIntervalMs: positive(env, 'HTTP_TIMEOUT_CHECK_INTERVAL_MS'),
  };
  if (limits.headersTimeoutMs > limits.requestTimeoutMs) {
    throw new ConfigError('HTTP_HEADERS_TIMEOUT_MS', 'HTTP_HEADERS_TIMEOUT_MS must not exceed HTTP_REQUEST_TIMEOUT_MS');
  }
  return limits;
}

/** What `npm start` (server/scripts/start.ts) and the localnet launcher read. */
export interface StartConfig {
  port: number;
  host: string;
  /** absolute */
  dataDir: string;
  /** set: use this RPC, start no localnet */
  solanaRpcUrl?: string;
  /** port of the embedded localnet (websocket: +1) */
  solanaRpcPort: number;
  /** run the dev bootstrap against SOLANA_RPC_URL too */
  chainBootstrap: boolean;
  /** ACTIONS_ENABLED as npm start hands it to the server (default true under npm start) */
  actionsEnabled: boolean;
  cargoTargetDir: string;
  /** the localnet binary to run */
  localnetBinary: string;
  /** true when BAZAAR_LOCALNET_BIN names it (never rebuilt) */
  localnetBinaryGiven: boolean;
}

/** `npm start` settings from `env` (pure: creates nothing). Throws ConfigError on a bad value. */
export function loadStartConfig(env: NodeJS.ProcessEnv = process.env): StartConfig {
  const cargoTargetDir = raw(env, 'CARGO_TARGET_DIR') ?? path.join(homedir(), '.cache', 'bazaar', 'cargo-target');
  const bin = raw(env, 'BAZAAR_LOCALNET_BIN');
  return {
    port: port(env, 'PORT'),
    host: raw(env, 'HOST')!,
    dataDir: dataDirOf(env),
    // several providers: the first (chain bootstrap, the banner); the server uses them all
    solanaRpcUrl: raw(env, 'SOLANA_RPC_URL') ?? rpcProviders(env)?.[0],
    solanaRpcPort: port(env, 'SOLANA_RPC_PORT'),
    chainBootstrap: bool(env, 'CHAIN_BOOTSTRAP'),
    // npm start serves the Solana Actions unless told otherwise (the server's own default is off)
    actionsEnabled: raw(env, 'ACTIONS_ENABLED') === undefined ? true : bool(env, 'ACTIONS_ENABLED'),
    cargoTargetDir,
    localnetBinary: bin ?? path.join(cargoTargetDir, 'debug', 'bazaar-localnet'),
    localnetBinaryGiven: bin !== undefined,
  };
}

/** What the scripts read (demo, dev-login, chain:bootstrap, db:migrate, api-key). */
export interface ToolConfig {
  /** the running service, no trailing slash (BAZAAR_URL) */
  baseUrl: string;
  /** absolute */
  dataDir: string;
  /** set: this RPC; unset: the one in DATA_DIR/chain.json (demo) or the embedded localnet's (bootstrap) */
  solanaRpcUrl?: string;
  /** the embedded localnet's RPC URL (SOLANA_RPC_PORT) */
  localnetRpcUrl: string;
  databaseUrl?: string;
  escrowProgramId?: string;
  /** Chromium executable of `npm run web:wallet` (CHROMIUM_PATH) */
  chromiumPath: string;
}

/** Script settings from `env` (pure). */
export function loadToolConfig(env: NodeJS.ProcessEnv = process.env): ToolConfig {
  return {
    baseUrl: httpUrl('BAZAAR_URL', raw(env, 'BAZAAR_URL')!).href.replace(/\/+$/, ''),
    dataDir: dataDirOf(env),
    solanaRpcUrl: raw(env, 'SOLANA_RPC_URL'),
    localnetRpcUrl: localnetRpcUrl(env),
    databaseUrl: raw(env, 'DATABASE_URL'),
    escrowProgramId: raw(env, 'ESCROW_PROGRAM_ID'),
    chromiumPath: raw(env, 'CHROMIUM_PATH')!,
  };
}

/**
 * The variables a script (`npm run demo`, dev-login) needs to reach the service at `target.baseUrl`
 * with its data in `target.dataDir`: only those that differ from their defaults (resolved against the
 * current directory), e.g. `{ BAZAAR_URL: 'http://127.0.0.1:4123' }`.
 */
export function scriptEnvFor(target: { baseUrl: string; dataDir: string }): Record<string, string> {
  const defaults = loadToolConfig({});
  const out: Record<string, string> = {};
  const baseUrl = target.baseUrl.replace(/\/+$/, '');
  if (baseUrl !== defaults.baseUrl) out.BAZAAR_URL = baseUrl;
  if (path.resolve(target.dataDir) !== defaults.dataDir) out.DATA_DIR = path.resolve(target.dataDir);
  return out;
}

const GROUP_TITLES: Record<EnvVar['group'], string> = {
  service: 'Service',
  login: 'Login (SIWS, tokens, rate limits)',
  chain: 'Chain',
  orders: 'Orders and Solana Pay',
  spending: 'On-chain spending (what the service pays, `docs/threat-model.md#who-pays-for-what-on-chain`)',
  custody: 'Custodial accounts',
  events: 'Events, webhooks and chat',
  limits: 'Limits',
  'npm start and scripts': '`npm start` and the scripts',
};

/** The README's configuration table (Markdown), generated from ENV_VARS. */
export function renderConfigTable(): string {
  const cell = (s: string) => s.replace(/\|/g, '\\|');
  const lines = ['| variable | default | meaning | read by |', '|---|---|---|---|'];
  for (const group of Object.keys(GROUP_TITLES) as EnvVar['group'][]) {
    lines.push(`| **${GROUP_TITLES[group]}** | | | |`);
    for (const v of ENV_VARS.filter((x) => x.group === group)) {
      const dflt = 'literal' in v.default ? `\`${v.default.literal}\`` : v.default.computed;
      lines.push(`| \`${v.name}\` | ${cell(dflt)} | ${cell(v.meaning)} | ${v.readers.join(', ')} |`);
    }
  }
  return lines.join('\n');
}
