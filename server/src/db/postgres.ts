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
 * The queue for a connection is bounded (BoundedPool) by the time a newcomer would wait, not only by
 * its length (issue 28: "a short wait in the pool is better than a refusal"). The pool measures how fast
 * it hands connections back (releases per second over the last two seconds, DrainRate); a query that
 * finds every connection busy joins the queue when its expected wait, (queries ahead + 1) / that rate,
 * is within `poolTimeoutMs` (the wait after which it would fail anyway), and fails at once with SQLSTATE
 * 53300 (insufficient resources: a 503 with Retry-After) when it is not, or when `poolQueueMax` queries
 * already wait (a hard bound on memory and on the latency of a stalled pool). So a burst the database
 * drains within the timeout (a flash sale's logins) waits instead of being refused, and a real overload
 * (arrivals faster than the pool drains) is refused at once instead of timing out after `poolTimeoutMs`.
 * While the rate is unknown (too few releases in the window: an idle pool's first burst, or a pool
 * stalled on a lock) only `poolQueueMax` applies, and `poolTimeoutMs` bounds each wait.
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

/**
 * Default hard bound of the connection queue: 1000 waiting queries. It was 100 until issue 28, when a
 * burst of 32 SIWS logins (13 statements each) overflowed it and 0-7 % of the buyers got a 503 the
 * database could have served within milliseconds; the expected-wait bound below is now what refuses an
 * overload, this one bounds memory and a stalled pool.
 */
export const DEFAULT_POOL_QUEUE_MAX = 1000;

/**
 * How fast a pool hands connections back: the times of the last releases (a ring of `size`), and the
 * rate over those within the last `windowMs`. Pure bookkeeping; `now` in ms (performance.now()).
 */
export class DrainRate {
  private readonly times: Float64Array;
  private next = 0;
  private filled = 0;
  constructor(
    readonly size = 128,
    readonly windowMs = 2000,
    readonly minSamples = 16,
  ) {
    this.times = new Float64Array(size);
  }

  /** One connection handed back at `now`. */
  note(now: number): void {
    this.times[this.next] = now;
    this.next = (this.next + 1) % this.size;
    if (this.filled < this.size) this.filled += 1;
  }

  /**
   * Releases per second over the releases of the last `windowMs` (at most `size` of them), measured
   * from the oldest of them to `now`; null with fewer than `minSamples` (unknown: an idle pool's first
   * burst, a stalled pool, or too few to extrapolate from: a burst's first releases, spread over an
   * event loop busy with the burst's CPU work, would predict a wait many times the real one).
   */
  perSecond(now: number): number | null {
    let n = 0;
    let oldest = now;
    for (let i = 1; i <= this.filled; i++) {
      const t = this.times[(this.next - i + this.size) % this.size]!;
      if (now - t > this.windowMs) break;
      n += 1;
      oldest = t;
    }
    if (n < this.minSamples) return null;
    return (n * 1000) / Math.max(now - oldest, 1);
  }
}

/**
 * The error of a query refused because `waiting` queries already wait for a connection: shaped as a
 * PostgreSQL error, SQLSTATE 53300 (too_many_connections, class 53 insufficient resources), so the
 * adapter and db/errors.ts treat it like the server refusing a connection (503 service-unavailable).
 */
export class PoolQueueFullError extends Error {
  readonly code = '53300';
  readonly severity = 'ERROR';
  /** `expectedWaitMs`: set when refused for the expected wait (not the queue's length) */
  constructor(
    readonly waiting: number,
    readonly expectedWaitMs?: number,
  ) {
    super(
      expectedWaitMs === undefined
        ? `database work queue is full: ${waiting} queries already wait for a connection`
        : `database work queue is full: ${waiting} queries already wait for a connection (about ${Math.round(expectedWaitMs)} ms of work)`,
    );
    this.name = 'PoolQueueFullError';
  }
}

/**
 * pg.Pool whose wait queue is bounded by a newcomer's expected wait and by its length (see the module
 * comment): connect() (also behind pool.query) fails at once with PoolQueueFullError when every
 * connection is busy and either `maxWaiting` callers already wait or the expected wait exceeds
 * `maxQueueWaitMs` (0: no time bound).
 */
export class BoundedPool extends pg.Pool {
  /** connections handed back (released) per second, for the expected wait */
  readonly drain = new DrainRate();

  /** `hostList`: set for a libpq host-list URL (db/host-list.ts): a failed connect is then tried once more */
  constructor(
    config: PoolConfig,
    readonly maxWaiting: number,
    readonly hostList: HostList | null = null,
    readonly maxQueueWaitMs = 0,
  ) {
    super(config);
    this.on('release', () => this.drain.note(performance.now()));
  }

  /**
   * The expected wait of one more caller for a connection, ms: (callers waiting + 1) / release rate;
   * 0 when a connection is idle or one more may be opened; null when the rate is unknown.
   */
  expectedWaitMs(): number | null {
    if (this.idleCount > 0 || this.totalCount < (this.options.max ?? 10)) return 0;
    const rate = this.drain.perSecond(performance.now());
    return rate === null ? null : ((this.waitingCount + 1) * 1000) / rate;
  }

  /** Why a connect now would be refused (the error to fail it with), or null when it may wait. */
  private refusal(): PoolQueueFullError | null {
    if (this.idleCount > 0) return null;
    if (this.waitingCount >= this.maxWaiting) return new PoolQueueFullError(this.waitingCount);
    if (this.maxQueueWaitMs > 0 && this.waitingCount > 0) {
      const wait = this.expectedWaitMs();
      if (wait !== null && wait > this.maxQueueWaitMs) return new PoolQueueFullError(this.waitingCount, wait);
    }
    return null;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  override connect(callback?: any): any {
    const err = this.refusal();
    if (err) {
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
    this.pool = limits
      ? new BoundedPool(config, limits.poolQueueMax ?? DEFAULT_POOL_QUEUE_MAX, hostListFor(connectionString), limits.poolTimeoutMs)
      : null;
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
