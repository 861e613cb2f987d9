/**
 * Personal access tokens and the auth matrix of the issue 11 routes (events, webhooks, chat, tokens):
 * owner, other party, stranger, admin credential, a token with the route's scope and one without.
 * Tokens: shown once, stored hashed, revocable, expiring, never admin, unable to manage tokens.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiKey } from '../server/src/modules/auth/index.js';
import { createApiKey } from './helpers/app.js';
import { API, createListing, expectProblem, setup, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';
import { setRoles } from './helpers/roles.js';

let t: TestApp;
let owner: TestUser; // the prospective buyer who opened the inquiry and owns the webhook
let party: TestUser; // the seller: the other party of the conversation
let stranger: TestUser;
let admin: Record<string, string>;
let conversationId: string;
let listingId: string;
let webhookId: string;

async function token(u: TestUser, scopes: string[], extra: Record<string, unknown> = {}) {
  const res = await request(t.app).post(`${API}/user/tokens`).set(u.headers).send({ name: 'app', scopes, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { token: string; token_id: string };
}
const bearer = (tok: string) => ({ authorization: `Bearer ${tok}` });

beforeAll(async () => {
  ({ t } = await setup({ config: { webhooks: { allowPrivateUrls: true, timeoutMs: 1000, intervalMs: 0, concurrency: 1 } } as never }));
  [owner, party, stranger] = [await user(t), await user(t), await user(t)];
  admin = { 'x-api-key': (await createApiKey(t, { name: 'admin', isAdmin: true })).key };
  listingId = (await createListing(t.app, party)).listing_id;
  conversationId = (await request(t.app).post(`${API}/listings/${listingId}/conversations`).set(owner.headers).send({ body: 'hi' })).body.conversation.conversation_id;
  webhookId = (await request(t.app).post(`${API}/webhooks`).set(owner.headers).send({ url: 'http://127.0.0.1:9/hook' })).body.webhook_id;
});

afterAll(async () => {
  await t?.close();
});

describe('personal access tokens', () => {
  it('are shown once, stored hashed, act as their user within their scopes, and stop at once when revoked', async () => {
    const created = await token(owner, ['events:read', 'chat:read']);
    expect(created.token).toMatch(/^bzp_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}$/);
    const row = await t.ctx.db.personalAccessToken.findUniqueOrThrow({ where: { id: created.token_id } });
    expect(row.tokenHash).toBe(hashApiKey(created.token));
    expect(JSON.stringify(row)).not.toContain(created.token.slice(13));
    const listed = await request(t.app).get(`${API}/user/tokens`).set(owner.headers);
    expect(listed.body.data[0]).toMatchObject({ token_id: created.token_id, scopes: ['events:read', 'chat:read'], revoked_at: null });
    expect(listed.body.data[0].token).toBeUndefined();

    expect((await request(t.app).get(`${API}/conversations`).set(bearer(created.token))).body.data).toHaveLength(1);
    const refused = await request(t.app).post(`${API}/conversations/${conversationId}/messages`).set(bearer(created.token)).send({ body: 'x' });
    expectProblem(refused, 403, 'insufficient-scope');
    expect(refused.body.required_scope).toBe('chat:write');
    // a token cannot manage tokens, whatever its scopes
    expectProblem(await request(t.app).get(`${API}/user/tokens`).set(bearer(created.token)), 403, 'insufficient-scope');
    // another user cannot revoke it
    expectProblem(await request(t.app).delete(`${API}/user/tokens/${created.token_id}`).set(stranger.headers), 404, 'not-found');
    const revoked = await request(t.app).delete(`${API}/user/tokens/${created.token_id}`).set(owner.headers);
    expect(revoked.status).toBe(200);
    // the revocation time: an RFC 3339 UTC timestamp of this moment
    expect(revoked.body.revoked_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(Math.abs(Date.parse(revoked.body.revoked_at) - Date.now())).toBeLessThan(60_000);
    expectProblem(await request(t.app).get(`${API}/events`).set(bearer(created.token)), 401, 'invalid-token');
  });

  it('never carry the admin role, and expire', async () => {
    const adminUser = await user(t);
    await setRoles(t.ctx.db, { id: adminUser.userId });
    const tok = await token(adminUser, ['orders:write', 'events:read']);
    const r = await request(t.app).post(`${API}/orders/00000000-0000-4000-8000-000000000000/resolve`).set(bearer(tok.token)).send({ buyer_bps: 0 });
    expectProblem(r, 403, 'insufficient-scope');
    // an admin user's token sees only that user's events, not the marketplace's
    expect((await request(t.app).get(`${API}/events?resource_id=${listingId}`).set(bearer(tok.token))).body.data).toEqual([]);
    const short = await token(owner, ['events:read'], { expires_in_days: 1 });
    await t.ctx.db.personalAccessToken.update({ where: { id: short.token_id }, data: { expiresAt: new Date(Date.now() - 1000) } });
    expectProblem(await request(t.app).get(`${API}/events`).set(bearer(short.token)), 401, 'token-expired');
  });
});

describe('auth matrix of events, webhooks, chat and tokens', () => {
  type Who = 'owner' | 'party' | 'stranger' | 'admin' | 'token+scope' | 'token-scope' | 'anonymous';
  let headers: Record<Who, Record<string, string>>;
  beforeAll(async () => {
    const all = await token(owner, ['events:read', 'webhooks:manage', 'chat:read', 'chat:write']);
    const none = await token(owner, ['profile:read']);
    headers = {
      owner: owner.headers,
      party: party.headers,
      stranger: stranger.headers,
      admin,
      'token+scope': bearer(all.token),
      'token-scope': bearer(none.token),
      anonymous: {},
    };
  });

  // expected status per caller: [owner, party, stranger, admin, token+scope, token-scope, anonymous]
  const cases: Array<[string, string, () => string, () => object | undefined, number[]]> = [
    ['GET', 'events', () => '/events', () => undefined, [200, 200, 200, 200, 200, 403, 401]],
    ['GET', 'webhooks', () => '/webhooks', () => undefined, [200, 200, 200, 403, 200, 403, 401]],
    ['GET', 'webhook', () => `/webhooks/${webhookId}`, () => undefined, [200, 404, 404, 404, 200, 403, 401]],
    ['PATCH', 'webhook', () => `/webhooks/${webhookId}`, () => ({ description: 'd' }), [200, 404, 404, 404, 200, 403, 401]],
    ['GET', 'webhook deliveries', () => `/webhooks/${webhookId}/deliveries`, () => undefined, [200, 404, 404, 404, 200, 403, 401]],
    ['GET', 'conversation messages', () => `/conversations/${conversationId}/messages`, () => undefined, [200, 200, 404, 404, 200, 403, 401]],
    ['POST', 'conversation message', () => `/conversations/${conversationId}/messages`, () => ({ body: 'm' }), [201, 201, 404, 404, 201, 403, 401]],
    ['GET', 'conversations', () => '/conversations', () => undefined, [200, 200, 200, 200, 200, 403, 401]],
    ['GET', 'tokens', () => '/user/tokens', () => undefined, [200, 200, 200, 403, 403, 403, 401]],
  ];
  const whos: Who[] = ['owner', 'party', 'stranger', 'admin', 'token+scope', 'token-scope', 'anonymous'];

  it.each(cases)('%s %s', async (method, _name, path, body, expected) => {
    const got: number[] = [];
    for (const who of whos) {
      const req = request(t.app)[method.toLowerCase() as 'get' | 'post' | 'patch'](`${API}${path()}`).set(headers[who]);
      const res = await (body() ? req.send(body()!) : req);
      got.push(res.status);
    }
    expect(got).toEqual(expected);
  });

  it('GET /events/stream: a token needs events:read', async () => {
    const res = await request(t.app).get(`${API}/events/stream`).set(headers['token-scope']);
    expectProblem(res, 403, 'insufficient-scope');
  });
});
