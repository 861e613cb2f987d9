/**
 * Who keeps access to events (issue 20, items 3, 4, 6, 8, 15), over HTTP on PGlite with the fake chain:
 *
 * - revocation revokes: a stream ends with `stream.closed` when its token is revoked (at once on this
 *   replica, by the periodic re-check on another), an admin stream whose user lost the role ends, a
 *   webhook tied to a revoked token is disabled (webhook.disabled to its owner) and delivers nothing
 *   more, a marketplace-wide webhook stops when its owner loses admin;
 * - scopes filter contents: a token without `chat:read` sees no `message.created` in GET /events, the
 *   stream or its webhooks;
 * - streams are capped per user (429), a replay is bounded (`replay_limit`), writes wait for `drain`;
 * - webhook endpoints are capped per user (409), `::7f00:1` and `fec0::/10` are refused;
 * - an endpoint deleted while the worker delivers to it fails nobody's pass.
 *
 * On PGlite, and on PostgreSQL too when TEST_DATABASE_URL is set.
 */
import { EventEmitter } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../server/src/app.js';
import { EventHub, createEventsRepo, eventTypesFor } from '../server/src/modules/events/index.js';
import { refusedAddress } from '../server/src/modules/webhooks/index.js';
import type { SendInput } from '../server/src/modules/webhooks/webhooks.sender.js';
import { connectSse, type SseConnection } from './helpers/sse.js';
import { followEvents } from '../client-sdk/src/events.js';
import { revokeApiKey } from '../server/src/modules/auth/index.js';
import { createApiKey, createTestApp } from './helpers/app.js';
import { FakeChain } from './helpers/fake-chain.js';
import { API, createListing, expectProblem, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';
import { dbBackends } from './helpers/shared-db.js';
import { eventually } from './helpers/eventually.js';
import { setRoles } from './helpers/roles.js';

const WEBHOOKS = { allowPrivateUrls: true, timeoutMs: 2_000, intervalMs: 0, concurrency: 8, maxPerUser: 3 };
const STREAMS = { maxPerUser: 2, replayMax: 5, recheckMs: 60_000 };

let t: TestApp;
let base: string;
let server: http.Server;
const closers: Array<() => Promise<unknown> | void> = [];

/** `p`, or a failure naming `what` after `ms` (the condition never came) */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, fail) => (timer = setTimeout(() => fail(new Error(`${what}: not within ${ms} ms`)), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

async function token(u: TestUser, scopes: string[]) {
  const res = await request(t.app).post(`${API}/user/tokens`).set(u.headers).send({ name: 'app', scopes });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { token: string; token_id: string };
}
const bearer = (tok: string) => ({ authorization: `Bearer ${tok}` });

async function stream(u: Record<string, string>, q = '', baseUrl = base): Promise<SseConnection> {
  const sse = await connectSse(`${baseUrl}${API}/events/stream${q}`, u);
  closers.push(() => sse.close());
  return sse;
}

/** a message between a buyer and a seller (a listing inquiry): message.created to both */
async function message(buyer: TestUser, seller: TestUser) {
  const l = await createListing(t.app, seller);
  const res = await request(t.app).post(`${API}/listings/${l.listing_id}/conversations`).set(buyer.headers).send({ body: 'secret terms' });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.message as { message_id: string };
}

/** a receiver that accepts everything and keeps the events it got */
async function receiver() {
  const got: Array<{ type: string; resource_id: string; data: Record<string, unknown> }> = [];
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      got.push(JSON.parse(body));
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  closers.push(() => new Promise((r) => srv.close(r)));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hook`, got };
}

/** a second replica on the same database, with a fast credential re-check (and its own clock) */
async function replica(over: Record<string, unknown> = {}, now: () => Date = t.ctx.now) {
  const app = createApp({ ...t.ctx, now, config: { ...t.ctx.config, eventStreams: { ...STREAMS, recheckMs: 100, ...over } } });
  await app.services.events.start();
  const srv = app.listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  closers.push(async () => {
    await app.services.events.stop();
    await new Promise((r) => srv.close(r));
  });
  return `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
}

const closedWith = (sse: SseConnection) => {
  const last = sse.messages[sse.messages.length - 1];
  return last?.event === 'stream.closed' ? (JSON.parse(last.data) as { reason: string }).reason : null;
};

describe.each(dbBackends)('$name', ({ postgres }) => {
  beforeAll(async () => {
    t = await createTestApp({ chain: new FakeChain() as never, config: { webhooks: WEBHOOKS, eventStreams: STREAMS }, postgres });
    server = t.app.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    await t.services.events.start();
  });

  afterEach(async () => {
    for (const c of closers.splice(0).reverse()) await c();
  });

  afterAll(async () => {
    await t.services.events.stop();
    await new Promise((r) => server.close(r));
    await t?.close();
  });

  describe('revocation revokes (item 3)', () => {
    it('a stream opened with a token ends with stream.closed credential_revoked as the token is revoked on this replica, and gets nothing after', async () => {
      const u = await user(t);
      const tok = await token(u, ['events:read', 'listings:read']);
      const sse = await stream(bearer(tok.token));
      const before = await createListing(t.app, u);
      await sse.waitFor(1);
      expect(JSON.parse(sse.messages[0]!.data)).toMatchObject({ resource_id: before.listing_id });
      expect((await request(t.app).delete(`${API}/user/tokens/${tok.token_id}`).set(u.headers)).status).toBe(200);
      // the in-process signal: ended well before the 60 s periodic re-check of this app
      await within(sse.ended, 5_000, 'stream ended after revocation');
      expect(closedWith(sse)).toBe('credential_revoked');
      await createListing(t.app, u);
      expect(sse.messages.filter((m) => m.event !== 'stream.closed')).toHaveLength(1);
      expectProblem(await request(t.app).get(`${API}/events/stream`).set(bearer(tok.token)), 401, 'invalid-token');
    });

    it('a revocation committed elsewhere (another replica, the database) ends the stream at the periodic re-check', async () => {
      const u = await user(t);
      const tok = await token(u, ['events:read', 'listings:read']);
      const other = await replica();
      const sse = await stream(bearer(tok.token), '', other);
      // revoked in the database only, as another replica does: no signal reaches this process's hub
      await t.ctx.db.personalAccessToken.update({ where: { id: tok.token_id }, data: { revokedAt: new Date() } });
      await within(sse.ended, 5_000, 'stream ended by the re-check');
      expect(closedWith(sse)).toBe('credential_revoked');
    });

    it('a stream opened with a session ends when the session\'s JWT expires (credential_revoked)', async () => {
      const u = await user(t);
      let skewMs = 0;
      const other = await replica({}, () => new Date(Date.now() + skewMs));
      const sse = await stream(u.headers, '', other);
      expect(sse.status).toBe(200);
      skewMs = 2 * 3600_000; // past the JWT's exp (JWT_TTL_SECONDS 3600 in tests)
      await within(sse.ended, 5_000, 'stream of an expired session ended');
      expect(closedWith(sse)).toBe('credential_revoked');
    });

    it('an admin stream whose user loses the admin role ends with access_changed (it no longer sees everyone\'s events)', async () => {
      const admin = await user(t);
      await setRoles(t.ctx.db, { id: admin.userId });
      const other = await replica();
      const sse = await stream(admin.headers, '', other);
      const stranger = await user(t);
      const l = await createListing(t.app, stranger);
      await sse.waitFor(1);
      expect(JSON.parse(sse.messages[0]!.data)).toMatchObject({ resource_id: l.listing_id });
      await setRoles(t.ctx.db, { id: admin.userId }, []);
      await within(sse.ended, 5_000, 'admin stream ended');
      expect(closedWith(sse)).toBe('access_changed');
    });

    it('a webhook registered with a token is disabled when the token is revoked: webhook.disabled to its owner, no delivery after', async () => {
      const u = await user(t);
      const tok = await token(u, ['webhooks:manage', 'listings:read', 'events:read']);
      const rx = await receiver();
      const hook = await request(t.app).post(`${API}/webhooks`).set(bearer(tok.token)).send({ url: rx.url });
      expect(hook.status).toBe(201);
      await createListing(t.app, u);
      await t.services.webhooks!.worker.runOnce();
      expect(rx.got).toHaveLength(1);
      // a listing committed before the revocation and not yet delivered, then the revocation
      await createListing(t.app, u);
      await request(t.app).delete(`${API}/user/tokens/${tok.token_id}`).set(u.headers).expect(200);
      await createListing(t.app, u);
      await t.services.webhooks!.worker.runOnce();
      expect(rx.got).toHaveLength(1);
      const h = await request(t.app).get(`${API}/webhooks/${hook.body.webhook_id}`).set(u.headers);
      expect(h.body).toMatchObject({ enabled: false, disabled_reason: expect.stringContaining('revoked') });
      const ev = await request(t.app).get(`${API}/events?type=webhook.disabled`).set(u.headers);
      expect(ev.body.data).toHaveLength(1);
      expect(ev.body.data[0]).toMatchObject({ resource_id: hook.body.webhook_id, data: { enabled: false } });
      // re-enabled by the owner's session: tied to it, deliveries of new events resume
      await request(t.app).patch(`${API}/webhooks/${hook.body.webhook_id}`).set(u.headers).send({ enabled: true }).expect(200);
      await createListing(t.app, u);
      await t.services.webhooks!.worker.runOnce();
      expect(rx.got.map((g) => g.type)).toEqual(['listing.created', 'listing.created']);
    });

    it('an API key revoked (the operator CLI\'s revokeApiKey) ends its streams and disables the webhooks it registered', async () => {
      const u = await user(t);
      const key = await createApiKey(t, { name: 'integration', userId: u.userId });
      const sse = await stream({ 'x-api-key': key.key });
      const rx = await receiver();
      const hook = await request(t.app).post(`${API}/webhooks`).set({ 'x-api-key': key.key }).send({ url: rx.url });
      expect(hook.status).toBe(201);
      expect(await revokeApiKey(t.ctx.db, key.prefix)).toBe(true);
      await within(sse.ended, 5_000, 'API key stream ended');
      expect(closedWith(sse)).toBe('credential_revoked');
      await createListing(t.app, u);
      await t.services.webhooks!.worker.runOnce();
      expect(rx.got).toHaveLength(0);
      const h = await request(t.app).get(`${API}/webhooks/${hook.body.webhook_id}`).set(u.headers);
      expect(h.body).toMatchObject({ enabled: false, disabled_reason: expect.stringContaining(`bzk_${key.prefix}`) });
    });

    it('a marketplace-wide webhook stops receiving other users\' events when its owner loses admin', async () => {
      const admin = await user(t);
      await setRoles(t.ctx.db, { id: admin.userId });
      const rx = await receiver();
      const hook = await request(t.app).post(`${API}/webhooks`).set(admin.headers).send({ url: rx.url, marketplace_wide: true, event_types: ['listing.created'] });
      expect(hook.status, JSON.stringify(hook.body)).toBe(201);
      const seller = await user(t);
      await createListing(t.app, seller);
      await t.services.webhooks!.worker.runOnce();
      expect(rx.got).toHaveLength(1);
      await setRoles(t.ctx.db, { id: admin.userId }, []);
      await createListing(t.app, seller);
      await t.services.webhooks!.worker.runOnce();
      expect(rx.got).toHaveLength(1);
      const h = await request(t.app).get(`${API}/webhooks/${hook.body.webhook_id}`).set(admin.headers);
      expect(h.body).toMatchObject({ enabled: false, disabled_reason: expect.stringContaining('admin') });
      // switched back on behind the service's back (or by a request that raced the demotion): the fan-out
      // itself checks the role, so other users' events still do not go out
      await t.ctx.db.webhookEndpoint.update({ where: { id: hook.body.webhook_id }, data: { enabled: true, disabledReason: null } });
      await createListing(t.app, seller);
      await t.services.webhooks!.repo.fanOut(500, new Date());
      expect(await t.ctx.db.webhookDelivery.count({ where: { endpointId: hook.body.webhook_id, status: 'pending' } })).toBe(0);
      await t.services.webhooks!.worker.runOnce();
      expect(rx.got).toHaveLength(1);
    });
  });

  describe('scopes filter what events carry (item 4)', () => {
    it('maps scopes to event types: chat:read for message.*, wallet:read for deposits and withdrawals; no scopes = everything', () => {
      expect(eventTypesFor(null)).toBeNull();
      const types = eventTypesFor(['events:read', 'listings:read', 'orders:read'])!;
      expect(types).toContain('order.funded');
      expect(types).toContain('listing.created');
      // a tip is read through its order's routes (issue 24 item 8)
      expect(types).toContain('tip.received');
      expect(eventTypesFor(['events:read', 'listings:read'])).not.toContain('tip.received');
      for (const hidden of ['message.created', 'deposit.credited', 'withdrawal.created', 'withdrawal.confirmed', 'webhook.disabled']) expect(types).not.toContain(hidden);
      expect(eventTypesFor(['events:read', 'chat:read', 'wallet:read'])).toEqual(['deposit.credited', 'withdrawal.created', 'withdrawal.confirmed', 'withdrawal.failed', 'message.created']);
    });

    it('a token without chat:read sees no message.created in GET /events or the stream; one with chat:read does', async () => {
      const [buyer, seller] = [await user(t), await user(t)];
      const noChat = await token(buyer, ['events:read', 'listings:read']);
      const chat = await token(buyer, ['events:read', 'chat:read']);
      const sseNoChat = await stream(bearer(noChat.token));
      const sseChat = await stream(bearer(chat.token));
      const m = await message(buyer, seller);
      const own = await createListing(t.app, buyer);
      // the listing comes after the message: once it arrived, the message would have arrived before it
      await sseNoChat.waitFor(1);
      expect(sseNoChat.messages.map((x) => x.event)).toEqual(['listing.created']);
      expect(JSON.parse(sseNoChat.messages[0]!.data).resource_id).toBe(own.listing_id);
      const [got] = await sseChat.waitFor(1);
      expect(JSON.parse(got!.data)).toMatchObject({ type: 'message.created', resource_id: m.message_id, data: { body: 'secret terms' } });

      const listed = await request(t.app).get(`${API}/events?limit=100`).set(bearer(noChat.token));
      expect(listed.body.data.map((e: { type: string }) => e.type)).not.toContain('message.created');
      expect(listed.body.data.map((e: { type: string }) => e.type)).toContain('listing.created');
      const full = await request(t.app).get(`${API}/events?type=message.created`).set(buyer.headers);
      expect(full.body.data.map((e: { resource_id: string }) => e.resource_id)).toContain(m.message_id);
      const withChat = await request(t.app).get(`${API}/events?type=message.created`).set(bearer(chat.token));
      expect(withChat.body.data.map((e: { resource_id: string }) => e.resource_id)).toEqual([m.message_id]);
    });

    it('a webhook registered by a token without chat:read is not sent message.created', async () => {
      const [buyer, seller] = [await user(t), await user(t)];
      const tok = await token(buyer, ['webhooks:manage', 'listings:read']);
      const rx = await receiver();
      expect((await request(t.app).post(`${API}/webhooks`).set(bearer(tok.token)).send({ url: rx.url })).status).toBe(201);
      await message(buyer, seller);
      await createListing(t.app, buyer);
      await t.services.webhooks!.worker.runOnce();
      expect(rx.got.map((g) => g.type)).toEqual(['listing.created']);
    });
  });

  describe('stream limits (item 6)', () => {
    it('caps open streams per user across credentials: one more answers 429 rate-limited; closing one frees a slot', async () => {
      const u = await user(t);
      const tok = await token(u, ['events:read']);
      const a = await stream(u.headers);
      const b = await stream(bearer(tok.token));
      expect([a.status, b.status]).toEqual([200, 200]);
      const refused = await request(t.app).get(`${API}/events/stream`).set(u.headers);
      expectProblem(refused, 429, 'rate-limited');
      expect(refused.headers['retry-after']).toMatch(/^[1-9]\d*$/); // delay-seconds (RFC 9110 10.2.3)
      // another user is not affected
      const other = await stream((await user(t)).headers);
      expect(other.status).toBe(200);
      a.close();
      await eventually(() => t.services.events.hub.streamsOf(u.userId) === 1, { what: 'closed stream released', timeoutMs: 5_000 });
      const c = await stream(u.headers);
      expect(c.status).toBe(200);
    });

    it('a replay sends at most replayMax events, ends with replay_limit, and the client resumes from its last id with nothing lost', async () => {
      const u = await user(t);
      const l = await createListing(t.app, u);
      const first = (await request(t.app).get(`${API}/events?resource_id=${l.listing_id}`).set(u.headers)).body.data[0].position as string;
      for (let i = 0; i < 7; i++) await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(u.headers).send({ description: `edit ${i}` }).expect(200);
      const s1 = await stream({ ...u.headers, 'last-event-id': first });
      await within(s1.ended, 5_000, 'bounded replay ended');
      const events1 = s1.messages.filter((m) => m.event !== 'stream.closed');
      expect(events1.map((m) => JSON.parse(m.data).sequence)).toEqual([2, 3, 4, 5, 6]);
      expect(closedWith(s1)).toBe('replay_limit');
      const s2 = await stream({ ...u.headers, 'last-event-id': events1[events1.length - 1]!.id! });
      await s2.waitFor(2);
      await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(u.headers).send({ description: 'live' }).expect(200);
      const all = await s2.waitFor(3);
      expect(all.map((m) => JSON.parse(m.data).sequence)).toEqual([7, 8, 9]);
    });

    it('the SDK\'s followEvents resumes across replay_limit at once: every event, in order, once', async () => {
      const u = await user(t);
      const l = await createListing(t.app, u);
      const from = (await request(t.app).get(`${API}/events?resource_id=${l.listing_id}`).set(u.headers)).body.data[0].position as string;
      for (let i = 0; i < 12; i++) await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(u.headers).send({ description: `e ${i}` }).expect(200);
      const got: number[] = [];
      const closed: string[] = [];
      const stop = new AbortController();
      const following = followEvents({
        baseUrl: base,
        token: u.headers.authorization!.replace(/^Bearer /, ''),
        resourceId: l.listing_id,
        lastEventId: from,
        retryMs: 60_000, // a reconnect that waited for it would time the test out
        signal: stop.signal,
        onClosed: (w) => void closed.push(w.reason),
        onEvent: (e) => void got.push(e.sequence),
      });
      await eventually(() => got.length >= 12, { what: 'all events through the SDK', timeoutMs: 10_000 });
      stop.abort();
      await following;
      expect(got).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
      expect(closed).toEqual(['replay_limit', 'replay_limit']);
    });

    it('waits for drain: a replay writes no further event while the socket has not taken the last one', async () => {
      const u = await user(t);
      const l = await createListing(t.app, u);
      for (let i = 0; i < 5; i++) await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(u.headers).send({ description: `d ${i}` }).expect(200);
      const hub = new EventHub(createEventsRepo(t.ctx.db), { replayMax: 100, recheckMs: 0 });
      // a response whose socket buffer is always full: every write answers false until 'drain'
      const writes: string[] = [];
      const res = Object.assign(new EventEmitter(), {
        status: () => res,
        setHeader: () => res,
        flushHeaders: () => undefined,
        write: (chunk: string) => (writes.push(chunk), false),
        end: () => res.emit('close'),
      });
      const req = { socket: { setTimeout: () => undefined, setNoDelay: () => undefined } };
      const eventWrites = () => writes.filter((w) => w.startsWith('id: ')).length;
      const serving = hub.serve(req as never, res as never, { viewer: { userId: u.userId, isAdmin: false } }, { resourceId: l.listing_id }, 0n);
      await eventually(() => eventWrites() >= 1, { what: 'first replayed event', timeoutMs: 5_000 });
      // give the replay every chance to write more: it must not before 'drain'
      await new Promise((r) => setImmediate(r));
      await t.ctx.db.$queryRaw`SELECT 1`;
      expect(eventWrites()).toBe(1);
      for (let n = 2; n <= 6; n++) {
        res.emit('drain');
        await eventually(() => eventWrites() === n, { what: `event ${n} after drain`, timeoutMs: 5_000 });
      }
      res.emit('close');
      await serving;
      expect(eventWrites()).toBe(6);
    });
  });

  describe('webhook endpoints (items 8, 15)', () => {
    it('caps endpoints per user: one more answers 409 webhook-limit-reached; deleting one frees a slot', async () => {
      const u = await user(t);
      const ids: string[] = [];
      for (let i = 0; i < WEBHOOKS.maxPerUser; i++) {
        const r = await request(t.app).post(`${API}/webhooks`).set(u.headers).send({ url: `http://127.0.0.1:9/h${i}` });
        expect(r.status).toBe(201);
        ids.push(r.body.webhook_id);
      }
      const refused = await request(t.app).post(`${API}/webhooks`).set(u.headers).send({ url: 'http://127.0.0.1:9/more' });
      expectProblem(refused, 409, 'webhook-limit-reached');
      expect(refused.body.limit).toBe(WEBHOOKS.maxPerUser);
      await request(t.app).delete(`${API}/webhooks/${ids[0]}`).set(u.headers).expect(200);
      expect((await request(t.app).post(`${API}/webhooks`).set(u.headers).send({ url: 'http://127.0.0.1:9/again' })).status).toBe(201);
      // concurrent creations cannot pass the cap together (the count runs under the owner's row lock)
      const v = await user(t);
      const burst = await Promise.all(
        Array.from({ length: WEBHOOKS.maxPerUser + 3 }, (_, i) => request(t.app).post(`${API}/webhooks`).set(v.headers).send({ url: `http://127.0.0.1:9/b${i}` })),
      );
      expect(burst.filter((r) => r.status === 201)).toHaveLength(WEBHOOKS.maxPerUser);
      expect(burst.filter((r) => r.status === 409)).toHaveLength(3);
    });

    it('refuses IPv4-compatible (::7f00:1) and site-local (fec0::/10) IPv6 addresses, literal or resolved', async () => {
      for (const a of ['::7f00:1', '::a00:1', 'fec0::1', 'feff::1', '::1', 'fe80::1', 'fc00::1', '2001:db8::1']) expect(refusedAddress(a, false), a).not.toBeNull();
      expect(refusedAddress('2606:4700::1111', false)).toBeNull();
      expect(refusedAddress('93.184.215.14', false)).toBeNull();
      const u = await user(t);
      const strict = createApp({
        ...t.ctx,
        config: { ...t.ctx.config, webhooks: { ...WEBHOOKS, allowPrivateUrls: false } },
        webhooks: { resolve: async (h) => (h === 'compat.example' ? ['::7f00:1'] : h === 'site.example' ? ['fec0::5'] : ['2606:4700::1111']) },
      });
      for (const url of ['http://[::7f00:1]/x', 'http://[fec0::1]/x', 'http://compat.example/x', 'http://site.example/x']) {
        expectProblem(await request(strict).post(`${API}/webhooks`).set(u.headers).send({ url }), 400, 'webhook-url-refused');
      }
      expect((await request(strict).post(`${API}/webhooks`).set(u.headers).send({ url: 'https://public.example/x' })).status).toBe(201);
    });

    it('an endpoint deleted while the worker delivers to it is dropped quietly; the other endpoints of the pass are recorded', async () => {
      const [a, b, c] = [await user(t), await user(t), await user(t)];
      const hook = async (u: TestUser, path: string) => (await request(t.app).post(`${API}/webhooks`).set(u.headers).send({ url: `http://127.0.0.1:9/${path}` })).body.webhook_id as string;
      const [hA, hB, hC] = [await hook(a, 'a'), await hook(b, 'b'), await hook(c, 'c')];
      const errors: unknown[] = [];
      const log = { info: () => undefined, warn: () => undefined, error: (o: unknown) => void errors.push(o) };
      // A is deleted by its owner during its attempt and then answers 200, B during its attempt and
      // then fails (500): neither may fail the pass; C is delivered and recorded
      const send = async (i: SendInput) => {
        const owner = i.url.endsWith('/a') ? [a, hA] : i.url.endsWith('/b') ? [b, hB] : null;
        if (owner) await request(t.app).delete(`${API}/webhooks/${owner[1]}`).set((owner[0] as TestUser).headers).expect(200);
        const ok = !i.url.endsWith('/b');
        return { ok, statusCode: ok ? 200 : 500, error: ok ? null : 'receiver answered 500', body: '', durationMs: 1 };
      };
      const worker = createApp({ ...t.ctx, webhooks: { worker: { send, log } as never } });
      await Promise.all([createListing(t.app, a), createListing(t.app, b), createListing(t.app, c)]);
      await expect(worker.services.webhooks!.worker.runOnce()).resolves.toBeGreaterThanOrEqual(3);
      expect(errors).toEqual([]);
      const delivered = await request(t.app).get(`${API}/webhooks/${hC}/deliveries`).set(c.headers);
      expect(delivered.body.data).toHaveLength(1);
      expect(delivered.body.data[0]).toMatchObject({ status: 'delivered', attempt_log: [{ status_code: 200 }] });
      expect(await t.ctx.db.webhookDelivery.count({ where: { endpointId: { in: [hA, hB] } } })).toBe(0);
    });
  });
});
