/**
 * The order read model (issue 23 item 1, server/src/modules/orders/order-view.ts):
 *  - `nextStepOf` over every order status and the deadlines that split them (pure);
 *  - what an order shows besides its row (listing title and category, both parties' names and ratings,
 *    the published review) read from the database, and the statements a page costs: the same for a
 *    page of 1 order and of 12 (counted at the driver), so no per-order query (N+1).
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NEXT_STEP_AFTER_DUE, NEXT_STEP_KINDS, ORDER_STATUSES, Order, OrderNextStep, type OrderStatus } from '@bazaar/contract';
import { nextStepOf } from '../server/src/modules/orders/order-view.js';
import { OrdersService } from '../server/src/modules/orders/orders.service.js';
import { PrismaOrdersRepo } from '../server/src/modules/orders/orders.repo.js';
import { FakeEscrow, FakeListings, testOrdersSettings, user as principal } from './orders.fakes.js';
import { API, createListing, insertOrder, setListingStatus, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';
import { createTestApp } from './helpers/app.js';
import { FakeChain } from './helpers/fake-chain.js';
import { dbBackends } from './helpers/shared-db.js';

const T = Date.parse('2026-06-01T12:00:00.000Z');
const S = T / 1000;
const GRACE = 120;
const base = {
  paymentSource: 'wallet' as const,
  paymentExpiresAt: new Date(T + 900_000),
  deliveryDeadline: S + 3 * 86_400,
  deliveredAt: null as Date | null,
  autoReleaseAt: null as Date | null,
};
const at = (ms: number) => ({ serviceMs: ms, chainSeconds: Math.floor(ms / 1000) });
const iso = (ms: number) => new Date(ms).toISOString();

describe('nextStepOf: who acts next, by when, and what the timers do then', () => {
  it('awaiting_payment: the buyer pays before payment_expires_at, then the hold lapses; custodial: the service confirms', () => {
    const o = { ...base, status: 'awaiting_payment' as const };
    expect(nextStepOf(o, at(T), GRACE)).toEqual({ actor: 'buyer', kind: 'pay', due_at: iso(T + 900_000), after_due: 'hold_lapses' });
    expect(nextStepOf(o, at(T + 900_000), GRACE)).toEqual({
      actor: 'system',
      kind: 'expire',
      due_at: iso(T + 900_000 + GRACE * 1000),
      after_due: 'hold_lapses',
    });
    expect(nextStepOf({ ...o, paymentSource: 'custodial' }, at(T), GRACE)).toEqual({ actor: 'system', kind: 'confirm_payment', due_at: null, after_due: null });
  });

  it('in_progress: the seller delivers by delivery_deadline (chain clock), after it the buyer may refund', () => {
    const o = { ...base, status: 'in_progress' as const };
    const deadline = o.deliveryDeadline * 1000;
    expect(nextStepOf(o, at(T), GRACE)).toEqual({ actor: 'seller', kind: 'deliver', due_at: iso(deadline), after_due: 'buyer_may_refund' });
    // the deadline itself still belongs to the seller (the refund rule is "after")
    expect(nextStepOf(o, at(deadline), GRACE).kind).toBe('deliver');
    expect(nextStepOf(o, at(deadline + 1000), GRACE)).toEqual({ actor: 'buyer', kind: 'refund_available', due_at: null, after_due: null });
    // the chain clock decides, not the service clock
    expect(nextStepOf(o, { serviceMs: T, chainSeconds: o.deliveryDeadline + 1 }, GRACE).kind).toBe('refund_available');
  });

  it('delivered: the buyer confirms or disputes before auto_release_at, from it the service releases', () => {
    const release = T + 86_400_000;
    const o = { ...base, status: 'delivered' as const, deliveredAt: new Date(T), autoReleaseAt: new Date(release) };
    expect(nextStepOf(o, at(T + 1000), GRACE)).toEqual({ actor: 'buyer', kind: 'confirm_or_dispute', due_at: iso(release), after_due: 'auto_release' });
    expect(nextStepOf(o, at(release), GRACE)).toEqual({ actor: 'system', kind: 'auto_release', due_at: iso(release), after_due: null });
  });

  it('disputed: the arbiter decides; while an undelivered order\'s deadline is ahead the buyer may refund from it', () => {
    const deadline = base.deliveryDeadline * 1000;
    const undelivered = { ...base, status: 'disputed' as const };
    expect(nextStepOf(undelivered, at(T), GRACE)).toEqual({ actor: 'arbiter', kind: 'arbiter_decides', due_at: iso(deadline), after_due: 'buyer_may_refund' });
    expect(nextStepOf(undelivered, at(deadline + 1000), GRACE)).toEqual({ actor: 'arbiter', kind: 'arbiter_decides', due_at: null, after_due: null });
    const onTime = { ...undelivered, deliveredAt: new Date(T + 1000), autoReleaseAt: new Date(T + 86_400_000) };
    expect(nextStepOf(onTime, at(T + 2000), GRACE)).toEqual({ actor: 'arbiter', kind: 'arbiter_decides', due_at: null, after_due: null });
  });

  it('covers every status with a step the contract accepts; terminal statuses are done', () => {
    const seen = new Set<string>();
    for (const status of ORDER_STATUSES) {
      for (const now of [T, base.deliveryDeadline * 1000 + 1000]) {
        const o = { ...base, status, deliveredAt: status === 'delivered' ? new Date(T) : null, autoReleaseAt: status === 'delivered' ? new Date(T + 3_600_000) : null };
        const step = nextStepOf(o, at(now), GRACE);
        expect(OrderNextStep.parse(step)).toEqual(step);
        expect(step.due_at === null ? step.after_due : 'dated', status).not.toBe(undefined);
        if (step.due_at === null) expect(step.after_due, status).toBeNull();
        seen.add(step.kind);
        if ((['completed', 'resolved', 'refunded', 'expired'] as OrderStatus[]).includes(status)) {
          expect(step, status).toEqual({ actor: 'none', kind: 'done', due_at: null, after_due: null });
        }
      }
    }
    seen.add('confirm_payment'); // custodial only, asserted above
    expect([...seen].sort()).toEqual([...NEXT_STEP_KINDS].sort());
    expect(NEXT_STEP_AFTER_DUE).toEqual(['hold_lapses', 'auto_release', 'buyer_may_refund']);
  });
});

describe.each(dbBackends)('order context from the database on $name', ({ postgres }) => {
  let t: TestApp;
  let app: TestApp['app'];
  let db: TestApp['ctx']['db'];
  let alice: TestUser;
  let bob: TestUser;
  let service: OrdersService;

  beforeAll(async () => {
    t = await createTestApp({ chain: new FakeChain() as never, postgres });
    app = t.app;
    db = t.ctx.db;
    alice = await user(t);
    bob = await user(t);
    await request(app).patch(`${API}/user/me`).set(alice.headers).send({ display_name: 'Alice Designs' }).expect(200);
    service = new OrdersService({
      repo: new PrismaOrdersRepo(db, { categoryName: (slug) => (slug === 'design' ? 'Design & Art' : undefined) }),
      escrow: new FakeEscrow(),
      listings: new FakeListings(),
      currency: () => undefined,
      settings: testOrdersSettings(),
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  async function order(status: string, title: string, category = 'design'): Promise<string> {
    const l = await createListing(app, alice, { title, category });
    await setListingStatus(db, l.listing_id, status === 'completed' ? 'sold' : 'reserved');
    return insertOrder(db, { listingId: l.listing_id, buyerId: bob.userId, sellerId: alice.userId, status });
  }

  const present = async (who: TestUser, ids: string[]) => {
    const p = principal(who.userId, who.wallet);
    const records = await Promise.all(ids.map((id) => service.get(p, id)));
    return service.present(p, records);
  };

  it('names the listing, its category, both parties with names and ratings, and the published review', async () => {
    const id = await order('completed', 'Logo for a bakery');
    const before = (await present(bob, [id]))[0]!;
    expect(before.listing).toEqual({ listing_id: before.listing_id, title: 'Logo for a bakery', category_slug: 'design', category_name: 'Design & Art' });
    expect(before.seller).toEqual({ wallet: alice.wallet, display_name: 'Alice Designs', rating: { average: null, review_count: 0 } });
    expect(before.buyer).toEqual({ wallet: bob.wallet, display_name: null, rating: { average: null, review_count: 0 } });
    expect(before.review).toBeNull();
    expect(before.allowed_actions).toContain('review');
    expect(before.next_step).toEqual({ actor: 'none', kind: 'done', due_at: null, after_due: null });

    const posted = await request(app).post(`${API}/orders/${id}/review`).set(bob.headers).send({ rating: 4, text: 'Clean work' });
    expect(posted.status, JSON.stringify(posted.body)).toBe(201);
    const after = (await present(alice, [id]))[0]!;
    expect(after.review).toEqual({ rating: 4, text: 'Clean work', created_at: posted.body.created_at });
    expect(after.seller.rating).toEqual({ average: 4, review_count: 1 });
    // the seller sees the same context; the buyer can no longer review
    expect((await present(bob, [id]))[0]!.allowed_actions).not.toContain('review');
    // (the fixture's escrow addresses are placeholders: only the new members are checked against the schema)
    expect(Order.pick({ listing: true, seller: true, buyer: true, next_step: true, review: true }).parse(after)).toBeTruthy();
  });

  it('a category no longer configured shows its slug in title case', async () => {
    const id = await order('in_progress', 'Website copy', 'writing');
    expect((await present(bob, [id]))[0]!.listing).toMatchObject({ category_slug: 'writing', category_name: 'Writing' });
  });

  // counted at the PGlite driver (the same Prisma statements go to PostgreSQL): defined in the PGlite variant only,
  // not skipped in the other (npm test fails on a skip outside the documented conditions)
  if (!postgres) it('a page of 12 orders costs the same statements as a page of 1 (no query per order)', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await order(i % 2 ? 'in_progress' : 'completed', `Gig number ${i} ${randomUUID().slice(0, 4)}`));
    // statements counted where they leave for PGlite (the same Prisma statements go to PostgreSQL)
    const target = (t.db as unknown as { pglite: { query: (...a: unknown[]) => Promise<unknown> } }).pglite;
    const original = target.query.bind(target);
    const statements: string[] = [];
    target.query = (...a: unknown[]) => {
      statements.push(String(a[0]).replace(/\s+/g, ' ').slice(0, 80));
      return original(...a);
    };
    const p = principal(bob.userId, bob.wallet);
    const records = (await service.list(p, { limit: 100 })).data;
    expect(records.length).toBeGreaterThanOrEqual(12);
    let one: number;
    let twelve: number;
    try {
      statements.length = 0;
      const single = await service.present(p, records.slice(0, 1));
      one = statements.length;
      statements.length = 0;
      const page = await service.present(p, records.slice(0, 12));
      twelve = statements.length;
      expect(one, statements.join('\n')).toBeGreaterThan(0);
      expect(twelve, statements.join('\n')).toBe(one);
      expect(twelve).toBeLessThanOrEqual(2);
      expect(single[0]!.listing.title).toMatch(/^Gig number/);
      expect(page.every((o) => o.listing.title && o.seller.display_name === 'Alice Designs')).toBe(true);
    } finally {
      target.query = original;
    }
  });

  /** an order with two milestones: the first row in `status`, the second scheduled (issue 24) */
  async function twoMilestoneOrder(status: string, title: string): Promise<string> {
    const id = await order(status, title);
    const listingId = (await db.order.findUniqueOrThrow({ where: { id } })).listingId;
    const second = await insertOrder(db, { listingId, buyerId: bob.userId, sellerId: alice.userId, status: 'scheduled' });
    await db.$executeRaw`UPDATE orders SET milestone_count = 2 WHERE id = ${id}::uuid`;
    await db.$executeRaw`UPDATE orders SET order_id = ${id}::uuid, milestone_index = 2, milestone_count = 2 WHERE id = ${second}::uuid`;
    // as the orders module writes them: both wallets on every row
    await db.$executeRaw`UPDATE orders SET buyer_wallet = ${bob.wallet}, seller_wallet = ${alice.wallet} WHERE order_id = ${id}::uuid`;
    return id;
  }

  if (!postgres) it('milestones (issue 24): a page of orders with milestones reads all their rows in ONE more statement, for 1 order as for 12; GET /orders lists each order once', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) ids.push(await twoMilestoneOrder('in_progress', `Staged gig ${i} ${randomUUID().slice(0, 4)}`));
    const p = principal(bob.userId, bob.wallet);
    const listed = (await service.list(p, { limit: 100 })).data;
    // one entry per order, never its second milestone's row
    expect(listed.filter((o) => o.milestoneIndex !== 1)).toEqual([]);
    const records = listed.filter((o) => ids.includes(o.id));
    expect(records).toHaveLength(12);
    const target = (t.db as unknown as { pglite: { query: (...a: unknown[]) => Promise<unknown> } }).pglite;
    const original = target.query.bind(target);
    const statements: string[] = [];
    target.query = (...a: unknown[]) => {
      statements.push(String(a[0]).replace(/\s+/g, ' ').slice(0, 80));
      return original(...a);
    };
    try {
      statements.length = 0;
      await service.present(p, records.slice(0, 1));
      const one = statements.length;
      statements.length = 0;
      const page = await service.present(p, records);
      const twelve = statements.length;
      expect(twelve, statements.join('\n')).toBe(one);
      expect(twelve, statements.join('\n')).toBeLessThanOrEqual(3);
      expect(page.map((o) => o.milestones.map((m) => m.status))).toEqual(Array(12).fill(['in_progress', 'scheduled']));
      expect(page.every((o) => o.current_milestone === 1 && o.status === 'in_progress')).toBe(true);
    } finally {
      target.query = original;
    }
  });
});
