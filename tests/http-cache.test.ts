/**
 * HTTP caching of the public reads (issue 28 item 2; contract/src/http-cache.ts, server/src/http/http-cache.ts)
 * and the lean read path of item 1 (db/prepared.ts), on both engines (PostgreSQL when TEST_DATABASE_URL is set):
 * - a strong ETag and public Cache-Control on every cacheable read without credentials, `private, no-cache` with
 *   any credential, Vary on the credential headers; If-None-Match -> 304 without a body;
 * - two apps on one database: a write through one is never answered 304 by the other;
 * - a listing that became hidden (unlisted, taken down) answers 404 to an old tag, never 304;
 * - the bodies of the cacheable reads match the contract's 200 schema (production does not validate the
 *   responses it builds), and the prepared-statement listing read answers the same body as Prisma's.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { contract, PRIVATE_CACHE_CONTROL, PUBLIC_CACHE_CONTROL, SESSION_COOKIE_NAME } from '@bazaar/contract';
import type { AppRoute } from '@ts-rest/core';
import { createApp } from '../server/src/app.js';
import { PrismaClient, StatementCounter } from '../server/src/db/client.js';
import { registerDriverPool } from '../server/src/db/prepared.js';
import { eventually } from './helpers/eventually.js';
import { BazaarPgAdapterFactory } from '../server/src/db/postgres.js';
import { BazaarPGliteAdapterFactory } from '../server/src/db/pglite.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { FakeChain } from './helpers/fake-chain.js';
import { API, createListing, expectProblem, insertOrder, user, type TestUser } from './helpers/marketplace-fixtures.js';
import { dbBackends } from './helpers/shared-db.js';

const ETAG = /^"[A-Za-z0-9_-]{22}(-(br|gzip|deflate))?"$/;
const varyOf = (res: request.Response) => String(res.headers.vary ?? '').toLowerCase();

describe.each(dbBackends)('HTTP caching of the public reads ($name)', ({ postgres }) => {
  let t: TestApp;
  let other: { app: ReturnType<typeof createApp>; close(): Promise<void> };
  let seller: TestUser;
  let buyer: TestUser;
  let listingId: string;

  beforeAll(async () => {
    t = await createTestApp({ chain: new FakeChain() as never, postgres, config: { publicMarketplace: true } });
    seller = await user(t);
    buyer = await user(t);
    listingId = (await createListing(t.app, seller)).listing_id;
    // a second replica: its own app and its own database client (and pool) on the same database
    const factory = postgres ? new BazaarPgAdapterFactory(t.postgresUrl!, t.ctx.config.db, new StatementCounter()) : null;
    const prisma = factory ? new PrismaClient({ adapter: factory }) : new PrismaClient({ adapter: new BazaarPGliteAdapterFactory(t.db.pglite!) });
    if (factory?.pool) registerDriverPool(prisma, factory.pool, factory.statements!);
    const app = createApp({ ...t.ctx, db: prisma, readRouter: undefined });
    other = {
      app,
      async close() {
        await app.services.stop();
        await prisma.$disconnect();
        // the pool ends its connections after $disconnect resolves: wait for them before the database is dropped
        if (factory?.pool) await eventually(() => factory.pool!.totalCount === 0, { what: 'the second replica\'s pool closed' });
      },
    };
  }, 120_000);
  afterAll(async () => {
    await other?.close();
    await t?.close();
  });

  const get = (path: string, headers: Record<string, string> = {}, app = t.app) => request(app).get(`${API}${path}`).set(headers);

  it('an anonymous listing read carries a strong ETag, public Cache-Control and Vary; If-None-Match answers 304 without a body', async () => {
    const first = await get(`/listings/${listingId}`);
    expect(first.status).toBe(200);
    expect(first.headers.etag).toMatch(ETAG);
    expect(first.headers['cache-control']).toBe(PUBLIC_CACHE_CONTROL);
    for (const h of ['authorization', 'cookie', 'x-api-key']) expect(varyOf(first)).toContain(h);
    const etag = first.headers.etag as string;
    for (const inm of [etag, `W/${etag}`, `"nope", ${etag}`, '*']) {
      const again = await get(`/listings/${listingId}`, { 'if-none-match': inm });
      expect(again.status, inm).toBe(304);
      expect(again.text ?? '').toBe('');
      expect(again.headers.etag).toBe(etag);
      expect(again.headers['cache-control']).toBe(PUBLIC_CACHE_CONTROL);
      expect(varyOf(again)).toContain('authorization');
    }
    // a request that also says Cache-Control: no-cache (fetch() adds it to a conditional request) is validated too
    const noCache = await get(`/listings/${listingId}`, { 'if-none-match': etag, 'cache-control': 'no-cache', pragma: 'no-cache' });
    expect(noCache.status).toBe(304);
    const changed = await get(`/listings/${listingId}`, { 'if-none-match': '"something-else"' });
    expect(changed.status).toBe(200);
    expect(changed.body).toEqual(first.body);
  });

  it('every cacheable read answers anonymous requests with an ETag and public Cache-Control, and its body matches the contract', async () => {
    const reads: Array<[string, AppRoute]> = [
      [`/listings/${listingId}`, contract.listings.getListing],
      ['/listings', contract.listings.listListings],
      [`/listings/${listingId}/similar`, contract.marketplace.listSimilarListings],
      ['/marketplace/search?query=logo', contract.marketplace.searchListings],
      ['/marketplace/listings', contract.marketplace.listMarketplaceListings],
      ['/categories', contract.marketplace.listCategories],
      ['/currencies', contract.marketplace.listCurrencies],
      // a public profile and its reviews need a credential even with PUBLIC_MARKETPLACE: tagged, private
      [`/users/${seller.wallet}/reviews`, contract.reviews.listSellerReviews],
      [`/users/${seller.wallet}`, contract.users.getUser],
    ];
    for (const [path, route] of reads) {
      const anonymous = route !== contract.users.getUser && route !== contract.reviews.listSellerReviews;
      const res = await get(path, anonymous ? {} : buyer.headers);
      expect(res.status, `${path}: ${res.text}`).toBe(200);
      expect(res.headers.etag, path).toMatch(ETAG);
      expect(res.headers['cache-control'], path).toBe(anonymous ? PUBLIC_CACHE_CONTROL : PRIVATE_CACHE_CONTROL);
      const schema = route.responses[200] as z.ZodTypeAny;
      const parsed = schema.safeParse(res.body);
      expect(parsed.success, `${path}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
      expect((await get(path, { ...(anonymous ? {} : buyer.headers), 'if-none-match': res.headers.etag as string })).status, path).toBe(304);
    }
  });

  it('a credentialed read (Bearer, session cookie, API key header) is never publicly cacheable: private, no-cache', async () => {
    const token = seller.headers.authorization!.replace(/^Bearer /, '');
    for (const headers of [seller.headers, { cookie: `${SESSION_COOKIE_NAME}=${token}` }]) {
      const res = await get(`/listings/${listingId}`, headers);
      expect(res.status).toBe(200);
      expect(res.headers['cache-control']).toBe(PRIVATE_CACHE_CONTROL);
      expect(res.headers['cache-control']).not.toMatch(/public/);
      expect(res.headers.etag).toMatch(ETAG);
      const again = await get(`/listings/${listingId}`, { ...headers, 'if-none-match': res.headers.etag as string });
      expect(again.status).toBe(304);
      expect(again.headers['cache-control']).toBe(PRIVATE_CACHE_CONTROL);
    }
    // a bad credential is still a credential: 401 as before, no cache headers
    const bad = await get(`/listings/${listingId}`, { 'x-api-key': 'bzk_nope' });
    expect(bad.status).toBe(401);
    expect(bad.headers['cache-control'] ?? '').not.toMatch(/public/);
    expect(bad.headers.etag).toBeUndefined();
  });

  it('a user-specific body (the seller\'s own unlisted listing in GET /listings) is private and tagged apart from the anonymous one', async () => {
    const hidden = (await createListing(t.app, seller, { title: 'Private draft logo' })).listing_id;
    expect((await request(t.app).patch(`${API}/listings/${hidden}`).set(seller.headers).send({ status: 'unlisted' })).status).toBe(200);
    const own = await get(`/listings?seller_wallet=${seller.wallet}`, seller.headers);
    const anon = await get(`/listings?seller_wallet=${seller.wallet}`);
    expect(own.body.data.map((l: { listing_id: string }) => l.listing_id)).toContain(hidden);
    expect(anon.body.data.map((l: { listing_id: string }) => l.listing_id)).not.toContain(hidden);
    expect(own.headers['cache-control']).toBe(PRIVATE_CACHE_CONTROL);
    expect(anon.headers['cache-control']).toBe(PUBLIC_CACHE_CONTROL);
    expect(own.headers.etag).not.toBe(anon.headers.etag);
    // the seller's tag does not validate the anonymous view (and so says nothing about the hidden listing)
    expect((await get(`/listings?seller_wallet=${seller.wallet}`, { 'if-none-match': own.headers.etag as string })).status).toBe(200);
  });

  it('a write through one replica is never answered 304 by another replica on the same database', async () => {
    const id = (await createListing(t.app, seller, { title: 'Replica logo' })).listing_id;
    for (let i = 0; i < 3; i++) {
      const before = await get(`/listings/${id}`, {}, other.app);
      const categoriesBefore = await get('/categories', {}, other.app);
      expect(before.status).toBe(200);
      const title = `Replica logo v${i}`;
      const upd = await request(t.app).patch(`${API}/listings/${id}`).set(seller.headers).send({ title });
      expect(upd.status, upd.text).toBe(200);
      await createListing(t.app, seller, { title: `Another logo ${i}` });
      const after = await get(`/listings/${id}`, { 'if-none-match': before.headers.etag as string }, other.app);
      expect(after.status).toBe(200);
      expect(after.body.title).toBe(title);
      expect(after.headers.etag).not.toBe(before.headers.etag);
      const categories = await get('/categories', { 'if-none-match': categoriesBefore.headers.etag as string }, other.app);
      expect(categories.status).toBe(200);
      expect(categories.body).not.toEqual(categoriesBefore.body);
    }
  });

  it('a listing that became hidden answers 404 to an old tag as before, never 304 (unlisted, taken down)', async () => {
    for (const hide of ['unlisted', 'taken down'] as const) {
      const id = (await createListing(t.app, seller, { title: `Soon hidden ${hide}` })).listing_id;
      const seen = await get(`/listings/${id}`);
      expect(seen.status).toBe(200);
      if (hide === 'unlisted') await request(t.app).patch(`${API}/listings/${id}`).set(seller.headers).send({ status: 'unlisted' }).expect(200);
      else await t.ctx.db.$executeRaw`UPDATE listings SET taken_down_at = now(), taken_down_reason = 'test' WHERE id = ${id}::uuid`;
      for (const app of [t.app, other.app]) {
        const res = await get(`/listings/${id}`, { 'if-none-match': seen.headers.etag as string }, app);
        expectProblem(res, 404, 'not-found');
        expect(res.headers.etag).toBeUndefined();
        expect(res.headers['cache-control'] ?? '').not.toMatch(/public/);
        // an unknown listing answers exactly alike (the tag tells nothing about existence)
        const unknown = await get(`/listings/${randomUUID()}`, { 'if-none-match': seen.headers.etag as string }, app);
        expectProblem(unknown, 404, 'not-found');
        expect(Object.keys(unknown.headers).filter((h) => /etag|cache-control/.test(h))).toEqual(Object.keys(res.headers).filter((h) => /etag|cache-control/.test(h)));
      }
    }
  });

  it('a compressed body has a tag of its own (the coding in the tag); routes outside the cacheable reads get no ETag', async () => {
    for (let i = 0; i < 8; i++) await createListing(t.app, buyer, { title: `Bulk logo ${i}` });
    const plain = await get('/marketplace/search?query=logo', { 'accept-encoding': 'identity' });
    const gz = await get('/marketplace/search?query=logo', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.headers.etag).toMatch(/-gzip"$/);
    expect(plain.headers.etag).not.toMatch(/-(br|gzip|deflate)"$/);
    expect(gz.headers.etag).not.toBe(plain.headers.etag);
    expect((await get('/marketplace/search?query=logo', { 'accept-encoding': 'gzip', 'if-none-match': gz.headers.etag as string })).status).toBe(304);
    expect((await get('/marketplace/search?query=logo', { 'accept-encoding': 'identity', 'if-none-match': gz.headers.etag as string })).status).toBe(200);
    const me = await get('/user/me', seller.headers);
    expect(me.status).toBe(200);
    expect(me.headers.etag).toBeUndefined();
    expect(me.headers['cache-control'] ?? '').not.toMatch(/public/);
  });

  it('the listing read through the prepared statement answers the same body as through Prisma (packages, milestones, a held unit)', async () => {
    const rich = await createListing(t.app, seller, {
      packages: [
        { key: 'basic', name: 'Basic logo', price: 10, delivery_days: 3, revisions: 1, description: 'The basic package' },
        { key: 'premium', name: 'Premium logo', price: 30, delivery_days: 5, revisions: 3, description: 'The pro package' },
      ],
      price: undefined,
      duration: undefined,
      stock: null,
      capacity: 2,
    });
    await insertOrder(t.ctx.db, { listingId: rich.listing_id, buyerId: buyer.userId, sellerId: seller.userId, status: 'awaiting_payment' });
    await t.ctx.db.$executeRaw`UPDATE listings SET open_orders = open_orders + 1, unpaid_orders = unpaid_orders + 1 WHERE id = ${rich.listing_id}::uuid`;
    // an app whose Prisma client has no registered pool: every read goes through Prisma ($queryRawUnsafe)
    const prisma = postgres ? new PrismaClient({ adapter: new BazaarPgAdapterFactory(t.postgresUrl!) }) : new PrismaClient({ adapter: new BazaarPGliteAdapterFactory(t.db.pglite!) });
    const viaPrisma = createApp({ ...t.ctx, db: prisma, readRouter: undefined });
    try {
      for (const id of [rich.listing_id, listingId]) {
        for (const headers of [{}, buyer.headers]) {
          const a = await get(`/listings/${id}`, headers);
          const b = await get(`/listings/${id}`, headers, viaPrisma);
          expect(a.status).toBe(200);
          expect(a.text).toBe(b.text);
          expect(a.headers.etag).toBe(b.headers.etag);
        }
      }
      const a = await get('/categories');
      const b = await get('/categories', {}, viaPrisma);
      expect(a.text).toBe(b.text);
    } finally {
      await viaPrisma.services.stop();
      await prisma.$disconnect();
    }
  });
});
