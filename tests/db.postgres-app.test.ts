/**
 * The auth and users flows on a real PostgreSQL server (runs when TEST_DATABASE_URL is set; CI sets
 * it): same app, @prisma/adapter-pg instead of PGlite.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, createApiKey, createTestApp, loginAs, newKeypair, signSiws, walletOf, type TestApp } from './helpers/app.js';
import { TEST_DATABASE_URL } from './helpers/db.js';

describe.skipIf(!TEST_DATABASE_URL)('auth and users on PostgreSQL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ postgres: true });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('logs in, reads and updates the profile, uses an API key', async () => {
    const s = await loginAs(t);
    const patched = await request(t.app).patch(`${API}/user/me`).set(s.headers).send({ display_name: 'Pat' });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ display_name: 'Pat', wallet: s.wallet, stats: { listings_count: 0 } });
    const key = await createApiKey(t, { userId: s.userId });
    const me = await request(t.app).get(`${API}/user/me`).set('x-api-key', key.key);
    expect(me.body.display_name).toBe('Pat');
    const ready = await request(t.app).get('/readyz');
    expect(ready.status).toBe(200);
  });

  it('a nonce is single use under concurrency', async () => {
    const kp = newKeypair();
    const r1 = await request(t.app).post(`${API}/auth/request_login`).send({ address: walletOf(kp) });
    const body = signSiws(kp, r1.body.sign_in_input);
    const results = await Promise.all(Array.from({ length: 4 }, () => request(t.app).post(`${API}/auth/verify_login`).send(body)));
    expect(results.map((r) => r.status).sort()).toEqual([200, 401, 401, 401]);
  });
});
