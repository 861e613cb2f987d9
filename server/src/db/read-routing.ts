/**
 * Optional reads from a standby (issue 27 item 4): where an anonymous, public read (search, browse,
 * GET /listings, GET /listings/{id}) runs. ONE decision point, `ReadRouter.readDb()`, which the listings and
 * marketplace repositories call for those reads only (never inside a transaction: they get the client, not
 * a `tx`).
 *
 * A read goes to the standby client only when ALL hold:
 * - `DATABASE_STANDBY_READS=on` and a standby client exists (PostgreSQL; PGlite has none);
 * - the code runs for an HTTP request (lib/request-context.ts) whose method is GET or HEAD and that carries
 *   no authenticated actor: a credentialed read (a seller reading what she just wrote, an API key, a token)
 *   and every background loop read from the primary, so a writer always reads her own writes;
 * - the last lag sample (`sampleIntervalMs`, default 1 s, in the background) is known and at most
 *   `maxLagMs` (`DATABASE_STANDBY_MAX_LAG_MS`). Unknown (no sample yet, the sample failed, the standby
 *   has replayed no transaction since it started and is behind) or past the bound: the primary.
 *
 * The standby client's sessions come from the SAME host list as `DATABASE_URL`, with libpq
 * `target_session_attrs=prefer-standby` (db/host-list.ts): a hot standby when one answers, else the primary.
 *
 * The lag is measured ON the server the standby client reads from (`STANDBY_LAG_SQL`), not from the
 * primary's `pg_stat_replication.replay_lag`: it is the server the reads go to, it needs no privilege
 * (pg_stat_replication shows the lag columns only to pg_read_all_stats), it works the same for a managed
 * read replica whose primary we cannot query, and `replay_lag` goes NULL when the primary is idle and keeps
 * its last value after the standby disconnects. The formula (milliseconds):
 * - the session is not in recovery (prefer-standby fell back to the primary): 0;
 * - a WAL receiver is streaming and everything received is replayed (`pg_last_wal_receive_lsn() =
 *   pg_last_wal_replay_lsn()`): 0 (an idle primary: the replay timestamp is old, but nothing is missing);
 * - else `clock_timestamp() - pg_last_xact_replay_timestamp()`: the age of the last transaction replayed
 *   (an upper bound while WAL waits to be replayed; grows while the receiver is disconnected, which is
 *   what we want: a cut-off standby soon reads as too far behind);
 * - NULL (unknown) when nothing was replayed since the standby started.
 */
import type { PrismaClient } from '../generated/prisma/client.js';
import { currentRequestContext } from '../lib/request-context.js';

/** Which client serves a read. */
export type ReadPool = 'primary' | 'standby';

/** The standby reads setting (`DATABASE_STANDBY_READS`, `DATABASE_STANDBY_MAX_LAG_MS`). */
export interface StandbyReadSettings {
  enabled: boolean;
  /** the staleness bound: replay lag past it (ms) sends reads to the primary */
  maxLagMs: number;
}

/** Default staleness bound, ms (`DATABASE_STANDBY_MAX_LAG_MS`). */
export const DEFAULT_STANDBY_MAX_LAG_MS = 1000;

/** One lag sample of the standby client's server. */
export interface LagSample {
  /** replay lag, ms; null: unknown */
  lagMs: number | null;
  /** the session is a hot standby (false: prefer-standby fell back to the primary) */
  inRecovery: boolean;
}

/** The lag query run on the standby client (see the module comment): columns in_recovery, lag_ms. */
export const STANDBY_LAG_SQL = `SELECT pg_is_in_recovery() AS in_recovery,
  CASE WHEN NOT pg_is_in_recovery() THEN 0::float8
       WHEN EXISTS (SELECT 1 FROM pg_stat_wal_receiver) AND pg_last_wal_receive_lsn() = pg_last_wal_replay_lsn() THEN 0::float8
       ELSE (extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000)::float8 END AS lag_ms`;

/** The lag of the server `client` reads from (STANDBY_LAG_SQL). */
export async function sampleStandbyLag(client: Pick<PrismaClient, '$queryRawUnsafe'>): Promise<LagSample> {
  const rows = await client.$queryRawUnsafe<Array<{ in_recovery: boolean; lag_ms: number | null }>>(STANDBY_LAG_SQL);
  const r = rows[0];
  if (!r) return { lagMs: null, inRecovery: false };
  return { lagMs: r.lag_ms === null ? null : Math.max(0, Number(r.lag_ms)), inRecovery: r.in_recovery };
}

/** The client public reads use now (the seam the listings and marketplace repositories call). */
export type ReadDb = () => PrismaClient;

export interface ReadRouterOptions extends StandbyReadSettings {
  primary: PrismaClient;
  /** the prefer-standby client; null: no standby reads (PGlite, or the setting off) */
  standby: PrismaClient | null;
  /** lag source (default: sampleStandbyLag on `standby`); tests pass a fake */
  sample?: () => Promise<LagSample>;
  /** background sampling period, ms (default 1000) */
  sampleIntervalMs?: number;
  /** told of a failed sample (logs): the first failure, and the first after a good sample (not every second of an outage) */
  onSampleError?: (err: unknown) => void;
}

/** Whether the code running now is an anonymous GET/HEAD request (the only reads a standby may serve). */
export function anonymousSafeRequest(): boolean {
  const ctx = currentRequestContext();
  if (!ctx || ctx.requestId === null || ctx.actor !== null) return false;
  return ctx.method === 'GET' || ctx.method === 'HEAD';
}

/** Routes public reads between the primary and a standby by the setting, the request and the measured lag. */
export class ReadRouter {
  /** the last sample (null before the first, or after a failed one) */
  last: LagSample | null = null;
  /** reads routed since start, by pool (only the reads that asked: readDb() calls) */
  readonly served: Record<ReadPool, number> = { primary: 0, standby: 0 };
  private timer: NodeJS.Timeout | null = null;
  private failing = false;
  private sampling: Promise<void> | null = null;

  constructor(private readonly o: ReadRouterOptions) {}

  /** Whether the standby may serve reads now (setting on, a standby client, lag known and within the bound). */
  standbyUsable(): boolean {
    if (!this.o.enabled || !this.o.standby) return false;
    const lag = this.last?.lagMs;
    return lag !== null && lag !== undefined && lag <= this.o.maxLagMs;
  }

  /** The pool a public read asked for now goes to (see the module comment). */
  choose(): ReadPool {
    return this.standbyUsable() && anonymousSafeRequest() ? 'standby' : 'primary';
  }

  /** The client for a public read now; counts it in `served`. */
  readDb: ReadDb = () => {
    const pool = this.choose();
    this.served[pool] += 1;
    return pool === 'standby' ? this.o.standby! : this.o.primary;
  };

  /** Take one lag sample now (a failure leaves the lag unknown). */
  async sampleOnce(): Promise<void> {
    const sample = this.o.sample ?? (this.o.standby ? () => sampleStandbyLag(this.o.standby!) : null);
    if (!sample) return;
    this.sampling ??= sample()
      .then(
        (s) => {
          this.last = s;
          this.failing = false;
        },
        (err: unknown) => {
          this.last = null;
          if (!this.failing) this.o.onSampleError?.(err);
          this.failing = true;
        },
      )
      .finally(() => {
        this.sampling = null;
      });
    return this.sampling;
  }

  /** Sample at once, then every `sampleIntervalMs` (no-op when the setting is off). */
  start(): void {
    if (!this.o.enabled || !this.o.standby || this.timer) return;
    void this.sampleOnce();
    this.timer = setInterval(() => void this.sampleOnce(), this.o.sampleIntervalMs ?? 1000);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sampling;
  }

  /** Settings, for the metrics and logs. */
  get settings(): StandbyReadSettings {
    return { enabled: this.o.enabled && this.o.standby !== null, maxLagMs: this.o.maxLagMs };
  }
}

/** A ReadDb that always reads from `db` (PGlite, tests, the setting off). */
export const primaryOnly =
  (db: PrismaClient): ReadDb =>
  () =>
    db;
