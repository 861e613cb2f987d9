/**
 * LeaderElection: one replica at a time runs the background loops, through a lease row in PostgreSQL
 * (leader.repo.ts; PGlite and PostgreSQL alike).
 *
 * Every replica tries `repo.acquire` (one UPSERT statement, database clock): the holder renews every
 * `renewMs`; the others retry every `renewMs`, or as soon as the holder's lease expires when that is
 * sooner. Winning a term calls `onElected` (start the loops; not awaited by the renewal loop, so a long
 * start-up pass never lets the lease lapse); losing it calls `onDeposed` (stop the loops, awaiting the
 * pass in progress). `stop()` (SIGTERM) deposes and releases the row, so another replica takes over on
 * its next try (within `renewMs`) instead of after the TTL.
 *
 * Local validity: after a successful renewal sent at monotonic time t, this replica counts itself
 * leader until t + ttlMs - safety. The database's expiry is computed later (statement time + ttlMs),
 * so the replica always gives up first. A renewal that fails (database unreachable) or comes late
 * (the process was paused: GC, SIGSTOP, a VM migration) is noticed at the next tick: past its local
 * validity the replica deposes itself before anything else. `isLeader` reads the same bound.
 *
 * Fencing (what stops a paused ex-leader that wakes up in the middle of a pass): the lease does not,
 * on its own; nothing can stop a process that is not running to be told. The loops are safe to run
 * twice because every action they take is guarded elsewhere: see README.md in this folder.
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { LeaderRepo, LeaseRecord } from './leader.repo.js';
import type { Log } from '../../lib/log.js';

export interface LeaderElectionOptions {
  repo: LeaderRepo;
  /** lease name (one per set of loops run together) */
  name: string;
  /** this replica's holder id; default `host:pid:random` */
  holder?: string;
  /** lease lifetime, ms (LEADER_LEASE_TTL_MS) */
  ttlMs: number;
  /** renewal (and follower retry) interval, ms (LEADER_LEASE_RENEW_MS); below ttlMs */
  renewMs: number;
  /** start the leader's work; called once per term won (a rejection is logged, the term goes on) */
  onElected: (lease: LeaseRecord) => Promise<void>;
  /** stop the leader's work, resolving once the pass in progress finished */
  onDeposed: (reason: string) => Promise<void>;
  log?: Log;
  /**
   * `now()`: a monotonic clock in ms, what the local validity and the renewal deadlines are measured on;
   * default `performance.now` (real time). Tests inject one and move it (pausing a replica without waiting):
   * tests/leader.lease.test.ts.
   */
  clock?: () => number;
}

/** A holder id unique to this process: `host:pid:random`. */
export const newHolderId = () => `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;

export class LeaderElection {
  readonly holder: string;
  private readonly clock: () => number;
  private leading = false;
  private validUntil = 0;
  private leaseTerm: bigint | null = null;
  private work: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private stopped = true;
  private elections = 0;
  private seen: { holder: string; term: bigint } | null = null;

  constructor(private readonly o: LeaderElectionOptions) {
    if (!(o.renewMs > 0 && o.renewMs < o.ttlMs)) throw new Error(`leader lease: renewMs (${o.renewMs}) must be > 0 and < ttlMs (${o.ttlMs})`);
    this.holder = o.holder ?? newHolderId();
    this.clock = o.clock ?? (() => performance.now());
  }

  /** True while this replica holds the lease (and its local validity has not run out). */
  get isLeader(): boolean {
    return this.leading && this.clock() < this.validUntil;
  }

  /** The term this replica leads, or null. */
  get term(): bigint | null {
    return this.leading ? this.leaseTerm : null;
  }

  /**
   * The lease as this replica last saw it (its own acquire, or the row read while following): holder and
   * term; null before the first attempt or when no replica held it. Read by the metrics (no query).
   */
  get lastSeen(): { holder: string; term: bigint } | null {
    return this.seen;
  }

  /** How many terms this replica has won since it was created. */
  get termsWon(): number {
    return this.elections;
  }

  /**
   * First attempt (awaited, and when won, the leader's start-up work too: a single replica starts as
   * before), then the renewal loop.
   */
  async start(): Promise<void> {
    if (!this.stopped) return;
    this.stopped = false;
    await this.runTick();
    await this.work;
  }

  /** Stop trying; when leading, stop the work (awaiting its pass) and release the lease for the others. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.ticking;
    if (this.leading) {
      await this.depose('stopping');
      await this.o.repo.release(this.o.name, this.holder).catch((err) => this.o.log?.warn({ err }, 'leader lease: release failed (it expires by itself)'));
    }
  }

  /** One acquire/renew attempt now (tests; the loop calls it on its timer). */
  tick(): Promise<void> {
    return this.runTick();
  }

  private safety(): number {
    return Math.min(1_000, Math.floor(this.o.ttlMs / 10));
  }

  private async runTick(): Promise<void> {
    if (this.ticking) return this.ticking;
    this.ticking = this.attempt()
      .catch((err) => {
        this.o.log?.error({ err }, 'leader lease: tick failed');
        return this.o.renewMs;
      })
      .then((next) => this.schedule(next))
      .finally(() => {
        this.ticking = null;
      });
    return this.ticking;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.runTick(), Math.max(10, Math.round(delayMs)));
    this.timer.unref?.();
  }

  /** One attempt; resolves to the delay before the next one, ms. */
  private async attempt(): Promise<number> {
    const { repo, name, ttlMs, renewMs } = this.o;
    const t0 = this.clock();
    // a renewal that came too late (paused process, database unreachable): stop acting first
    if (this.leading && t0 >= this.validUntil) await this.depose('the lease lapsed before it was renewed');
    let lease: LeaseRecord | null;
    try {
      lease = await repo.acquire(name, this.holder, ttlMs);
    } catch (err) {
      this.o.log?.warn({ err, leader: this.leading }, 'leader lease: renewal failed');
      if (this.leading && this.clock() >= this.validUntil) await this.depose('the lease could not be renewed in time');
      return this.leading ? Math.max(10, Math.min(renewMs, this.validUntil - this.clock())) : renewMs;
    }
    if (lease) {
      this.seen = { holder: lease.holder, term: lease.term };
      if (this.leading && lease.term !== this.leaseTerm) await this.depose(`the lease was taken over meanwhile (term ${this.leaseTerm} -> ${lease.term})`);
      this.validUntil = t0 + ttlMs - this.safety();
      if (!this.leading) {
        if (this.stopped) {
          await repo.release(name, this.holder).catch(() => undefined);
          return renewMs;
        }
        this.leading = true;
        this.leaseTerm = lease.term;
        this.elections += 1;
        this.o.log?.info({ lease: name, holder: this.holder, term: String(lease.term) }, 'leader lease won: starting the background loops');
        this.work = this.o.onElected(lease).catch((err) => this.o.log?.error({ err }, 'leader: starting the background loops failed'));
      }
      return renewMs;
    }
    if (this.leading) await this.depose('another replica holds the lease');
    const cur = await repo.current(name).catch(() => null);
    this.seen = cur ? { holder: cur.holder, term: cur.term } : null;
    if (!cur) return renewMs;
    // retry as soon as the holder's lease expires (database clock), at the latest after renewMs
    return Math.min(renewMs, Math.max(10, cur.expiresAt.getTime() - cur.dbNow.getTime() + 20));
  }

  private async depose(reason: string): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    this.o.log?.warn({ lease: this.o.name, holder: this.holder, term: String(this.leaseTerm), reason }, 'leader lease lost: stopping the background loops');
    this.leaseTerm = null;
    await this.work;
    await this.o.onDeposed(reason).catch((err) => this.o.log?.error({ err }, 'leader: stopping the background loops failed'));
  }
}
