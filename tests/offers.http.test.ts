/**
 * Custom offers (issue 24 item 6) over HTTP: the real app (PGlite) with the in-memory FakeChain and the
 * orders module's escrow port replaced by FakeEscrow (orders are created and their fund transaction
 * built; nothing lands on a chain). A seller answers an inquiry with an offer; the buyer accepts it into
 * an order with the offer's frozen terms, declines it, or lets it expire; the seller withdraws it.
 * PGlite, and PostgreSQL too when TEST_DATABASE_URL is set. Adversarial: the wrong party at every step, strangers, replays and concurrent accepts, bad amounts,
 * currencies and text.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Offer } from '@bazaar/contract';
import { createTestApp } from './helpers/app.js';
import { TEST_DATABASE_URL } from './helpers/db.js';
import { FakeChain } from './helpers/fake-chain.js';
import { API, createListing, expectProblem, user, walk, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';
import { FakeEscrow } from './orders.fakes.js';
import { DomainError } from '../server/src/errors.js';

let t: TestApp;
let seller: TestUser;
let buyer: TestUser;
let stranger: TestUser;
const escrow = new FakeEscrow();
/** the service clock runs ahead of real time by this much (offer expiry) */
let clockOffsetMs = 0;
let keyN = 0;
/** runs before the orders repository inserts an order (a decision racing an accept), when set */
let beforeCreateHeld: (() => Promise<void>) | null = null;
/** PGlite always; PostgreSQL too when TEST_DATABASE_URL is set (concurrent accepts on a real server) */
const ENGINES = TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

const post = (u: TestUser, path: string, body?: object) => request(t.app).post(`${API}${path}`).set(u.headers).send(body ?? {});
const get = (u: TestUser, path: string) => request(t.app).get(`${API}${path}`).set(u.headers);
const accept = (u: TestUser, offerId: string, key = `accept-${++keyN}`, body: object = {}) =>
  request(t.app).post(`${API}/offers/${offerId}/accept`).set(u.headers).set('Idempotency-Key', key).send(body);

/** A new listing of the seller (25.5 USDC) and `who`'s inquiry about it (default: the buyer): the conversation id. */
async function conversation(price = 25.5, who: TestUser = buyer): Promise<{ listingId: string; cid: string }> {
  const l = await createListing(t.app, seller, { price });
  const r = await post(who, `/listings/${l.listing_id}/conversations`, { body: 'Could you do a custom job?' });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { listingId: l.listing_id, cid: r.body.conversation.conversation_id };
}

const offerBody = (over: Record<string, unknown> = {}) => ({
  title: 'Logo and business cards',
  description: 'A logo, then cards in two sizes.',
  currency: 'USDC',
  price: 120,
  milestones: [
    { title: 'Logo', amount: 70.25, delivery_days: 3 },
    { title: 'Cards', amount: 49.75, delivery_days: 2 },
  ],
  revisions: 2,
  ...over,
});

async function sendOffer(cid: string, over: Record<string, unknown> = {}) {
  const r = await post(seller, `/conversations/${cid}/offers`, offerBody(over));
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return Offer.parse(r.body);
}

const ordersOfOffer = async (offerId: string) =>
  Number((await t.ctx.db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM orders WHERE offer_id = ${offerId}::uuid`)[0]!.n);

describe.each(ENGINES)('custom offers on %s', (engine) => {
  beforeAll(async () => {
    // a chain with an escrow program (the orders module is built), whose port is the FakeEscrow
    const chain = Object.assign(new FakeChain(), { escrow: {} });
    t = await createTestApp({
      chain: chain as never,
      now: () => new Date(Date.now() + clockOffsetMs),
      config: { chatRateLimitPerMinute: 1000 } as never,
      orders: {
        ports: {
          escrow: () => escrow,
          repo: (built) =>
            Object.assign(Object.create(built) as typeof built, {
              createHeld: async (...args: Parameters<typeof built.createHeld>) => {
                const hook = beforeCreateHeld;
                beforeCreateHeld = null;
                await hook?.();
                return built.createHeld(...args);
              },
            }),
        },
      },
      postgres: engine === 'postgres',
    });
    [seller, buyer, stranger] = [await user(t), await user(t), await user(t)];
  });

  afterAll(async () => {
    await t?.close();
  });

  it('a seller sends an offer in the conversation; it shows as a message of kind offer; the buyer accepts it into an order with its frozen terms', async () => {
    const { listingId, cid } = await conversation();
    const offer = await sendOffer(cid);
    expect(offer).toMatchObject({
      conversation_id: cid,
      listing_id: listingId,
      seller_wallet: seller.wallet,
      buyer_wallet: buyer.wallet,
      currency: 'USDC',
      price: 120,
      price_base_units: '120000000',
      revisions: 2,
      delivery_days: 5,
      status: 'pending',
      order_id: null,
    });
    expect(offer.milestones.map((m) => m.amount_base_units)).toEqual(['70250000', '49750000']);
    // default expiry: 7 days
    expect(Date.parse(offer.expires_at) - Date.parse(offer.created_at)).toBe(7 * 86_400_000);

    const messages = (await get(buyer, `/conversations/${cid}/messages`)).body.data;
    expect(messages[0]).toMatchObject({ kind: 'offer', sender_role: 'seller', message_id: offer.message_id, offer: { offer_id: offer.offer_id, status: 'pending' } });
    expect(messages[0].body).toContain('Logo and business cards');
    expect(messages[1]).toMatchObject({ kind: 'text', offer: null });

    const r = await accept(buyer, offer.offer_id);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.offer).toMatchObject({ status: 'accepted', order_id: r.body.order.order_id });
    // the order: the offer's price (not the listing's 25.5), its listing, its offer, a payment to sign
    expect(r.body.order).toMatchObject({ offer_id: offer.offer_id, listing_id: listingId, amount_base_units: '120000000', status: 'awaiting_payment' });
    expect(r.body.order.payment.transaction).toEqual(expect.any(String));
    // INTERIM (one escrow until milestone rows exist): due after the milestones' 5 days
    expect(Date.parse(r.body.order.delivery_deadline) - Date.parse(r.body.order.created_at)).toBeGreaterThan(0);
    expect((await get(buyer, `/orders/${r.body.order.order_id}`)).body.offer_id).toBe(offer.offer_id);
    // the message shows the offer's current state
    const after = (await get(seller, `/conversations/${cid}/messages`)).body.data[0];
    expect(after.offer).toMatchObject({ status: 'accepted', order_id: r.body.order.order_id });

    // events to both parties only
    for (const party of [seller, buyer]) {
      const evs = (await get(party, `/events?resource_type=offer&resource_id=${offer.offer_id}`)).body.data;
      expect(evs.map((e: { type: string }) => e.type)).toEqual(['offer.accepted', 'offer.sent']);
      expect(evs[0].data).toMatchObject({ status: 'accepted', order_id: r.body.order.order_id });
    }
    expect((await get(stranger, `/events?resource_type=offer`)).body.data).toEqual([]);
  });

  it('only the seller of the conversation sends offers: its buyer gets 403, a stranger 404; listing_id must be the seller\'s', async () => {
    const { cid } = await conversation();
    // the buyer offering to herself (she is the buyer of the conversation)
    expectProblem(await post(buyer, `/conversations/${cid}/offers`, offerBody()), 403, 'forbidden');
    // a stranger (a seller elsewhere) offering into a conversation she is not part of
    expectProblem(await post(stranger, `/conversations/${cid}/offers`, offerBody()), 404, 'not-found');
    expectProblem(await post(seller, '/conversations/00000000-0000-4000-8000-000000000000/offers', offerBody()), 404, 'not-found');
    const foreign = await createListing(t.app, stranger);
    expectProblem(await post(seller, `/conversations/${cid}/offers`, offerBody({ listing_id: foreign.listing_id })), 400, 'validation-error', ['body.listing_id']);
    // another listing of the seller is fine
    const other = await createListing(t.app, seller);
    expect((await sendOffer(cid, { listing_id: other.listing_id })).listing_id).toBe(other.listing_id);
    expect((await get(stranger, `/conversations/${cid}/messages`)).status).toBe(404);
  });

  it('refuses bad terms: too many decimals, a milestone sum off by one base unit, an unknown or foreign currency, bidi and control text, delivery days and expiry out of bounds', async () => {
    const { cid } = await conversation();
    const refused = async (over: Record<string, unknown>, path: string, code?: string) => {
      const r = await post(seller, `/conversations/${cid}/offers`, offerBody(over));
      expectProblem(r, 400, 'validation-error', [path]);
      if (code) expect(r.body.errors.find((e: { path: string }) => e.path === path).code).toBe(code);
    };
    await refused({ price: 120.0000001 }, 'body.price', 'too_many_decimals');
    await refused({ milestones: [{ title: 'A', amount: 70.0000001, delivery_days: 1 }, { title: 'B', amount: 50, delivery_days: 1 }] }, 'body.milestones.0.amount', 'too_many_decimals');
    // 70.25 + 49.749999 = 119.999999: one base unit short
    await refused({ milestones: [{ title: 'A', amount: 70.25, delivery_days: 1 }, { title: 'B', amount: 49.749999, delivery_days: 1 }] }, 'body.milestones', 'milestones_sum');
    await refused({ milestones: [{ title: 'A', amount: 70.25, delivery_days: 1 }, { title: 'B', amount: 49.750001, delivery_days: 1 }] }, 'body.milestones', 'milestones_sum');
    await refused({ currency: 'DOGE' }, 'body.currency', 'unknown_currency');
    // SOL is accepted by the marketplace, but the listing is priced in USDC
    await refused({ currency: 'SOL', price: 1, milestones: undefined, delivery_days: 3 }, 'body.currency', 'currency_mismatch');
    await refused({ price: 0.01, milestones: undefined, delivery_days: 3 }, 'body.price', 'below_minimum');
    await refused({ milestones: undefined }, 'body.delivery_days', 'required');
    await refused({ delivery_days: 4 }, 'body.delivery_days', 'not_allowed');
    await refused({ milestones: Array.from({ length: 11 }, (_, i) => ({ title: `M${i}`, amount: 10, delivery_days: 1 })), price: 110 }, 'body.milestones');
    await refused({ revisions: 21 }, 'body.revisions');
    await refused({ milestones: [{ title: 'A', amount: 60, delivery_days: 200 }, { title: 'B', amount: 60, delivery_days: 166 }] }, 'body.milestones', 'too_long');
    await refused({ expires_at: new Date(Date.now() + 31 * 86_400_000).toISOString() }, 'body.expires_at', 'out_of_range');
    await refused({ expires_at: new Date(Date.now() - 1000).toISOString() }, 'body.expires_at', 'out_of_range');
    // bidi overrides and control characters, anywhere in the text
    const bidi = await post(seller, `/conversations/${cid}/offers`, offerBody({ title: 'Invoice \u202Egpj.exe' }));
    expectProblem(bidi, 400, 'validation-error');
    expect(bidi.body.errors[0].code).toBe('invalid_text_bidi');
    await refused({ description: 'bell\u0007' }, 'body.description');
    await refused({ milestones: [{ title: 'A\u202E', amount: 120, delivery_days: 1 }] }, 'body.milestones.0.title');
    // nothing was stored
    expect((await get(seller, '/offers?role=seller')).body.data.filter((o: { conversation_id: string }) => o.conversation_id === cid)).toEqual([]);
  });

  it('accepting twice or concurrently yields one order; the seller cannot accept her own offer', async () => {
    const { cid } = await conversation();
    const offer = await sendOffer(cid, { milestones: undefined, delivery_days: 4, price: 30 });
    expectProblem(await accept(seller, offer.offer_id), 403, 'forbidden');
    expectProblem(await accept(stranger, offer.offer_id), 404, 'not-found');
    expectProblem(await request(t.app).post(`${API}/offers/${offer.offer_id}/accept`).set(buyer.headers).send({}), 400, 'idempotency-key-missing');
    const [a, b] = await Promise.all([accept(buyer, offer.offer_id), accept(buyer, offer.offer_id)]);
    expect([a.status, b.status], JSON.stringify([a.body, b.body])).toEqual([201, 201]);
    expect(a.body.order.order_id).toBe(b.body.order.order_id);
    // again later, with another key: the same order
    const again = await accept(buyer, offer.offer_id);
    expect(again.status).toBe(201);
    expect(again.body.order.order_id).toBe(a.body.order.order_id);
    expect(await ordersOfOffer(offer.offer_id)).toBe(1);
    // one offer.accepted
    const evs = (await get(buyer, `/events?type=offer.accepted&resource_id=${offer.offer_id}`)).body.data;
    expect(evs).toHaveLength(1);
    // decided: neither withdrawn nor declined any more
    expectProblem(await post(seller, `/offers/${offer.offer_id}/withdraw`), 409, 'offer-not-pending');
    expectProblem(await post(buyer, `/offers/${offer.offer_id}/decline`), 409, 'offer-not-pending');
  });

  it('a payment that cannot be built leaves the offer accepted with its order; the retry returns that order', async () => {
    const { cid } = await conversation();
    const offer = await sendOffer(cid);
    const build = escrow.buildFundTransaction;
    escrow.buildFundTransaction = async () => {
      throw new DomainError('chain-unavailable', 'rpc down');
    };
    try {
      expectProblem(await accept(buyer, offer.offer_id), 503, 'chain-unavailable');
    } finally {
      escrow.buildFundTransaction = build;
    }
    const stored = (await get(buyer, `/offers/${offer.offer_id}`)).body;
    expect(stored).toMatchObject({ status: 'accepted', order_id: expect.any(String) });
    // the seller cannot take it back now: the order exists
    expectProblem(await post(seller, `/offers/${offer.offer_id}/withdraw`), 409, 'offer-not-pending');
    const retry = await accept(buyer, offer.offer_id);
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    expect(retry.body.order.order_id).toBe(stored.order_id);
    expect(retry.body.order.payment.transaction).toEqual(expect.any(String));
    expect(await ordersOfOffer(offer.offer_id)).toBe(1);
  });

  it('a withdrawal that lands while the accept is creating the order wins: no order, 409 offer-not-pending; a listing held by another order refuses the accept and the offer stays pending', async () => {
    // a buyer of her own: the suite's buyer holds unpaid orders up to the per-buyer limit by now
    const b = await user(t);
    const { listingId, cid } = await conversation(25.5, b);
    const raced = await sendOffer(cid);
    beforeCreateHeld = async () => {
      const w = await post(seller, `/offers/${raced.offer_id}/withdraw`);
      expect(w.status, JSON.stringify(w.body)).toBe(200);
    };
    const r = await accept(b, raced.offer_id);
    expectProblem(r, 409, 'offer-not-pending');
    expect(r.body.offer_status).toBe('withdrawn');
    expect(await ordersOfOffer(raced.offer_id)).toBe(0);
    expect((await get(b, `/offers/${raced.offer_id}`)).body).toMatchObject({ status: 'withdrawn', order_id: null });

    // the order's rules apply: another buyer's unpaid order holds the listing
    const pending = await sendOffer(cid);
    const other = await user(t);
    const held = await request(t.app).post(`${API}/orders`).set(other.headers).set('Idempotency-Key', `held-${engine}`).send({ listing_id: listingId });
    expect(held.status, JSON.stringify(held.body)).toBe(201);
    expectProblem(await accept(b, pending.offer_id), 409, 'listing-unavailable');
    expect((await get(b, `/offers/${pending.offer_id}`)).body.status).toBe('pending');
    expect(await ordersOfOffer(pending.offer_id)).toBe(0);
  });

  it('an expired offer cannot be accepted (409 offer-expired, offer.expired once); a withdrawn or declined one answers 409 offer-not-pending; each decision is its party\'s', async () => {
    const { cid } = await conversation();
    const soon = await sendOffer(cid, { expires_at: new Date(Date.now() + 60_000).toISOString() });
    clockOffsetMs = 120_000;
    try {
      expectProblem(await accept(buyer, soon.offer_id), 409, 'offer-expired');
      expect((await get(buyer, `/offers/${soon.offer_id}`)).body.status).toBe('expired');
      expect((await get(seller, `/conversations/${cid}/messages`)).body.data[0].offer.status).toBe('expired');
      expectProblem(await post(seller, `/offers/${soon.offer_id}/withdraw`), 409, 'offer-expired');
    } finally {
      clockOffsetMs = 0;
    }
    const expired = (await get(seller, `/events?type=offer.expired&resource_id=${soon.offer_id}`)).body.data;
    expect(expired).toHaveLength(1);
    expect(await ordersOfOffer(soon.offer_id)).toBe(0);

    const withdrawn = await sendOffer(cid);
    expectProblem(await post(buyer, `/offers/${withdrawn.offer_id}/withdraw`), 403, 'forbidden');
    expectProblem(await post(stranger, `/offers/${withdrawn.offer_id}/withdraw`), 404, 'not-found');
    const w = await post(seller, `/offers/${withdrawn.offer_id}/withdraw`);
    expect(w.status).toBe(200);
    expect(w.body.status).toBe('withdrawn');
    const refused = await accept(buyer, withdrawn.offer_id);
    expectProblem(refused, 409, 'offer-not-pending');
    expect(refused.body.offer_status).toBe('withdrawn');

    const declined = await sendOffer(cid);
    expectProblem(await post(seller, `/offers/${declined.offer_id}/decline`), 403, 'forbidden');
    expect((await post(buyer, `/offers/${declined.offer_id}/decline`)).body.status).toBe('declined');
    expectProblem(await accept(buyer, declined.offer_id), 409, 'offer-not-pending');
    expect(await ordersOfOffer(declined.offer_id)).toBe(0);
    const types = (await get(buyer, `/events?resource_type=offer`)).body.data
      .filter((e: { resource_id: string }) => [withdrawn.offer_id, declined.offer_id].includes(e.resource_id))
      .map((e: { type: string }) => e.type);
    expect(types).toEqual(['offer.declined', 'offer.sent', 'offer.withdrawn', 'offer.sent']);
  });

  it('lists the caller\'s offers newest first with cursor pages, by role and status; strangers see none and get 404 on one', async () => {
    const { cid } = await conversation();
    const sent = [await sendOffer(cid), await sendOffer(cid), await sendOffer(cid)];
    const pages = await walk(t.app, buyer, `${API}/offers?role=buyer&status=pending`, 2);
    const ids = pages.flat().map((o) => o.offer_id);
    expect(ids.slice(0, 3)).toEqual(sent.map((o) => o.offer_id).reverse());
    expect(new Set(ids).size).toBe(ids.length);
    expect((await get(seller, '/offers?role=buyer')).body.data).toEqual([]);
    expect((await get(stranger, '/offers')).body.data).toEqual([]);
    expectProblem(await get(stranger, `/offers/${sent[0]!.offer_id}`), 404, 'not-found');
    expect((await get(seller, `/offers/${sent[0]!.offer_id}`)).body.offer_id).toBe(sent[0]!.offer_id);
  });
});
