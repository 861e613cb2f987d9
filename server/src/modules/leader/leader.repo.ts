/**
 * Persistence of the leader lease (table `leader_leases`, one row per lease name). Every statement
 * reads the DATABASE clock (`clock_timestamp()`), never a replica's: replicas whose clocks disagree
 * still agree on who holds the lease and until when.
 */
import type { PrismaClient } from '../../generated/prisma/client.js';

/** The lease as the database holds it. `term` grows by one each time the lease changes hands or is
 *  taken again after it lapsed (a fencing token: a holder can tell it was not the leader throughout). */
export interface LeaseRecord {
  name: string;
  holder: string;
  term: bigint;
  acquiredAt: Date;
  expiresAt: Date;
  /** the database clock when the statement ran */
  dbNow: Date;
}

type Row = { name: string; holder: string; term: bigint | number; acquired_at: Date; expires_at: Date; db_now: Date };
const toRecord = (r: Row): LeaseRecord => ({
  name: r.name,
  holder: r.holder,
  term: BigInt(r.term),
  acquiredAt: new Date(r.acquired_at),
  expiresAt: new Date(r.expires_at),
  dbNow: new Date(r.db_now),
});

export interface LeaderRepo {
  /**
   * Acquire or renew the lease `name` for `holder`, for `ttlMs` milliseconds from now (database
   * clock), in ONE statement: succeeds when nobody holds it, when `holder` holds it, or when the
   * holder's lease has expired. Returns the lease when `holder` holds it afterwards, else null.
   */
  acquire(name: string, holder: string, ttlMs: number): Promise<LeaseRecord | null>;
  /** Give the lease up at once (only when `holder` holds it): another replica can take it on its next try. */
  release(name: string, holder: string): Promise<boolean>;
  /** The lease row (whoever holds it, expired or not), or null when it was never taken. */
  current(name: string): Promise<LeaseRecord | null>;
}

export function createLeaderRepo(db: PrismaClient): LeaderRepo {
  return {
    async acquire(name, holder, ttlMs) {
      const ttl = Math.max(1, Math.round(ttlMs));
      const rows = await db.$queryRaw<Row[]>`
        INSERT INTO leader_leases AS l (name, holder, term, acquired_at, renewed_at, expires_at)
        VALUES (${name}, ${holder}, 1, clock_timestamp(), clock_timestamp(), clock_timestamp() + ${ttl}::int * interval '1 millisecond')
        ON CONFLICT (name) DO UPDATE SET
          holder = EXCLUDED.holder,
          term = CASE WHEN l.holder = EXCLUDED.holder AND l.expires_at > clock_timestamp() THEN l.term ELSE l.term + 1 END,
          acquired_at = CASE WHEN l.holder = EXCLUDED.holder AND l.expires_at > clock_timestamp() THEN l.acquired_at ELSE EXCLUDED.acquired_at END,
          renewed_at = EXCLUDED.renewed_at,
          expires_at = EXCLUDED.expires_at
        WHERE l.holder = EXCLUDED.holder OR l.expires_at <= clock_timestamp()
        RETURNING name, holder, term, acquired_at, expires_at, clock_timestamp() AS db_now`;
      return rows[0] ? toRecord(rows[0]) : null;
    },
    async release(name, holder) {
      const n = await db.$executeRaw`
        UPDATE leader_leases SET expires_at = clock_timestamp() - interval '1 millisecond'
         WHERE name = ${name} AND holder = ${holder} AND expires_at > clock_timestamp()`;
      return n > 0;
    },
    async current(name) {
      const rows = await db.$queryRaw<Row[]>`
        SELECT name, holder, term, acquired_at, expires_at, clock_timestamp() AS db_now FROM leader_leases WHERE name = ${name}`;
      return rows[0] ? toRecord(rows[0]) : null;
    },
  };
}
