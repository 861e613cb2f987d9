/**
 * An in-memory LeaderRepo whose "database clock" is the test's `now()` (ms), so a test moves the
 * lease's expiry and the replicas' local clocks together, without waiting on wall time. Same rules
 * as the SQL of server/src/modules/leader/leader.repo.ts (which tests/leader.lease.test.ts runs on
 * PGlite and PostgreSQL): acquire succeeds when nobody holds the lease, when the holder renews, or
 * when the holder's lease expired (then the term grows); release ends only the holder's own lease.
 */
import type { LeaderRepo, LeaseRecord } from '../../server/src/modules/leader/index';

export class MemoryLeaderRepo implements LeaderRepo {
  private readonly rows = new Map<string, Omit<LeaseRecord, 'dbNow'>>();

  /** `now`: the shared clock, ms (what `clock_timestamp()` is for the SQL repo) */
  constructor(private readonly now: () => number) {}

  async acquire(name: string, holder: string, ttlMs: number): Promise<LeaseRecord | null> {
    const now = this.now();
    const row = this.rows.get(name);
    const expiresAt = new Date(now + Math.max(1, Math.round(ttlMs)));
    if (!row) {
      this.rows.set(name, { name, holder, term: 1n, acquiredAt: new Date(now), expiresAt });
    } else {
      const live = row.expiresAt.getTime() > now;
      if (row.holder !== holder && live) return null;
      const keeps = row.holder === holder && live;
      this.rows.set(name, { name, holder, term: keeps ? row.term : row.term + 1n, acquiredAt: keeps ? row.acquiredAt : new Date(now), expiresAt });
    }
    return { ...this.rows.get(name)!, dbNow: new Date(now) };
  }

  async release(name: string, holder: string): Promise<boolean> {
    const now = this.now();
    const row = this.rows.get(name);
    if (!row || row.holder !== holder || row.expiresAt.getTime() <= now) return false;
    row.expiresAt = new Date(now - 1);
    return true;
  }

  async current(name: string): Promise<LeaseRecord | null> {
    const row = this.rows.get(name);
    return row ? { ...row, dbNow: new Date(this.now()) } : null;
  }
}
