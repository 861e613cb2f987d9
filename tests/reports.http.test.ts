/**
 * Revenue reports over HTTP (issue 25 part 6): the real app on PGlite and PostgreSQL (the Prisma repository,
 * the events outbox) with the simulated escrow program of tests/orders.fakes.ts as the orders module's escrow
 * port. Orders are driven to different ends over HTTP (release, seller refund, arbiter split, settlement by
 * agreement) and a tip is confirmed through the tips repository; the report's figures are checked against the
 * payouts the orders show, per seller and marketplace-wide, as JSON and CSV. Around it: who may read which
 * report, the range rules, period edges in UTC, a multi-milestone order counted once per escrow, and the
 * retention pass keeping the money events. tests/e2e.reports.test.ts checks the figures against the localnet.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CSV_COLUMNS, type Order, type RevenueReport } from '@bazaar/contract';
import { API, createListing, expectProblem, insertOrder, setListingStatus, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';
import { createApiKey, createTestApp } from './helpers/app.js';
import { FakeChain } from './helpers/fake-chain.js';
import { FakeEscrow } from './orders.fakes.js';
import { dbBackends } from './helpers/shared-db.js';
import { appendEvents, createEventsRepo } from '../server/src/modules/events/index.js';
import { createTipsRepo } from '../server/src/modules/tips/index.js';
import { createReportsRepo } from '../server/src/modules/reports/index.js';

/**
 * The operator of these tests: an admin API key. Roles (issue 25 part 1) are built in parallel: at the merge
 * this one helper switches to a user holding the admin role.
 */
async function operator(app: TestApp): Promise<Record<string, string>> {
  const key = await createApiKey(app, { name: 'reports-operator', isAdmin: true });
  return { 'x-api-key': key.key };
}

let t: TestApp;
let alice: TestUser; // buyer
let bob: TestUser; // seller 1
let dave: TestUser; // seller 2
let carol: TestUser; // a seller with nothing sold
let admin: Record<string, string>;
const escrow = new FakeEscrow();
const started = new Date(Date.now() - 60_000).toISOString();

/** An order of Alice's for `seller`'s listing, funded in the fake escrow (in_progress). */
async function fundedOrder(seller: TestUser): Promise<string> {
  const l = await createListing(t.app, seller);
  await setListingStatus(t.ctx.db, l.listing_id, 'reserved');
  const id = await insertOrder(t.ctx.db, { listingId: l.listing_id, buyerId: alice.userId, sellerId: seller.userId, status: 'in_progress' });
  await t.ctx.db.$executeRaw`UPDATE orders SET funded_at = now() WHERE id = ${id}::uuid`;
  const o = (await request(t.app).get(`${API}/orders/${id}`).set(alice.headers).expect(200)).body as Order;
  escrow.fund({
    orderId: id,
    buyer: alice.wallet,
    seller: seller.wallet,
    mint: o.payment_mint,
    amount: BigInt(o.amount_base_units),
    deliveryDeadline: Date.parse(o.delivery_deadline) / 1000,
    reviewWindow: o.review_window_seconds,
    expiresAt: escrow.now + 900,
  });
  return id;
}
const post = async (who: Record<string, string>, path: string, body: object = {}) => {
  const res = await request(t.app).post(`${API}${path}`).set(who).set('Idempotency-Key', randomUUID()).send(body);
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body as Order;
};
const report = (who: Record<string, string>, path: string) => request(t.app).get(`${API}${path}`).set(who);
const body = async (who: Record<string, string>, path: string) => {
  const res = await report(who, path);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as RevenueReport;
};
const usdc = (r: RevenueReport) => r.totals.find((x) => x.currency === 'USDC')!;
const range = () => `from=${started}&to=${new Date(Date.now() + 60_000).toISOString()}`;

/** The expected figures: the sums of the orders' payouts (the chain's record the service stored). */
function expected(orders: Order[], tips = 0n) {
  const sum = (f: (o: Order) => string) => orders.reduce((s, o) => s + BigInt(f(o)), 0n);
  const buyer = sum((o) => o.payout!.buyer_base_units);
  const seller = sum((o) => o.payout!.seller_base_units);
  const fee = sum((o) => o.payout!.treasury_base_units);
  return {
    volume_base_units: (buyer + seller + fee).toString(),
    fee_revenue_base_units: fee.toString(),
    seller_payouts_base_units: seller.toString(),
    buyer_refunds_base_units: buyer.toString(),
    tips_base_units: tips.toString(),
    escrows_closed: orders.length,
  };
}

describe.each(dbBackends)('revenue reports over HTTP on $name', ({ postgres }) => {
  const closed: Record<string, Order> = {};

  beforeAll(async () => {
    escrow.now = Math.floor(Date.now() / 1000);
    escrow.feeBpsValue = 100; // the fee snapshot of the orders insertOrder writes
    const chain = Object.assign(new FakeChain(), { escrow: {} });
    t = await createTestApp({ chain: chain as never, postgres, orders: { ports: { escrow: () => escrow } } });
    [alice, bob, dave, carol] = await Promise.all([user(t), user(t), user(t), user(t)]);
    admin = await operator(t);

    // bob: a release and a refund; dave: an arbiter's split and a settlement by agreement
    const released = await fundedOrder(bob);
    closed.released = await post(alice.headers, `/orders/${released}/confirm`);
    const refunded = await fundedOrder(bob);
    closed.refunded = await post(bob.headers, `/orders/${refunded}/refund`);
    const split = await fundedOrder(dave);
    await post(alice.headers, `/orders/${split}/dispute`, { reason: 'The logo is not what we agreed' });
    closed.split = await post(admin, `/orders/${split}/resolve`, { buyer_bps: 5000 });
    const settled = await fundedOrder(dave);
    await post(dave.headers, `/orders/${settled}/settlement`, { buyer_bps: 3000 });
    closed.settled = await post(alice.headers, `/orders/${settled}/settlement/accept`, { buyer_bps: 3000 });
    expect(Object.values(closed).map((o) => [o.status, o.payout !== null])).toEqual([
      ['completed', true],
      ['refunded', true],
      ['resolved', true],
      ['resolved', true],
    ]);

    // a tip of 2.5 USDC from alice to bob on the released order, confirmed (tip.received)
    const tips = createTipsRepo(t.ctx.db);
    const tip = await tips.createPending(
      {
        id: randomUUID(),
        orderId: released,
        buyerId: alice.userId,
        sellerId: bob.userId,
        buyerWallet: alice.wallet,
        sellerWallet: bob.wallet,
        currency: 'USDC',
        mint: 'mint',
        decimals: 6,
        amount: 2_500_000n,
        sourceTokenAccount: alice.wallet,
        destinationTokenAccount: bob.wallet,
        message: 'AA==',
        blockhash: 'blockhash',
        lastValidBlockHeight: 1,
        validUntil: new Date(Date.now() + 60_000),
      },
      3,
    );
    expect((await tips.confirm(tip!.id, { signature: `sig-${randomUUID()}`, slot: 1, at: new Date() })).state).toBe('confirmed');
  });

  afterAll(async () => {
    await t?.close();
  });

  it('marketplace (admin): volume, fee revenue, seller payouts, buyer refunds and tips equal the payouts the orders show; volume = fee + payouts + refunds', async () => {
    const r = await body(admin, `/admin/revenue-report?granularity=day&${range()}`);
    expect(r).toMatchObject({ scope: 'marketplace', seller_wallet: null, granularity: 'day' });
    const total = usdc(r);
    expect(total).toMatchObject({ decimals: 6, ...expected(Object.values(closed), 2_500_000n), escrows_unverified: 0, tips: 1 });
    // the figures as numbers: a release of 25.5 (fee 1 %), a refund of 25.5, a 50/50 split, a 30/70 settlement
    expect(total).toMatchObject({
      volume_base_units: '102000000',
      fee_revenue_base_units: '561000',
      seller_payouts_base_units: '55539000',
      buyer_refunds_base_units: '45900000',
    });
    expect(BigInt(total.volume_base_units)).toBe(
      BigInt(total.fee_revenue_base_units) + BigInt(total.seller_payouts_base_units) + BigInt(total.buyer_refunds_base_units),
    );
    // dense rows: every period in every configured currency; the rows add up to the totals
    const periods = new Set(r.rows.map((x) => x.period_start));
    expect(r.rows).toHaveLength(periods.size * 2);
    expect(r.rows.filter((x) => x.currency === 'USDC').reduce((s, x) => s + BigInt(x.fee_revenue_base_units), 0n).toString()).toBe(total.fee_revenue_base_units);
    expect(r.totals.find((x) => x.currency === 'SOL')).toMatchObject({ decimals: 9, volume_base_units: '0', escrows_closed: 0 });
  });

  it('per seller: the seller reads her own (orders:read on a token), an admin any seller\'s, and the figures are hers only', async () => {
    const own = await body(bob.headers, `/user/revenue-report?${range()}`);
    expect(own).toMatchObject({ scope: 'seller', seller_wallet: bob.wallet });
    expect(usdc(own)).toMatchObject({ ...expected([closed.released!, closed.refunded!], 2_500_000n), tips: 1 });
    const daves = await body(admin, `/admin/revenue-report?seller=${dave.wallet}&${range()}`);
    expect(daves).toMatchObject({ scope: 'seller', seller_wallet: dave.wallet });
    expect(usdc(daves)).toMatchObject({ ...expected([closed.split!, closed.settled!]), tips: 0 });
    // a seller with nothing sold: zeros, not somebody else's figures
    expect(usdc(await body(carol.headers, `/user/revenue-report?${range()}`))).toMatchObject({ volume_base_units: '0', escrows_closed: 0, tips: 0 });
    // a personal access token with orders:read reads it; one without gets 403 insufficient-scope
    const token = async (scopes: string[]) =>
      (await request(t.app).post(`${API}/user/tokens`).set(bob.headers).send({ name: `reports ${scopes}`, scopes }).expect(201)).body.token as string;
    const reader = await token(['orders:read']);
    expect(usdc(await body({ authorization: `Bearer ${reader}` }, `/user/revenue-report?${range()}`))).toMatchObject(expected([closed.released!, closed.refunded!], 2_500_000n));
    expectProblem(await report({ authorization: `Bearer ${await token(['listings:read'])}` }, `/user/revenue-report`), 403, 'insufficient-scope');
  });

  it('a seller cannot read another seller\'s report (nor the marketplace\'s): 403 forbidden, JSON and CSV; an unknown seller wallet 404 for an admin', async () => {
    expectProblem(await report(bob.headers, `/admin/revenue-report?seller=${dave.wallet}`), 403, 'forbidden');
    expectProblem(await report(bob.headers, `/admin/revenue-report.csv?seller=${dave.wallet}`), 403, 'forbidden');
    expectProblem(await report(bob.headers, `/admin/revenue-report`), 403, 'forbidden');
    // her own route names no seller: a `seller` parameter is not read (the report is still hers)
    expect((await body(bob.headers, `/user/revenue-report?seller=${dave.wallet}&${range()}`)).seller_wallet).toBe(bob.wallet);
    expectProblem(await report(admin, `/admin/revenue-report?seller=11111111111111111111111111111112`), 404, 'not-found');
    expectProblem(await request(t.app).get(`${API}/user/revenue-report`), 401, 'unauthorized');
  });

  it('CSV: text/csv with a file name, the header of CSV_COLUMNS and the JSON report\'s rows in order', async () => {
    const path = `granularity=week&${range()}`;
    const json = await body(admin, `/admin/revenue-report?${path}`);
    const res = await report(admin, `/admin/revenue-report.csv?${path}`);
    expect(res.status, res.text).toBe(200);
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toMatch(/^attachment; filename="revenue-marketplace-week-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv"$/);
    const lines = res.text.split('\r\n');
    expect(lines[0]).toBe(CSV_COLUMNS.join(','));
    expect(lines.slice(1, -1)).toEqual(json.rows.map((r) => CSV_COLUMNS.map((c) => String(r[c])).join(',')));
    expect(lines.at(-1)).toBe('');
    const own = await report(bob.headers, `/user/revenue-report.csv?${path}`);
    expect(own.status).toBe(200);
    expect(own.text.split('\r\n')[0]).toBe(CSV_COLUMNS.join(','));
  });

  it('the range: from must be before to (range_empty), at most 400 periods (too_many_periods), not before 1970 (out_of_range), defaults to the 30 days before now', async () => {
    const at = '2026-03-01T00:00:00.000Z';
    expectProblem(await report(admin, `/admin/revenue-report?from=${at}&to=${at}`), 400, 'validation-error', ['query.from']);
    const long = await report(admin, `/admin/revenue-report?from=2000-01-01T00:00:00.000Z&to=2026-01-01T00:00:00.000Z`);
    expectProblem(long, 400, 'validation-error', ['query.from']);
    expect(long.body.errors[0].code).toBe('too_many_periods');
    expect((await report(admin, `/admin/revenue-report?granularity=month&from=2000-01-01T00:00:00.000Z&to=2026-01-01T00:00:00.000Z`)).status).toBe(200);
    expectProblem(await report(admin, `/admin/revenue-report?granularity=hour`), 400, 'validation-error', ['query.granularity']);
    const early = await report(admin, `/admin/revenue-report?from=1969-12-31T23:59:59.999Z&to=1970-01-02T00:00:00.000Z`);
    expectProblem(early, 400, 'validation-error', ['query.from']);
    expect(early.body.errors[0].code).toBe('out_of_range');
    // the last day the timestamps can name: answered, not a 500
    const last = await body(admin, `/admin/revenue-report?from=9999-12-31T00:00:00.000Z&to=9999-12-31T23:59:59.999Z`);
    expect(last.rows.map((x) => x.period_end)).toEqual(['9999-12-31T23:59:59.999Z', '9999-12-31T23:59:59.999Z']);
    // a service API key (no user) has no seller report
    const service = await createApiKey(t, { name: 'reports-service' });
    expectProblem(await report({ 'x-api-key': service.key }, `/user/revenue-report`), 404, 'not-found');
    const d = await body(admin, `/admin/revenue-report`);
    expect(Date.parse(d.to) - Date.parse(d.from)).toBe(30 * 86_400_000);
  });

  it('period edges in UTC: an event at 23:59:59.999 is in its day, one at 00:00:00.000 in the next; outside [from, to) in none', async () => {
    // the release's money event moved to the last millisecond of 2025-06-01 (UTC), the refund's to the first of 2025-06-02
    // ISO text cast in SQL (a Date parameter is read in the session's time zone: see reports.repo.ts)
    const move = (orderId: string, type: string, at: string) =>
      t.ctx.db.$executeRaw`UPDATE events SET created_at = ${at}::timestamptz WHERE resource_id = ${orderId}::uuid AND type = ${type}`;
    await move(closed.released!.order_id, 'order.completed', '2025-06-01T23:59:59.999Z');
    await move(closed.refunded!.order_id, 'order.refunded', '2025-06-02T00:00:00.000Z');
    try {
      const r = await body(bob.headers, `/user/revenue-report?granularity=day&from=2025-06-01T00:00:00.000Z&to=2025-06-03T00:00:00.000Z`);
      const day = (d: string) => r.rows.find((x) => x.currency === 'USDC' && x.period_start.startsWith(d))!;
      expect(day('2025-06-01')).toMatchObject({ period_end: '2025-06-02T00:00:00.000Z', escrows_closed: 1, seller_payouts_base_units: closed.released!.payout!.seller_base_units });
      expect(day('2025-06-02')).toMatchObject({ escrows_closed: 1, buyer_refunds_base_units: '25500000', fee_revenue_base_units: '0' });
      // [from, to) excludes `to`: the refund at 2025-06-02T00:00 is not in a report ending there
      const before = await body(bob.headers, `/user/revenue-report?from=2025-06-01T00:00:00.000Z&to=2025-06-02T00:00:00.000Z`);
      expect(usdc(before).escrows_closed).toBe(1);
      // the week of Monday 2025-05-26 holds Sunday 2025-06-01; Monday 2025-06-02 starts the next
      const weeks = await body(bob.headers, `/user/revenue-report?granularity=week&from=2025-05-26T00:00:00.000Z&to=2025-06-09T00:00:00.000Z`);
      expect(weeks.rows.filter((x) => x.currency === 'USDC').map((x) => [x.period_start, x.escrows_closed])).toEqual([
        ['2025-05-26T00:00:00.000Z', 1],
        ['2025-06-02T00:00:00.000Z', 1],
      ]);
    } finally {
      await move(closed.released!.order_id, 'order.completed', new Date().toISOString());
      await move(closed.refunded!.order_id, 'order.refunded', new Date().toISOString());
    }
  });

  it('the database session\'s time zone plays no part: a session on UTC+14 (Pacific/Kiritimati) sums the same periods', async () => {
    const bounds = [new Date(started), new Date(Date.now() + 60_000)];
    const utc = await createReportsRepo(t.ctx.db).escrowSums(bounds, bob.userId);
    expect(utc.map((x) => x.closed)).toEqual([2]);
    const far = await t.ctx.db.$transaction(async (tx) => {
      await tx.$executeRawUnsafe(`SET LOCAL TIME ZONE 'Pacific/Kiritimati'`);
      return createReportsRepo(tx as never).escrowSums(bounds, bob.userId);
    });
    expect(far).toEqual(utc);
  });

  it('each escrow counts once: an order.* event of a multi-milestone order repeating its milestone.* payouts, and later events showing an old payout, add nothing', async () => {
    const l = await createListing(t.app, carol);
    const id = await insertOrder(t.ctx.db, { listingId: l.listing_id, buyerId: alice.userId, sellerId: carol.userId, status: 'completed' });
    const m2 = randomUUID();
    const payout = (seller: string, fee: string) => ({ buyer_base_units: '0', seller_base_units: seller, treasury_base_units: fee, verified: true });
    const snapshot = (paid: number) => ({
      order_id: id,
      currency: 'USDC',
      milestones: [
        { milestone_id: id, payout: payout('9900000', '100000') },
        { milestone_id: m2, payout: paid > 1 ? payout('4950000', '50000') : null },
      ],
    });
    const ev = (type: string, data: object, extra: object = {}) => ({ type: type as never, resourceType: 'order' as const, resourceId: id, audience: [alice.userId, carol.userId], data: { ...data, ...extra }, signature: null });
    await t.ctx.db.$transaction((tx) => appendEvents(tx, [ev('milestone.released', snapshot(1), { milestone_index: 1 })]));
    await t.ctx.db.$transaction((tx) =>
      appendEvents(tx, [ev('milestone.released', snapshot(2), { milestone_index: 2 }), ev('order.completed', snapshot(2))]),
    );
    // a later money event of the order (e.g. a tip's order in a later snapshot) shows both payouts again
    await t.ctx.db.$transaction((tx) => appendEvents(tx, [ev('order.completed', snapshot(2))]));
    const r = await body(carol.headers, `/user/revenue-report?${range()}`);
    expect(usdc(r)).toMatchObject({ escrows_closed: 2, seller_payouts_base_units: '14850000', fee_revenue_base_units: '150000', volume_base_units: '15000000' });
  });

  it('the retention pass keeps the money events (the ledger) past EVENTS_RETENTION_DAYS and deletes the rest as before', async () => {
    const id = closed.settled!.order_id;
    await t.ctx.db.$executeRaw`UPDATE events SET created_at = now() - interval '400 days' WHERE resource_id = ${id}::uuid`;
    const types = async () =>
      (await t.ctx.db.$queryRaw<Array<{ type: string }>>`SELECT type FROM events WHERE resource_id = ${id}::uuid ORDER BY resource_seq`).map((x) => x.type);
    expect(await types()).toEqual(expect.arrayContaining(['settlement.proposed', 'settlement.accepted']));
    // one newer event of the resource, so its last money event is not kept as "the newest of the resource"
    await t.ctx.db.$transaction((tx) =>
      appendEvents(tx, [{ type: 'order.ended' as never, resourceType: 'order', resourceId: id, audience: [], data: { order_id: id }, signature: null }]),
    );
    await createEventsRepo(t.ctx.db).purgeBefore(new Date(Date.now() - 30 * 86_400_000), 9_223_372_036_854_775_807n, 1000);
    const left = await types();
    expect(left).toContain('settlement.accepted');
    expect(left).not.toContain('settlement.proposed');
    const r = await body(admin, `/admin/revenue-report?seller=${dave.wallet}&granularity=month&from=${new Date(Date.now() - 420 * 86_400_000).toISOString()}&to=${new Date(Date.now() + 60_000).toISOString()}`);
    expect(usdc(r)).toMatchObject(expected([closed.split!, closed.settled!]));
  });
});
