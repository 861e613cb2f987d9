/**
 * SQL statements per buyer on the request paths (issue 28 item 4): the SIWS login (POST
 * /auth/request_login + /auth/verify_login) and the order creation (POST /orders, wallet payment), counted
 * by the service itself (`Db.statements`, tests/helpers/sql-count.ts) on both engines. The real app with
 * the in-memory FakeChain and the simulated escrow program (tests/orders.fakes.ts): the chain costs no SQL.
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

  it('login (request_login + verify_login), first and returning', async () => {
    const kp = Keypair.generate();
    const first = await login(kp);
    show('request_login (new wallet)', first.r1);
    show('verify_login (new wallet)', first.r2);
    const again = await login(kp);
    show('request_login (returning)', again.r1);
    show('verify_login (returning)', again.r2);
  });

  it('order creation (POST /orders, wallet payment), first order of a buyer and a later one', async () => {
    const buyer = await login();
    for (const step of ['first order', 'second order']) {
      const l = await createListing(t.app, seller);
      const c = await statementsDuring(t.db, () =>
        request(t.app).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', randomUUID()).send({ listing_id: l.listing_id }),
      );
      expect(c.result.status, JSON.stringify(c.result.body)).toBe(201);
      show(`POST /orders (${step})`, c);
    }
  });
});
