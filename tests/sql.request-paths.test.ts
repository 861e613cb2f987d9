/**
 * SQL statements per buyer on the request paths (issue 28 item 4): the SIWS login (POST
 * /auth/request_login + /auth/verify_login) and the order creation (POST /orders, wallet payment), counted
 * by the service itself (`Db.statements`, tests/helpers/sql-count.ts) on both engines. The real app with
 * the in-memory FakeChain and the simulated escrow program (tests/orders.fakes.ts): the chain costs no SQL.
 *
 * The counts are pinned (`<=`); docs/performance.md section 5 has the before/after table and what each
 * removed statement was. Before (main 9cf53cc): login 2 + 11, POST /orders 36 (first of a session) / 34 on
 * PGlite, 35 / 33 on PostgreSQL. PGlite sends one more statement per transaction (SET CONSTRAINTS ALL
 * IMMEDIATE before COMMIT). `SQL_COUNT_PRINT=1` prints every statement.
 */
import { randomUUID } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, createTestApp, signSiws, walletOf } from './helpers/app.js';
import { FakeChain } from './helpers/fake-chain.js';
import { FakeEscrow } from './orders.fakes.js';
import { createListing, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';
import { dbBackends } from './helpers/shared-db.js';
import { statementsDuring } from './helpers/sql-count.js';

const PRINT = process.env.SQL_COUNT_PRINT === '1';

describe.each(dbBackends)('SQL statements per buyer on the request paths ($name)', ({ name, postgres }) => {
  let t: TestApp;
  let seller: TestUser;
  const escrow = new FakeEscrow();

  beforeAll(async () => {
    escrow.now = Math.floor(Date.now() / 1000);
    const chain = Object.assign(new FakeChain(), { escrow: {} });
    t = await createTestApp({ chain: chain as never, postgres, orders: { ports: { escrow: () => escrow } } });
    seller = await user(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  async function login(kp = Keypair.generate()) {
    const wallet = walletOf(kp);
    const r1 = await statementsDuring(t.db, () => request(t.app).post(`${API}/auth/request_login`).send({ address: wallet }));
    expect(r1.result.status).toBe(200);
    const r2 = await statementsDuring(t.db, () => request(t.app).post(`${API}/auth/verify_login`).send(signSiws(kp, r1.result.body.sign_in_input)));
    expect(r2.result.status, JSON.stringify(r2.result.body)).toBe(200);
    return { r1, r2, headers: { authorization: `Bearer ${r2.result.body.access_token as string}` } };
  }

  function show(step: string, c: { count: number; sql: string[] }) {
    if (PRINT) console.log(`[${name}] ${step}: ${c.count}\n  ${c.sql.map((s) => s.replace(/\s+/g, ' ').slice(0, 220)).join('\n  ')}`);
  }

  // PGlite adds SET CONSTRAINTS ALL IMMEDIATE to each transaction it commits
  const perTx = name === 'PGlite' ? 1 : 0;

  it('login of a new wallet in at most 6 statements (request_login 2, verify_login 4: was 13), its profile the same as GET /user/me', async () => {
    const kp = Keypair.generate();
    const first = await login(kp);
    show('request_login (new wallet)', first.r1);
    show('verify_login (new wallet)', first.r2);
    expect(first.r1.count).toBeLessThanOrEqual(2);
    expect(first.r2.count).toBeLessThanOrEqual(4);
    // the statistics skipped for a new wallet are the ones GET /user/me reads
    const me = await request(t.app).get(`${API}/user/me`).set(first.headers);
    expect(me.status).toBe(200);
    expect(first.r2.result.body.user).toEqual(me.body);

    const again = await login(kp);
    show('request_login (returning)', again.r1);
    show('verify_login (returning)', again.r2);
    expect(again.r1.count).toBeLessThanOrEqual(2);
    // a returning wallet's statistics are read (6 statements from 4 modules)
    expect(again.r2.count).toBeLessThanOrEqual(10);
  });

  it('POST /orders (wallet payment) in at most 17 statements: 16 and the session read once in 1 (was 35 / 33; PGlite +1)', async () => {
    const buyer = await login();
    for (const step of ['first order', 'second order']) {
      const l = await createListing(t.app, seller);
      const c = await statementsDuring(t.db, () =>
        request(t.app).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', randomUUID()).send({ listing_id: l.listing_id }),
      );
      expect(c.result.status, JSON.stringify(c.result.body)).toBe(201);
      show(`POST /orders (${step})`, c);
      // the session's principal is read by the request after the principal cache's 5 s (the first one here,
      // and any later one on a slow machine): one statement, then the order's own 16
      const session = c.sql.filter((x) => /revoked_access_tokens/.test(x)).length;
      expect(session, c.sql.join('\n')).toBeLessThanOrEqual(1);
      expect(c.count - session, c.sql.join('\n')).toBeLessThanOrEqual(16 + perTx);
      // one transaction for the hold (the order row and its order.created event)
      expect(c.sql.filter((x) => x.trim() === 'BEGIN')).toHaveLength(1);
    }
  });

  it('the merged hold statements keep the limits under concurrency: 8 parallel orders of one buyer -> 3 held (the per-buyer cap), the rest 409 too-many-unpaid-orders; 6 buyers racing for one listing -> one hold', async () => {
    const buyer = await login();
    // distinct bodies: the same body posted again while its mint is unfinished resumes that listing (listings.service)
    const listings = await Promise.all(Array.from({ length: 8 }, (_, i) => createListing(t.app, seller, { title: `Race listing ${i} ${randomUUID().slice(0, 8)}` })));
    expect(new Set(listings.map((l) => l.listing_id)).size).toBe(8);
    const res = await Promise.all(
      listings.map((l) => request(t.app).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', randomUUID()).send({ listing_id: l.listing_id })),
    );
    expect(res.filter((r) => r.status === 201)).toHaveLength(t.ctx.config.orders.maxUnpaidOrdersPerBuyer);
    expect(res.filter((r) => r.status !== 201).map((r) => [r.status, r.body.type])).toEqual(
      Array(8 - t.ctx.config.orders.maxUnpaidOrdersPerBuyer).fill([409, 'https://bazaar.dev/problems/too-many-unpaid-orders']),
    );

    const one = await createListing(t.app, seller);
    const buyers = await Promise.all(Array.from({ length: 6 }, () => login()));
    const race = await Promise.all(
      buyers.map((b) => request(t.app).post(`${API}/orders`).set(b.headers).set('Idempotency-Key', randomUUID()).send({ listing_id: one.listing_id })),
    );
    expect(race.filter((r) => r.status === 201)).toHaveLength(1);
    expect(race.filter((r) => r.status !== 201).map((r) => [r.status, r.body.type])).toEqual(Array(5).fill([409, 'https://bazaar.dev/problems/listing-unavailable']));
  });
});
