/**
 * The bounded queue for database work (db/postgres.ts BoundedPool, DB_POOL_QUEUE_MAX): past
 * capacity a query fails at once with a 503 + Retry-After instead of waiting in an unbounded queue
 * (issue 14: "no 500 under any load").
 */
import net from 'node:net';
import pg from 'pg';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyDbError } from '../server/src/db/errors.js';
import { BoundedPool, PoolQueueFullError } from '../server/src/db/postgres.js';
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
