/**
 * Marketplace search and browse over HTTP (PGlite + FakeChain): full-text relevance, typo
 * tolerance, price filters, every sort paginated end to end, similar listings, categories with counts.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API,
  createListing,
  expectProblem,
  insertOrder,
  setListingStatus,
  setup,
  user,
  walk,
  type TestApp,
  type TestUser,
} from './helpers/marketplace-fixtures.js';

let t: TestApp;
let app: TestApp['app'];
let db: TestApp['ctx']['db'];
let sellers: TestUser[];
let bob: TestUser;
/** the 45-listing set used for pagination, tagged with a unique word so searches isolate it */
const TAG = 'zephyrine';
const set45: Array<{ listing_id: string; price: number; currency: string; seller_wallet: string; created_at: string }> = [];

const q = (params: Record<string, string | number>) =>
  `${API}/marketplace/search?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)] as [string, string])).toString()}`;

beforeAll(async () => {
  ({ t, app, db } = await setup());
  bob = await user(t);
  sellers = [await user(t), await user(t), await user(t)];
  // 45 listings, three sellers, both currencies, many equal prices (ties exercise the id tiebreak)
  for (let i = 0; i < 45; i++) {
    const seller = sellers[i % 3]!;
    const currency = i % 4 === 0 ? 'SOL' : 'USDC';
    const price = currency === 'SOL' ? [0.5, 1.25, 2][i % 3]! : [5, 10, 10, 25.5, 100][i % 5]!;
    const l = await createListing(app, seller, {
      title: `${TAG} package ${i}`,
      description: `Item ${i} of the ${TAG} set`,
      price,
      currency,
      category: i % 2 ? 'design' : 'writing',
    });
    set45.push(l as never);
  }
  // reputations: seller0 avg 5 (1 review), seller1 avg 3 (2 reviews), seller2 none
  const reviewed = async (seller: TestUser, rating: number) => {
    const l = await createListing(app, seller, { title: 'Reviewed gig for reputation', category: 'design' });
    await setListingStatus(db, l.listing_id, 'sold');
    const orderId = await insertOrder(db, { listingId: l.listing_id, buyerId: bob.userId, sellerId: seller.userId, status: 'completed' });
    const res = await request(app).post(`${API}/orders/${orderId}/review`).set(bob.headers).send({ rating });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  };
  await reviewed(sellers[0]!, 5);
  await reviewed(sellers[1]!, 4);
  await reviewed(sellers[1]!, 2);
});

afterAll(async () => {
  await t?.close();
});

function expectAllOnce(pages: Array<Array<Record<string, unknown>>>, expected: string[]) {
  const seen = pages.flat().map((l) => l.listing_id as string);
  expect(seen.length).toBe(expected.length);
  expect(new Set(seen).size).toBe(seen.length); // no duplicates
  expect([...seen].sort()).toEqual([...expected].sort()); // no gaps
  return seen;
}

describe('GET /marketplace/search: pagination for every sort', () => {
  const all = () => set45.map((l) => l.listing_id);
  const uiPrice = (l: Record<string, unknown>) => l.price as number;

  it('relevance (query present)', async () => {
    const pages = await walk(app, bob, q({ query: TAG }), 20);
    expect(pages.map((p) => p.length)).toEqual([20, 20, 5]);
    expectAllOnce(pages, all());
  });

  it('price_asc and price_desc order by UI price, ties broken stably', async () => {
    for (const sort of ['price_asc', 'price_desc'] as const) {
      const pages = await walk(app, bob, q({ query: TAG, sort }), 20);
      const flat = pages.flat();
      expectAllOnce(pages, all());
      const prices = flat.map(uiPrice);
      const sorted = [...prices].sort((a, b) => (sort === 'price_asc' ? a - b : b - a));
      expect(prices).toEqual(sorted);
    }
  });

  it('price_asc within one currency (base units keyset)', async () => {
    const pages = await walk(app, bob, q({ query: TAG, sort: 'price_asc', currency: 'USDC' }), 20);
    const flat = pages.flat();
    expectAllOnce(pages, set45.filter((l) => l.currency === 'USDC').map((l) => l.listing_id));
    expect(flat.map(uiPrice)).toEqual([...flat.map(uiPrice)].sort((a, b) => a - b));
  });

  it('rating: seller average then count, unrated last', async () => {
    const pages = await walk(app, bob, q({ query: TAG, sort: 'rating' }), 20);
    const flat = pages.flat();
    expectAllOnce(pages, all());
    const rank = (w: unknown) => (w === sellers[0]!.wallet ? 0 : w === sellers[1]!.wallet ? 1 : 2);
    const ranks = flat.map((l) => rank(l.seller_wallet));
    expect(ranks).toEqual([...ranks].sort());
    expect(flat[0]!.metadata).toMatchObject({ seller_rating: 5, seller_review_count: 1 });
    expect(flat[20]!.metadata).toMatchObject({ seller_rating: 3, seller_review_count: 2 });
    expect(flat[44]!.metadata).toMatchObject({ seller_rating: null, seller_review_count: 0 });
  });

  it('newest (and relevance without a query falls back to newest)', async () => {
    for (const params of [{ sort: 'newest' }, {}] as Array<Record<string, string>>) {
      const pages = await walk(app, bob, q({ ...params, currency: 'SOL' }), 5);
      const flat = pages.flat();
      const times = flat.map((l) => l.created_at as string);
      expect(times).toEqual([...times].sort().reverse());
      expect(new Set(flat.map((l) => l.listing_id)).size).toBe(flat.length);
      expect(flat.length).toBe(12);
    }
  });

  it('a cursor is bound to its sort and filters (400 otherwise)', async () => {
    const first = await request(app).get(q({ query: TAG, sort: 'price_asc', limit: 5 })).set(bob.headers);
    const cursor = first.body.next_cursor as string;
    expectProblem(await request(app).get(q({ query: TAG, sort: 'price_desc', cursor })).set(bob.headers), 400, 'validation-error', ['query.cursor']);
    expectProblem(await request(app).get(q({ query: 'other', sort: 'price_asc', cursor })).set(bob.headers), 400, 'validation-error', ['query.cursor']);
    expectProblem(await request(app).get(q({ query: TAG, cursor: 'eyJub3QiOiJvdXJzIn0' })).set(bob.headers), 400, 'validation-error', ['query.cursor']);
  });
});

describe('GET /marketplace/search: text', () => {
  let titleMatch: string;
  let descMatch: string;
  beforeAll(async () => {
    const s = sellers[2]!;
    descMatch = (await createListing(app, s, { title: 'Corporate stationery set', description: 'Includes a quokkaline mascot sketch.' })).listing_id;
    titleMatch = (await createListing(app, s, { title: 'Quokkaline mascot design', description: 'Cute characters for brands.' })).listing_id;
    await createListing(app, s, { title: 'Professional logo design', description: 'Vector logo, three concepts.' });
    await createListing(app, s, { title: 'Technical blog writing', description: 'Long-form articles.' });
  });

  it('an exact title match ranks above a description match', async () => {
    const res = await request(app).get(q({ query: 'quokkaline mascot' })).set(bob.headers);
    const ids = res.body.data.map((l: { listing_id: string }) => l.listing_id);
    expect(ids.indexOf(titleMatch)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(descMatch)).toBeGreaterThan(ids.indexOf(titleMatch));
  });

  it('tolerates typos in the title ("desgin" finds "design")', async () => {
    const res = await request(app).get(q({ query: 'desgin' })).set(bob.headers);
    const titles = res.body.data.map((l: { title: string }) => l.title);
    expect(titles).toContain('Professional logo design');
    expect(titles).not.toContain('Technical blog writing');
  });

  it('websearch syntax: quoted phrases and exclusions', async () => {
    const res = await request(app).get(q({ query: '"logo design" -mascot' })).set(bob.headers);
    const titles = res.body.data.map((l: { title: string }) => l.title);
    expect(titles).toContain('Professional logo design');
    expect(titles).not.toContain('Quokkaline mascot design');
  });

  it('only available listings are searched', async () => {
    const l = await createListing(app, sellers[2]!, { title: 'Vanishing xylograph service' });
    expect((await request(app).get(q({ query: 'xylograph' })).set(bob.headers)).body.data).toHaveLength(1);
    await setListingStatus(db, l.listing_id, 'reserved');
    expect((await request(app).get(q({ query: 'xylograph' })).set(bob.headers)).body.data).toHaveLength(0);
  });

  it('odd input is just text: operators, quotes, stop words, unicode, SQL never break the search', async () => {
    for (const query of ["'", '\\', '&|!():*<>', '"unbalanced', 'the', 'café — 設計', "x'); DROP TABLE listings; --", '-', 'or or or']) {
      const res = await request(app).get(q({ query })).set(bob.headers);
      expect(res.status, `${query}: ${JSON.stringify(res.body)}`).toBe(200);
    }
    expect((await request(app).get(q({ query: TAG, limit: 1 })).set(bob.headers)).body.data).toHaveLength(1);
  });

  it('query length is bounded (1..200)', async () => {
    expectProblem(await request(app).get(q({ query: 'x'.repeat(201) })).set(bob.headers), 400, 'validation-error', ['query.query']);
  });
});

describe('GET /marketplace/search: filters', () => {
  const ids = (res: request.Response) => res.body.data.map((l: { listing_id: string }) => l.listing_id).sort();
  const expected = (pred: (l: (typeof set45)[number]) => boolean) => set45.filter(pred).map((l) => l.listing_id).sort();

  it('min_price/max_price compare the UI price in each listing\'s own currency', async () => {
    const res = await request(app).get(q({ query: TAG, min_price: 1, max_price: 10, limit: 100 })).set(bob.headers);
    expect(ids(res)).toEqual(expected((l) => l.price >= 1 && l.price <= 10));
    const usdc = await request(app).get(q({ query: TAG, currency: 'USDC', min_price: 10, limit: 100 })).set(bob.headers);
    expect(ids(usdc)).toEqual(expected((l) => l.currency === 'USDC' && l.price >= 10));
    const sol = await request(app).get(q({ query: TAG, currency: 'SOL', max_price: 1.25, limit: 100 })).set(bob.headers);
    expect(ids(sol)).toEqual(expected((l) => l.currency === 'SOL' && l.price <= 1.25));
  });

  it('bounds are exact at the edges and finer than the currency', async () => {
    const exact = await request(app).get(q({ query: TAG, currency: 'USDC', min_price: 25.5, max_price: 25.5, limit: 100 })).set(bob.headers);
    expect(ids(exact)).toEqual(expected((l) => l.currency === 'USDC' && l.price === 25.5));
    const fine = await request(app).get(q({ query: TAG, currency: 'USDC', min_price: 25.4999999, max_price: 25.5000001, limit: 100 })).set(bob.headers);
    expect(ids(fine)).toEqual(ids(exact));
  });

  it('category, currency and seller_wallet filters', async () => {
    const res = await request(app)
      .get(q({ query: TAG, category: 'design', currency: 'USDC', seller_wallet: sellers[1]!.wallet, limit: 100 }))
      .set(bob.headers);
    expect(ids(res)).toEqual(
      expected((l, i = set45.indexOf(l)) => i % 2 === 1 && l.currency === 'USDC' && l.seller_wallet === sellers[1]!.wallet),
    );
  });

  it('400 for min_price > max_price, negative prices, unknown category or currency', async () => {
    expectProblem(await request(app).get(q({ min_price: 10, max_price: 5 })).set(bob.headers), 400, 'validation-error', ['query.min_price']);
    expectProblem(await request(app).get(q({ min_price: -1 })).set(bob.headers), 400, 'validation-error', ['query.min_price']);
    expectProblem(await request(app).get(q({ max_price: 'cheap' })).set(bob.headers), 400, 'validation-error', ['query.max_price']);
    expectProblem(await request(app).get(q({ category: 'cooking' })).set(bob.headers), 400, 'validation-error', ['query.category']);
    expectProblem(await request(app).get(q({ currency: 'EUR' })).set(bob.headers), 400, 'validation-error', ['query.currency']);
    expectProblem(await request(app).get(q({ sort: 'cheapest' })).set(bob.headers), 400, 'validation-error', ['query.sort']);
  });

  it('401 without a credential', async () => {
    expectProblem(await request(app).get(q({ query: TAG })), 401, 'unauthorized');
  });
});

describe('GET /marketplace/listings', () => {
  it('status active (default) = available; sold and reserved on request; unlisted never', async () => {
    const s = sellers[2]!;
    const a = await createListing(app, s, { category: 'marketing', title: 'Marketing plan A' });
    const b = await createListing(app, s, { category: 'marketing', title: 'Marketing plan B' });
    const c = await createListing(app, s, { category: 'marketing', title: 'Marketing plan C' });
    await setListingStatus(db, b.listing_id, 'sold');
    await setListingStatus(db, c.listing_id, 'unlisted');
    const get = async (extra: string) =>
      (await request(app).get(`${API}/marketplace/listings?category=marketing${extra}`).set(bob.headers)).body.data.map(
        (l: { listing_id: string }) => l.listing_id,
      );
    expect(await get('')).toEqual([a.listing_id]);
    expect(await get('&status=active')).toEqual([a.listing_id]);
    expect(await get('&status=available')).toEqual([a.listing_id]);
    expect(await get('&status=sold')).toEqual([b.listing_id]);
    expectProblem(await request(app).get(`${API}/marketplace/listings?status=unlisted`).set(bob.headers), 400, 'validation-error', ['query.status']);
  });

  it('walks all available listings in pages of 20 without duplicates', async () => {
    const pages = await walk(app, bob, `${API}/marketplace/listings`, 20);
    const flat = pages.flat();
    expect(new Set(flat.map((l) => l.listing_id)).size).toBe(flat.length);
    expect(flat.every((l) => l.status === 'available')).toBe(true);
    expect(flat.length).toBeGreaterThanOrEqual(45);
  });
});

describe('GET /listings/{listing_id}/similar', () => {
  it('lists the available listings of the same category, the listing itself left out, newest first, in pages', async () => {
    const [s0, s1] = [sellers[0]!, sellers[1]!];
    const ref = await createListing(app, s0, { category: 'music', title: 'Jingle for a podcast' });
    const others = [];
    for (let i = 0; i < 5; i++) others.push(await createListing(app, i % 2 ? s0 : s1, { category: 'music', title: `Music gig ${i}` }));
    const sold = await createListing(app, s1, { category: 'music', title: 'Sold music gig' });
    const unlisted = await createListing(app, s1, { category: 'music', title: 'Unlisted music gig' });
    const held = await createListing(app, s1, { category: 'music', title: 'Held music gig' });
    await createListing(app, s1, { category: 'video', title: 'A video, another category' });
    await setListingStatus(db, sold.listing_id, 'sold');
    await setListingStatus(db, unlisted.listing_id, 'unlisted');
    await insertOrder(db, { listingId: held.listing_id, buyerId: bob.userId, sellerId: s1.userId, status: 'awaiting_payment' });

    const pages = await walk(app, bob, `${API}/listings/${ref.listing_id}/similar`, 2);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    const flat = pages.flat();
    // newest first: the reverse of creation order; nothing sold, unlisted, held, of another category, nor the listing itself
    expect(flat.map((l) => l.listing_id)).toEqual(others.map((l) => l.listing_id).reverse());
    expect(flat.every((l) => l.status === 'available' && l.category === 'music')).toBe(true);

    // the listing may itself be sold: its similar listings are still the available ones
    const fromSold = await request(app).get(`${API}/listings/${sold.listing_id}/similar?limit=100`).set(bob.headers);
    expect(fromSold.status).toBe(200);
    expect(fromSold.body.data.map((l: { listing_id: string }) => l.listing_id).sort()).toEqual(
      [ref, ...others].map((l) => l.listing_id).sort(),
    );
  });

  it('404 for an unknown listing, and for an unlisted one to all but its seller; a cursor is bound to its listing', async () => {
    const s = sellers[2]!;
    const hidden = await createListing(app, s, { category: 'data', title: 'Unlisted data gig' });
    const a = await createListing(app, s, { category: 'data', title: 'Data gig A' });
    await createListing(app, s, { category: 'data', title: 'Data gig B' });
    await setListingStatus(db, hidden.listing_id, 'unlisted');
    expectProblem(await request(app).get(`${API}/listings/${crypto.randomUUID()}/similar`).set(bob.headers), 404, 'not-found');
    expectProblem(await request(app).get(`${API}/listings/${hidden.listing_id}/similar`).set(bob.headers), 404, 'not-found');
    const own = await request(app).get(`${API}/listings/${hidden.listing_id}/similar`).set(s.headers);
    expect(own.status).toBe(200);
    expect(own.body.data).toHaveLength(2);
    const first = await request(app).get(`${API}/listings/${hidden.listing_id}/similar?limit=1`).set(s.headers);
    expect(first.body.next_cursor).toEqual(expect.any(String));
    expectProblem(
      await request(app).get(`${API}/listings/${a.listing_id}/similar?limit=1&cursor=${first.body.next_cursor}`).set(s.headers),
      400,
      'validation-error',
      ['query.cursor'],
    );
    expectProblem(await request(app).get(`${API}/listings/not-a-uuid/similar`).set(bob.headers), 400, 'validation-error', ['params.listing_id']);
  });

  it('401 without a credential (PUBLIC_MARKETPLACE off)', async () => {
    expectProblem(await request(app).get(`${API}/listings/${set45[0]!.listing_id}/similar`), 401, 'unauthorized');
  });
});

describe('GET /categories', () => {
  it('lists every configured category with its number of available listings, zeros included', async () => {
    const res = await request(app).get(`${API}/categories`).set(bob.headers);
    expect(res.status).toBe(200);
    const counts = await db.$queryRaw<Array<{ category: string; n: number }>>`
      SELECT category, count(*)::int AS n FROM listings WHERE status = 'available' GROUP BY category`;
    const byCat = new Map(counts.map((r: { category: string; n: number }) => [r.category, Number(r.n)]));
    expect(res.body.data.length).toBeGreaterThan(2);
    for (const c of res.body.data as Array<{ slug: string; name: string; listing_count: number }>) {
      expect(c.name).toEqual(expect.any(String));
      expect(c.listing_count).toBe(byCat.get(c.slug) ?? 0);
    }
    expect((res.body.data as Array<{ listing_count: number }>).some((c) => c.listing_count === 0)).toBe(true);
  });

  it('401 without a credential', async () => {
    expectProblem(await request(app).get(`${API}/categories`), 401, 'unauthorized');
  });
});

describe('GET /currencies', () => {
  it('lists the configured currencies with mint and decimals', async () => {
    const res = await request(app).get(`${API}/currencies`).set(bob.headers);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'USDC', decimals: 6 }),
        expect.objectContaining({ code: 'SOL', decimals: 9, mint: 'So11111111111111111111111111111111111111112' }),
      ]),
    );
  });

  it('401 without a credential (also for browsing)', async () => {
    expectProblem(await request(app).get(`${API}/currencies`), 401, 'unauthorized');
    expectProblem(await request(app).get(`${API}/marketplace/listings`), 401, 'unauthorized');
  });
});
