/**
 * Solana Actions over HTTP without a chain (PGlite + FakeChain; the buy itself: e2e.actions-listings):
 * the operator switch (off: 404 `{ message }` everywhere), the spec's headers and CORS on every answer
 * (X-Action-Version, X-Blockchain-Ids, any origin, allowed and exposed headers, OPTIONS), `/actions.json`,
 * the listing card (packages, sold, unlisted, unknown), `{ message }` errors, the per-IP rate limit, and the
 * shareable page `/app/listings/{id}` that opens the listing in the web app.
 */
import express from 'express';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOCKCHAIN_IDS } from '@solana/actions';
import { blockchainId } from '../server/src/http/actions/common.js';
import { actionsRouter } from '../server/src/http/actions/router.js';
import { ChainActionLandedError } from '../server/src/errors.js';
import { createLogger } from '../server/src/logger.js';
import { API, createListing, setListingStatus, setup, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';

const ORIGIN = 'https://wallet.example';
/** FakeChain has no RPC: configured on devnet, the well-known CAIP-2 id */
const DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';

let on: TestApp;
let off: TestApp;
let limited: TestApp;
let seller: TestUser;

beforeAll(async () => {
  [{ t: on }, { t: off }, { t: limited }] = await Promise.all([
    setup({ config: { actionsEnabled: true, siwsChainId: 'devnet', publicBaseUrl: 'https://bazaar.test', actionsRateLimitPerMinute: 1000 } }),
    setup({ config: { publicBaseUrl: 'https://bazaar.test' } }),
    setup({ config: { actionsEnabled: true, siwsChainId: 'devnet', actionsRateLimitPerMinute: 3 } }),
  ]);
  seller = await user(on);
});

afterAll(async () => {
  await Promise.all([on?.close(), off?.close(), limited?.close()]);
});

/** The headers every action answer carries (spec: versioning, chain, CORS). */
function expectActionHeaders(res: request.Response) {
  expect(res.headers['x-action-version']).toBe('2.4');
  expect(res.headers['x-blockchain-ids']).toBe(DEVNET);
  expect(res.headers['access-control-allow-origin']).toBe('*');
  expect(res.headers['access-control-allow-credentials']).toBeUndefined();
  expect(res.headers['access-control-allow-methods']).toBe('GET,POST,PUT,OPTIONS');
  expect(res.headers['access-control-allow-headers']).toBe('Content-Type, Authorization, Content-Encoding, Accept-Encoding, X-Accept-Action-Version, X-Accept-Blockchain-Ids');
  expect(res.headers['access-control-expose-headers']).toBe('X-Action-Version, X-Blockchain-Ids');
  expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
}

describe('ACTIONS_ENABLED', () => {
  it('off (the server\'s default): every action route answers 404 { message }, no action headers', async () => {
    const l = await createListing(off.app, await user(off));
    for (const r of [
      request(off.app).get('/actions.json'),
      request(off.app).get(`/api/actions/listings/${l.listing_id}`),
      request(off.app).post(`/api/actions/listings/${l.listing_id}`).send({ account: seller.wallet }),
      request(off.app).options(`/api/actions/listings/${l.listing_id}`).set('Origin', ORIGIN).set('Access-Control-Request-Method', 'POST'),
    ]) {
      const res = await r;
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'Solana Actions are not enabled on this marketplace.' });
      expect(res.headers['x-action-version']).toBeUndefined();
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });
});

describe('GET /network says whether actions are served (the web app asks before it fetches a card)', () => {
  it('actions_enabled follows ACTIONS_ENABLED', async () => {
    expect((await request(on.app).get(`${API}/network`)).body.actions_enabled).toBe(true);
    expect((await request(off.app).get(`${API}/network`)).body.actions_enabled).toBe(false);
  });
});

describe('headers, CORS, actions.json', () => {
  it('/actions.json maps the web app\'s listing and order pages to their actions, with the spec\'s headers', async () => {
    const res = await request(on.app).get('/actions.json').set('Origin', ORIGIN);
    expect(res.status).toBe(200);
    expectActionHeaders(res);
    expect(res.body).toEqual({
      rules: [
        { pathPattern: '/app/listings/*', apiPath: '/api/actions/listings/*' },
        { pathPattern: '/app/orders/*', apiPath: '/api/actions/orders/*' },
        { pathPattern: '/api/actions/**', apiPath: '/api/actions/**' },
      ],
    });
  });

  it('OPTIONS (a browser blink client\'s preflight) answers 204 with the same headers, whatever CORS_ORIGINS says', async () => {
    const res = await request(on.app)
      .options('/api/actions/listings/00000000-0000-4000-8000-000000000000')
      .set('Origin', ORIGIN)
      .set('Access-Control-Request-Method', 'POST')
      .set('Access-Control-Request-Headers', 'content-type, x-accept-action-version');
    expect(res.status).toBe(204);
    expectActionHeaders(res);
  });

  it('X-Blockchain-Ids is the CAIP-2 id of the configured cluster (a localnet\'s from its genesis hash)', () => {
    expect(blockchainId('mainnet-beta')).toBe(BLOCKCHAIN_IDS.mainnet);
    expect(blockchainId('devnet')).toBe(DEVNET);
    expect(blockchainId('testnet')).toBe(BLOCKCHAIN_IDS.testnet);
    expect(blockchainId('localnet', '4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZAMdL4VZHirAn')).toBe('solana:4sGjMW1sUnHzSxGspuhpqLDx6wiyjNtZ') // CAIP-2: the first 32 characters;
    expect(() => blockchainId('localnet')).toThrow(/genesis hash/);
  });
});

describe('GET /api/actions/listings/{id}: the card', () => {
  it('one button per package, the marketplace icon, price and reputation; errors are { message } with the spec headers', async () => {
    const pkg = (key: string, price: number, days: number) => ({ key, name: `${key} logo`, price, delivery_days: days, revisions: 1, description: `The ${key} package` });
    const l = await createListing(on.app, seller, { price: undefined, duration: undefined, packages: [pkg('basic', 10, 2), pkg('premium', 60, 7)] });
    const res = await request(on.app).get(`/api/actions/listings/${l.listing_id}`).set('Origin', ORIGIN);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expectActionHeaders(res);
    expect(res.body).toEqual({
      type: 'action',
      icon: 'https://bazaar.test/icon.svg',
      title: 'Logo design in three days',
      description: 'from 10 USDC · delivery within 2 days. Seller: no reviews yet. Paid into an on-chain escrow: the seller is paid when you confirm delivery.',
      label: 'Choose a package',
      links: {
        actions: [
          { type: 'transaction', href: `/api/actions/listings/${l.listing_id}?package=basic`, label: 'basic logo · 10 USDC · 2 days' },
          { type: 'transaction', href: `/api/actions/listings/${l.listing_id}?package=premium`, label: 'premium logo · 60 USDC · 7 days' },
        ],
      },
    });
  });

  it('a sold listing: a disabled card saying why; unlisted or unknown: 404 { message }; a bad id: 400 { message }', async () => {
    const sold = await createListing(on.app, seller);
    await setListingStatus(on.ctx.db, sold.listing_id, 'sold');
    const card = await request(on.app).get(`/api/actions/listings/${sold.listing_id}`);
    expect(card.status).toBe(200);
    expect(card.body).toMatchObject({ disabled: true, error: { message: 'Sold: this listing has no units left.' } });

    const unlisted = await createListing(on.app, seller);
    await setListingStatus(on.ctx.db, unlisted.listing_id, 'unlisted');
    for (const id of [unlisted.listing_id, '00000000-0000-4000-8000-000000000000']) {
      const res = await request(on.app).get(`/api/actions/listings/${id}`);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ message: 'This listing does not exist (or is no longer listed).' });
      expectActionHeaders(res);
    }
    const bad = await request(on.app).get('/api/actions/listings/not-a-uuid');
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body)).toEqual(['message']);
    const none = await request(on.app).get('/api/actions/nothing-here');
    expect(none.status).toBe(404);
    expect(none.body).toEqual({ message: 'No such action on this marketplace.' });
  });

  it('POST without the escrow program: 503 { message } with Retry-After; a body that is not JSON: 400 { message }', async () => {
    const l = await createListing(on.app, seller);
    const res = await request(on.app).post(`/api/actions/listings/${l.listing_id}`).send({ account: (await user(on)).wallet });
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(Object.keys(res.body)).toEqual(['message']);
    const garbled = await request(on.app).post(`/api/actions/listings/${l.listing_id}`).set('Content-Type', 'application/json').send('{"account":');
    expect(garbled.status).toBe(400);
    expect(garbled.body).toEqual({ message: 'The request body is not valid JSON.' });
  });
});

describe('a chain action that landed but was not recorded (the order actions\' confirm or dispute)', () => {
  /** The shared actions router alone, with order actions whose act landed on chain and whose database write then failed. */
  function routerWhoseActLanded(cause: unknown, landed: { action: string; order_id: string; signature: string }) {
    const app = express();
    const landedAct = async () => {
      throw new ChainActionLandedError(cause, landed);
    };
    app.use(
      actionsRouter({
        guard: { enabled: true, perMinute: 1000, blockchainIds: async () => DEVNET },
        bodyLimit: '100kb',
        listings: {} as never,
        orders: { card: landedAct, requestSignature: landedAct, perform: landedAct } as never,
        log: createLogger('silent'),
      }),
    );
    return app;
  }
  const callback = (app: express.Express, orderId: string) =>
    request(app)
      .post(`/api/actions/orders/${orderId}/confirm/next`)
      .send({
        account: '11111111111111111111111111111111',
        signature: '5'.repeat(88),
        data: { domain: 'bazaar.test', address: '11111111111111111111111111111111', statement: 'Confirm delivery', nonce: 'abcdefgh1234', issuedAt: new Date().toISOString() },
      });

  it('answers 503 { message } naming the signature, with Retry-After, the action headers (the database was down or not), never a generic 500', async () => {
    const orderId = '00000000-0000-4000-8000-00000000000a';
    const landed = { action: 'release', order_id: orderId, signature: '4'.repeat(87) };
    const dbDown = Object.assign(new Error('Can\'t reach database server'), { code: 'P1001', meta: { driverAdapterError: { cause: { kind: 'DatabaseNotReachable' } } } });
    for (const cause of [dbDown, new TypeError('x is undefined')]) {
      const res = await callback(routerWhoseActLanded(cause, landed), orderId);
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(Object.keys(res.body)).toEqual(['message']);
      expect(res.body.message).toContain(landed.signature);
      expect(res.body.message).toMatch(/landed on chain/);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expectActionHeaders(res);
    }
  });
});

describe('methods an action route does not declare', () => {
  it('answer 405 { message } with Allow (not 404), on /actions.json and on listing and order actions; an unknown path stays 404', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    for (const [method, path, allow] of [
      ['trace', '/actions.json', 'GET, HEAD, OPTIONS'],
      ['delete', `/api/actions/listings/${id}`, 'GET, POST, HEAD, OPTIONS'],
      ['put', `/api/actions/orders/${id}/confirm/next`, 'POST, OPTIONS'],
    ] as const) {
      const res = await request(on.app)[method](path);
      expect(res.status, `${method} ${path}`).toBe(405);
      expect(res.headers.allow).toBe(allow);
      if (method !== 'trace') expect(Object.keys(res.body)).toEqual(['message']);
      expectActionHeaders(res);
    }
    expect((await request(on.app).delete('/api/actions/nothing-here')).status).toBe(404);
  });
});

describe('per-IP rate limit (ACTIONS_RATE_LIMIT_PER_MINUTE)', () => {
  it('beyond the limit: 429 { message } with Retry-After and the action headers; preflights are not counted', async () => {
    for (let i = 0; i < 3; i++) {
      expect((await request(limited.app).options('/actions.json').set('Origin', ORIGIN)).status).toBe(204);
      expect((await request(limited.app).get('/actions.json')).status).toBe(200);
    }
    const res = await request(limited.app).get('/api/actions/listings/00000000-0000-4000-8000-000000000000');
    expect(res.status).toBe(429);
    expect(res.body.message).toMatch(/^Too many requests from your network .*\(3 per minute\); retry in \d+ s\.$/);
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    expectActionHeaders(res);
  });
});

describe('the shareable page /app/listings/{id}', () => {
  it('opens the listing in the web app (its hash route), and only for a listing id', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const res = await request(off.app).get(`/app/listings/${id}`);
    expect(res.status).toBe(302);
    expect(res.headers.location).toBe(`/app/#/listings/${id}`);
    expect((await request(off.app).get('/app/listings/..%2F..%2Fetc')).status).toBe(404);
    // the API itself is untouched
    expect((await request(off.app).get(`${API}/listings/${id}`)).status).not.toBe(302);
  });
});
