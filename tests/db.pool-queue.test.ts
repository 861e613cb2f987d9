/**
 * The bounded queue for database work (db/postgres.ts BoundedPool, DB_POOL_QUEUE_MAX, DB_POOL_TIMEOUT_MS):
 * past capacity, or when a newcomer's expected wait exceeds the bound, a query fails at once with a 503 +
 * Retry-After instead of waiting in an unbounded queue (issue 14: "no 500 under any load"); a burst the
 * database drains within the bound waits instead of being refused (issue 28: "no 503 for a burst the
 * machine can serve").
 */
import net from 'node:net';
import pg from 'pg';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyDbError } from '../server/src/db/errors.js';
import { DEFAULT_LIMITS } from '../server/src/config.js';
import { BazaarPgAdapterFactory, BoundedPool, DrainRate, PoolQueueFullError } from '../server/src/db/postgres.js';
import { API, createTestApp, loginAs, type TestApp } from './helpers/app.js';
import { TEST_DATABASE_URL } from './helpers/db.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('BoundedPool', () => {
  it('refuses a connect at once when maxWaiting callers already wait, as an overload the classifier maps to 503', async () => {
    // a server that accepts connections and never answers: the pool's one connection never becomes ready
    const sockets: net.Socket[] = [];
    const silent = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const port = (silent.address() as net.AddressInfo).port;
    const pool = new BoundedPool({ host: '127.0.0.1', port, user: 'x', database: 'x', max: 1, connectionTimeoutMillis: 60_000 }, 1);
    pool.on('error', () => undefined);
    try {
      const first = pool.connect().catch((e: unknown) => e); // creating the only connection
      const second = pool.connect().catch((e: unknown) => e); // waits for it
      await sleep(50);
      expect(pool.waitingCount).toBe(1);
      const third = await Promise.race([pool.connect().then(() => 'connected', (e: unknown) => e), sleep(2_000).then(() => 'still waiting')]);
      expect(third).toBeInstanceOf(PoolQueueFullError);
      expect(classifyDbError(third)).toEqual({ reason: 'overloaded', retryAfterSeconds: 2 });
      // pool.query takes the same path (callback form of connect)
      const viaQuery = await Promise.race([pool.query('SELECT 1').then(() => 'answered', (e: unknown) => e), sleep(2_000).then(() => 'still waiting')]);
      expect(viaQuery).toBeInstanceOf(PoolQueueFullError);
      void first;
      void second;
    } finally {
      for (const s of sockets) s.destroy();
      await pool.end().catch(() => undefined);
      await new Promise((r) => silent.close(r));
    }
  });
});

describe('DrainRate', () => {
  it('is unknown with fewer than minSamples releases in the window, else releases per second from the oldest of them to now', () => {
    const d = new DrainRate(4, 1000, 2);
    expect(d.perSecond(0)).toBeNull();
    d.note(100);
    expect(d.perSecond(150)).toBeNull();
    d.note(200);
    expect(d.perSecond(300)).toBe(10); // 2 releases in 200 ms
    for (const t of [210, 220, 230]) d.note(t); // the ring keeps the last 4: 200..230
    expect(d.perSecond(240)).toBe(100); // 4 in 40 ms
    expect(d.perSecond(5_000)).toBeNull(); // a stalled (or idle) pool: nothing in the last second
  });
});

describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL: a burst the database can serve waits instead of being refused', () => {
  it('the default limits queue a burst of 300 queries on 2 connections (3 x the old 100-query bound) and serve them all', async () => {
    const factory = new BazaarPgAdapterFactory(TEST_DATABASE_URL!, { ...DEFAULT_LIMITS.db, poolMax: 2 });
    const pool = factory.pool!;
    try {
      const answers = await Promise.all(Array.from({ length: 300 }, (_, i) => pool.query('SELECT $1::int AS i', [i]).then((r) => r.rows[0].i as number, (e: unknown) => e)));
      expect(answers.filter((a) => a instanceof Error)).toEqual([]);
      expect(answers).toEqual(Array.from({ length: 300 }, (_, i) => i));
    } finally {
      await pool.end();
    }
  });

  it('the service: a burst of 110 concurrent SIWS logins on a 2-connection pool (more waiting queries than the old bound of 100), within the pool timeout, gets no 503', async () => {
    // the pool timeout is long so that the machine's speed (shared cores) cannot make the burst unservable:
    // the test is about the queue's policy, not about how fast logins are
    const t = await createTestApp({ postgres: true, config: { db: { ...DEFAULT_LIMITS.db, poolMax: 2, poolTimeoutMs: 120_000 } } });
    try {
      const outcomes = await Promise.all(Array.from({ length: 110 }, () => loginAs(t).then(() => 'ok', (e: unknown) => String((e as Error).message).slice(-160))));
      expect(outcomes.filter((o) => o !== 'ok')).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it('a real overload is refused at once: once the pool drains a known rate, a query whose expected wait exceeds the pool timeout fails with 53300 at once, while the queries ahead of it still wait', async () => {
    // a bound of 200 ms on the expected wait (what the service derives from DB_POOL_TIMEOUT_MS); the pool's own
    // timeout is long so that the warm-up's queue is drained, not timed out, on a slow machine
    const pool = new BoundedPool({ connectionString: TEST_DATABASE_URL, max: 1, connectionTimeoutMillis: 60_000 }, 1000, null, 200);
    pool.on('error', () => undefined);
    try {
      // learn the drain rate: 10 ms queries on one connection (at most ~100/s, slower on a busy machine)
      const warm = Array.from({ length: 60 }, () => pool.query('SELECT pg_sleep(0.01)').catch((e: unknown) => e));
      await warm[19];
      const finished: string[] = [];
      const burst = Array.from({ length: 60 }, (_, i) =>
        pool.query('SELECT pg_sleep(0.01)').then(
          () => {
            finished.push(`served ${i}`);
            return 'served';
          },
          (e: unknown) => {
            finished.push(`${e instanceof PoolQueueFullError ? 'refused' : 'timed out'} ${i}`);
            return e;
          },
        ),
      );
      const results = await Promise.all(burst);
      const waitingThen = pool.waitingCount;
      await Promise.all(warm);
      const refused = results.filter((r) => r instanceof PoolQueueFullError) as PoolQueueFullError[];
      // ~40 queries still ahead at <= 100/s: about 400 ms for every one of the burst
      expect(refused.length).toBe(60);
      for (const r of refused) {
        expect(r.expectedWaitMs).toBeGreaterThan(200);
        expect(classifyDbError(r)).toEqual({ reason: 'overloaded', retryAfterSeconds: 2 });
      }
      expect(finished.every((f) => f.startsWith('refused'))).toBe(true);
      // refused at once: the warm-up queue ahead of them was still waiting when all 60 had their answer
      expect(waitingThen).toBeGreaterThan(0);
    } finally {
      await pool.end();
    }
  });
});

describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL: a full connection queue', () => {
  const opened: TestApp[] = [];
  const clients: pg.Client[] = [];
  afterAll(async () => {
    for (const c of clients) await c.end().catch(() => undefined);
    for (const t of opened) await t.close().catch(() => undefined);
  });

  it('answers 503 service-unavailable + Retry-After at once (not after the 60 s pool timeout), and serves again when work drains', async () => {
    const t = await createTestApp({
      postgres: true,
      config: { db: { poolMax: 1, poolTimeoutMs: 60_000, poolQueueMax: 1, statementTimeoutMs: 30_000, lockTimeoutMs: 30_000, idleInTransactionTimeoutMs: 60_000 } },
    });
    opened.push(t);
    const s = await loginAs(t);
    const locker = new pg.Client({ connectionString: t.postgresUrl });
    clients.push(locker);
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE listings IN ACCESS EXCLUSIVE MODE');
    try {
      // the one pooled connection waits on the lock; a second request waits for that connection
      const holding = request(t.app).get(`${API}/listings`).set(s.headers).then((r) => r);
      await sleep(300);
      const queued = request(t.app).get(`${API}/user/me`).set(s.headers).then((r) => r);
      await sleep(300);
      const third = await Promise.race([request(t.app).get(`${API}/user/me`).set(s.headers), sleep(5_000).then(() => 'still queued' as const)]);
      expect(typeof third).not.toBe('string');
      const res = third as request.Response;
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.type).toBe('https://bazaar.dev/problems/service-unavailable');
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      await locker.query('ROLLBACK');
      expect((await holding).status).toBe(200);
      expect((await queued).status).toBe(200);
      expect((await request(t.app).get(`${API}/user/me`).set(s.headers)).status).toBe(200);
    } finally {
      await locker.query('ROLLBACK').catch(() => undefined);
    }
  });
});
