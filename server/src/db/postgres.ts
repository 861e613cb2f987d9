/**
 * @prisma/adapter-pg with one fix for migrations: its executeScript splits the script on every ";"
 * (breaking semicolons in comments, strings and function bodies) and runs the pieces one by one.
 * Here the whole script goes to PostgreSQL as one simple-protocol query, which PostgreSQL parses
 * properly and runs as one implicit transaction (all or nothing).
 *
 * The pool and per-connection limits (`PgLimits`) are set here: pool size, how long a query waits
 * for a free connection, and the server-side `statement_timeout`, `lock_timeout` and
 * `idle_in_transaction_session_timeout` every connection starts with (PostgreSQL startup parameters).
 * A query past them fails (57014 / 55P03 / 25P03, or the pool's "timeout exceeded when trying to
 * connect") instead of queueing for as long as a lock is held; db/errors.ts classifies those as 503.
 *
 * The queue for a connection is bounded too (`poolQueueMax`, BoundedPool): past capacity a query fails
 * at once with SQLSTATE 53300 (insufficient resources), a 503 with Retry-After, instead of joining an
 * unbounded queue where every request waits up to `poolTimeoutMs` and the latency of all of them grows.
 */
import { countStatements, type StatementCounter } from './statement-counter.js';
import { PrismaPg } from '@prisma/adapter-pg';
import pg, { type PoolConfig } from 'pg';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { hostListFor, isHostFailure, pgConnectionOptions, type HostList } from './host-list.js';

type Queryable = { query(sql: string): Promise<unknown> };

function wholeScripts(adapter: SqlDriverAdapter): SqlDriverAdapter {
  const client = (adapter as unknown as { client: Queryable }).client;
  const onError = (adapter as unknown as { onError(e: unknown): never }).onError.bind(adapter);
  adapter.executeScript = async (script: string) => {
    try {
      await client.query(script);
    } catch (e) {
      onError(e);
    }
  };
  return adapter;
}

/** Pool and per-connection limits of the service's PostgreSQL client; every value in milliseconds but poolMax. */
export interface PgLimits {
  /** connections in the pool (pg `max`) */
  poolMax: number;
  /** how long a query waits for a free (or new) connection before failing (pg `connectionTimeoutMillis`) */
  poolTimeoutMs: number;
  /** server-side `statement_timeout`: a statement running longer is cancelled (57014) */
  statementTimeoutMs: number;
  /** server-side `lock_timeout`: waiting longer for a row/table lock fails the statement (55P03) */
  lockTimeoutMs: number;
  /** server-side `idle_in_transaction_session_timeout`: a transaction idle longer is ended (25P03) */
  idleInTransactionTimeoutMs: number;
  /**
   * queries (or transactions) that may wait for a connection when all `poolMax` are busy; one more
   * fails at once (BoundedPool). Default DEFAULT_POOL_QUEUE_MAX.
   */
  poolQueueMax?: number;
}

/** default bound of the connection queue: 100 waiting queries (10 connections x ~10 queries each) */
export const DEFAULT_POOL_QUEUE_MAX = 100;

/**
 * The error of a query refused because `waiting` queries already wait for a connection: shaped as a
 * PostgreSQL error, SQLSTATE 53300 (too_many_connections, class 53 insufficient resources), so the
 * adapter and db/errors.ts treat it like the server refusing a connection (503 service-unavailable).
 */
export class PoolQueueFullError extends Error {
  readonly code = '53300';
  readonly severity = 'ERROR';
  constructor(readonly waiting: number) {
    super(`database work queue is full: ${waiting} queries already wait for a connection`);
    this.name = 'PoolQueueFullError';
  }
}

/**
 * pg.Pool whose wait queue is bounded: connect() (also behind pool.query) fails at once with
 * PoolQueueFullError when `maxWaiting` callers already wait for a connection.
 */
export class BoundedPool extends pg.Pool {
  /** `hostList`: set for a libpq host-list URL (db/host-list.ts): a failed connect is then tried once more */
  constructor(
    config: PoolConfig,
    readonly maxWaiting: number,
    readonly hostList: HostList | null = null,
  ) {
    super(config);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override connect(callback?: any): any {
    if (this.waitingCount >= this.maxWaiting && this.idleCount === 0) {
      const err = new PoolQueueFullError(this.waitingCount);
      if (typeof callback === 'function') {
        process.nextTick(() => callback(err, undefined, () => undefined));
        return undefined;
      }
      return Promise.reject(err);
    }
    if (!this.hostList) return super.connect(callback);
    // a host-list URL: a connect that failed because the remembered server is gone or became a standby is
    // tried once more; the HostList then probes every host (libpq moves on to the next host the same way)
    const once = () => super.connect() as Promise<pg.PoolClient>;
    const connected = once().catch((e: unknown) => (isHostFailure(e) ? once() : Promise.reject(e)));
    if (typeof callback !== 'function') return connected;
    connected.then(
      (client) => callback(undefined, client, (err?: Error | boolean) => client.release(err)),
      (err: unknown) => callback(err, undefined, () => undefined),
    );
    return undefined;
  }
}

/**
 * node-postgres pool options for `limits` (client-side query_timeout = statement timeout + 5 s, TCP keep-alive).
 * A libpq host-list URL (`postgres://h1:p1,h2:p2/db?target_session_attrs=read-write`) gets the `Client`
 * class that follows the read-write server (db/host-list.ts).
 */
export function pgPoolConfig(connectionString: string, limits?: PgLimits): PoolConfig {
  if (!limits) return pgConnectionOptions(connectionString);
  return pgConnectionOptions(connectionString, {
    max: limits.poolMax,
    connectionTimeoutMillis: limits.poolTimeoutMs,
    statement_timeout: limits.statementTimeoutMs,
    lock_timeout: limits.lockTimeoutMs,
    idle_in_transaction_session_timeout: limits.idleInTransactionTimeoutMs,
    // a dead peer (network partition) must not hang a query forever: the server would have cancelled it
    query_timeout: limits.statementTimeoutMs > 0 ? limits.statementTimeoutMs + 5_000 : undefined,
    keepAlive: true,
  } as PoolConfig);
}

export class BazaarPgAdapterFactory implements SqlMigrationAwareDriverAdapterFactory {
  readonly provider = 'postgres' as const;
  readonly adapterName: string;
  private readonly inner: PrismaPg;
  /** the service's pool (with `limits`; else the adapter builds its own and this is null): the metrics read its counts */
  readonly pool: BoundedPool | null;

  /**
   * `limits` unset: pg defaults (no timeouts, no queue bound), as migrations want. `statements`: counts
   * every statement sent through this factory's connections (db/statement-counter.ts).
   */
  constructor(
    connectionString: string,
    limits?: PgLimits,
    readonly statements?: StatementCounter,
  ) {
    const config = pgPoolConfig(connectionString, limits);
    this.pool = limits ? new BoundedPool(config, limits.poolQueueMax ?? DEFAULT_POOL_QUEUE_MAX, hostListFor(connectionString)) : null;
    this.inner = new PrismaPg(this.pool ?? config, {
      // the pool is ours: end it when Prisma disconnects
      disposeExternalPool: true,
    });
    this.adapterName = this.inner.adapterName;
  }

  async connect(): Promise<SqlDriverAdapter> {
    const adapter = wholeScripts((await this.inner.connect()) as SqlDriverAdapter);
    return this.statements ? countStatements(adapter, this.statements) : adapter;
  }

  async connectToShadowDb(): Promise<SqlDriverAdapter> {
    return wholeScripts((await this.inner.connectToShadowDb()) as SqlDriverAdapter);
  }
}
