/**
 * Two whole app instances (two replicas) on ONE database, requests alternating between them as a
 * round-robin load balancer sends them: PGlite always (two Prisma clients on one instance), PostgreSQL
 * too when TEST_DATABASE_URL is set. Nothing a client sees may depend on which replica answers:
 *
 * - the login rate limits per IP and per wallet address, and the chat limit per sender, are global
 *   (counters in the database: http/rate-limit-store.ts), not per process;
 * - a SIWS nonce issued by one replica is verified by the other, and used once across both;
 * - a token issued by one replica works on the other; a revoked personal access token stops at once on both.
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createApp } from '../server/src/app';
import type { Config } from '../server/src/config';
import type { AppContext } from '../server/src/context';
import type { Db } from '../server/src/db/client';
import { createLogger } from '../server/src/logger';
import { API, loginAs, newKeypair, signSiws, testConfig, walletOf } from './helpers/app';
import { dbBackends, sharedDatabase } from './helpers/shared-db';

const PROBLEM = (slug: string) => `https://bazaar.dev/problems/${slug}`;

describe.each(dbBackends)('two replicas on one $name database', ({ postgres }) => {
  const shared = sharedDatabase(postgres);

  /** two apps on the database, with this config; `pick(i)` is the replica of the i-th request */
  async function replicas(over: Partial<Config>) {
    const apps: ReturnType<typeof createApp>[] = [];
    let last: Db | undefined;
    for (let i = 0; i < 2; i++) {
      const db = await shared.client();
      last = db;
      const config = testConfig(over);
      const ctx: AppContext = { config, db: db.prisma, log: createLogger('silent'), chain: null, now: () => new Date(), webAppDir: null };
      apps.push(createApp(ctx));
    }
    return { apps, pick: (i: number) => apps[i % 2]!, db: last!.prisma };
  }

  it('the login limit per client IP is global: the N+1st request_login across both replicas is 429', async () => {
    const LIMIT = 5;
    const r = await replicas({ authRateLimitPerMinute: LIMIT });
    const statuses = [];
    for (let i = 0; i <= LIMIT; i++) {
      statuses.push((await request(r.pick(i)).post(`${API}/auth/request_login`).send({ address: walletOf(newKeypair()) })).status);
    }
    expect(statuses).toEqual([...Array(LIMIT).fill(200), 429]);
    // both replicas now refuse, with the window's remaining time
    for (const app of r.apps) {
      const res = await request(app).post(`${API}/auth/request_login`).send({ address: walletOf(newKeypair()) });
      expect(res.status).toBe(429);
      expect(res.body.type).toBe(PROBLEM('rate-limited'));
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
    // the other login route has its own budget
    expect((await request(r.pick(0)).post(`${API}/auth/verify_login`).send({})).status).not.toBe(429);
  });

  it('the limit per wallet address (requests it did not sign) is global too, and a nonce issued by one replica logs in on the other exactly once', async () => {
    const r = await replicas({ authAddressRateLimitPerMinute: 3 });
    const kp = newKeypair();
    const issued = await request(r.pick(0)).post(`${API}/auth/request_login`).send({ address: walletOf(kp) });
    expect(issued.status).toBe(200);
    const proof = signSiws(kp, issued.body.sign_in_input);
    const login = await request(r.pick(1)).post(`${API}/auth/verify_login`).send(proof);
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    const replay = await request(r.pick(0)).post(`${API}/auth/verify_login`).send(proof);
    expect(replay.status).toBe(401);
    expect(replay.body.reason ?? replay.body.detail).toMatch(/nonce/);
    // verify_login requests the wallet did not sign: 3 fit, the 4th (on either replica) is refused
    const forged = { ...proof, signature: Buffer.alloc(64, 7).toString('base64') };
    expect((await request(r.pick(1)).post(`${API}/auth/verify_login`).send(forged)).status).toBe(401);
    expect((await request(r.pick(0)).post(`${API}/auth/verify_login`).send(forged)).status).toBe(401);
    expect((await request(r.pick(0)).post(`${API}/auth/verify_login`).send(forged)).status).toBe(401);
    const over = await request(r.pick(1)).post(`${API}/auth/verify_login`).send(forged);
    expect(over.status).toBe(429);
    expect(over.body.detail).toMatch(/not signed by this wallet address/);
    // the wallet itself still logs in (its signed requests are not counted), on either replica
    expect((await loginAs({ app: r.apps[1]! }, kp)).wallet).toBe(walletOf(kp));

    // the access token issued by replica 1 works on replica 0
    const me = await request(r.pick(0)).get(`${API}/user/me`).set('authorization', `Bearer ${login.body.access_token}`);
    expect(me.status).toBe(200);
  });

  it('a session logged out through one replica is refused by the other (issue 21 item 7)', async () => {
    const r = await replicas({});
    const session = await loginAs({ app: r.apps[0]! });
    // (replica 1 has not cached this token's principal: a cached one would be reused up to 5 s)
    expect((await request(r.apps[0]!).post(`${API}/auth/logout`).set(session.headers)).status).toBe(200);
    const refused = await request(r.apps[1]!).get(`${API}/user/me`).set(session.headers);
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toMatch(/logged out/);
  });

  it('the chat limit per sender is global: the N+1st message across both replicas is 429', async () => {
    const LIMIT = 4;
    const r = await replicas({ chatRateLimitPerMinute: LIMIT });
    const seller = await loginAs({ app: r.apps[0]! });
    const buyer = await loginAs({ app: r.apps[1]! });
    const listingId = randomUUID();
    await r.db.listing.create({
      data: { id: listingId, sellerId: seller.userId, title: 'Logo', description: 'A logo', priceBaseUnits: '25000000', currency: 'USDC', category: 'design', durationDays: 3, status: 'available' },
    });
    const statuses = [];
    for (let i = 0; i <= LIMIT; i++) {
      const res = await request(r.pick(i)).post(`${API}/listings/${listingId}/conversations`).set(buyer.headers).send({ body: `question ${i}` });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([...Array(LIMIT).fill(201), 429]);
    // another sender is not affected
    const other = await loginAs({ app: r.apps[0]! });
    expect((await request(r.pick(1)).post(`${API}/listings/${listingId}/conversations`).set(other.headers).send({ body: 'hello' })).status).toBe(201);
  });

  it('a personal access token revoked through one replica is refused by the other at once', async () => {
    const r = await replicas({});
    const u = await loginAs({ app: r.apps[0]! });
    const created = await request(r.pick(0)).post(`${API}/user/tokens`).set(u.headers).send({ name: 'ci', scopes: ['chat:read'] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const pat = { authorization: `Bearer ${created.body.token}` };
    expect((await request(r.pick(1)).get(`${API}/conversations`).set(pat)).status).toBe(200);
    expect((await request(r.pick(0)).delete(`${API}/user/tokens/${created.body.token_id}`).set(u.headers)).status).toBe(200);
    expect((await request(r.pick(1)).get(`${API}/conversations`).set(pat)).status).toBe(401);
  });
});
