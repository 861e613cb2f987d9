/**
 * Events and webhooks over HTTP (issue 11) with the real app on PGlite and the fake chain: listing
 * changes are the events here (orders on the real chain: tests/e2e.events-orders.test.ts).
 *
 * - the outbox row exists exactly when the change committed, with a per-resource sequence;
 * - GET /events: parties only, admin credential all, filters, cursor paging;
 * - SSE: live delivery, resume with Last-Event-ID without loss or duplicates;
 * - webhooks: a real HTTP receiver verifying Standard Webhooks signatures with `standardwebhooks`,
 *   fail-N-then-succeed = exactly one accepted delivery per event, per-resource order, delivery after a
 *   restart, auto-disable with webhook.disabled, SSRF refusals, owner-only access.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../server/src/app.js';
import { createApiKey } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { connectSse } from './helpers/sse.js';
import { followEvents } from '../client-sdk/src/events.js';
import { verifyWebhook } from '../client-sdk/src/webhooks.js';
import { API, createListing, expectProblem, setup, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';

const WEBHOOKS = { allowPrivateUrls: true, timeoutMs: 2_000, intervalMs: 0, concurrency: 8 };

let t: TestApp;
let seller: TestUser;
let other: TestUser;
let adminKey: string;
let base: string;
let server: http.Server;

interface Received {
  id: string;
  body: string;
  verified: boolean;
  status: number;
}

/** A webhook receiver on an ephemeral port: answers `plan(n)` for the n-th request (1-based). */
async function receiver(secret: () => string, plan: (n: number, id: string) => number = () => 200) {
  const got: Received[] = [];
  const srv = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      let verified = false;
      try {
        new Webhook(secret()).verify(body, req.headers as Record<string, string>);
        // the SDK helper agrees and returns the typed event
        verified = verifyWebhook(body, req.headers, secret()).event_id === req.headers['webhook-id'];
      } catch {
        verified = false;
      }
      const id = String(req.headers['webhook-id']);
      const status = plan(got.length + 1, id);
      got.push({ id, body, verified, status });
      res.writeHead(status).end('ok');
    });
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hook`, got, close: () => new Promise((r) => srv.close(r)) };
}

const events = (u: TestUser, q = '') => request(t.app).get(`${API}/events${q}`).set(u.headers);

beforeAll(async () => {
  ({ t } = await setup({ config: { webhooks: WEBHOOKS } as never, webhooks: { worker: { retryDelaysMs: [50], jitter: 0 } } }));
  seller = await user(t);
  other = await user(t);
  adminKey = (await createApiKey(t, { name: 'admin', isAdmin: true })).key;
  server = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await t.services.events.start();
});

afterAll(async () => {
  await t.services.events.stop();
  await new Promise((r) => server.close(r));
  await t?.close();
});

describe('outbox and GET /events', () => {
  it('a listing writes listing.created, an edit listing.updated, with sequence 1, 2 and the listing as the API returns it', async () => {
    const l = await createListing(t.app, seller);
    const patched = await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(seller.headers).send({ description: 'Now with a style guide.' });
    expect(patched.status).toBe(200);
    const res = await events(seller, `?resource_id=${l.listing_id}`);
    expect(res.status).toBe(200);
    const mine = [...res.body.data].reverse();
    expect(mine.map((e: { type: string; sequence: number }) => [e.type, e.sequence])).toEqual([
      ['listing.created', 1],
      ['listing.updated', 2],
    ]);
    expect(mine[0]).toMatchObject({ resource_type: 'listing', resource_id: l.listing_id, data: { ...l, metadata: expect.any(Object) } });
    expect(mine[0].signature).toBe((l.mint_transaction as { signature: string }).signature);
    expect(mine[1].signature).toBeNull();
    expect(mine[1].data).toEqual(patched.body);
    expect(BigInt(mine[1].position)).toBeGreaterThan(BigInt(mine[0].position));
  });

  it('shows events to the parties only; an admin credential sees every event; a type filter and cursor pages work', async () => {
    const l = await createListing(t.app, seller);
    const stranger = await events(other, `?resource_id=${l.listing_id}`);
    expect(stranger.status).toBe(200);
    expect(stranger.body.data).toEqual([]);
    const admin = await request(t.app).get(`${API}/events?resource_id=${l.listing_id}`).set('x-api-key', adminKey);
    expect(admin.body.data.map((e: { type: string }) => e.type)).toEqual(['listing.created']);
    for (let i = 0; i < 3; i++) {
      await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(seller.headers).send({ description: `edit ${i}` }).expect(200);
    }
    const seen: number[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `?resource_id=${l.listing_id}&type=listing.updated&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = await events(seller, q);
      expect(page.status).toBe(200);
      seen.push(...page.body.data.map((e: { sequence: number }) => e.sequence));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual([4, 3, 2]);
    expectProblem(await events(seller, '?type=order.nonsense'), 400, 'validation-error');
  });

  it('a change that fails writes no event (same transaction): an edit refused with 409 leaves the stream unchanged', async () => {
    const l = await createListing(t.app, seller);
    const before = await events(seller, `?resource_id=${l.listing_id}`);
    const bad = await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(seller.headers).send({ status: 'sold' });
    expect(bad.status).toBeGreaterThanOrEqual(400);
    const after = await events(seller, `?resource_id=${l.listing_id}`);
    expect(after.body.data).toEqual(before.body.data);
  });
});

describe('GET /events/stream (SSE)', () => {
  it('delivers live events and resumes after Last-Event-ID with nothing lost and nothing twice', async () => {
    const sse = await connectSse(`${base}${API}/events/stream?resource_type=listing`, seller.headers);
    expect(sse.status).toBe(200);
    expect(sse.headers['content-type']).toMatch(/^text\/event-stream/);
    const l = await createListing(t.app, seller);
    const [first] = await sse.waitFor(1);
    expect(first).toMatchObject({ event: 'listing.created' });
    expect(JSON.parse(first!.data)).toMatchObject({ type: 'listing.created', resource_id: l.listing_id, position: first!.id });
    sse.close();

    // changes while disconnected
    for (let i = 0; i < 5; i++) {
      await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(seller.headers).send({ description: `offline ${i}` }).expect(200);
    }
    const again = await connectSse(`${base}${API}/events/stream?resource_type=listing`, { ...seller.headers, 'last-event-id': first!.id! });
    const replayed = await again.waitFor(5);
    // and live ones after the replay
    await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(seller.headers).send({ description: 'live' }).expect(200);
    const all = await again.waitFor(6);
    again.close();
    const seqs = all.map((m) => JSON.parse(m.data).sequence);
    expect(seqs).toEqual([2, 3, 4, 5, 6, 7]);
    expect(new Set(all.map((m) => m.id)).size).toBe(6);
    expect(replayed.every((m) => BigInt(m.id!) > BigInt(first!.id!))).toBe(true);
  });

  it('shows a stranger nothing of another user\'s listing, and refuses a malformed Last-Event-ID', async () => {
    const sse = await connectSse(`${base}${API}/events/stream`, other.headers);
    await createListing(t.app, seller);
    // a listing of the stranger's own, written after it: once its event arrives, the seller's (earlier
    // in the stream) would have arrived before it, were it visible
    const own = await createListing(t.app, other);
    const [first] = await sse.waitFor(1);
    expect(JSON.parse(first!.data)).toMatchObject({ resource_id: own.listing_id });
    expect(sse.messages).toHaveLength(1);
    sse.close();
    const bad = await request(t.app).get(`${API}/events/stream`).set(seller.headers).set('last-event-id', 'abc');
    expectProblem(bad, 400, 'validation-error');
    expect((await request(t.app).get(`${API}/events/stream`)).status).toBe(401);
  });

  it('the SDK\'s followEvents resumes across a stream the server ended (shutdown) with nothing lost or twice', async () => {
    const token = seller.headers.authorization!.replace(/^Bearer /, '');
    const l = await createListing(t.app, seller);
    const got: Array<{ type: string; sequence: number; resource_id: string }> = [];
    const stop = new AbortController();
    const streams = () => t.services.events.hub.streamsOf(seller.userId);
    const open = streams();
    const following = followEvents({ baseUrl: base, token, resourceType: 'listing', retryMs: 50, signal: stop.signal, onEvent: (e) => void got.push(e) });
    await eventually(() => streams() > open, { what: "the SDK's stream to be open" });
    await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(seller.headers).send({ description: 'one' }).expect(200);
    await eventually(() => got.length >= 1, { what: 'the live event before the shutdown' });
    // the server ends every stream (a replica draining); changes happen while the client reconnects
    await t.services.events.stop();
    await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(seller.headers).send({ description: 'two' }).expect(200);
    await t.services.events.start();
    await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(seller.headers).send({ description: 'three' }).expect(200);
    await eventually(() => got.length >= 3, { what: 'the events written while the client reconnected, and after' });
    stop.abort();
    await following;
    expect(got.filter((e) => e.resource_id === l.listing_id).map((e) => e.sequence)).toEqual([2, 3, 4]);
  });

  it('sends heartbeat comments on an idle stream and lets go of a client that disconnected', async () => {
    const { EventHub, createEventsRepo } = await import('../server/src/modules/events/index.js');
    const hub = new EventHub(createEventsRepo(t.ctx.db), { heartbeatMs: 50 });
    await hub.start();
    const { default: express } = await import('express');
    const srv = http.createServer(express().get('/', (req, res) => void hub.serve(req, res, { viewer: { userId: seller.userId, isAdmin: false } }, {}, null)));
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const sse = await connectSse(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/`);
    await eventually(() => sse.comments.filter((c) => c === 'heartbeat').length >= 2, { what: 'two heartbeat comments', timeoutMs: 5_000 });
    expect(sse.messages).toEqual([]);
    expect((hub as unknown as { subscribers: Set<unknown> }).subscribers.size).toBe(1);
    sse.close();
    const subs = () => (hub as unknown as { subscribers: Set<unknown> }).subscribers.size;
    await eventually(() => subs() === 0, { what: 'the hub to let go of the disconnected client', timeoutMs: 2_000 });
    await hub.stop();
    await new Promise((r) => srv.close(r));
  });

  it('ends open streams cleanly when the events module stops (shutdown drain)', async () => {
    const sse = await connectSse(`${base}${API}/events/stream`, seller.headers);
    expect(sse.status).toBe(200);
    let ended = false;
    void sse.ended.then(() => (ended = true));
    await eventually(() => t.services.events.hub.streamsOf(seller.userId) >= 1, { what: 'the stream to be registered' });
    await t.services.events.stop();
    try {
      // within a bound: a stream the stop left open fails here, not on the suite's timeout
      await eventually(() => ended, { what: 'the server to end the open stream on stop', timeoutMs: 2_000 });
      expect(t.services.events.hub.streamsOf(seller.userId)).toBe(0);
    } finally {
      sse.close();
      await t.services.events.start();
    }
  });
});

describe('webhooks', () => {
  const hooks: Array<{ close: () => Promise<unknown> }> = [];
  afterEach(async () => {
    await Promise.all(hooks.splice(0).map((h) => h.close()));
  });

  async function register(u: TestUser, url: string, body: Record<string, unknown> = {}) {
    const res = await request(t.app).post(`${API}/webhooks`).set(u.headers).send({ url, ...body });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { webhook_id: string; secret: string };
  }

  it('signs per Standard Webhooks; a receiver failing 3 times then accepting gets exactly one accepted delivery per event, in resource order', async () => {
    const failuresPerEvent = new Map<string, number>();
    let secret = '';
    const rx = await receiver(
      () => secret,
      (_n, id) => {
        const f = failuresPerEvent.get(id) ?? 0;
        failuresPerEvent.set(id, f + 1);
        return f < 3 ? 503 : 200;
      },
    );
    hooks.push(rx);
    const u = await user(t);
    ({ secret } = await register(u, rx.url, { event_types: ['listing.created', 'listing.updated'] }));
    const l = await createListing(t.app, u);
    await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(u.headers).send({ description: 'edit 1' }).expect(200);
    await request(t.app).patch(`${API}/listings/${l.listing_id}`).set(u.headers).send({ description: 'edit 2' }).expect(200);

    await eventually(
      async () => {
        await t.services.webhooks!.worker.runOnce();
        return rx.got.filter((g) => g.status === 200).length >= 3;
      },
      { what: 'three accepted deliveries', intervalMs: 60 },
    );
    expect(rx.got.every((g) => g.verified)).toBe(true);
    const accepted = rx.got.filter((g) => g.status === 200);
    expect(accepted.map((g) => g.id).sort()).toEqual([...new Set(accepted.map((g) => g.id))].sort());
    expect(accepted).toHaveLength(3);
    expect(accepted.map((g) => JSON.parse(g.body).sequence)).toEqual([1, 2, 3]);
    // every attempt of event n came before any attempt of event n+1 (per-resource order under retries)
    const order = rx.got.map((g) => JSON.parse(g.body).sequence as number);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(order).toHaveLength(12);
    for (const g of accepted) expect(JSON.parse(g.body).event_id).toBe(g.id);

    // the delivery log: 4 attempts each, the last 200
    const hook = (await request(t.app).get(`${API}/webhooks`).set(u.headers)).body.data[0];
    const log = await request(t.app).get(`${API}/webhooks/${hook.webhook_id}/deliveries`).set(u.headers);
    expect(log.status).toBe(200);
    expect(log.body.data).toHaveLength(3);
    for (const d of log.body.data) {
      expect(d).toMatchObject({ status: 'delivered', attempts: 4, last_status_code: 200 });
      expect(d.attempt_log.map((a: { status_code: number }) => a.status_code)).toEqual([503, 503, 503, 200]);
    }
  });

  it('manual redelivery sends the same event (same webhook-id) again; a rotated secret signs from then on', async () => {
    let secret = '';
    const rx = await receiver(() => secret);
    hooks.push(rx);
    const u = await user(t);
    const hook = await register(u, rx.url);
    secret = hook.secret;
    await createListing(t.app, u);
    await t.services.webhooks!.worker.runOnce();
    expect(rx.got).toHaveLength(1);
    const rotated = await request(t.app).post(`${API}/webhooks/${hook.webhook_id}/rotate_secret`).set(u.headers);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(hook.secret);
    const delivery = (await request(t.app).get(`${API}/webhooks/${hook.webhook_id}/deliveries`).set(u.headers)).body.data[0];
    const re = await request(t.app).post(`${API}/webhooks/${hook.webhook_id}/deliveries/${delivery.delivery_id}/redeliver`).set(u.headers);
    expect(re.status).toBe(202);
    secret = rotated.body.secret;
    await t.services.webhooks!.worker.runOnce();
    expect(rx.got).toHaveLength(2);
    expect(rx.got[1]!.id).toBe(rx.got[0]!.id);
    expect(rx.got[1]!.verified).toBe(true);
  });

  it('an event committed by a server that died before delivering is delivered by the next one on the same database', async () => {
    let secret = '';
    const rx = await receiver(() => secret);
    hooks.push(rx);
    const u = await user(t);
    secret = (await register(u, rx.url)).secret;
    // the change commits; this process never runs its worker (as if killed right after the commit)
    await createListing(t.app, u);
    expect(rx.got).toHaveLength(0);
    // a fresh app (new process) on the same database: its worker finds the event in the outbox
    const next = createApp({ ...t.ctx, config: { ...t.ctx.config, webhooks: { ...WEBHOOKS, intervalMs: 50 } } });
    await next.services.webhooks!.start();
    try {
      await eventually(() => rx.got.length > 0, { what: "the next server's worker to deliver the event", timeoutMs: 5_000, intervalMs: 50 });
    } finally {
      await next.services.webhooks!.stop();
    }
    expect(rx.got).toHaveLength(1);
    expect(JSON.parse(rx.got[0]!.body)).toMatchObject({ type: 'listing.created', resource_type: 'listing' });
  });

  it('disables an endpoint after sustained failure and tells its owner with webhook.disabled', async () => {
    const rx = await receiver(() => 'whsec_AAAA', () => 500);
    hooks.push(rx);
    const u = await user(t);
    const hook = await register(u, rx.url, { event_types: ['listing.created'] });
    const tight = createApp({ ...t.ctx, webhooks: { worker: { retryDelaysMs: [10], jitter: 0, disableAfterMs: 200 } } });
    await createListing(t.app, u);
    await eventually(
      async () => {
        await tight.services.webhooks!.worker.runOnce();
        return (await request(t.app).get(`${API}/webhooks/${hook.webhook_id}`).set(u.headers)).body.enabled === false;
      },
      { what: 'the endpoint to be disabled after sustained failure', timeoutMs: 3_000, intervalMs: 25 },
    );
    const h = await request(t.app).get(`${API}/webhooks/${hook.webhook_id}`).set(u.headers);
    expect(h.body).toMatchObject({ enabled: false, disabled_reason: expect.stringContaining('failed') });
    const ev = await events(u, '?type=webhook.disabled');
    expect(ev.body.data).toHaveLength(1);
    expect(ev.body.data[0]).toMatchObject({ resource_id: hook.webhook_id, data: { webhook_id: hook.webhook_id, enabled: false } });
    const attempts = rx.got.length;
    await tight.services.webhooks!.worker.runOnce();
    expect(rx.got.length).toBe(attempts); // disabled: nothing more is sent
  });

  it('refuses non-public URLs (SSRF), marketplace-wide endpoints without admin, and shows endpoints to their owner only', async () => {
    const strict = createApp({
      ...t.ctx,
      config: { ...t.ctx.config, webhooks: { ...WEBHOOKS, allowPrivateUrls: false } },
      webhooks: { resolve: async (h) => (h === 'rebind.example' ? ['10.1.2.3'] : h === 'public.example' ? ['93.184.215.14'] : []) },
    });
    for (const url of [
      'http://127.0.0.1:8080/x',
      'http://[::1]/x',
      'http://169.254.169.254/latest/meta-data',
      'http://10.0.0.5/x',
      'http://[::ffff:192.168.1.1]/x',
      'http://rebind.example/x',
      'ftp://public.example/x',
      'http://user:pw@public.example/x',
    ]) {
      const res = await request(strict).post(`${API}/webhooks`).set(seller.headers).send({ url });
      expectProblem(res, 400, 'webhook-url-refused');
    }
    const ok = await request(strict).post(`${API}/webhooks`).set(seller.headers).send({ url: 'https://public.example/hook' });
    expect(ok.status).toBe(201);
    expect(ok.body.secret).toMatch(/^whsec_/);
    expectProblem(await request(t.app).post(`${API}/webhooks`).set(seller.headers).send({ url: 'https://public.example/h', marketplace_wide: true }), 403, 'forbidden');
    for (const path of ['', '/deliveries']) {
      expectProblem(await request(t.app).get(`${API}/webhooks/${ok.body.webhook_id}${path}`).set(other.headers), 404, 'not-found');
    }
    expectProblem(await request(t.app).delete(`${API}/webhooks/${ok.body.webhook_id}`).set(other.headers), 404, 'not-found');
    expect((await request(t.app).get(`${API}/webhooks`).set(other.headers)).body.data).toEqual([]);
    const del = await request(t.app).delete(`${API}/webhooks/${ok.body.webhook_id}`).set(seller.headers);
    expect(del.status).toBe(200);
    expect(del.body.secret).toBeUndefined();
  });
});
