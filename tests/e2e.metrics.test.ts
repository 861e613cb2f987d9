/**
 * Metrics after an order's money path on the localnet (issue 25 part 5): a scrape of GET /metrics after
 * a wallet order is created, paid, delivered and confirmed shows the request counts of the routes
 * (templates), the escrow volume funded and released (base units), the leader lease term, an attention
 * flag raised on the order, and the webhook backlog of the events the order wrote.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app';
import { sharedBootstrappedChain } from './helpers/shared-chain';
import type { BootstrappedChain } from './helpers/localnet';
import { fundedOrder, USDC } from './helpers/parties';
import { sample } from './helpers/metrics';
import { createMetrics } from '../server/src/metrics';

const TOKEN = 'metrics-token-for-tests-0123456789';
const API = '/api/v1';

let env: BootstrappedChain;
let t: TestApp;

beforeAll(async () => {
  env = await sharedBootstrappedChain('metrics');
  t = await createTestApp({
    chain: env.chain,
    config: { currencies: env.boot.currencies, metrics: { port: null, host: '127.0.0.1', token: TOKEN } },
    orders: { watcherIntervalMs: 0, reconcileIntervalMs: 0, maxUnpaidOrdersPerIp: 10_000 },
    // every scrape reads the database gauges afresh (default: reused for 10 s)
    metrics: createMetrics({ scrapeCacheMs: 0 }),
  });
});
afterAll(async () => {
  await t?.close();
  await env?.stop();
});

const scrape = async () => {
  const res = await request(t.app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
  expect(res.status).toBe(200);
  return res.text;
};

describe('a scrape after an order money path', () => {
  it('the counters moved: request counts per route template, escrow volume funded and released, leader term, attention flags, webhook backlog', async () => {
    const before = await scrape();
    const usdc = (direction: string) => sample(before, 'bazaar_escrow_volume_base_units_total', { currency: 'USDC', direction }) ?? 0;
    const [funded0, released0] = [usdc('funded'), usdc('released')];
    const created0 = sample(before, 'bazaar_http_requests_total', { method: 'POST', route: '/api/v1/orders', status: '201' }) ?? 0;

    // the leader lease: this replica wins a term
    await t.services.leader.start();
    const o = await fundedOrder(t, env, { price: 12.5 });
    const post = (who: { headers: Record<string, string> }, path: string) => request(t.app).post(`${API}${path}`).set(who.headers).send({});
    expect((await post(o.seller, `/orders/${o.id}/deliver`)).status).toBe(200);
    expect((await post(o.buyer, `/orders/${o.id}/confirm`)).status).toBe(200);
    // an operator flag on the order (what the reconciler raises when an escrow vanished)
    expect(await t.services.orders!.repo.flagAttention(o.id, { reason: 'escrow-vanished', detail: 'test', at: new Date() })).toBe(true);

    const after = await scrape();
    expect(sample(after, 'bazaar_http_requests_total', { method: 'POST', route: '/api/v1/orders', status: '201' })).toBe(created0 + 1);
    expect(sample(after, 'bazaar_http_requests_total', { method: 'POST', route: '/api/v1/orders/:order_id/confirm', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(sample(after, 'bazaar_http_request_duration_seconds_count', { method: 'POST', route: '/api/v1/orders/:order_id/transaction', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(after).not.toContain(o.id);
    // 12.5 USDC entered the escrow and left it to the seller
    expect(sample(after, 'bazaar_escrow_volume_base_units_total', { currency: 'USDC', direction: 'funded' })).toBe(funded0 + Number(USDC(12.5)));
    expect(sample(after, 'bazaar_escrow_volume_base_units_total', { currency: 'USDC', direction: 'released' })).toBe(released0 + Number(USDC(12.5)));
    expect(sample(after, 'bazaar_leader_is_leader')).toBe(1);
    const term = t.services.leader.term;
    expect(term).not.toBeNull();
    expect(sample(after, 'bazaar_leader_lease_term', { holder: t.services.leader.holder })).toBe(Number(term));
    expect(sample(after, 'bazaar_attention_flags', { kind: 'escrow-vanished' })).toBe(1);
    // the webhook worker does not run in this app: the order's events wait for the fan-out
    expect(sample(after, 'bazaar_webhook_backlog', { kind: 'unfanned_events' })).toBeGreaterThan(0);
    // the payment watcher runs on the leader (its lag is exported once a pass finished)
    expect(after).toContain('# TYPE bazaar_payment_watcher_lag_seconds gauge');
  });
});
