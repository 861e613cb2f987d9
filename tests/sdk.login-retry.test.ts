/**
 * The SDK's loginWithWallet honours Retry-After once (issue 10 point 5): a 429 from either login route
 * is retried after the seconds the server asked for, a second 429 is thrown, `retryAfter: false`
 * turns it off. Against the real app; the 429s come from the server's own per-IP limit.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import nacl from 'tweetnacl';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BazaarApiError, retryAfterSeconds } from '@bazaar/client-sdk';
import { keypairSigner } from '@bazaar/client-sdk/keypair';
import { loginWithWallet } from '@bazaar/client-sdk/login';
import { createTestApp, type TestApp } from './helpers/app.js';

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

/** A fetch that counts the login calls; `rewrite` may answer a call itself. */
function countingFetch(rewrite?: (path: string, n: number) => Response | null) {
  const calls: string[] = [];
  const fetch: typeof globalThis.fetch = async (input, init) => {
    const path = new URL(String(input)).pathname;
    calls.push(path);
    const own = rewrite?.(path, calls.filter((c) => c === path).length);
    return own ?? globalThis.fetch(input, init);
  };
  return { fetch, calls };
}

const problem429 = (retryAfter: string) =>
  new Response(JSON.stringify({ type: 'https://bazaar.dev/problems/rate-limited', title: 'Rate limited', status: 429, detail: 'slow down', instance: '/', request_id: 'x' }), {
    status: 429,
    headers: { 'content-type': 'application/problem+json', 'retry-after': retryAfter },
  });

describe('loginWithWallet and Retry-After', () => {
  it('waits the Retry-After seconds of a 429 once and logs in', async () => {
    const { createBazaarClient } = await import('@bazaar/client-sdk');
    const { fetch, calls } = countingFetch((path, n) => (path.endsWith('/auth/verify_login') && n === 1 ? problem429('3') : null));
    const waits: number[] = [];
    const signer = keypairSigner(nacl.sign.keyPair().secretKey);
    const res = await loginWithWallet(createBazaarClient({ baseUrl, fetch }), signer, {
      retryAfter: { sleep: async (ms) => void waits.push(ms) },
    });
    expect(res.user.wallet).toBe(signer.publicKey);
    expect(waits).toEqual([3000]);
    expect(calls.filter((c) => c.endsWith('/verify_login'))).toHaveLength(2);
  });

  it('the server\'s own 429 (per-IP limit) is retried once, and thrown when it persists', async () => {
    const { createBazaarClient } = await import('@bazaar/client-sdk');
    // one request per minute per client IP and route: a second login from this IP is 429
    const limited = await createTestApp({ config: { authRateLimitPerMinute: 1 } });
    const limitedServer = limited.app.listen(0, '127.0.0.1');
    await new Promise((r) => limitedServer.once('listening', r));
    const baseUrl = `http://127.0.0.1:${(limitedServer.address() as AddressInfo).port}`;
    try {
      const signer = keypairSigner(nacl.sign.keyPair().secretKey);
      await loginWithWallet(baseUrl, signer); // uses this IP's one request per route this minute
      const { fetch, calls } = countingFetch();
      const waits: number[] = [];
      const err = await loginWithWallet(createBazaarClient({ baseUrl, fetch }), signer, {
        retryAfter: { sleep: async (ms) => void waits.push(ms) },
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BazaarApiError);
      expect((err as BazaarApiError).status).toBe(429);
      expect(waits).toHaveLength(1);
      expect(waits[0]).toBeGreaterThan(0);
      expect(waits[0]).toBeLessThanOrEqual(60_000);
      expect(calls.filter((c) => c.endsWith('/request_login'))).toHaveLength(2);
    } finally {
      await new Promise((r) => limitedServer.close(r));
      await limited.close();
    }
  });

  it('retryAfter: false, or a wait longer than maxWaitSeconds, throws at once', async () => {
    const { createBazaarClient } = await import('@bazaar/client-sdk');
    for (const [retryAfter, header] of [[false, '1'], [{ maxWaitSeconds: 5, sleep: async () => undefined }, '120']] as const) {
      const { fetch, calls } = countingFetch((path) => (path.endsWith('/auth/request_login') ? problem429(header) : null));
      const err = await loginWithWallet(createBazaarClient({ baseUrl, fetch }), keypairSigner(nacl.randomBytes(32)), { retryAfter }).catch((e: unknown) => e);
      expect((err as BazaarApiError).status).toBe(429);
      expect(calls).toHaveLength(1);
    }
  });

  it('reads Retry-After as seconds or an HTTP-date', () => {
    const h = (v: string) => new Headers({ 'retry-after': v });
    const now = Date.parse('2026-10-21T07:28:00Z');
    expect(retryAfterSeconds(h('7'), now)).toBe(7);
    expect(retryAfterSeconds(h('Wed, 21 Oct 2026 07:28:30 GMT'), now)).toBe(30);
    expect(retryAfterSeconds(h('Wed, 21 Oct 2026 07:27:00 GMT'), now)).toBe(0);
    expect(retryAfterSeconds(h('soon'), now)).toBeNull();
    expect(retryAfterSeconds(new Headers(), now)).toBeNull();
  });
});
