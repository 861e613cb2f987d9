/**
 * Repeat sales (issue 24 item 7) over HTTP on the real chain (the shared localnet), on PGlite and on
 * PostgreSQL: a listing takes `capacity` orders at once and `stock` orders in all (or unlimited). It reads
 * `reserved` while its open orders fill the capacity (an unpaid hold included, with `held_until`), `sold`
 * once its sales reach the stock; a refund, or a resolve with buyer_bps 10000, returns the unit. Holds take
 * one unit of capacity each under the listing's lock, so buyers racing for the last unit get exactly one
 * order. Capacity and stock changes never cancel an open order. The NFT stays with the seller.
 */
import { randomUUID } from 'node:crypto';
import { PublicKey } from '@solana/web3.js';
import { getAccount, getAssociatedTokenAddressSync, TOKEN_2022_PROGRAM_ID } from '@solana/spl-token';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedBootstrappedChain } from './helpers/shared-chain';
import type { BootstrappedChain } from './helpers/localnet';
import { createApiKey, createTestApp, type TestApp } from './helpers/app';
import { dbBackends } from './helpers/shared-db';
import { order as placeOrder, party as newParty, pay as payOrder, type Party } from './helpers/parties';

const API = '/api/v1';
const PROBLEM = 'https://bazaar.dev/problems/';

let env: BootstrappedChain;
let t: TestApp;
let admin: Pick<Party, 'headers'>;

const party = (usdc = 0) => newParty(t, env, { sol: 2, usdc });
const post = (who: Pick<Party, 'headers'>, path: string, body?: object) => request(t.app).post(`${API}${path}`).set(who.headers).send(body ?? {});
const getListing = async (id: string) => (await request(t.app).get(`${API}/listings/${id}`).set(admin.headers)).body;
const tryOrder = (buyer: Pick<Party, 'headers'>, listingId: string) =>
  request(t.app).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', randomUUID()).send({ listing_id: listingId });

/** POST /listings with capacity and stock (201 asserted). */
async function listing(seller: Party, units: { capacity?: number; stock?: number | null }, price = 2) {
  const res = await request(t.app)
    .post(`${API}/listings`)
    .set(seller.headers)
    .send({ title: 'Weekly coaching call', description: 'One hour, booked again and again.', price, currency: 'USDC', category: 'design', duration: 3, ...units });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { listing_id: string; token_mint_address: string };
}

/** A paid (in_progress) order of `listingId` by a fresh buyer. */
async function paidOrder(listingId: string) {
  const buyer = await party(10);
  const created = await placeOrder(t, buyer, listingId);
  const paid = await payOrder(t, buyer, created);
  expect(paid.status).toBe('in_progress');
  return { buyer, id: created.order_id as string };
}

beforeAll(async () => {
  env = await sharedBootstrappedChain('repeat-sales');
});

afterAll(async () => {
  await env?.stop();
});

describe.each(dbBackends)('repeat sales on $name', ({ postgres }) => {
  beforeAll(async () => {
    t = await createTestApp({
      chain: env.chain,
      postgres,
      config: { currencies: env.boot.currencies },
      orders: { watcherIntervalMs: 0, reconcileIntervalMs: 0, maxUnpaidOrdersPerIp: 10_000 },
    });
    const key = await createApiKey(t, { name: 'arbiter', isAdmin: true });
    admin = { headers: { 'x-api-key': key.key } };
  });

  afterAll(async () => {
    await t?.close();
  });

  it('defaults: capacity 1, stock 1 (sold once), shown with open_orders, sold_count and remaining; bounds are validation errors', async () => {
    const seller = await party();
    const l = await listing(seller, {});
    expect(await getListing(l.listing_id)).toMatchObject({ status: 'available', capacity: 1, stock: 1, open_orders: 0, sold_count: 0, remaining: 1, held_until: null });
    for (const bad of [{ capacity: 0 }, { capacity: 101 }, { capacity: 1.5 }, { stock: 0 }, { stock: 1_000_001 }]) {
      const res = await request(t.app)
        .post(`${API}/listings`)
        .set(seller.headers)
        .send({ title: 'Bad units', description: 'x', price: 2, currency: 'USDC', category: 'design', duration: 3, ...bad });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.type).toBe(`${PROBLEM}validation-error`);
    }
  });

  it('capacity 3, unlimited stock: three holds at once, the 4th buyer gets 409 listing-unavailable with held_until; search and filters follow', async () => {
    const seller = await party();
    const l = await listing(seller, { capacity: 3, stock: null });
    const buyers = await Promise.all([party(10), party(10), party(10), party(10)]);
    const first = await placeOrder(t, buyers[0]!, l.listing_id);
    expect(await getListing(l.listing_id)).toMatchObject({ status: 'available', open_orders: 1, remaining: null, held_until: null });
    await placeOrder(t, buyers[1]!, l.listing_id);
    await placeOrder(t, buyers[2]!, l.listing_id);
    const heldUntil = new Date(new Date(first.payment_expires_at).getTime() + 120_000).toISOString();
    expect(await getListing(l.listing_id)).toMatchObject({ status: 'reserved', open_orders: 3, held_until: heldUntil });
    const fourth = await tryOrder(buyers[3]!, l.listing_id);
    expect(fourth.status).toBe(409);
    expect(fourth.body).toMatchObject({ type: `${PROBLEM}listing-unavailable`, held_until: heldUntil });
    const mine = async (status: string) =>
      (await request(t.app).get(`${API}/listings?seller_wallet=${seller.wallet}&status=${status}`).set(admin.headers)).body.data.map((x: { listing_id: string }) => x.listing_id);
    expect(await mine('reserved')).toEqual([l.listing_id]);
    expect(await mine('available')).toEqual([]);
    const browse = await request(t.app).get(`${API}/marketplace/listings?status=reserved&seller_wallet=${seller.wallet}`).set(admin.headers);
    expect(browse.body.data.map((x: { listing_id: string }) => x.listing_id)).toEqual([l.listing_id]);
    // the first holder pays: still reserved by the two other holds, held_until = the first of those to lapse
    await payOrder(t, buyers[0]!, first);
    const after = await getListing(l.listing_id);
    expect(after).toMatchObject({ status: 'reserved', open_orders: 3 });
    expect(after.held_until).not.toBeNull();
  });

  it('buyers racing for the last unit: exactly one order, the others 409 before paying, nothing to refund', async () => {
    const seller = await party();
    const l = await listing(seller, { capacity: 2, stock: null });
    await placeOrder(t, await party(10), l.listing_id);
    const racers = await Promise.all(Array.from({ length: 6 }, () => party(10)));
    const res = await Promise.all(racers.map((b) => tryOrder(b, l.listing_id)));
    expect(res.filter((r) => r.status === 201)).toHaveLength(1);
    const refused = res.filter((r) => r.status === 409);
    expect(refused).toHaveLength(5);
    expect(new Set(refused.map((r) => r.body.type))).toEqual(new Set([`${PROBLEM}listing-unavailable`]));
    expect(await t.ctx.db.order.count({ where: { listingId: l.listing_id } })).toBe(2);
    expect(await getListing(l.listing_id)).toMatchObject({ status: 'reserved', open_orders: 2 });
  });

  it('sales up to the stock: each completed order frees its unit until the last sells the listing out; the NFT never moves', async () => {
    const seller = await party();
    const l = await listing(seller, { capacity: 1, stock: 2 });
    const a = await paidOrder(l.listing_id);
    expect(await getListing(l.listing_id)).toMatchObject({ status: 'reserved', open_orders: 1, sold_count: 0, remaining: 1, held_until: null });
    expect((await post(a.buyer, `/orders/${a.id}/confirm`)).body.status).toBe('completed');
    expect(await getListing(l.listing_id)).toMatchObject({ status: 'available', open_orders: 0, sold_count: 1, remaining: 1 });
    const b = await paidOrder(l.listing_id);
    expect((await post(b.buyer, `/orders/${b.id}/confirm`)).body.status).toBe('completed');
    expect(await getListing(l.listing_id)).toMatchObject({ status: 'sold', open_orders: 0, sold_count: 2, remaining: 0 });
    expect((await tryOrder(await party(10), l.listing_id)).body).toMatchObject({ type: `${PROBLEM}listing-unavailable` });
    // the listing's token stays in the seller's wallet: a sale transfers nothing
    const ata = getAssociatedTokenAddressSync(new PublicKey(l.token_mint_address), new PublicKey(seller.wallet), false, TOKEN_2022_PROGRAM_ID);
    expect((await getAccount(env.chain.connection, ata, 'confirmed', TOKEN_2022_PROGRAM_ID)).amount).toBe(1n);
    const events = await t.ctx.db.event.findMany({ where: { resourceId: l.listing_id }, orderBy: { seq: 'asc' } });
    expect(events.map((e) => e.type)).toEqual(['listing.created', 'listing.reserved', 'listing.updated', 'listing.reserved', 'listing.sold']);
  });

  it('stock exhausted while an unpaid order is open: the hold counts against the stock (reserved, remaining 0, others refused); it can still be paid and sold', async () => {
    const seller = await party();
    const l = await listing(seller, { capacity: 2, stock: 2 });
    const a = await paidOrder(l.listing_id);
    expect((await post(a.buyer, `/orders/${a.id}/confirm`)).body.status).toBe('completed');
    const buyer = await party(10);
    const unpaid = await placeOrder(t, buyer, l.listing_id);
    expect(await getListing(l.listing_id)).toMatchObject({ status: 'reserved', open_orders: 1, sold_count: 1, remaining: 0 });
    expect((await getListing(l.listing_id)).held_until).not.toBeNull();
    expect((await tryOrder(await party(10), l.listing_id)).status).toBe(409);
    expect((await payOrder(t, buyer, unpaid)).status).toBe('in_progress');
    expect((await post(buyer, `/orders/${unpaid.order_id}/confirm`)).body.status).toBe('completed');
    expect(await getListing(l.listing_id)).toMatchObject({ status: 'sold', sold_count: 2, remaining: 0 });
  });

  it('capacity lowered under the open orders cancels none: reserved until enough of them end; stock below sold + open is 400 below_committed', async () => {
    const seller = await party();
    const l = await listing(seller, { capacity: 3, stock: null });
    const [a, b] = [await paidOrder(l.listing_id), await paidOrder(l.listing_id)];
    expect(await getListing(l.listing_id)).toMatchObject({ status: 'available', open_orders: 2 });
    const lowered = await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(seller.headers).send({ capacity: 1 });
    expect(lowered.status, JSON.stringify(lowered.body)).toBe(200);
    expect(lowered.body).toMatchObject({ status: 'reserved', capacity: 1, open_orders: 2 });
    for (const o of [a, b]) expect((await request(t.app).get(`${API}/orders/${o.id}`).set(o.buyer.headers)).body.status).toBe('in_progress');
    // a reserved listing may change its units alone, nothing else
    expectStatus(await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(seller.headers).send({ title: 'Renamed while reserved' }), 409);
    const tooLow = await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(seller.headers).send({ stock: 1 });
    expect(tooLow.status).toBe(400);
    expect(tooLow.body).toMatchObject({ type: `${PROBLEM}validation-error`, errors: [{ path: 'body.stock', code: 'below_committed' }] });
    expect((await post(a.buyer, `/orders/${a.id}/confirm`)).body.status).toBe('completed');
    expect(await getListing(l.listing_id)).toMatchObject({ status: 'reserved', open_orders: 1, sold_count: 1 });
    expect((await post(b.buyer, `/orders/${b.id}/confirm`)).body.status).toBe('completed');
    expect(await getListing(l.listing_id)).toMatchObject({ status: 'available', open_orders: 0, sold_count: 2, remaining: null });
    // raising the stock to exactly what is sold sells it out (listing.sold)
    const closed = await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(seller.headers).send({ stock: 2 });
    expect(closed.body).toMatchObject({ status: 'sold', stock: 2, remaining: 0 });
  });

  it('a refund and a resolve with buyer_bps 10000 return their unit; a resolve with a seller share sells it', async () => {
    const seller = await party();
    const l = await listing(seller, { capacity: 1, stock: 1 });
    const a = await paidOrder(l.listing_id);
    expect((await post(seller, `/orders/${a.id}/refund`)).body.status).toBe('refunded');
    expect(await getListing(l.listing_id)).toMatchObject({ status: 'available', open_orders: 0, sold_count: 0, remaining: 1 });
    const b = await paidOrder(l.listing_id);
    expect((await post(b.buyer, `/orders/${b.id}/dispute`, { reason: 'Nothing was delivered' })).status).toBe(200);
    expect(await getListing(l.listing_id)).toMatchObject({ status: 'reserved', open_orders: 1 });
    expect((await post(admin, `/orders/${b.id}/resolve`, { buyer_bps: 10_000 })).body.status).toBe('resolved');
    expect(await getListing(l.listing_id)).toMatchObject({ status: 'available', open_orders: 0, sold_count: 0, remaining: 1 });
    const c = await paidOrder(l.listing_id);
    expect((await post(c.buyer, `/orders/${c.id}/dispute`, { reason: 'Half of it was delivered' })).status).toBe(200);
    expect((await post(admin, `/orders/${c.id}/resolve`, { buyer_bps: 5_000 })).body.status).toBe('resolved');
    expect(await getListing(l.listing_id)).toMatchObject({ status: 'sold', sold_count: 1, remaining: 0 });
  });

  it('the counts kept on each listing (trigger on orders) equal a recount of its orders after everything above', async () => {
    const drift = await t.ctx.db.$queryRaw<Array<{ id: string }>>`
      SELECT l.id::text AS id FROM listings l CROSS JOIN LATERAL listing_order_counts(l.id) c
       WHERE (l.open_orders, l.unpaid_orders, l.sold_count) IS DISTINCT FROM (c.open_orders, c.unpaid_orders, c.sold_count)`;
    expect(drift).toEqual([]);
    const [{ n }] = await t.ctx.db.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM listings WHERE sold_count > 0`;
    expect(n).toBeGreaterThan(3);
  });
});

function expectStatus(res: { status: number; body: unknown }, status: number) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
}
