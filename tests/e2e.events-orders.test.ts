/**
 * Order events end to end on the real chain (localnet): the seller follows the SSE stream and has a
 * webhook registered; the buyer orders, pays (signed with web3.js), the seller delivers, the buyer
 * confirms and reviews; a second order is disputed and resolved by the admin. Each order event is
 * the `emits` of the lifecycle row it took (contract orderTransitions), carries the transaction
 * signature, arrives in order with the order's sequence 1, 2, ..., over the stream and the webhook
 * (signature verified with `standardwebhooks`).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderTransitions } from '@bazaar/contract';
import { type BootstrappedChain } from './helpers/localnet';
import { sharedBootstrappedChain } from './helpers/shared-chain';
import { createApiKey, createTestApp, loginAs } from './helpers/app';
import { eventually } from './helpers/eventually';
import { connectSse, type SseConnection } from './helpers/sse';
import { fundedOrder, party as newParty, type Party } from './helpers/parties';
import { setRoles } from './helpers/roles.js';

const API = '/api/v1';
type TestApp = Awaited<ReturnType<typeof createTestApp>>;

let env: BootstrappedChain;
let t: TestApp;
let base: string;
let server: http.Server;
let admin: Record<string, string>;

const party = (usdc = 0) => newParty(t, env, { sol: 2, usdc });

const post = (who: Record<string, string>, path: string, body?: object) => request(t.app).post(`${API}${path}`).set(who).send(body ?? {});

async function orderAndPay(buyer: Party, seller: Party) {
  const o = await fundedOrder(t, env, { buyer, seller, price: 10, title: 'Logo design' });
  return { listingId: o.listingId, orderId: o.id, paid: o.paid };
}

/** The event the lifecycle table emits for `action` from `from`. */
const emits = (from: string | null, action: string) => orderTransitions.find((r) => r.from === from && r.action === action)!.emits;

beforeAll(async () => {
  env = await sharedBootstrappedChain('events-orders');
  t = await createTestApp({
    chain: env.chain,
    config: { currencies: env.boot.currencies, webhooks: { allowPrivateUrls: true, timeoutMs: 2_000, intervalMs: 50, concurrency: 8 } },
    orders: { reviewWindowSeconds: 60, watcherIntervalMs: 0, reconcileIntervalMs: 0 },
  });
  admin = { 'x-api-key': (await createApiKey(t, { name: 'arbiter', isAdmin: true })).key };
  server = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await t.services.events.start();
  await t.services.webhooks.start();
});

afterAll(async () => {
  await t?.services.webhooks.stop();
  await t?.services.events.stop();
  await new Promise((r) => server?.close(r));
  await t?.close();
  await env?.stop();
});

describe('order events on the real chain', () => {
  it('happy path: the stream and the seller\'s webhook see each transition of the table, in order, with signatures', async () => {
    const [buyer, seller] = await Promise.all([party(50), party()]);
    let secret = '';
    const got: Array<{ body: string; verified: boolean }> = [];
    const rx = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        let verified = true;
        try {
          new Webhook(secret).verify(body, req.headers as Record<string, string>);
        } catch {
          verified = false;
        }
        got.push({ body, verified });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
    const hook = await post(seller.headers, '/webhooks', { url: `http://127.0.0.1:${(rx.address() as AddressInfo).port}/`, event_types: ['order.funded', 'order.completed'] });
    expect(hook.status).toBe(201);
    secret = hook.body.secret;
    const sse: SseConnection = await connectSse(`${base}${API}/events/stream`, seller.headers);

    const { listingId, orderId, paid } = await orderAndPay(buyer, seller);
    expect((await post(seller.headers, `/orders/${orderId}/deliver`)).status).toBe(200);
    const done = await post(buyer.headers, `/orders/${orderId}/confirm`);
    expect(done.status).toBe(200);
    expect((await post(buyer.headers, `/orders/${orderId}/review`, { rating: 5, text: 'Great' })).status).toBe(201);

    const msgs = await sse.waitFor(8, 15_000);
    sse.close();
    const evs = msgs.map((m) => JSON.parse(m.data));
    const orderEvents = evs.filter((e) => e.resource_id === orderId);
    expect(orderEvents.map((e) => e.type)).toEqual([
      emits(null, 'create'),
      emits('awaiting_payment', 'pay'),
      emits('in_progress', 'deliver'),
      emits('delivered', 'confirm'),
    ]);
    expect(orderEvents.map((e) => e.sequence)).toEqual([1, 2, 3, 4]);
    expect(orderEvents.map((e) => e.data.status)).toEqual(['awaiting_payment', 'in_progress', 'delivered', 'completed']);
    // the seller is told of a new sale in words (issue 23 item 7): what was bought, by whom, what comes next
    for (const e of orderEvents.slice(0, 2)) {
      expect(e.data.listing).toMatchObject({ listing_id: listingId, title: 'Logo design', category_slug: 'design', category_name: 'Design' });
      expect(e.data.buyer).toMatchObject({ wallet: buyer.wallet, rating: { average: null, review_count: 0 } });
      expect(e.data.seller.wallet).toBe(seller.wallet);
    }
    expect(orderEvents[0].data.next_step).toMatchObject({ actor: 'buyer', kind: 'pay', after_due: 'hold_lapses' });
    expect(orderEvents[1].data.next_step).toMatchObject({ actor: 'seller', kind: 'deliver', due_at: orderEvents[1].data.delivery_deadline, after_due: 'buyer_may_refund' });
    const txOf = (action: string) => done.body.transactions.find((x: { action: string }) => x.action === action).signature;
    expect(orderEvents[1].signature).toBe(paid.transactions[0].signature);
    expect(orderEvents.slice(2).map((e) => e.signature)).toEqual([txOf('mark_delivered'), txOf('release')]);
    expect(orderEvents[3].data).toEqual({ ...done.body, allowed_actions: [] });
    expect(evs.filter((e) => e.resource_id === listingId).map((e) => e.type)).toEqual(['listing.created', 'listing.reserved', 'listing.sold']);
    expect(evs.at(-1)).toMatchObject({ type: 'review.created', data: { order_id: orderId, rating: 5 } });
    // stream positions grow
    const positions = msgs.map((m) => BigInt(m.id!));
    expect(positions).toEqual([...positions].sort((a, b) => (a < b ? -1 : 1)));

    await eventually(() => got.length >= 2, { what: 'the two webhook deliveries', timeoutMs: 5_000, intervalMs: 50 });
    rx.close();
    expect(got.map((g) => JSON.parse(g.body).type)).toEqual(['order.funded', 'order.completed']);
    expect(got.every((g) => g.verified)).toBe(true);

    // the buyer sees the order's events too; a stranger none; the admin all
    const buyerView = await request(t.app).get(`${API}/events?resource_id=${orderId}`).set(buyer.headers);
    expect(buyerView.body.data).toHaveLength(4);
    const stranger = await party();
    expect((await request(t.app).get(`${API}/events?resource_id=${orderId}`).set(stranger.headers)).body.data).toEqual([]);
    expect((await request(t.app).get(`${API}/events?resource_id=${orderId}`).set(admin)).body.data).toHaveLength(4);
  });

  it('dispute and resolution emit order.disputed and order.resolved, the listing event of a partial resolution', async () => {
    const [buyer, seller] = await Promise.all([party(50), party()]);
    const { listingId, orderId } = await orderAndPay(buyer, seller);
    // chat on the order: the parties talk; the arbiter is not in it before the dispute, strangers never
    const ask = await post(buyer.headers, `/orders/${orderId}/messages`, { body: 'When will it be ready?' });
    expect(ask.status, JSON.stringify(ask.body)).toBe(201);
    const rude = await post(seller.headers, `/orders/${orderId}/messages`, { body: 'Never, pay me more' });
    expect(rude.body).toMatchObject({ order_id: orderId, sender_role: 'seller' });
    const arbiter = await party();
    await setRoles(t.ctx.db, { wallet: arbiter.wallet }, ['arbiter']);
    const arb = (await loginAs(t, arbiter.kp)).headers;
    expect((await request(t.app).get(`${API}/orders/${orderId}/messages`).set(arb)).status).toBe(403);
    expect((await post(arb, `/orders/${orderId}/messages`, { body: 'hello' })).status).toBe(403);
    const stranger = await party();
    expect((await request(t.app).get(`${API}/orders/${orderId}/messages`).set(stranger.headers)).status).toBe(404);
    expect((await post(buyer.headers, `/messages/${rude.body.message_id}/report`, { reason: 'extortion' })).status).toBe(200);

    expect((await post(buyer.headers, `/orders/${orderId}/dispute`, { reason: 'Nothing delivered' })).status).toBe(200);
    // once disputed the arbiter reads (with the report) and posts
    const seen = await request(t.app).get(`${API}/orders/${orderId}/messages`).set(arb);
    expect(seen.status).toBe(200);
    expect(seen.body.data.map((m: { body: string }) => m.body)).toEqual(['Never, pay me more', 'When will it be ready?']);
    expect(seen.body.data[0].report).toMatchObject({ reason: 'extortion', reported_by_wallet: buyer.wallet });
    const said = await post(arb, `/orders/${orderId}/messages`, { body: 'I will look into it.' });
    expect(said.status).toBe(201);
    expect(said.body.sender_role).toBe('arbiter');
    const mine = (await request(t.app).get(`${API}/orders/${orderId}/messages`).set(buyer.headers)).body;
    expect(mine.conversation).toMatchObject({ order_id: orderId, unread_count: 2 });
    // the arbiter resolves with her own login (issue 25: the arbiter role, not an admin credential)
    const r = await post(arb, `/orders/${orderId}/resolve`, { buyer_bps: 5000 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const evs = (await request(t.app).get(`${API}/events?resource_id=${orderId}`).set(seller.headers)).body.data.reverse();
    expect(evs.map((e: { type: string }) => e.type)).toEqual([
      emits(null, 'create'),
      emits('awaiting_payment', 'pay'),
      emits('in_progress', 'dispute'),
      emits('disputed', 'resolve'),
    ]);
    expect(evs[3].data).toMatchObject({ status: 'resolved', resolution: { buyer_bps: 5000 } });
    const listing = (await request(t.app).get(`${API}/events?resource_id=${listingId}`).set(seller.headers)).body.data.reverse();
    expect(listing.map((e: { type: string }) => e.type)).toEqual(['listing.created', 'listing.reserved', 'listing.sold']);
  });
});
