/**
 * HTTP test harness: createTestApp() builds the real app over a fresh migrated PGlite (or a
 * throw-away PostgreSQL database when `{ postgres: true }` and TEST_DATABASE_URL is set);
 * loginAs() performs the real SIWS round trip with an ed25519 keypair; createApiKey() issues a key.
 */
import { createSignInMessage } from '@solana/wallet-standard-util';
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import request from 'supertest';
import type { PGlite } from '@electric-sql/pglite';
import type { LoginResponse, RequestLoginResponse } from '@bazaar/contract';
import { createApp } from '../../server/src/app.js';
import type { Config } from '../../server/src/config.js';
import { categoriesFromSlugs, DEFAULT_CATEGORIES, DEFAULT_LIMITS, ordersSettings } from '../../server/src/config.js';
import type { AppContext } from '../../server/src/context.js';
import { defaultSpending } from '../../server/src/modules/budget/index.js';
import { createDb } from '../../server/src/db/client.js';
import { createApiKey as issueApiKey } from '../../server/src/modules/auth/api-keys.js';
import { createLogger } from '../../server/src/logger.js';
import { freshPGlite, freshPostgres } from './db.js';

export const API = '/api/v1';
export const TEST_USDC_MINT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';
export const WSOL_MINT = 'So11111111111111111111111111111111111111112';

export function testConfig(over: Partial<Config> = {}): Config {
  return {
    port: 0,
    host: '127.0.0.1',
    publicBaseUrl: 'http://bazaar.test',
    dataDir: '/nonexistent-test-data-dir',
    jwtSecret: 'test-secret-test-secret-test-secret-0123456789',
    jwtTtlSeconds: 3600,
    devDefaults: false,
    siwsDomains: ['bazaar.test'],
    siwsChainId: 'localnet',
    loginNonceTtlSeconds: 300,
    clockSkewSeconds: 60,
    solanaRpcUrl: 'http://127.0.0.1:1',
    serviceKeypairPath: '/nonexistent',
    currencies: [
      { code: 'USDC', mint: TEST_USDC_MINT, decimals: 6 },
      { code: 'SOL', mint: WSOL_MINT, decimals: 9 },
    ],
    categories: categoriesFromSlugs(DEFAULT_CATEGORIES),
    publicMarketplace: false,
    corsOrigins: [],
    bodyLimit: '100kb',
    // high by default so suites that log many users in are not throttled; the rate-limit test lowers it
    authRateLimitPerMinute: 10_000,
    authAddressRateLimitPerMinute: 10_000,
    // the daily caps of costly actions high too, so suites creating many listings are not capped; the
    // budget tests (tests/budget.*.test.ts) lower them
    spending: { ...defaultSpending(), listingCreatePerUser: 10_000, listingCreatePerIp: 10_000, listingRenamePerUser: 10_000, withdrawalPerUser: 10_000 },
    orders: ordersSettings({}, over.publicBaseUrl ?? 'http://bazaar.test'),
    custodyEnabled: false,
    logLevel: 'silent',
    trustProxy: 0,
    http: { ...DEFAULT_LIMITS.http },
    db: { ...DEFAULT_LIMITS.db },
    readyTimeoutMs: DEFAULT_LIMITS.readyTimeoutMs,
    shutdownTimeoutMs: DEFAULT_LIMITS.shutdownTimeoutMs,
    ...over,
  };
}

export interface TestAppOptions {
  config?: Partial<Config>;
  chain?: AppContext['chain'];
  now?: () => Date;
  /** orders settings overrides and port decorators */
  orders?: AppContext['orders'];
  /** custody module options (port decorators, lease) */
  custody?: AppContext['custody'];
  /** listings module options (the recovery timer is off unless set) */
  listings?: AppContext['listings'];
  /** webhooks module seams (worker retry delays, thresholds, DNS) */
  webhooks?: AppContext['webhooks'];
  /** run against a fresh database on TEST_DATABASE_URL instead of PGlite */
  postgres?: boolean;
  /** directory of the web app served at /app/ (undefined: web/dist when built; null: none) */
  webAppDir?: string | null;
  /** with `postgres`: the URL the app connects to, from the fresh database's URL (e.g. through a TCP proxy) */
  postgresUrl?: (url: string) => string;
  /** with `postgres`: the server the fresh database is created on (default TEST_DATABASE_URL) */
  postgresBaseUrl?: string;
  /** the app's logger (default: createLogger(config.logLevel)) */
  log?: AppContext['log'];
  /** the app's metrics (default: a fresh registry) */
  metrics?: AppContext['metrics'];
}

export async function createTestApp(opts: TestAppOptions = {}) {
  const config = testConfig(opts.config);
  let pglite: PGlite | undefined;
  let pgDb: Awaited<ReturnType<typeof freshPostgres>> | undefined;
  if (opts.postgres) pgDb = await freshPostgres(opts.postgresBaseUrl);
  else pglite = await freshPGlite();
  const db = await createDb(
    pgDb ? { databaseUrl: opts.postgresUrl ? opts.postgresUrl(pgDb.url) : pgDb.url, limits: config.db, standbyReads: config.standbyReads } : { pglite },
  );
  const ctx: AppContext = {
    config,
    db: db.prisma,
    log: opts.log ?? createLogger(config.logLevel),
    chain: opts.chain ?? null,
    now: opts.now ?? (() => new Date()),
    orders: { watcherIntervalMs: 0, reconcileIntervalMs: 0, ...(opts.orders ?? {}) },
    listings: { recoveryIntervalMs: 0, ...(opts.listings ?? {}) },
    ...(opts.custody ? { custody: opts.custody } : {}),
    webhooks: opts.webhooks,
    dbPing: db.ping,
    dbPool: db.poolStats,
    dbStatements: () => db.statements.count,
    readRouter: db.readRouter,
    ...(opts.metrics ? { metrics: opts.metrics } : {}),
    ...(opts.webAppDir !== undefined ? { webAppDir: opts.webAppDir } : {}),
  };
  const app = createApp(ctx);
  return {
    app,
    ctx,
    db,
    services: app.services,
    request: request.agent(app),
    async close() {
      await app.services.stop();
      await db.close();
      if (pglite && !pglite.closed) await pglite.close();
      await pgDb?.drop();
    },
    /** URL of the fresh PostgreSQL database (postgres option) */
    postgresUrl: pgDb?.url,
  };
}

export type TestApp = Awaited<ReturnType<typeof createTestApp>>;

type AnyKeypair = { secretKey: Uint8Array; publicKey: Uint8Array | { toBytes(): Uint8Array } };

/** An ed25519 keypair (tweetnacl); @solana/web3.js Keypairs are accepted too. */
export const newKeypair = () => nacl.sign.keyPair();

export function walletOf(kp: AnyKeypair): string {
  return bs58.encode(kp.secretKey.slice(32, 64));
}

export function signSiws(kp: AnyKeypair, input: RequestLoginResponse['sign_in_input']) {
  const message = createSignInMessage(input);
  const signature = nacl.sign.detached(message, kp.secretKey);
  return {
    address: input.address,
    signed_message: Buffer.from(message).toString('base64'),
    signature: Buffer.from(signature).toString('base64'),
  };
}

/** The SIWS round trip: request_login -> sign -> verify_login. */
export async function loginAs(t: { app: TestApp['app'] }, keypair: AnyKeypair = newKeypair()) {
  const wallet = walletOf(keypair);
  const r1 = await request(t.app).post(`${API}/auth/request_login`).send({ address: wallet });
  if (r1.status !== 200) throw new Error(`request_login ${r1.status}: ${JSON.stringify(r1.body)}`);
  const r2 = await request(t.app).post(`${API}/auth/verify_login`).send(signSiws(keypair, r1.body.sign_in_input));
  if (r2.status !== 200) throw new Error(`verify_login ${r2.status}: ${JSON.stringify(r2.body)}`);
  const body = r2.body as LoginResponse;
  return {
    token: body.access_token,
    wallet,
    keypair,
    userId: body.user.user_id,
    user: body.user,
    headers: { authorization: `Bearer ${body.access_token}` },
  };
}

/** Issue an API key directly (what `npm run api-key -- create` does). */
export async function createApiKey(
  t: { ctx: AppContext },
  opts: { name?: string; userId?: string | null; isAdmin?: boolean } = {},
) {
  return issueApiKey(t.ctx.db, { name: opts.name ?? 'test', userId: opts.userId ?? null, isAdmin: opts.isAdmin });
}
