/**
 * Listings over HTTP (PGlite + FakeChain): create, read, list, update, token metadata.
 * Alice sells, Bob browses.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API,
  countRows,
  createListing,
  expectProblem,
  listingBody,
  setListingStatus,
  setup,
  user,
  walk,
  type TestApp,
  type TestUser,
} from './helpers/marketplace-fixtures.js';
import type { FakeChain } from './helpers/fake-chain.js';

let t: TestApp;
let app: TestApp['app'];
let db: TestApp['ctx']['db'];
let chain: FakeChain;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  ({ t, app, db, chain } = await setup());
  alice = await user(t);
  bob = await user(t);
});

afterAll(async () => {
  await t?.close();
});

describe('POST /listings', () => {
  it('mints the token to the seller and returns 201 with the mint address and transaction', async () => {
    const before = await countRows(db, 'listings');
    const res = await request(app).post(`${API}/listings`).set(alice.headers).send(listingBody());
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const l = res.body;
    expect(l).toMatchObject({
      seller_wallet: alice.wallet,
      title: 'Logo design in three days',
      price: 25.5,
      price_base_units: '25500000',
      currency: 'USDC',
      category: 'design',
      duration: 3,
      status: 'available',
      metadata: { token_standard: 'token-2022', symbol: 'BZR', name: 'Logo design in three days' },
    });
    expect(l.listing_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(l.mint_transaction.signature).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    expect(l.mint_transaction.slot).toBeGreaterThan(0);
    const token = chain.tokens.get(l.token_mint_address)!;
    expect(token.owner).toBe(alice.wallet);
    expect(token.uri).toMatch(new RegExp(`/api/v1/listings/${l.listing_id}/token-metadata\\.json$`));
    expect(l.metadata.metadata_uri).toBe(token.uri);
    expect(await countRows(db, 'listings')).toBe(before + 1);
  });

  it('truncates the token name to 32 characters', async () => {
    const title = 'A very long listing title that goes well beyond thirty-two characters';
    const l = await createListing(app, alice, { title });
    expect(l.title).toBe(title);
    expect(chain.tokens.get(l.token_mint_address)!.name).toBe(title.slice(0, 32).trimEnd());
  });

  it.each([
    ['title too short', { title: 'ab' }, 'body.title'],
    ['title too long', { title: 'x'.repeat(121) }, 'body.title'],
    ['empty description', { description: '   ' }, 'body.description'],
    ['zero price', { price: 0 }, 'body.price'],
    ['negative price', { price: -3 }, 'body.price'],
    ['price with 7 decimals in USDC', { price: 1.0000001 }, 'body.price'],
    ['price as a string', { price: '12' }, 'body.price'],
    ['unknown currency', { currency: 'EUR' }, 'body.currency'],
    ['unknown category', { category: 'cooking' }, 'body.category'],
    ['duration 0', { duration: 0 }, 'body.duration'],
    ['duration 1.5', { duration: 1.5 }, 'body.duration'],
    ['unknown field', { colour: 'red' }, 'body'],
  ])('400 validation-error for %s, nothing written, nothing minted', async (_name, over, path) => {
    const rows = await countRows(db, 'listings');
    const mints = chain.tokens.size;
    const res = await request(app).post(`${API}/listings`).set(alice.headers).send(listingBody(over));
    expectProblem(res, 400, 'validation-error');
    const paths = (res.body.errors as Array<{ path: string }>).map((e) => e.path);
    expect(paths.some((p) => p === path || p.startsWith(`${path}.`) || (path === 'body' && p.startsWith('body'))), JSON.stringify(paths)).toBe(true);
    expect(await countRows(db, 'listings')).toBe(rows);
    expect(chain.tokens.size).toBe(mints);
  });

  it('accepts 9 decimals in SOL but not 10', async () => {
    const ok = await createListing(app, alice, { currency: 'SOL', price: 0.123456789 });
    expect(ok.price_base_units).toBe('123456789');
    const res = await request(app).post(`${API}/listings`).set(alice.headers).send(listingBody({ currency: 'SOL', price: 0.1234567891 }));
    expectProblem(res, 400, 'validation-error', ['body.price']);
    expect(res.body.errors[0].code).toBe('too_many_decimals');
  });

  it('an optional Idempotency-Key: the same key and body replay the first 201 (one listing, one token)', async () => {
    const rows = await countRows(db, 'listings');
    const tokens = chain.tokens.size;
    const key = `listing-${crypto.randomUUID()}`;
    const body = listingBody({ title: 'Retried after a lost response' });
    const first = await request(app).post(`${API}/listings`).set(alice.headers).set('Idempotency-Key', key).send(body);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    const again = await request(app).post(`${API}/listings`).set(alice.headers).set('Idempotency-Key', key).send(body);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await countRows(db, 'listings')).toBe(rows + 1);
    expect(chain.tokens.size).toBe(tokens + 1);
    // the same key with another body is refused; another user's identical key is their own
    const other = await request(app).post(`${API}/listings`).set(alice.headers).set('Idempotency-Key', key).send({ ...body, price: 1 });
    expectProblem(other, 422, 'idempotency-key-reused');
    const bobs = await request(app).post(`${API}/listings`).set(bob.headers).set('Idempotency-Key', key).send(body);
    expect(bobs.status).toBe(201);
    expect(bobs.body.listing_id).not.toBe(first.body.listing_id);
    // without a key, the same body twice is two listings (the key is what makes a retry safe)
    const a = await createListing(app, alice, { title: 'No key, first' });
    const b = await createListing(app, alice, { title: 'No key, first' });
    expect(a.listing_id).not.toBe(b.listing_id);
  });

  it('Idempotency-Key: a retry after the listing was stored but its response was not (a crash in between) returns that listing, no second token', async () => {
    const key = `listing-${crypto.randomUUID()}`;
    const body = listingBody({ title: 'Stored, response lost' });
    const first = await request(app).post(`${API}/listings`).set(alice.headers).set('Idempotency-Key', key).send(body);
    expect(first.status).toBe(201);
    // the process died after the listing commit and before the key's response was stored: the key's
    // record is gone (its lease lapsed), only the listing and its mint intent exist
    await db.$executeRaw`DELETE FROM idempotency_keys WHERE key = ${key}`;
    const rows = await countRows(db, 'listings');
    const tokens = chain.tokens.size;
    const retry = await request(app).post(`${API}/listings`).set(alice.headers).set('Idempotency-Key', key).send(body);
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    expect(retry.body.listing_id).toBe(first.body.listing_id);
    expect(retry.body.token_mint_address).toBe(first.body.token_mint_address);
    expect(await countRows(db, 'listings')).toBe(rows);
    expect(chain.tokens.size).toBe(tokens);
  });

  it('400 for a malformed Idempotency-Key', async () => {
    const res = await request(app).post(`${API}/listings`).set(alice.headers).set('Idempotency-Key', 'é'.repeat(3)).send(listingBody());
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  });

  it('401 without a credential', async () => {
    const rows = await countRows(db, 'listings');
    const res = await request(app).post(`${API}/listings`).send(listingBody());
    expectProblem(res, 401, 'unauthorized');
    expect(await countRows(db, 'listings')).toBe(rows);
  });

  it('503 chain-unavailable and no row when the chain cannot be reached', async () => {
    const rows = await countRows(db, 'listings');
    chain.down = true;
    try {
      const res = await request(app).post(`${API}/listings`).set(alice.headers).send(listingBody());
      expectProblem(res, 503, 'chain-unavailable');
    } finally {
      chain.down = false;
    }
    expect(await countRows(db, 'listings')).toBe(rows);
  });
});

describe('GET /listings/{id}', () => {
  it('returns the listing with status and metadata', async () => {
    const l = await createListing(app, alice);
    const res = await request(app).get(`${API}/listings/${l.listing_id}`).set(bob.headers);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ listing_id: l.listing_id, status: 'available', token_mint_address: l.token_mint_address });
    expect(res.body.metadata).toMatchObject({ symbol: 'BZR', seller_rating: null, seller_review_count: 0 });
  });

  it('404 for an unknown id, 400 for a malformed one, 401 without a credential', async () => {
    expectProblem(await request(app).get(`${API}/listings/6f1c2a7e-1111-4111-8111-111111111111`).set(bob.headers), 404, 'not-found');
    expectProblem(await request(app).get(`${API}/listings/not-a-uuid`).set(bob.headers), 400, 'validation-error', ['params.listing_id']);
    const l = await createListing(app, alice);
    expectProblem(await request(app).get(`${API}/listings/${l.listing_id}`), 401, 'unauthorized');
  });
});

describe('PATCH /listings/{id}', () => {
  it('the seller edits fields; a title change renames the token on chain', async () => {
    const l = await createListing(app, alice);
    const res = await request(app)
      .patch(`${API}/listings/${l.listing_id}`)
      .set(alice.headers)
      .send({ title: 'Brand identity pack', price: 40, description: 'Logo, palette, fonts.', duration: 5, category: 'writing' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ title: 'Brand identity pack', price: 40, price_base_units: '40000000', duration: 5, category: 'writing' });
    expect(chain.tokens.get(l.token_mint_address)!.name).toBe('Brand identity pack');
  });

  it('403 for another user, 401 without credential; nothing changes', async () => {
    const l = await createListing(app, alice);
    expectProblem(await request(app).patch(`${API}/listings/${l.listing_id}`).set(bob.headers).send({ price: 1 }), 403, 'forbidden');
    expectProblem(await request(app).patch(`${API}/listings/${l.listing_id}`).send({ price: 1 }), 401, 'unauthorized');
    const now = await request(app).get(`${API}/listings/${l.listing_id}`).set(alice.headers);
    expect(now.body.price).toBe(25.5);
  });

  it('400 for bad fields (nothing changes) and for status values the seller may not set', async () => {
    const l = await createListing(app, alice);
    for (const [body, path] of [
      [{ price: 0.0000001 }, 'body.price'],
      [{ category: 'cooking' }, 'body.category'],
      [{ status: 'sold' }, 'body.status'],
      [{ currency: 'SOL' }, 'body'],
      [{}, 'body'],
    ] as const) {
      const res = await request(app).patch(`${API}/listings/${l.listing_id}`).set(alice.headers).send(body);
      expectProblem(res, 400, 'validation-error');
      const paths = (res.body.errors as Array<{ path: string }>).map((e) => e.path);
      expect(paths.some((p) => p.startsWith(path)), JSON.stringify(paths)).toBe(true);
    }
    const now = await request(app).get(`${API}/listings/${l.listing_id}`).set(alice.headers);
    expect(now.body).toMatchObject({ price: 25.5, category: 'design', status: 'available' });
  });

  it('unlist and relist; an unlisted listing is hidden from others', async () => {
    const l = await createListing(app, alice);
    const un = await request(app).patch(`${API}/listings/${l.listing_id}`).set(alice.headers).send({ status: 'unlisted' });
    expect(un.body.status).toBe('unlisted');
    expectProblem(await request(app).get(`${API}/listings/${l.listing_id}`).set(bob.headers), 404, 'not-found');
    expect((await request(app).get(`${API}/listings/${l.listing_id}`).set(alice.headers)).body.status).toBe('unlisted');
    const re = await request(app).patch(`${API}/listings/${l.listing_id}`).set(alice.headers).send({ status: 'available' });
    expect(re.body.status).toBe('available');
  });

  it('409 invalid-state-transition on reserved or sold listings', async () => {
    const l = await createListing(app, alice);
    await setListingStatus(db, l.listing_id, 'reserved');
    expectProblem(await request(app).patch(`${API}/listings/${l.listing_id}`).set(alice.headers).send({ status: 'unlisted' }), 409, 'invalid-state-transition');
    await setListingStatus(db, l.listing_id, 'sold');
    expectProblem(await request(app).patch(`${API}/listings/${l.listing_id}`).set(alice.headers).send({ price: 99 }), 409, 'invalid-state-transition');
  });

  it('503 and no change when the chain is down during a rename', async () => {
    const l = await createListing(app, alice);
    chain.down = true;
    try {
      expectProblem(await request(app).patch(`${API}/listings/${l.listing_id}`).set(alice.headers).send({ title: 'Renamed while offline' }), 503, 'chain-unavailable');
    } finally {
      chain.down = false;
    }
    expect((await request(app).get(`${API}/listings/${l.listing_id}`).set(alice.headers)).body.title).toBe('Logo design in three days');
  });
});

describe('GET /listings/{id}/token-metadata.json', () => {
  it('is public Metaplex-style JSON', async () => {
    const l = await createListing(app, alice, { category: 'design', price: 12.5, duration: 4 });
    const res = await request(app).get(`${API}/listings/${l.listing_id}/token-metadata.json`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: 'Logo design in three days', symbol: 'BZR', description: expect.any(String) });
    expect(res.body.external_url).toMatch(new RegExp(`/api/v1/listings/${l.listing_id}$`));
    expect(res.body.attributes).toEqual([{ trait_type: 'category', value: expect.any(String) }]);
  });

  it('serves only what the token needs, and nothing while the listing is unlisted (issue 21 item 9)', async () => {
    const l = await createListing(app, alice, { description: 'Private brief: client ACME, budget 12.5', price: 12.5 });
    const listed = await request(app).get(`${API}/listings/${l.listing_id}/token-metadata.json`);
    expect(listed.status).toBe(200);
    expect(Object.keys(listed.body).sort()).toEqual(['attributes', 'description', 'external_url', 'name', 'symbol']);
    const text = JSON.stringify(listed.body);
    for (const leak of ['Private brief', '12.5', alice.wallet, 'USDC']) expect(text, leak).not.toContain(leak);

    expect((await request(app).patch(`${API}/listings/${l.listing_id}`).set(alice.headers).send({ status: 'unlisted' })).status).toBe(200);
    expectProblem(await request(app).get(`${API}/listings/${l.listing_id}`).set(bob.headers), 404, 'not-found');
    expectProblem(await request(app).get(`${API}/listings/${l.listing_id}/token-metadata.json`), 404, 'not-found');
    // relisted: served again
    expect((await request(app).patch(`${API}/listings/${l.listing_id}`).set(alice.headers).send({ status: 'available' })).status).toBe(200);
    expect((await request(app).get(`${API}/listings/${l.listing_id}/token-metadata.json`)).status).toBe(200);
  });

  it('404 for an unknown listing', async () => {
    expectProblem(await request(app).get(`${API}/listings/6f1c2a7e-2222-4222-8222-222222222222/token-metadata.json`), 404, 'not-found');
  });
});

describe('GET /listings', () => {
  let carol: TestUser;
  const ids: string[] = [];
  beforeAll(async () => {
    carol = await user(t);
    for (let i = 0; i < 45; i++) ids.push((await createListing(app, carol, { title: `Carol service ${i}`, category: i % 3 === 0 ? 'writing' : 'design' })).listing_id);
  });

  it('walks 45 listings of a seller in pages of 20, newest first, without duplicates or gaps', async () => {
    const pages = await walk(app, bob, `${API}/listings?seller_wallet=${carol.wallet}`, 20);
    expect(pages.map((p) => p.length)).toEqual([20, 20, 5]);
    const seen = pages.flat().map((l) => l.listing_id as string);
    expect(new Set(seen).size).toBe(45);
    expect(seen).toEqual([...ids].reverse());
  });

  it('filters by status (active = available) and category', async () => {
    await setListingStatus(db, ids[0]!, 'sold');
    const sold = await request(app).get(`${API}/listings?seller_wallet=${carol.wallet}&status=sold`).set(bob.headers);
    expect(sold.body.data.map((l: { listing_id: string }) => l.listing_id)).toEqual([ids[0]]);
    const active = await walk(app, bob, `${API}/listings?seller_wallet=${carol.wallet}&status=active`, 100);
    expect(active.flat()).toHaveLength(44);
    const writing = await walk(app, bob, `${API}/listings?seller_wallet=${carol.wallet}&category=writing`, 100);
    expect(writing.flat().every((l) => l.category === 'writing')).toBe(true);
    expect(writing.flat()).toHaveLength(15);
  });

  it('unlisted listings appear only for their seller', async () => {
    await setListingStatus(db, ids[1]!, 'unlisted');
    const forBob = (await walk(app, bob, `${API}/listings?seller_wallet=${carol.wallet}`, 100)).flat();
    expect(forBob.some((l) => l.listing_id === ids[1])).toBe(false);
    const forCarol = (await walk(app, carol, `${API}/listings?seller_wallet=${carol.wallet}`, 100)).flat();
    expect(forCarol.some((l) => l.listing_id === ids[1])).toBe(true);
    const unlistedForBob = await request(app).get(`${API}/listings?seller_wallet=${carol.wallet}&status=unlisted`).set(bob.headers);
    expect(unlistedForBob.body.data).toEqual([]);
  });

  it('400 for a bad cursor, a cursor from other filters, or a bad limit', async () => {
    expectProblem(await request(app).get(`${API}/listings?cursor=garbage!`).set(bob.headers), 400, 'validation-error', ['query.cursor']);
    const first = await request(app).get(`${API}/listings?seller_wallet=${carol.wallet}&limit=5`).set(bob.headers);
    const other = await request(app).get(`${API}/listings?category=writing&cursor=${first.body.next_cursor}`).set(bob.headers);
    expectProblem(other, 400, 'validation-error', ['query.cursor']);
    expectProblem(await request(app).get(`${API}/listings?limit=0`).set(bob.headers), 400, 'validation-error', ['query.limit']);
    expectProblem(await request(app).get(`${API}/listings?limit=101`).set(bob.headers), 400, 'validation-error', ['query.limit']);
    expectProblem(await request(app).get(`${API}/listings?seller_wallet=nope`).set(bob.headers), 400, 'validation-error', ['query.seller_wallet']);
  });

  it('401 without a credential', async () => {
    expectProblem(await request(app).get(`${API}/listings`), 401, 'unauthorized');
  });
});

describe('order lifecycle hooks (listings service over the real database)', () => {
  it('two orders funded at once: exactly one reserve wins, the other is listing-unavailable', async () => {
    const l = await createListing(app, alice);
    const svc = t.services.listings.service;
    const results = await Promise.allSettled([svc.applyOrderEvent(l.listing_id, 'order_funded'), svc.applyOrderEvent(l.listing_id, 'order_funded')]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason.slug).toBe('listing-unavailable');
    expect((await request(app).get(`${API}/listings/${l.listing_id}`).set(bob.headers)).body.status).toBe('reserved');
  });

  it('a refund returns a reserved listing to the marketplace; a completed order makes it sold, which is terminal', async () => {
    const l = await createListing(app, alice);
    const port = t.services.listings.port;
    await port.applyOrderEvent(l.listing_id, 'order_funded');
    await port.applyOrderEvent(l.listing_id, 'order_refunded');
    expect((await port.get(l.listing_id))!.status).toBe('available');
    await port.applyOrderEvent(l.listing_id, 'order_funded');
    await port.applyOrderEvent(l.listing_id, 'order_completed');
    expect((await port.get(l.listing_id))!.status).toBe('sold');
    await expect(port.applyOrderEvent(l.listing_id, 'order_refunded')).rejects.toMatchObject({ slug: 'invalid-state-transition' });
    expect(await port.get('6f1c2a7e-3333-4333-8333-333333333333')).toBeNull();
  });
});

describe('PUBLIC_MARKETPLACE=true: anonymous reads', () => {
  it('anonymous callers read listings and search, never see unlisted ones, and still cannot write', async () => {
    const pub = await setup({ config: { publicMarketplace: true } });
    const seller = await user(pub.t);
    const shown = await createListing(pub.app, seller, { title: 'Public quillwork listing' });
    const hidden = await createListing(pub.app, seller, { title: 'Hidden quillwork listing' });
    await setListingStatus(pub.db, hidden.listing_id, 'unlisted');
    expect((await request(pub.app).get(`${API}/listings/${shown.listing_id}`)).status).toBe(200);
    expectProblem(await request(pub.app).get(`${API}/listings/${hidden.listing_id}`), 404, 'not-found');
    const list = await request(pub.app).get(`${API}/listings?seller_wallet=${seller.wallet}`);
    expect(list.body.data.map((l: { listing_id: string }) => l.listing_id)).toEqual([shown.listing_id]);
    const search = await request(pub.app).get(`${API}/marketplace/search?query=quillwork`);
    expect(search.body.data.map((l: { listing_id: string }) => l.listing_id)).toEqual([shown.listing_id]);
    expectProblem(await request(pub.app).post(`${API}/listings`).send(listingBody()), 401, 'unauthorized');
    await pub.t.close();
  });
});
