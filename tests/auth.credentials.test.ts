/**
 * Credentials on protected routes: JWT, API keys (Bearer and X-API-Key), session cookie, admin
 * routes, and the login rate limit.
 */
import request from 'supertest';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../server/src/modules/auth/api-keys.js';
import { authDefaults } from '@bazaar/contract';
import { API, createApiKey, createTestApp, loginAs, newKeypair, signSiws, walletOf, type TestApp } from './helpers/app.js';

const PROBLEM = (slug: string) => `https://bazaar.dev/problems/${slug}`;

let t: TestApp;
let session: Awaited<ReturnType<typeof loginAs>>;
beforeAll(async () => {
  t = await createTestApp();
  session = await loginAs(t);
});
afterAll(async () => {
  await t?.close();
});

const me = () => request(t.app).get(`${API}/user/me`);

describe('absent or malformed credentials', () => {
  it('no credential -> 401 unauthorized', async () => {
    const res = await me();
    expect(res.status).toBe(401);
    expect(res.body.type).toBe(PROBLEM('unauthorized'));
  });

  it.each([
    ['Basic dXNlcjpwYXNz'],
    ['Bearer'],
    ['Bearer not.a.jwt'],
    ['Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.'],
  ])('Authorization "%s" -> 401 invalid-token', async (header) => {
    const res = await me().set('authorization', header);
    expect(res.status).toBe(401);
    expect(res.body.type).toBe(PROBLEM('invalid-token'));
  });

  it('a JWT signed with another secret -> 401 invalid-token', async () => {
    const forged = await new SignJWT({ wallet: session.wallet })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(session.userId)
      .setIssuer('bazaar')
      .setAudience('bazaar-api')
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another-secret-another-secret-another-secret'));
    const res = await me().set('authorization', `Bearer ${forged}`);
    expect(res.status).toBe(401);
    expect(res.body.type).toBe(PROBLEM('invalid-token'));
  });

  it('a bad cookie -> 401 invalid-token', async () => {
    const res = await me().set('Cookie', 'bazaar_session=garbage');
    expect(res.status).toBe(401);
    expect(res.body.type).toBe(PROBLEM('invalid-token'));
  });
});

describe('API keys', () => {
  it('a key acting as a user works as Bearer and as X-API-Key', async () => {
    const key = await createApiKey(t, { userId: session.userId });
    const a = await me().set('authorization', `Bearer ${key.key}`);
    expect(a.status).toBe(200);
    expect(a.body.wallet).toBe(session.wallet);
    const b = await me().set('x-api-key', key.key);
    expect(b.status).toBe(200);
    expect(b.body.user_id).toBe(session.userId);
    const row = await t.ctx.db.apiKey.findUnique({ where: { id: key.id } });
    expect(row!.keyHash).not.toContain(key.key.slice(13));
    expect(row!.keyHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('an unknown key -> 401 invalid-token', async () => {
    const res = await me().set('x-api-key', 'bzk_AAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    expect(res.status).toBe(401);
    expect(res.body.type).toBe(PROBLEM('invalid-token'));
  });

  it('a revoked key -> 401 invalid-token', async () => {
    const key = await createApiKey(t, { userId: session.userId });
    expect((await me().set('x-api-key', key.key)).status).toBe(200);
    expect(await revokeApiKey(t.ctx.db, key.prefix)).toBe(true);
    const res = await me().set('x-api-key', key.key);
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/revoked/);
  });

  it('a service key (no user) cannot use /user/me', async () => {
    const key = await createApiKey(t, { isAdmin: true });
    const res = await me().set('x-api-key', key.key);
    expect(res.status).toBe(403);
    expect(res.body.type).toBe(PROBLEM('forbidden'));
  });
});

describe('login rate limit', () => {
  it('answers 429 rate-limited with Retry-After after the per-minute budget of an IP', async () => {
    const t2 = await createTestApp({ config: { authRateLimitPerMinute: 3 } });
    try {
      for (let i = 0; i < 3; i++) {
        expect((await request(t2.app).post(`${API}/auth/request_login`).send({ address: walletOf(newKeypair()) })).status).toBe(200);
      }
      const res = await request(t2.app).post(`${API}/auth/request_login`).send({ address: walletOf(newKeypair()) });
      expect(res.status).toBe(429);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.body.type).toBe(PROBLEM('rate-limited'));
      expect(res.body.detail).toMatch(/from this client IP \(3 per minute\)/);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      // other routes are not limited
      expect((await request(t2.app).get('/healthz')).status).toBe(200);
    } finally {
      await t2.close();
    }
  });

  it('counts each login route apart: request_login used up does not block verify_login', async () => {
    const t2 = await createTestApp({ config: { authRateLimitPerMinute: 2 } });
    try {
      const kp = newKeypair();
      const first = await request(t2.app).post(`${API}/auth/request_login`).send({ address: walletOf(kp) });
      expect((await request(t2.app).post(`${API}/auth/request_login`).send({ address: walletOf(newKeypair()) })).status).toBe(200);
      expect((await request(t2.app).post(`${API}/auth/request_login`).send({ address: walletOf(newKeypair()) })).status).toBe(429);
      const login = await request(t2.app).post(`${API}/auth/verify_login`).send(signSiws(kp, first.body.sign_in_input));
      expect(login.status, JSON.stringify(login.body)).toBe(200);
      expect((await request(t2.app).post(`${API}/auth/verify_login`).send(signSiws(kp, first.body.sign_in_input))).status).toBe(401);
      expect((await request(t2.app).post(`${API}/auth/verify_login`).send(signSiws(kp, first.body.sign_in_input))).status).toBe(429);
    } finally {
      await t2.close();
    }
  });

  it('an attacker naming a victim\'s address from many IPs cannot lock her out of login (issue 20 item 5)', async () => {
    const t3 = await createTestApp({ config: { authRateLimitPerMinute: 100, authAddressRateLimitPerMinute: 2, trustProxy: 1 } });
    try {
      const victim = newKeypair();
      const address = walletOf(victim);
      const attacker = newKeypair();
      const requestLogin = (ip: string) => request(t3.app).post(`${API}/auth/request_login`).set('x-forwarded-for', ip).send({ address });
      const verify = (ip: string, body: object) => request(t3.app).post(`${API}/auth/verify_login`).set('x-forwarded-for', ip).send(body);
      // the flood: nonces for her address, and verifications she did not sign (another key, garbage)
      const nonces = [];
      for (let i = 0; i < 6; i++) nonces.push(await requestLogin(`10.0.0.${i + 1}`));
      expect(nonces.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
      const forged = { ...signSiws(attacker, { ...nonces[0]!.body.sign_in_input }), address };
      const floods = [];
      for (let i = 0; i < 5; i++) floods.push(await verify(`10.0.1.${i + 1}`, forged));
      expect(floods.map((r) => r.status)).toEqual([401, 401, 429, 429, 429]);
      expect(floods[2]!.body.detail).toMatch(/not signed by this wallet address \(2 per minute\)/);

      // she still logs in, from her own IP, with the nonce she asks for while the flood goes on
      const mine = await requestLogin('192.0.2.7');
      expect(mine.status, JSON.stringify(mine.body)).toBe(200);
      const login = await verify('192.0.2.7', signSiws(victim, mine.body.sign_in_input));
      expect(login.status, JSON.stringify(login.body)).toBe(200);
      expect(login.body.user.wallet).toBe(address);
      // a nonce the attacker asked for is useless to him but still hers to sign
      expect((await verify('192.0.2.7', signSiws(victim, nonces[1]!.body.sign_in_input))).status).toBe(200);
      // her own failing request (a replay: signed, nonce used) is not counted against the address either
      expect((await verify('192.0.2.7', signSiws(victim, mine.body.sign_in_input))).status).toBe(401);
    } finally {
      await t3.close();
    }
  });

  it('the default limits let an office behind one IP log 15 people in within a minute', async () => {
    const t4 = await createTestApp({
      config: { authRateLimitPerMinute: authDefaults.rateLimitPerIpPerMinute, authAddressRateLimitPerMinute: authDefaults.rateLimitPerAddressPerMinute },
    });
    try {
      for (let i = 0; i < 15; i++) await loginAs(t4, newKeypair());
    } finally {
      await t4.close();
    }
  });
});

describe('public marketplace switch', () => {
  it('anonymous listing reads need PUBLIC_MARKETPLACE=true', async () => {
    const closed = await request(t.app).get(`${API}/categories`);
    expect(closed.status).toBe(401);
    const t2 = await createTestApp({ config: { publicMarketplace: true } });
    try {
      const open = await request(t2.app).get(`${API}/categories`);
      expect(open.status).toBe(200);
      // writes stay protected
      const write = await request(t2.app).post(`${API}/listings`).send({});
      expect(write.status).toBe(401);
      expect((await request(t2.app).get(`${API}/user/me`)).status).toBe(401);
    } finally {
      await t2.close();
    }
  });
});
