/**
 * Payment detection's statements and waits (issue 28 item 4): the payment watcher reads the rows of a batch of
 * notified orders in one statement, reads the escrow accounts it was not told in one batch read
 * (getMultipleAccounts), and funds each order in ONE transaction (the row, the fund transaction's record, the
 * listing's move and both events, order.funded first); POST /orders/{id}/payment reads the order once. A
 * notification that arrives while another order's check is slow is checked at once, not after it. The real
 * app on PGlite and PostgreSQL with the simulated escrow program (tests/orders.fakes.ts).
 */
import { Keypair } from '@solana/web3.js';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Order } from '@bazaar/contract';
import { createTestApp, loginAs } from './helpers/app.js';
import { API, createListing, type TestApp } from './helpers/marketplace-fixtures.js';
import { FakeChain } from './helpers/fake-chain.js';
import { eventually } from './helpers/eventually.js';
import { dbBackends } from './helpers/shared-db.js';
import { statementsDuring } from './helpers/sql-count.js';
import { FakeEscrow } from './orders.fakes.js';

/** The FakeEscrow with the chain reads the real port batches: a fund signature per order, several accounts at once (counted). */
class BatchingEscrow extends FakeEscrow {
  batchReads: string[][] = [];
  /** order ids whose fund-signature lookup waits until released */
  heldSignatures = new Map<string, Promise<void>>();
  async findFundSignature(id: string) {
    await this.heldSignatures.get(id);
    return { signature: `fund-${id}`, slot: 7 };
  }
  async fetchOrders(ids: readonly string[]) {
    this.batchReads.push([...ids]);
    return new Map(await Promise.all(ids.map(async (id) => [id, await this.fetchOrder(id)] as const)));
  }
}

describe.each(dbBackends)('payment detection statements on $name', ({ postgres }) => {
  let t: TestApp;
  let escrow: BatchingEscrow;
  let buyer: Awaited<ReturnType<typeof loginAs>>;
  let seller: Awaited<ReturnType<typeof loginAs>>;
  let n = 0;
  // PGlite adds SET CONSTRAINTS ALL IMMEDIATE before each COMMIT (db/pglite.ts)
  const perCommit = postgres ? 0 : 1;

  const newOrder = async () => {
    const l = await createListing(t.app, seller as never);
    const created = await request(t.app).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', `sql-${++n}`).send({ listing_id: l.listing_id });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return created.body as Order & { payment: { transaction: string } };
  };
  /** the buyer's wallet funds the escrow itself (not through the API) */
  const fund = (o: Order) =>
    escrow.fund({
      orderId: o.order_id,
      buyer: buyer.wallet,
      seller: seller.wallet,
      mint: o.payment_mint,
      amount: BigInt(o.amount_base_units),
      deliveryDeadline: Date.parse(o.delivery_deadline) / 1000,
      reviewWindow: o.review_window_seconds,
      expiresAt: escrow.now + 900,
    });
  const status = async (id: string) => ((await request(t.app).get(`${API}/orders/${id}`).set(buyer.headers).expect(200)).body as Order).status;

  beforeAll(async () => {
    escrow = new BatchingEscrow();
    const chain = Object.assign(new FakeChain(), { escrow: {} });
    // one buyer holds every unpaid order of the suite
    t = await createTestApp({ chain: chain as never, postgres, orders: { maxUnpaidOrdersPerBuyer: 100, maxUnpaidOrdersPerIp: 100, ports: { escrow: () => escrow } } });
    [buyer, seller] = [await loginAs(t, Keypair.generate()), await loginAs(t, Keypair.generate())];
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('a notified order is funded with one read for the batch and one transaction: row, fund record, listing, order.funded then the listing event', async () => {
    const o = await newOrder();
    fund(o);
    const watcher = t.services.orders!.watcher;
    watcher.noteOrder(o.order_id, await escrow.fetchOrder(o.order_id));
    const pass = await statementsDuring(t.db, () => watcher.runTargeted());
    expect(pass.result.funded).toEqual([o.order_id]);
    // today's main: 32 (the row read twice with its parties, the funding, the listing and the fund record in four transactions)
    expect(pass.sql.filter((s) => s.trim() === 'BEGIN')).toHaveLength(1);
    expect(pass.count, pass.sql.join('\n')).toBeLessThanOrEqual(15 + perCommit);
    expect(await status(o.order_id)).toBe('in_progress');
    // the events as before: order.funded (with the fund signature), then the listing's move, once each
    const events = (await request(t.app).get(`${API}/events?limit=100`).set(seller.headers).expect(200)).body.data as Array<{ type: string; resource_id: string; signature: string | null }>;
    // newest first
    const mine = events.filter((e) => e.resource_id === o.order_id || e.resource_id === o.listing_id).reverse();
    expect(mine.map((e) => e.type)).toEqual(['listing.created', 'order.created', 'order.funded', 'listing.reserved']);
    expect(mine[2]!.signature).toBe(`fund-${o.order_id}`);
    // the fund transaction recorded once, and a second notification writes nothing
    const order = (await request(t.app).get(`${API}/orders/${o.order_id}`).set(buyer.headers).expect(200)).body as Order;
    expect(order.transactions.filter((x) => x.signature === `fund-${o.order_id}`)).toHaveLength(1);
    watcher.noteOrder(o.order_id, await escrow.fetchOrder(o.order_id));
    const again = await statementsDuring(t.db, () => watcher.runTargeted());
    expect(again.result.funded).toEqual([]);
    expect(again.sql.some((s) => /^\s*(INSERT|UPDATE)/.test(s))).toBe(false);
  });

  it('a batch of notified orders: one read of their rows, one batch read of the accounts not notified, one transaction each', async () => {
    const orders = [await newOrder(), await newOrder(), await newOrder(), await newOrder()];
    for (const o of orders) fund(o);
    const watcher = t.services.orders!.watcher;
    // two carried their account, two did not (undecodable): those are read together
    watcher.noteOrder(orders[0]!.order_id, await escrow.fetchOrder(orders[0]!.order_id));
    watcher.noteOrder(orders[1]!.order_id, await escrow.fetchOrder(orders[1]!.order_id));
    watcher.noteOrder(orders[2]!.order_id, null);
    watcher.noteOrder(orders[3]!.order_id, null);
    escrow.batchReads = [];
    const pass = await statementsDuring(t.db, () => watcher.runTargeted());
    expect(pass.result.funded.sort()).toEqual(orders.map((o) => o.order_id).sort());
    expect(escrow.batchReads.map((ids) => [...ids].sort())).toEqual([[orders[2]!.order_id, orders[3]!.order_id].sort()]);
    expect(pass.sql.filter((s) => s.trim() === 'BEGIN')).toHaveLength(4);
    // today's main: 4 x 30
    expect(pass.count, pass.sql.join('\n')).toBeLessThanOrEqual(1 + 4 * (14 + perCommit));
  });

  it('the full pass reads the unpaid orders in one statement and their accounts in one batch read', async () => {
    const orders = [await newOrder(), await newOrder()];
    fund(orders[0]!);
    escrow.batchReads = [];
    const pass = await statementsDuring(t.db, () => t.services.orders!.watcher.runOnce());
    expect(pass.result.funded).toEqual([orders[0]!.order_id]);
    expect(escrow.batchReads).toHaveLength(1);
    expect(escrow.batchReads[0]).toEqual(expect.arrayContaining(orders.map((o) => o.order_id)));
    expect(pass.sql.filter((s) => /FROM "public"."orders"/.test(s) && /"status" = \$1/.test(s))).toHaveLength(1);
  });

  it('POST /orders/{id}/payment reads the order once', async () => {
    const o = await newOrder();
    const refresh = await statementsDuring(t.db, () => request(t.app).post(`${API}/orders/${o.order_id}/payment`).set(buyer.headers));
    expect(refresh.result.status, JSON.stringify(refresh.result.body)).toBe(200);
    // today's main: 10 (the order and both parties read three times)
    expect(refresh.sql.filter((s) => /FROM "public"."orders"/.test(s)), refresh.sql.join('\n')).toHaveLength(1);
    expect(refresh.sql.filter((s) => /FROM "public"."users"/.test(s))).toHaveLength(0);
  });

  it('a notification is checked at once while another order\'s check is slow (no pass waits for another)', async () => {
    const [slow, quick] = [await newOrder(), await newOrder()];
    fund(slow);
    fund(quick);
    let release!: () => void;
    escrow.heldSignatures.set(slow.order_id, new Promise<void>((r) => (release = r)));
    const watcher = t.services.orders!.watcher;
    watcher.start(3_600_000);
    try {
      watcher.noteOrder(slow.order_id, await escrow.fetchOrder(slow.order_id));
      await eventually(async () => (watcher.stats().pending === 0 ? true : undefined), { what: 'the slow order taken by a batch' });
      watcher.noteOrder(quick.order_id, await escrow.fetchOrder(quick.order_id));
      await eventually(async () => ((await status(quick.order_id)) === 'in_progress' ? true : undefined), { what: 'the second order funded while the first is held' });
      expect(await status(slow.order_id)).toBe('awaiting_payment');
      release();
      await eventually(async () => ((await status(slow.order_id)) === 'in_progress' ? true : undefined), { what: 'the slow order funded once released' });
    } finally {
      release();
      await watcher.stop();
    }
  });
});
