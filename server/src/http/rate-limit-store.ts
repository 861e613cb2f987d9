/**
 * PrismaRateLimitStore: an express-rate-limit `Store` (express-rate-limit 8, "Store" in its docs)
 * whose counters live in PostgreSQL (table `rate_limit_hits`, PGlite or PostgreSQL), so every replica
 * behind a load balancer counts against the same budget: the login limits (http/security.ts) and the
 * chat limit per sender (http/chat.handlers.ts).
 *
 * Fixed window of the limiter's `windowMs`, on the DATABASE clock: one UPSERT per request increments the
 * counter, or starts a new window when the stored one ended. `resetTime` is converted to this process's
 * clock (now + the window's remaining time as the database sees it), so `Retry-After` is right even
 * when the replica's clock is off. Expired rows are deleted by the leader's hourly purge
 * (`purgeRateLimitHits`).
 *
 * Why our own: the published PostgreSQL store (@acpr/rate-limit-postgresql) needs a `pg` pool and its
 * own migrations, and cannot run on PGlite (the embedded default).
 *
 * Errors: a database failure rejects; express-rate-limit passes it to the error handler, which answers
 * 503 service-unavailable (the login itself needs the database anyway).
 */
import type { ClientRateLimitInfo, IncrementResponse, Options, Store } from 'express-rate-limit';
import type { PrismaClient } from '../generated/prisma/client.js';

type Row = { hits: number; reset_at: Date; db_now: Date };

export class PrismaRateLimitStore implements Store {
  /** counters are shared by every process on the database */
  readonly localKeys = false;
  private windowMs = 60_000;

  constructor(
    private readonly db: PrismaClient,
    /** the limiter's name, unique per limiter (e.g. `auth:ip:/api/v1/auth/request_login`) */
    readonly prefix: string,
  ) {}

  init(options: Options): void {
    this.windowMs = options.windowMs;
  }

  private info(r: Row): ClientRateLimitInfo {
    const remainingMs = new Date(r.reset_at).getTime() - new Date(r.db_now).getTime();
    return { totalHits: Number(r.hits), resetTime: new Date(Date.now() + Math.max(0, remainingMs)) };
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const rows = await this.db.$queryRaw<Row[]>`
      SELECT hits, reset_at, clock_timestamp() AS db_now FROM rate_limit_hits
       WHERE limiter = ${this.prefix} AND key = ${key} AND reset_at > clock_timestamp()`;
    return rows[0] ? this.info(rows[0]) : undefined;
  }

  /** One statement: +1 in the current window, or 1 in a new window when the stored one ended. */
  async increment(key: string): Promise<IncrementResponse> {
    const rows = await this.db.$queryRaw<Row[]>`
      INSERT INTO rate_limit_hits AS r (limiter, key, hits, reset_at)
      VALUES (${this.prefix}, ${key}, 1, clock_timestamp() + ${Math.round(this.windowMs)}::int * interval '1 millisecond')
      ON CONFLICT (limiter, key) DO UPDATE SET
        hits = CASE WHEN r.reset_at <= clock_timestamp() THEN 1 ELSE r.hits + 1 END,
        reset_at = CASE WHEN r.reset_at <= clock_timestamp() THEN EXCLUDED.reset_at ELSE r.reset_at END
      RETURNING hits, reset_at, clock_timestamp() AS db_now`;
    return this.info(rows[0]!);
  }

  async decrement(key: string): Promise<void> {
    await this.db.$executeRaw`
      UPDATE rate_limit_hits SET hits = GREATEST(hits - 1, 0)
       WHERE limiter = ${this.prefix} AND key = ${key} AND reset_at > clock_timestamp()`;
  }

  async resetKey(key: string): Promise<void> {
    await this.db.$executeRaw`DELETE FROM rate_limit_hits WHERE limiter = ${this.prefix} AND key = ${key}`;
  }

  async resetAll(): Promise<void> {
    await this.db.$executeRaw`DELETE FROM rate_limit_hits WHERE limiter = ${this.prefix}`;
  }
}

/** Delete the counters whose window ended before `before` (the leader's hourly purge); returns how many. */
export function purgeRateLimitHits(db: PrismaClient, before: Date): Promise<number> {
  return db.$executeRaw`DELETE FROM rate_limit_hits WHERE reset_at < ${before}`;
}
