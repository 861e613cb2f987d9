/**
 * Sign In With Solana: the happy path and every check that must refuse a login.
 */
import nacl from 'tweetnacl';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSignInMessageText } from '@solana/wallet-standard-util';
import { API, createTestApp, loginAs, newKeypair, signSiws, walletOf, type TestApp } from './helpers/app.js';

const PROBLEM = (slug: string) => `https://bazaar.dev/problems/${slug}`;

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => {
  await t?.close();
});

async function requestLogin(wallet: string) {
  const res = await request(t.app).post(`${API}/auth/request_login`).send({ address: wallet });
  expect(res.status).toBe(200);
  return res.body;
}

const verify = (body: object) => request(t.app).post(`${API}/auth/verify_login`).send(body);

function expectLoginFailed(res: request.Response, check: RegExp) {
  expect(res.status).toBe(401);
  expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
  expect(res.body.type).toBe(PROBLEM('login-failed'));
  expect(res.body.detail).toMatch(check);
  expect(res.body.instance).toBe(`${API}/auth/verify_login`);
  expect(res.body.request_id).toBe(res.headers['x-request-id']);
}

describe('request_login', () => {
  it('issues a single-use nonce and the exact SIWS input to sign', async () => {
    const kp = newKeypair();
    const body = await requestLogin(walletOf(kp));
    expect(body.nonce).toMatch(/^[A-Za-z0-9]{16,}$/);
    expect(body.sign_in_input).toMatchObject({
      domain: 'bazaar.test',
      address: walletOf(kp),
      statement: 'Sign in to Bazaar',
      uri: 'http://bazaar.test',
      version: '1',
      chainId: 'localnet',
      nonce: body.nonce,
    });
    expect(body.expires_at).toBe(body.sign_in_input.expirationTime);
    expect(Date.parse(body.expires_at) - Date.parse(body.sign_in_input.issuedAt)).toBe(300_000);
  });

  it('rejects an address that is not a 32-byte base58 public key', async () => {
    const res = await request(t.app).post(`${API}/auth/request_login`).send({ address: 'not-a-key' });
    expect(res.status).toBe(400);
    expect(res.body.type).toBe(PROBLEM('validation-error'));
    expect(res.body.errors[0].path).toBe('body.address');
  });

  it('nonces differ on every request', async () => {
    const w = walletOf(newKeypair());
    const a = await requestLogin(w);
    const b = await requestLogin(w);
    expect(a.nonce).not.toBe(b.nonce);
  });
});

describe('verify_login', () => {
  it('logs in with a valid signature, creates the user once, returns a JWT that works', async () => {
    const kp = newKeypair();
    const first = await loginAs(t, kp);
    expect(first.user.wallet).toBe(walletOf(kp));
    expect(first.token.split('.')).toHaveLength(3);
    const me = await request(t.app).get(`${API}/user/me`).set(first.headers);
    expect(me.status).toBe(200);
    expect(me.body.wallet).toBe(walletOf(kp));
    const second = await loginAs(t, kp);
    expect(second.userId).toBe(first.userId);
  });

  it('returns token metadata and can set the session cookie', async () => {
    const kp = newKeypair();
    const { sign_in_input } = await requestLogin(walletOf(kp));
    const res = await verify({ ...signSiws(kp, sign_in_input), set_cookie: true });
    expect(res.status).toBe(200);
    expect(res.body.token_type).toBe('Bearer');
    expect(res.body.expires_in).toBe(3600);
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/bazaar_session=/);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Lax/);
    const me = await request(t.app).get(`${API}/user/me`).set('Cookie', cookie.split(';')[0]!);
    expect(me.status).toBe(200);
  });

  it('refuses a signature made by another key', async () => {
    const kp = newKeypair();
    const { sign_in_input } = await requestLogin(walletOf(kp));
    const body = signSiws(kp, sign_in_input);
    const other = newKeypair();
    const msg = Buffer.from(body.signed_message, 'base64');
    body.signature = Buffer.from(nacl.sign.detached(msg, other.secretKey)).toString('base64');
    expectLoginFailed(await verify(body), /signature invalid/);
  });

  it('refuses a message for another domain', async () => {
    const kp = newKeypair();
    const { sign_in_input } = await requestLogin(walletOf(kp));
    expectLoginFailed(await verify(signSiws(kp, { ...sign_in_input, domain: 'evil.example' })), /domain mismatch/);
  });

  it('refuses when the body address is not the one the nonce was issued for', async () => {
    const kp = newKeypair();
    const other = newKeypair();
    const { sign_in_input } = await requestLogin(walletOf(kp));
    expectLoginFailed(await verify({ ...signSiws(kp, sign_in_input), address: walletOf(other) }), /address mismatch/);
  });

  it('refuses a message signed for another address with the nonce of this one', async () => {
    const kp = newKeypair();
    const attacker = newKeypair();
    const { sign_in_input } = await requestLogin(walletOf(kp));
    const body = signSiws(attacker, { ...sign_in_input, address: walletOf(attacker) });
    expectLoginFailed(await verify({ ...body, address: walletOf(kp) }), /address mismatch/);
  });

  it('refuses a replayed nonce', async () => {
    const kp = newKeypair();
    const { sign_in_input } = await requestLogin(walletOf(kp));
    const body = signSiws(kp, sign_in_input);
    expect((await verify(body)).status).toBe(200);
    expectLoginFailed(await verify(body), /nonce already used/);
  });

  it('refuses a nonce it never issued', async () => {
    const kp = newKeypair();
    const { sign_in_input } = await requestLogin(walletOf(kp));
    expectLoginFailed(await verify(signSiws(kp, { ...sign_in_input, nonce: 'AAAAAAAAAAAAAAAAAAAAAAAA' })), /nonce unknown/);
  });

  it('refuses a tampered message (fields differ from the issued input)', async () => {
    const kp = newKeypair();
    const { sign_in_input } = await requestLogin(walletOf(kp));
    // signed correctly, but the expiration was stretched by the client
    const stretched = { ...sign_in_input, expirationTime: new Date(Date.now() + 86_400_000).toISOString() };
    expectLoginFailed(await verify(signSiws(kp, stretched)), /does not match the issued sign-in input/);
    // bytes changed after signing
    const body = signSiws(kp, sign_in_input);
    const text = createSignInMessageText(sign_in_input).replace('Sign in to Bazaar', 'Sign in to Bazaar!');
    expectLoginFailed(await verify({ ...body, signed_message: Buffer.from(text).toString('base64') }), /does not match/);
  });

  it('refuses garbage that is not a SIWS message', async () => {
    const kp = newKeypair();
    const msg = Buffer.from('hello world');
    const res = await verify({
      address: walletOf(kp),
      signed_message: msg.toString('base64'),
      signature: Buffer.from(nacl.sign.detached(msg, kp.secretKey)).toString('base64'),
    });
    expectLoginFailed(res, /message malformed/);
  });

  it('refuses a truncated signature', async () => {
    const kp = newKeypair();
    const { sign_in_input } = await requestLogin(walletOf(kp));
    const body = signSiws(kp, sign_in_input);
    expectLoginFailed(await verify({ ...body, signature: Buffer.alloc(10).toString('base64') }), /signature invalid/);
  });
});

describe('expiry (injected clock)', () => {
  it('refuses an expired nonce and an expired JWT', async () => {
    let now = Date.now();
    const t2 = await createTestApp({ now: () => new Date(now), config: { loginNonceTtlSeconds: 60, jwtTtlSeconds: 120 } });
    try {
      const kp = newKeypair();
      const r1 = await request(t2.app).post(`${API}/auth/request_login`).send({ address: walletOf(kp) });
      now += 61_000;
      const res = await request(t2.app).post(`${API}/auth/verify_login`).send(signSiws(kp, r1.body.sign_in_input));
      expect(res.status).toBe(401);
      expect(res.body.detail).toMatch(/nonce expired/);

      const session = await loginAs(t2, kp);
      expect((await request(t2.app).get(`${API}/user/me`).set(session.headers)).status).toBe(200);
      now += 121_000;
      const me = await request(t2.app).get(`${API}/user/me`).set(session.headers);
      expect(me.status).toBe(401);
      expect(me.body.type).toBe(PROBLEM('token-expired'));
    } finally {
      await t2.close();
    }
  });
});

describe('public routes ignore credentials', () => {
  it('a stale or malformed Authorization header does not block login', async () => {
    const kp = newKeypair();
    const res = await request(t.app)
      .post(`${API}/auth/request_login`)
      .set('authorization', 'Bearer expired.or.garbage')
      .send({ address: walletOf(kp) });
    expect(res.status).toBe(200);
  });
});

describe('single use under concurrency', () => {
  it('of parallel verifications of one signed message exactly one succeeds', async () => {
    const kp = newKeypair();
    const { sign_in_input } = await requestLogin(walletOf(kp));
    const body = signSiws(kp, sign_in_input);
    const results = await Promise.all(Array.from({ length: 5 }, () => verify(body)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 401, 401, 401, 401]);
    for (const r of results.filter((x) => x.status === 401)) expect(r.body.detail).toMatch(/nonce already used/);
    expect(await t.ctx.db.user.count({ where: { wallet: walletOf(kp) } })).toBe(1);
  });
});
