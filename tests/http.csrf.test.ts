/**
 * CSRF (issue 21 item 5): a state-changing request authenticated by the session cookie must come from this
 * service's origin or an origin listed exactly in CORS_ORIGINS (Origin, else Sec-Fetch-Site). Another port
 * of the same host is the same *site*, so SameSite does not stop it: an empty form POST with only the
 * cookie released an escrow, and a page created a wallet:write token.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, createTestApp, loginAs, newKeypair, signSiws, walletOf, type TestApp } from './helpers/app.js';

const PROBLEM = (slug: string) => `https://bazaar.dev/problems/${slug}`;
const ORDER = '3f2b8a52-3c1e-4f4e-9a55-7d0c1e2b9a10';
let t: TestApp;
let cookie: string;
let userId: string;

beforeAll(async () => {
  t = await createTestApp({ config: { corsOrigins: ['http://localhost:5173', 'http://localhost:*'] } });
  const kp = newKeypair();
  const r1 = await request(t.app).post(`${API}/auth/request_login`).send({ address: walletOf(kp) });
  const login = await request(t.app).post(`${API}/auth/verify_login`).send({ ...signSiws(kp, r1.body.sign_in_input), set_cookie: true });
  cookie = (login.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
  userId = login.body.user.user_id;
});
afterAll(async () => {
  await t?.close();
});

const createToken = (headers: Record<string, string>) =>
  request(t.app).post(`${API}/user/tokens`).set(headers).send({ name: 'page', scopes: ['wallet:write'] });
const tokens = () => t.ctx.db.personalAccessToken.count({ where: { userId } });

describe('cookie-authenticated writes from another origin', () => {
  it('refused from another port of the same host, a sibling origin, Origin null, or Sec-Fetch-Site same-site/cross-site', async () => {
    const before = await tokens();
    for (const headers of <Array<Record<string, string>>>[
      { origin: 'http://localhost:4000' },
      { origin: 'http://evil.bazaar.test' },
      { origin: 'null' },
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': 'cross-site' },
    ]) {
      const res = await createToken({ cookie, ...headers });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.body.type).toBe(PROBLEM('cross-origin-refused'));
    }
    expect(await tokens()).toBe(before);
    // the empty form POST of the report: refused before the order is even looked at
    const form = await request(t.app).post(`${API}/orders/${ORDER}/confirm`).set({ cookie, origin: 'http://localhost:4000' }).type('form').send('');
    expect(form.status).toBe(403);
    expect(form.body.type).toBe(PROBLEM('cross-origin-refused'));
    const patch = await request(t.app).patch(`${API}/user/me`).set({ cookie, origin: 'http://localhost:4000' }).send({ display_name: 'pwned' });
    expect(patch.status).toBe(403);
  });

  it('allowed from this service (its public origin, or the origin addressed), an origin listed exactly, or a non-browser client', async () => {
    const before = await tokens();
    for (const headers of <Array<Record<string, string>>>[
      { origin: 'http://bazaar.test' },
      { origin: 'http://api.internal:8080', host: 'api.internal:8080' },
      { origin: 'http://localhost:5173' },
      { 'sec-fetch-site': 'same-origin' },
      {},
    ]) {
      const res = await createToken({ cookie, ...headers });
      expect(res.status, `${JSON.stringify(headers)}: ${JSON.stringify(res.body)}`).toBe(201);
    }
    expect(await tokens()).toBe(before + 5);
  });

  it('not checked: safe methods, header credentials (a page cannot send them on its own), public routes', async () => {
    const foreign = { origin: 'http://localhost:4000' };
    expect((await request(t.app).get(`${API}/user/me`).set({ cookie, ...foreign })).status).toBe(200);
    const bearer = await loginAs(t);
    expect((await createToken({ ...bearer.headers, ...foreign })).status).toBe(201);
    expect((await request(t.app).post(`${API}/auth/request_login`).set({ cookie, ...foreign }).send({ address: walletOf(newKeypair()) })).status).toBe(200);
  });
});
