/**
 * Database faults answer 503 with Retry-After, never 500 (issue 9 items 5 and 6; `database-unavailable` when the
 * database cannot be reached, issue 27, else `service-unavailable`):
 * the database gone (PGlite closed; PostgreSQL behind a TCP proxy that is cut), a lock held past
 * lock_timeout, statement_timeout set per connection, an exhausted pool; /readyz answers promptly
 * off the shared pool; a chain action that landed before the database write failed says so (its
 * signature) and converges without a second transaction.
 * PostgreSQL cases run when TEST_DATABASE_URL is set (CI sets it).
 */
import { randomUUID } from 'node:crypto';
import express from 'express';
import { Keypair } from '@solana/web3.js';
import pg from 'pg';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { classifyDbError } from '../server/src/db/errors.js';
import { ChainActionLandedError } from '../server/src/errors.js';
import { errorHandler } from '../server/src/http/problem.js';
import { createLogger } from '../server/src/logger.js';
import { MemoryOrdersRepo } from './helpers/memory-orders-repo.js';
import { OrdersService } from '../server/src/modules/orders/orders.service.js';
import { PaymentWatcher } from '../server/src/modules/orders/payment-watcher.js';
import { API, createTestApp, loginAs, type TestApp } from './helpers/app.js';
import { TEST_DATABASE_URL } from './helpers/db.js';
import { FakeChain } from './helpers/fake-chain.js';
import { tcpProxy } from './helpers/tcp-proxy.js';
import { listingBody } from './helpers/marketplace-fixtures.js';
import { FakeEscrow, FakeListings, testOrdersSettings, user } from './orders.fakes.js';

const PROBLEM = (slug: string) => `https://bazaar.dev/problems/${slug}`;

/** 503 problem `slug`: `database-unavailable` when the database cannot be reached, else `service-unavailable` */
function expect503(res: request.Response, slug: 'service-unavailable' | 'database-unavailable' = 'service-unavailable') {
  expect(res.status, JSON.stringify(res.body)).toBe(503);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body.type).toBe(PROBLEM(slug));
  expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  expect(res.body.detail).not.toMatch(/prisma|P\d{4}|ECONN/i);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('PGlite', () => {
  it('closed database: authenticated requests (the auth lookup) and writes answer 503 + Retry-After', async () => {
    const t = await createTestApp({ chain: new FakeChain() as never });
    try {
      const s = await loginAs(t);
      expect((await request(t.app).get(`${API}/user/me`).set(s.headers)).status).toBe(200);
      await t.db.pglite!.close();
      expect503(await request(t.app).get(`${API}/user/me`).set(s.headers), 'database-unavailable');
      expect503(await request(t.app).post(`${API}/listings`).set(s.headers).send(listingBody()), 'database-unavailable');
      expect503(await request(t.app).post(`${API}/auth/request_login`).send({ address: Keypair.generate().publicKey.toBase58() }), 'database-unavailable');
      const ready = await request(t.app).get('/readyz');
      expect(ready.status).toBe(503);
      expect(ready.body.checks.db.ok).toBe(false);
    } finally {
      await t.close();
    }
  });

  it('/readyz answers 503 within its timeout while a long transaction holds the database', async () => {
    const t = await createTestApp({ config: { readyTimeoutMs: 300 } });
    try {
      let release!: () => void;
      const held = t.db.pglite!.transaction(() => new Promise<void>((r) => (release = r)));
      await sleep(50);
      const outcome = await Promise.race([
        request(t.app).get('/readyz').then((r) => ({ status: r.status, db: r.body.checks?.db })),
        sleep(3_000).then(() => 'no answer while the database was held' as const),
      ]);
      release();
      await held;
      expect(outcome).toMatchObject({ status: 503, db: { ok: false } });
      expect((await request(t.app).get('/readyz')).status).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe('a chain action that landed before the database write failed', () => {
  const unreachable = () =>
    Object.assign(new Error('Can\'t reach database server'), {
      code: 'P1001',
      meta: { driverAdapterError: { cause: { kind: 'DatabaseNotReachable' } } },
    });

  it('the service error carries the signature; the intent stays sent and a retry converges without a second transaction', async () => {
    const repo = new MemoryOrdersRepo();
    const escrow = new FakeEscrow();
    const listings = new FakeListings();
    const usdc = { code: 'USDC', mint: Keypair.generate().publicKey.toBase58(), decimals: 6 };
    const service = new OrdersService({
      repo,
      escrow,
      listings,
      currency: (c) => (c === 'USDC' ? usdc : undefined),
      settings: testOrdersSettings({ reviewWindowSeconds: 3600, paymentTtlSeconds: 900, paymentGraceSeconds: 60, inflightWaitMs: 300 }),
    });
    const buyer = user(randomUUID(), Keypair.generate().publicKey.toBase58());
    const seller = user(randomUUID(), Keypair.generate().publicKey.toBase58());
    const listing = listings.add({ id: randomUUID(), sellerId: seller.userId!, sellerWallet: seller.wallet! });
    const { order } = await service.create(buyer, { listingId: listing.id });
    escrow.fund(service.fundTerms(order));
    await new PaymentWatcher({ service, repo }).runOnce();
    await service.deliver(seller, order.id);

    const confirmIntent = repo.confirmIntent.bind(repo);
    repo.confirmIntent = async () => {
      throw unreachable();
    };
    const err = await service.confirm(buyer, order.id).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ChainActionLandedError);
    const landed = (err as ChainActionLandedError).landed;
    const release = escrow.sent.find((x) => x.ix === 'release' && x.orderId === order.id)!;
    expect(landed).toEqual({ action: 'confirm', order_id: order.id, signature: release.signature });
    expect(classifyDbError((err as Error).cause)?.reason).toBe('unreachable');
    const open = await repo.openIntentFor(order.id);
    expect(open).toMatchObject({ status: 'sent', signature: release.signature });

    repo.confirmIntent = confirmIntent; // the database is back
    expect((await service.confirm(buyer, order.id)).status).toBe('completed');
    expect(escrow.count('release', order.id)).toBe(1);
  });

  it('answers 503 with chain_transaction when the database was down, 500 with it otherwise', async () => {
    const landed = { action: 'confirm', order_id: randomUUID(), signature: '5'.repeat(88) };
    const app = express();
    app.post('/db-down', () => {
      throw new ChainActionLandedError(unreachable(), landed);
    });
    app.post('/bug', () => {
      throw new ChainActionLandedError(new TypeError('x is undefined'), landed);
    });
    app.use(errorHandler(createLogger('silent')));
    const down = await request(app).post('/db-down');
    expect503(down, 'database-unavailable');
    expect(down.body.chain_transaction).toEqual(landed);
    expect(down.body.detail).toContain(landed.signature);
    const bug = await request(app).post('/bug');
    expect(bug.status).toBe(500);
    expect(bug.body.chain_transaction).toEqual(landed);
  });
});

describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL', () => {
  const opened: TestApp[] = [];
  const clients: pg.Client[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.end().catch(() => undefined);
  });
  afterAll(async () => {
    for (const t of opened) await t.close().catch(() => undefined);
  });
  const app = async (over: Parameters<typeof createTestApp>[0] = {}) => {
    const t = await createTestApp({ postgres: true, chain: new FakeChain() as never, ...over });
    opened.push(t);
    return t;
  };
  const locker = async (t: TestApp, table: string) => {
    const c = new pg.Client({ connectionString: t.postgresUrl });
    clients.push(c);
    await c.connect();
    await c.query('BEGIN');
    await c.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    return async () => {
      await c.query('ROLLBACK');
    };
  };

  let proxy: Awaited<ReturnType<typeof tcpProxy>>;
  beforeAll(async () => {
    proxy = await tcpProxy(new URL(TEST_DATABASE_URL!));
  });

  it('server gone: authenticated requests and writes answer 503 + Retry-After, and recover when it is back', async () => {
    const t = await app({ postgresUrl: (u) => proxy.url(u) });
    const s = await loginAs(t);
    expect((await request(t.app).get(`${API}/user/me`).set(s.headers)).status).toBe(200);
    await proxy.cut();
    try {
      for (let i = 0; i < 3; i++) expect503(await request(t.app).get(`${API}/user/me`).set(s.headers), 'database-unavailable');
      expect503(await request(t.app).patch(`${API}/user/me`).set(s.headers).send({ bio: 'x' }), 'database-unavailable');
      expect503(await request(t.app).get(`${API}/listings`).set(s.headers), 'database-unavailable');
      expect((await request(t.app).get('/readyz')).status).toBe(503);
    } finally {
      await proxy.restore();
    }
    expect((await request(t.app).get(`${API}/user/me`).set(s.headers)).status).toBe(200);
    expect((await request(t.app).get('/readyz')).status).toBe(200);
  });

  it('every pooled connection starts with the configured statement, lock and idle-in-transaction timeouts', async () => {
    const t = await app({ config: { db: { poolMax: 3, poolTimeoutMs: 1000, statementTimeoutMs: 400, lockTimeoutMs: 250, idleInTransactionTimeoutMs: 5000 } } });
    const rows = await t.ctx.db.$queryRaw<Array<{ s: string; l: string; i: string }>>`
      SELECT current_setting('statement_timeout') AS s, current_setting('lock_timeout') AS l,
             current_setting('idle_in_transaction_session_timeout') AS i`;
    expect(rows[0]).toEqual({ s: '400ms', l: '250ms', i: '5s' });
    const err = await t.ctx.db.$queryRawUnsafe('SELECT pg_sleep(2)::text').then(
      () => null,
      (e: unknown) => e,
    );
    expect(classifyDbError(err)).toMatchObject({ reason: 'timeout' });
  });

  it('a lock held past lock_timeout answers 503, not a wait as long as the lock', async () => {
    const t = await app({ config: { db: { poolMax: 4, poolTimeoutMs: 1000, statementTimeoutMs: 5000, lockTimeoutMs: 300, idleInTransactionTimeoutMs: 60000 } } });
    const s = await loginAs(t);
    const unlock = await locker(t, 'listings');
    try {
      const outcome = await Promise.race([
        request(t.app).post(`${API}/listings`).set(s.headers).send(listingBody()),
        sleep(4_000).then(() => 'still waiting for the lock' as const),
      ]);
      expect(typeof outcome).not.toBe('string');
      expect503(outcome as request.Response);
    } finally {
      await unlock();
    }
    expect((await request(t.app).post(`${API}/listings`).set(s.headers).send(listingBody())).status).toBe(201);
  });

  it('an exhausted pool: requests get 503 after the pool timeout, /readyz still answers on its own connection', async () => {
    const t = await app({
      config: { readyTimeoutMs: 1000, db: { poolMax: 2, poolTimeoutMs: 500, statementTimeoutMs: 10000, lockTimeoutMs: 8000, idleInTransactionTimeoutMs: 60000 } },
    });
    const s = await loginAs(t);
    const unlock = await locker(t, 'listings');
    try {
      // two requests wait on the lock and hold both pooled connections
      const blocked = [0, 1].map(() => request(t.app).get(`${API}/listings`).set(s.headers).then((r) => r));
      await sleep(300);
      const ready = await Promise.race([
        request(t.app).get('/readyz').then((r) => r.status),
        sleep(3_000).then(() => 'no answer while the pool was exhausted' as const),
      ]);
      expect(ready).toBe(200);
      // a third request finds no free connection
      const third = await Promise.race([
        request(t.app).get(`${API}/user/me`).set(s.headers),
        sleep(4_000).then(() => 'still queued' as const),
      ]);
      expect(typeof third).not.toBe('string');
      expect503(third as request.Response);
      await unlock();
      for (const r of await Promise.all(blocked)) expect(r.status).toBe(200);
    } finally {
      await unlock().catch(() => undefined);
    }
  });
});
