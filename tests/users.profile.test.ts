/**
 * Users: GET/PATCH /user/me, GET /users/{wallet}, statistics and reputation from the database.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, createTestApp, loginAs, newKeypair, walletOf, type TestApp } from './helpers/app.js';

const PROBLEM = (slug: string) => `https://bazaar.dev/problems/${slug}`;

let t: TestApp;
let alice: Awaited<ReturnType<typeof loginAs>>;
let bob: Awaited<ReturnType<typeof loginAs>>;
beforeAll(async () => {
  t = await createTestApp();
  alice = await loginAs(t);
  bob = await loginAs(t);
});
afterAll(async () => {
  await t?.close();
});

const patchMe = (body: unknown, who = alice) => request(t.app).patch(`${API}/user/me`).set(who.headers).send(body as object);

describe('GET /user/me', () => {
  it('returns the profile, wallet, private fields and empty stats for a new user', async () => {
    const res = await request(t.app).get(`${API}/user/me`).set(alice.headers);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      user_id: alice.userId,
      wallet: alice.wallet,
      display_name: null,
      bio: null,
      avatar_url: null,
      role: 'user',
      custody_enabled: false,
      stats: { listings_count: 0, active_listings_count: 0, completed_sales: 0, completed_purchases: 0, sales_volume: [], tips_received: [] },
      reputation: { average: null, count: 0, distribution: { 1: 0, 2: 0, 3: 0, 4: 0, 5: 0 } },
    });
    expect(Date.parse(res.body.last_login_at)).not.toBeNaN();
  });
});

describe('PATCH /user/me', () => {
  it('updates given fields, trims the display name, null clears', async () => {
    const res = await patchMe({ display_name: '  Alice  ', bio: 'Logo designer', avatar_url: 'https://cdn.example/a.png' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ display_name: 'Alice', bio: 'Logo designer', avatar_url: 'https://cdn.example/a.png' });
    const partial = await patchMe({ bio: null });
    expect(partial.body).toMatchObject({ display_name: 'Alice', bio: null, avatar_url: 'https://cdn.example/a.png' });
  });

  it.each([
    [{ display_name: '' }, 'body.display_name'],
    [{ display_name: 'x'.repeat(51) }, 'body.display_name'],
    [{ bio: 'x'.repeat(501) }, 'body.bio'],
    [{ avatar_url: 'http://insecure.example/a.png' }, 'body.avatar_url'],
    [{ avatar_url: 'javascript:alert(1)' }, 'body.avatar_url'],
    [{ wallet: 'AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r' }, 'body'],
  ])('rejects %j with 400 at %s and writes nothing', async (body, path) => {
    const before = await t.ctx.db.user.findUnique({ where: { id: alice.userId } });
    const res = await patchMe(body);
    expect(res.status).toBe(400);
    expect(res.body.type).toBe(PROBLEM('validation-error'));
    expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    const after = await t.ctx.db.user.findUnique({ where: { id: alice.userId } });
    expect(after).toEqual(before);
  });

  it('needs a credential', async () => {
    const res = await request(t.app).patch(`${API}/user/me`).send({ bio: 'x' });
    expect(res.status).toBe(401);
  });
});

describe('GET /users/{wallet}', () => {
  it('returns the public profile without private fields', async () => {
    await patchMe({ display_name: 'Bob' }, bob);
    const res = await request(t.app).get(`${API}/users/${bob.wallet}`).set(alice.headers);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ user_id: bob.userId, wallet: bob.wallet, display_name: 'Bob' });
    expect(res.body).not.toHaveProperty('role');
    expect(res.body).not.toHaveProperty('last_login_at');
  });

  it('404 not-found for a wallet that never logged in, 400 for a malformed one', async () => {
    const missing = await request(t.app).get(`${API}/users/${walletOf(newKeypair())}`).set(alice.headers);
    expect(missing.status).toBe(404);
    expect(missing.body.type).toBe(PROBLEM('not-found'));
    const bad = await request(t.app).get(`${API}/users/not-a-wallet`).set(alice.headers);
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe('params.wallet');
  });
});

describe('stats and reputation', () => {
  it('are computed from listings, completed orders, reviews and confirmed tips', async () => {
    const db = t.ctx.db;
    const listing = async (status: string) =>
      (
        await db.listing.create({
          data: {
            sellerId: bob.userId, title: 'Logo', description: 'A logo', priceBaseUnits: '2500000', currency: 'USDC',
            category: 'design', durationDays: 3, status,
          },
        })
      ).id;
    const l1 = await listing('available');
    const l2 = await listing('sold');
    await listing('unlisted');
    const order = async (listingId: string, status: string, amount: string, currency = 'USDC', decimals = 6) =>
      (
        await db.order.create({
          data: {
            listingId, buyerId: alice.userId, sellerId: bob.userId, status, amountBaseUnits: amount, currency,
            paymentMint: 'So11111111111111111111111111111111111111112', decimals, feeBps: 100,
            escrowAddress: randomUUID(), vaultAddress: randomUUID(), deliveryDeadline: new Date(),
            reviewWindowSeconds: 259200, paymentExpiresAt: new Date(),
          },
        })
      ).id;
    const o1 = await order(l2, 'completed', '2500000');
    const o2 = await order(l1, 'completed', '1000000');
    await order(l1, 'completed', '1500000000', 'SOL', 9);
    await order(l1, 'in_progress', '999');
    for (const [orderId, rating] of [[o1, 5], [o2, 4]] as const) {
      await db.review.create({ data: { orderId, reviewerId: alice.userId, sellerId: bob.userId, listingId: l1, rating, text: 'ok' } });
    }

    // tips (issue 24 item 8): confirmed ones count, per currency; pending, expired and other sellers' do not
    const tip = (amount: string, status: string, sellerId = bob.userId) =>
      db.tip.create({
        data: {
          id: randomUUID(), orderId: o1, buyerId: alice.userId, sellerId, buyerWallet: alice.wallet, sellerWallet: bob.wallet, currency: 'USDC',
          mint: 'M', decimals: 6, amountBaseUnits: amount, sourceTokenAccount: 'S', destinationTokenAccount: 'D', status, message: 'm',
          blockhash: 'b', lastValidBlockHeight: 1n, validUntil: new Date(), ...(status === 'confirmed' ? { signature: randomUUID() } : {}),
        },
      });
    await Promise.all([tip('1250000', 'confirmed'), tip('750000', 'confirmed'), tip('9000000', 'pending'), tip('8000000', 'expired'), tip('7000000', 'confirmed', alice.userId)]);

    const res = await request(t.app).get(`${API}/users/${bob.wallet}`).set(alice.headers);
    expect(res.body.stats).toEqual({
      listings_count: 3,
      active_listings_count: 1,
      completed_sales: 3,
      completed_purchases: 0,
      sales_volume: [
        { currency: 'SOL', amount_base_units: '1500000000', amount: 1.5 },
        { currency: 'USDC', amount_base_units: '3500000', amount: 3.5 },
      ],
      tips_received: [{ currency: 'USDC', amount_base_units: '2000000', amount: 2 }],
    });
    expect(res.body.reputation).toEqual({ average: 4.5, count: 2, distribution: { 1: 0, 2: 0, 3: 0, 4: 1, 5: 1 } });
    const mine = await request(t.app).get(`${API}/user/me`).set(alice.headers);
    expect(mine.body.stats.completed_purchases).toBe(3);
  });
});
