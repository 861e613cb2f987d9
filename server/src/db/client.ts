/**
 * Database factory: the generated Prisma client over a driver adapter.
 *
 * - no `databaseUrl` -> PGlite (embedded Postgres, WebAssembly) persisted under `<dataDir>/pglite`
 *   (`dataDir: 'memory://'`-style in-memory use: pass `pglite` directly, as the tests do);
 * - `postgres://` / `postgresql://` -> node-postgres pool via @prisma/adapter-pg, with the pool and
 *   timeout `limits` (./postgres.ts) when given.
 *
 * `adapter` is the migration-aware adapter factory, for migrateDatabase() (./migrate.ts): on PostgreSQL
 * a factory of its own without statement/lock timeouts (a migration may legitimately run long).
 *
 * `ping(timeoutMs)` is the readiness probe: it never waits in the shared pool's queue. PostgreSQL: its
 * own one-connection pool whose connect, statement and query all time out after `timeoutMs`. PGlite
 * (one in-process connection; a long transaction holds it): `SELECT 1` raced against `timeoutMs`.
 * It rejects with an Error whose message says what failed.
 *
 * PGlite (./pglite.ts, @electric-sql/pglite) is imported on the first PGlite database only: a server on
 * PostgreSQL never loads it.
 *
 * PGlite has no statement or lock timeouts: it runs one statement at a time in this process
 * (statement_timeout is accepted but never fires, measured), and there are no other sessions to
 * wait for. A slow statement delays the queries queued behind it; the readiness probe reports that.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { BazaarPgAdapterFactory, pgPoolConfig, type PgLimits } from './postgres.js';
import { registerDriverPool } from './prepared.js';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaClient } from '../generated/prisma/client.js';
import { preferStandbyUrl } from './host-list.js';
import { ReadRouter, type StandbyReadSettings } from './read-routing.js';
import { StatementCounter } from './statement-counter.js';

export { StatementCounter } from './statement-counter.js';

export { PrismaClient, Prisma } from '../generated/prisma/client.js';
export type { User, ApiKey, LoginNonce, Listing, Order, ChainIntent, Review, IdempotencyKey } from '../generated/prisma/client.js';

export interface Db {
  prisma: PrismaClient;
  adapter: SqlMigrationAwareDriverAdapterFactory;
  kind: 'pglite' | 'postgres';
  /** the PGlite instance (kind 'pglite' only) */
  pglite?: PGlite;
  /** readiness probe off the shared pool: resolves when `SELECT 1` answers within `timeoutMs` ms */
  ping(timeoutMs: number): Promise<void>;
  /**
   * The shared pool's counts now (PostgreSQL with limits; null on PGlite, one in-process connection and no
   * pool): connections open (`total`), of which `idle`, queries `waiting` for one, and the pool's `max`.
   */
  poolStats(): PoolStats | null;
  /**
   * Where public reads go (db/read-routing.ts): `readRouter.readDb()` is the primary's client, or the standby
   * reads client (same host list, `target_session_attrs=prefer-standby`) when `standbyReads` is on and the
   * request and the measured lag allow. `start()` it to sample the lag; close() stops it.
   */
  readRouter: ReadRouter;
  /**
   * Statements sent through the service's Prisma clients (primary and standby reads) since the process
   * started (db/statement-counter.ts): tests and benchmarks read differences.
   */
  statements: StatementCounter;
  close(): Promise<void>;
}

/** `work` or a rejection after `ms` milliseconds, whichever comes first. */
function within<T>(ms: number, work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Counts of a connection pool (node-postgres `totalCount`, `idleCount`, `waitingCount`, `options.max`). */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

export interface CreateDbOptions {
  databaseUrl?: string;
  /** DATA_DIR; PGlite lives in <dataDir>/pglite (default ./data) */
  dataDir?: string;
  /** use this PGlite instance instead of opening one (tests) */
  pglite?: PGlite;
  /** PostgreSQL pool size and timeouts (./postgres.ts); unset: node-postgres defaults, no timeouts */
  limits?: PgLimits;
  /** DATABASE_STANDBY_READS / DATABASE_STANDBY_MAX_LAG_MS (PostgreSQL only); unset: every read on the primary */
  standbyReads?: StandbyReadSettings;
  /** told when the standby lag cannot be measured (the first failure of a run of them): for the logs */
  onStandbySampleError?: (err: unknown) => void;
}

export async function createDb(opts: CreateDbOptions = {}): Promise<Db> {
  if (opts.databaseUrl) {
    if (!/^postgres(ql)?:\/\//.test(opts.databaseUrl)) {
      throw new Error('DATABASE_URL must be a postgres:// or postgresql:// URL');
    }
    const statements = new StatementCounter();
    const factory = new BazaarPgAdapterFactory(opts.databaseUrl, opts.limits, statements);
    const prisma = new PrismaClient({ adapter: factory });
    const url = opts.databaseUrl;
    const pool = factory.pool;
    let probe: pg.Pool | null = null;
    const standbyFactory = opts.standbyReads?.enabled ? new BazaarPgAdapterFactory(preferStandbyUrl(url), opts.limits, statements) : null;
    const standby = standbyFactory ? new PrismaClient({ adapter: standbyFactory }) : null;
    // the hottest public reads send a prepared statement on these same pools (db/prepared.ts)
    if (pool) registerDriverPool(prisma, pool, statements);
    if (standby && standbyFactory?.pool) registerDriverPool(standby, standbyFactory.pool, statements);
    const readRouter = new ReadRouter({ enabled: opts.standbyReads?.enabled ?? false, maxLagMs: opts.standbyReads?.maxLagMs ?? 0, primary: prisma, standby, onSampleError: opts.onStandbySampleError });
    return {
      prisma,
      readRouter,
      statements,
      adapter: new BazaarPgAdapterFactory(url),
      kind: 'postgres',
      poolStats: () => (pool ? { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max ?? 10 } : null),
      async ping(timeoutMs) {
        if (!probe) {
          probe = new pg.Pool({
            ...pgPoolConfig(url),
            max: 1,
            connectionTimeoutMillis: timeoutMs,
            statement_timeout: timeoutMs,
            query_timeout: timeoutMs,
            allowExitOnIdle: true,
          });
          probe.on('error', () => undefined); // an idle probe connection dropped by the server
        }
        await within(timeoutMs + 250, probe.query('SELECT 1'), 'the database');
      },
      async close() {
        await readRouter.stop();
        await standby?.$disconnect();
        await prisma.$disconnect();
        await probe?.end().catch(() => undefined);
      },
    };
  }
  // imported here, not at the top: a PostgreSQL process never loads PGlite (its JavaScript is about 1.6 M
  // characters of source; issue 28 item 5). The first PGlite database of a process pays the import once.
  const { BazaarPGliteAdapterFactory, openPGlite } = await import('./pglite.js');
  let pglite = opts.pglite;
  const owned = !pglite;
  if (!pglite) {
    const dir = path.resolve(opts.dataDir ?? './data', 'pglite');
    mkdirSync(dir, { recursive: true });
    pglite = await openPGlite({ dataDir: dir });
  }
  const statements = new StatementCounter();
  const adapter = new BazaarPGliteAdapterFactory(pglite, statements);
  const prisma = new PrismaClient({ adapter });
  return {
    prisma,
    adapter,
    kind: 'pglite',
    pglite,
    poolStats: () => null,
    statements,
    readRouter: new ReadRouter({ enabled: false, maxLagMs: 0, primary: prisma, standby: null }),
    async ping(timeoutMs) {
      if (pglite!.closed) throw new Error('PGlite is closed');
      await within(timeoutMs, pglite!.query('SELECT 1'), 'the embedded database');
    },
    async close() {
      await prisma.$disconnect();
      if (owned && !pglite!.closed) await pglite!.close();
    },
  };
}
