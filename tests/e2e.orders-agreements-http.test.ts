/**
 * Revisions, deadline extensions and settlement by agreement over HTTP (issue 24 items 2-4): the real app on
 * PGlite and PostgreSQL (the Prisma repository, the events outbox, the chat module, the Idempotency-Key middleware) with
 * the simulated escrow program of tests/orders.fakes.ts as the orders module's escrow port (the program's
 * agreement instructions come with the escrow v2 branch; tests/localnet.lifecycle-conformance.test.ts runs
 * them on the localnet once merged). Problem types, roles, Idempotency-Key replays,
 * the events in the outbox and the revision message in the order's conversation.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Order } from '@bazaar/contract';
import { API, createListing, expectProblem, insertOrder, setListingStatus, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';
import { createTestApp } from './helpers/app.js';
import { FakeChain } from './helpers/fake-chain.js';
import { FakeEscrow } from './orders.fakes.js';
import { dbBackends } from './helpers/shared-db.js';

let t: TestApp;
let alice: TestUser; // buyer
let bob: TestUser; // seller
let carol: TestUser; // stranger
const escrow = new FakeEscrow();
let keys = 0;
const key = () => `agreements-${++keys}`;

/** An order of Alice's for Bob's listing, funded in the fake escrow, in `status` (in_progress or delivered). */
async function fundedOrder(status: 'in_progress' | 'delivered' = 'in_progress', revisions = 0): Promise<string> {
  const l = await createListing(t.app, bob);
  await setListingStatus(t.ctx.db, l.listing_id, 'reserved');
  const id = await insertOrder(t.ctx.db, { listingId: l.listing_id, buyerId: alice.userId, sellerId: bob.userId, status: 'in_progress' });
  await t.ctx.db.$executeRaw`UPDATE orders SET revisions_included = ${revisions}, funded_at = now() WHERE id = ${id}::uuid`;
  const o = (await request(t.app).get(`${API}/orders/${id}`).set(alice.headers).expect(200)).body as Order;
  escrow.fund({
    orderId: id,
    buyer: alice.wallet,
    seller: bob.wallet,
    mint: o.payment_mint,
    amount: BigInt(o.amount_base_units),
    deliveryDeadline: Date.parse(o.delivery_deadline) / 1000,
    reviewWindow: o.review_window_seconds,
    expiresAt: escrow.now + 900,
  });
  if (status === 'delivered') await request(t.app).post(`${API}/orders/${id}/deliver`).set(bob.headers).expect(200);
  return id;
}
const post = (who: TestUser, path: string, body: object = {}, k: string | null = key()) => {
  const r = request(t.app).post(`${API}${path}`).set(who.headers);
  return (k === null ? r : r.set('Idempotency-Key', k)).send(body);
};
const eventTypes = async (id: string) =>
  ((await request(t.app).get(`${API}/events?resource_id=${id}`).set(alice.headers).expect(200)).body.data as Array<{ type: string }>).map((e) => e.type);

describe.each(dbBackends)('agreements over HTTP on $name', ({ postgres }) => {
  beforeAll(async () => {
    escrow.now = Math.floor(Date.now() / 1000);
    escrow.feeBpsValue = 100; // the fee snapshot of the orders insertOrder writes
    // the orders module exists with a chain that has an escrow; its port is the simulated program
    const chain = Object.assign(new FakeChain(), { escrow: {} });
    t = await createTestApp({ chain: chain as never, postgres, orders: { ports: { escrow: () => escrow } } });
    [alice, bob, carol] = await Promise.all([user(t), user(t), user(t)]);
  });

  afterAll(async () => {
    await t?.close();
  });

  describe('settlement by agreement over HTTP', () => {
    it('propose (Idempotency-Key required, replayed once), the adversaries refused with stable types, accept pays the named split: resolved by agreement, events in the outbox', async () => {
      const id = await fundedOrder('delivered');
      expectProblem(await post(bob, `/orders/${id}/settlement`, { buyer_bps: 3000 }, null), 400, 'idempotency-key-missing');
      const k = key();
      const proposed = await post(bob, `/orders/${id}/settlement`, { buyer_bps: 3000 }, k);
      expect(proposed.status, JSON.stringify(proposed.body)).toBe(200);
      const order = (proposed.body as Order);
      // 25.5 USDC, fee 100 bps on the seller's share only
      expect(order.settlement_proposal).toMatchObject({
        proposed_by: 'seller',
        buyer_bps: 3000,
        preview: { buyer_base_units: '7650000', seller_base_units: '17671500', treasury_base_units: '178500' },
      });
      const replay = await post(bob, `/orders/${id}/settlement`, { buyer_bps: 3000 }, k);
      expect(replay.status).toBe(200);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(escrow.count('propose_settlement', id)).toBe(1);
      expectProblem(await post(bob, `/orders/${id}/settlement`, { buyer_bps: 2000 }, k), 422, 'idempotency-key-reused');

      expectProblem(await post(carol, `/orders/${id}/settlement/accept`, { buyer_bps: 3000 }), 404, 'not-found');
      expectProblem(await post(bob, `/orders/${id}/settlement/accept`, { buyer_bps: 3000 }), 403, 'forbidden');
      expectProblem(await post(alice, `/orders/${id}/settlement/accept`, { buyer_bps: 2000 }), 409, 'proposal-changed');
      expectProblem(await post(alice, `/orders/${id}/settlement/accept`, { buyer_bps: 10_001 }), 400, 'validation-error', ['body.buyer_bps']);
      expectProblem(await post(alice, `/orders/${id}/settlement/withdraw`), 403, 'forbidden');
      expect(escrow.count('accept_settlement', id)).toBe(0);

      const accepted = await post(alice, `/orders/${id}/settlement/accept`, { buyer_bps: 3000 });
      expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
      expect((accepted.body as Order)).toMatchObject({
        status: 'resolved',
        settled_by: 'agreement',
        resolution: { buyer_bps: 3000 },
        settlement_proposal: null,
        payout: { buyer_base_units: '7650000', seller_base_units: '17671500', treasury_base_units: '178500' },
      });
      expectProblem(await post(bob, `/orders/${id}/settlement`, { buyer_bps: 0 }), 409, 'invalid-state-transition');
      expect(await eventTypes(id)).toEqual(expect.arrayContaining(['order.delivered', 'settlement.proposed', 'settlement.accepted']));
    });

    it('a dispute does not stop it: proposed, disputed, accepted during the dispute', async () => {
      const id = await fundedOrder();
      expect((await post(alice, `/orders/${id}/settlement`, { buyer_bps: 10_000 })).status).toBe(200);
      await request(t.app).post(`${API}/orders/${id}/dispute`).set(bob.headers).send({ reason: 'I would rather not cancel' }).expect(200);
      const got = (await request(t.app).get(`${API}/orders/${id}`).set(bob.headers).expect(200)).body as Order;
      expect(got.allowed_actions).toContain('accept_settlement');
      const accepted = await post(bob, `/orders/${id}/settlement/accept`, { buyer_bps: 10_000 });
      expect(accepted.body).toMatchObject({ status: 'resolved', settled_by: 'agreement', payout: { buyer_base_units: '25500000', treasury_base_units: '0' } });
    });
  });

  describe('the per-milestone routes on a one-milestone order', () => {
    it('index 1 is the order itself (propose, withdraw, propose again, accept: one escrow, the order-level fields and milestones[0] agree); index 2 is 404 not-found, never a 500', async () => {
      const id = await fundedOrder();
      expectProblem(await post(bob, `/orders/${id}/milestones/2/settlement`, { buyer_bps: 1000 }), 404, 'not-found');
      expectProblem(await post(alice, `/orders/${id}/milestones/2/revision`, { message: 'x' }), 404, 'not-found');
      expectProblem(await post(bob, `/orders/${id}/milestones/1/settlement`, { buyer_bps: 1000 }, null), 400, 'idempotency-key-missing');
      expect((await post(bob, `/orders/${id}/milestones/1/settlement`, { buyer_bps: 1000 })).status).toBe(200);
      expect((await post(bob, `/orders/${id}/milestones/1/settlement/withdraw`)).status).toBe(200);
      const proposed = (await post(alice, `/orders/${id}/milestones/1/settlement`, { buyer_bps: 2000 })).body as Order;
      expect(proposed.settlement_proposal).toMatchObject({ proposed_by: 'buyer', buyer_bps: 2000 });
      expect(proposed.milestones[0]!.settlement_proposal).toEqual(proposed.settlement_proposal);
      expectProblem(await post(alice, `/orders/${id}/milestones/1/settlement/accept`, { buyer_bps: 2000 }), 403, 'forbidden');
      const accepted = await post(bob, `/orders/${id}/milestones/1/settlement/accept`, { buyer_bps: 2000 });
      expect(accepted.body).toMatchObject({ status: 'resolved', settled_by: 'agreement', resolution: { buyer_bps: 2000 } });
      expect(escrow.count('accept_settlement', id)).toBe(1);
    });
  });

  describe('expiry in the database (the Prisma repository)', () => {
    it('an expired extension and an expired settlement: 409 proposal-expired, hidden, and each *.expired event written once by the sweep', async () => {
      const id = await fundedOrder();
      const o = (await request(t.app).get(`${API}/orders/${id}`).set(bob.headers).expect(200)).body as Order;
      const later = new Date(Date.parse(o.delivery_deadline) + 86_400_000).toISOString();
      expect((await post(bob, `/orders/${id}/extension`, { new_deadline: later })).status).toBe(200);
      expect((await post(bob, `/orders/${id}/settlement`, { buyer_bps: 1000 })).status).toBe(200);
      // the extension's TTL passed on the service clock (moving the app's clock would expire the sessions too)
      await t.ctx.db.$executeRaw`UPDATE orders SET extension_expires_at = now() - interval '1 second' WHERE id = ${id}::uuid`;
      escrow.advance(259_200); // the settlement's TTL on the chain clock
      expectProblem(await post(alice, `/orders/${id}/extension/accept`, { new_deadline: later }), 409, 'proposal-expired');
      expectProblem(await post(alice, `/orders/${id}/settlement/accept`, { buyer_bps: 1000 }), 409, 'proposal-expired');
      const hidden = (await request(t.app).get(`${API}/orders/${id}`).set(alice.headers).expect(200)).body as Order;
      expect([hidden.extension_proposal, hidden.settlement_proposal]).toEqual([null, null]);
      const crank = t.services.orders!.autoRelease;
      expect((await crank.runOnce()).expired.filter((e) => e.startsWith(id)).sort()).toEqual([`${id}:extension.expired`, `${id}:settlement.expired`]);
      expect((await crank.runOnce()).expired.filter((e) => e.startsWith(id))).toEqual([]);
      const types = await eventTypes(id);
      expect(types.filter((x) => x.endsWith('.expired')).sort()).toEqual(['extension.expired', 'settlement.expired']);
      expect(escrow.count('accept_settlement', id) + escrow.count('extend_deadline', id)).toBe(0);
    });
  });

  describe('revisions and extensions over HTTP', () => {
    it('a revision posts its message into the order\'s conversation; beyond the limit 409 revision-limit-reached; the seller 403', async () => {
      const id = await fundedOrder('delivered', 1);
      expectProblem(await post(bob, `/orders/${id}/revision`, { message: 'make it blue' }), 403, 'forbidden');
      expectProblem(await post(alice, `/orders/${id}/revision`, { message: '' }), 400, 'validation-error', ['body.message']);
      const r = await post(alice, `/orders/${id}/revision`, { message: 'make it blue' });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect((r.body as Order)).toMatchObject({ status: 'in_progress', revisions_included: 1, revisions_used: 1, delivered_at: null, auto_release_at: null });
      const chat = (await request(t.app).get(`${API}/orders/${id}/messages`).set(bob.headers).expect(200)).body.data as Array<{ body: string }>;
      expect(chat.map((m) => m.body)).toContain('Revision requested: make it blue');
      await request(t.app).post(`${API}/orders/${id}/deliver`).set(bob.headers).expect(200);
      const over = await post(alice, `/orders/${id}/revision`, { message: 'and green' });
      expectProblem(over, 409, 'revision-limit-reached');
      expect(over.body).toMatchObject({ revisions_included: 1, revisions_used: 1 });
      expect(await eventTypes(id)).toContain('revision.requested');
    });

    it('an extension: earlier deadline 400, the buyer accepts the named one', async () => {
      const id = await fundedOrder();
      const o = (await request(t.app).get(`${API}/orders/${id}`).set(bob.headers).expect(200)).body as Order;
      const later = new Date(Date.parse(o.delivery_deadline) + 2 * 86_400_000).toISOString();
      expectProblem(await post(bob, `/orders/${id}/extension`, { new_deadline: o.delivery_deadline }), 400, 'validation-error', ['body.new_deadline']);
      expectProblem(await post(alice, `/orders/${id}/extension/accept`, { new_deadline: later }), 409, 'no-pending-proposal');
      const proposed = await post(bob, `/orders/${id}/extension`, { new_deadline: later, message: 'the client is away' });
      expect(proposed.status, JSON.stringify(proposed.body)).toBe(200);
      expect((proposed.body as Order).extension_proposal).toMatchObject({ new_deadline: later, message: 'the client is away', proposed_by: 'seller' });
      expectProblem(await post(bob, `/orders/${id}/extension/accept`, { new_deadline: later }), 403, 'forbidden');
      const accepted = await post(alice, `/orders/${id}/extension/accept`, { new_deadline: later });
      expect(accepted.body).toMatchObject({ delivery_deadline: later, extension_proposal: null });
      expect(escrow.accounts.get(id)!.deliveryDeadline).toBe(Date.parse(later) / 1000);
      expect(await eventTypes(id)).toEqual(expect.arrayContaining(['extension.proposed', 'extension.accepted']));
    });
  });
});
