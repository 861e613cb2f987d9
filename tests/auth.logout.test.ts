/**
 * Logout revokes the session server-side (issue 21 item 7): the access token (Bearer or the session
 * cookie) is refused from then on until its own expiry, through the SDK's `auth.logout()` too; other
 * sessions of the wallet stay valid; API keys and personal access tokens do not log out.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBazaarClient } from '@bazaar/client-sdk';
import { API, createApiKey, createTestApp, loginAs, newKeypair, signSiws, walletOf, type TestApp } from './helpers/app.js';

const PROBLEM = (slug: string) => `https://bazaar.dev/problems/${slug}`;
let t: TestApp;
let server: Server;
let baseUrl: string;
beforeAll(async () => {
  t = await createTestApp();
  server = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await t?.close();
});

const me = (headers: Record<string, string>) => request(t.app).get(`${API}/user/me`).set(headers);

describe('POST /auth/logout', () => {
  it('the SDK logs a Bearer session out: that token is refused everywhere until it expires, the other session goes on', async () => {
    const kp = newKeypair();
    const a = await loginAs(t, kp);
    const b = await loginAs(t, kp);
    expect((await me(a.headers)).status).toBe(200); // verified once: in this replica's principal cache
    const out = await createBazaarClient({ baseUrl, token: a.token }).auth.logout();
    expect(out.status, JSON.stringify(out.body)).toBe(200);
    expect(out.body).toEqual({ logged_out: true, token_expires_at: expect.any(String) });
    expect(Date.parse((out.body as { token_expires_at: string }).token_expires_at)).toBeGreaterThan(Date.now());

    const refused = await me(a.headers);
    expect(refused.status).toBe(401);
    expect(refused.body.type).toBe(PROBLEM('invalid-token'));
    expect(refused.body.detail).toMatch(/logged out/);
    expect((await request(t.app).post(`${API}/auth/logout`).set(a.headers)).status).toBe(401);
    expect((await me(b.headers)).status).toBe(200);
    expect(await t.ctx.db.revokedAccessToken.count({ where: { userId: a.userId } })).toBe(1);
  });

  it('a cookie session: the cookie is expired and its token refused', async () => {
    const kp = newKeypair();
    const r1 = await request(t.app).post(`${API}/auth/request_login`).send({ address: walletOf(kp) });
    const login = await request(t.app).post(`${API}/auth/verify_login`).send({ ...signSiws(kp, r1.body.sign_in_input), set_cookie: true });
    const cookie = (login.headers['set-cookie'] as unknown as string[])[0]!.split(';')[0]!;
    expect((await me({ cookie })).status).toBe(200);
    const out = await request(t.app).post(`${API}/auth/logout`).set('cookie', cookie);
    expect(out.status, JSON.stringify(out.body)).toBe(200);
    expect((out.headers['set-cookie'] as unknown as string[]).join('\n')).toMatch(/bazaar_session=;.*Expires=Thu, 01 Jan 1970/);
    expect((await me({ cookie })).status).toBe(401);
  });

  it('an API key or a personal access token does not log out (they have their own revocation)', async () => {
    const user = await loginAs(t);
    const { key } = await createApiKey(t, { userId: user.userId });
    const viaKey = await request(t.app).post(`${API}/auth/logout`).set('x-api-key', key);
    expect(viaKey.status).toBe(403);
    expect(viaKey.body.type).toBe(PROBLEM('forbidden'));
    const pat = await request(t.app).post(`${API}/user/tokens`).set(user.headers).send({ name: 'ci', scopes: ['profile:read'] });
    expect(pat.status, JSON.stringify(pat.body)).toBe(201);
    const viaPat = await request(t.app).post(`${API}/auth/logout`).set('authorization', `Bearer ${pat.body.token}`);
    expect(viaPat.status).toBe(403);
    expect(viaPat.body.type).toBe(PROBLEM('insufficient-scope'));
    expect((await me(user.headers)).status).toBe(200);
  });

  it('anonymous: 401', async () => {
    expect((await request(t.app).post(`${API}/auth/logout`)).status).toBe(401);
  });
});
