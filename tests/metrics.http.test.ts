/**
 * GET /metrics (issue 25 part 5; server/src/metrics.ts, server/src/http/metrics.ts) without a chain:
 * where it is served and who may read it (METRICS_TOKEN on the main port, METRICS_PORT's own listener),
 * the request metrics' bounded labels (route template, never the raw URL), the pool gauges on
 * PostgreSQL, and no trace id anywhere while tracing is off.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, createTestApp, loginAs, type TestApp } from './helpers/app';
import { statementsDuring } from './helpers/sql-count';
import { TEST_DATABASE_URL } from './helpers/db';
import { createMetricsServer } from '../server/src/http/metrics';
import { createMetrics } from '../server/src/metrics';
import { loadConfig } from '../server/src/config';
import { isTracing } from '../server/src/tracing';
import { sample } from './helpers/metrics';
import { eventually } from './helpers/eventually';
import { createListing, setup, user } from './helpers/marketplace-fixtures';

const TOKEN = 'metrics-token-for-tests-0123456789';

let t: TestApp;
let plain: TestApp;

beforeAll(async () => {
  [t, plain] = await Promise.all([
    createTestApp({ config: { publicMarketplace: true, metrics: { port: null, host: '127.0.0.1', token: TOKEN } } }),
    createTestApp({ config: { publicMarketplace: true } }),
  ]);
});
afterAll(async () => {
  await Promise.all([t?.close(), plain?.close()]);
});

const scrape = async (app: TestApp) => {
  const res = await request(app.app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
  expect(res.status).toBe(200);
  return res.text;
};

describe('GET /metrics on the main port', () => {
  it('answers 401 problem+json without the METRICS_TOKEN bearer (or with a wrong one), the Prometheus text with it', async () => {
    const none = await request(t.app).get('/metrics');
    expect(none.status).toBe(401);
    expect(none.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(none.headers['www-authenticate']).toBe('Bearer realm="metrics"');
    expect(none.body).toMatchObject({ type: 'https://bazaar.dev/problems/unauthorized', status: 401 });
    expect(none.text).not.toContain('bazaar_http_requests_total');
    const wrong = await request(t.app).get('/metrics').set('Authorization', `Bearer ${TOKEN}x`);
    expect(wrong.status).toBe(401);
    const basic = await request(t.app).get('/metrics').set('Authorization', `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}`);
    expect(basic.status).toBe(401);
    const ok = await request(t.app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
    expect(ok.status).toBe(200);
    expect(ok.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(ok.text).toContain('# TYPE bazaar_http_requests_total counter');
    expect(ok.text).toContain('# TYPE bazaar_http_request_duration_seconds histogram');
  });

  it('is not served on the main port without METRICS_TOKEN (404 route-not-found)', async () => {
    const res = await request(plain.app).get('/metrics').set('Authorization', `Bearer ${TOKEN}`);
    expect(res.status).toBe(404);
    expect(res.body.type).toBe('https://bazaar.dev/problems/route-not-found');
  });
});

describe('request metrics', () => {
  it('counts requests per route template and status, never the raw URL (bounded labels)', async () => {
    const before = await scrape(t);
    const labels = { method: 'GET', route: '/api/v1/listings/:listing_id', status: '404' };
    const n0 = sample(before, 'bazaar_http_requests_total', labels) ?? 0;
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) expect((await request(t.app).get(`${API}/listings/${id}`)).status).toBe(404);
    // arbitrary paths all count as one (unmatched) series
    const junk = `/no/such/${randomUUID()}`;
    expect((await request(t.app).get(junk)).status).toBe(404);
    const after = await scrape(t);
    expect(sample(after, 'bazaar_http_requests_total', labels)).toBe(n0 + 3);
    expect(sample(after, 'bazaar_http_request_duration_seconds_count', labels)).toBe(n0 + 3);
    expect(sample(after, 'bazaar_http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(n0 + 3);
    expect(sample(after, 'bazaar_http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' })).toBeGreaterThanOrEqual(1);
    for (const id of ids) expect(after).not.toContain(id);
    expect(after).not.toContain(junk);
  });

  it('an unknown method counts as OTHER (a client cannot mint label values)', async () => {
    await request(t.app).get('/healthz');
    await request(t.app).search('/healthz');
    const text = await scrape(t);
    expect(sample(text, 'bazaar_http_requests_total', { method: 'GET', route: '/healthz', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(text).not.toMatch(/method="SEARCH"/);
    expect(text).toMatch(/method="OTHER"/);
  });

  it('the leader and webhook gauges are exported; no pool gauges on PGlite (no pool)', async () => {
    const text = await scrape(t);
    expect(sample(text, 'bazaar_leader_is_leader')).toBe(0);
    expect(sample(text, 'bazaar_webhook_backlog', { kind: 'pending_deliveries' })).toBe(0);
    expect(text).toContain('# TYPE bazaar_escrow_volume_base_units_total counter');
    expect(text).not.toContain('bazaar_db_pool_connections{');
  });

  it('bazaar_db_statements_total counts the SQL statements the service sent (a SIWS login moves it by what the login cost)', async () => {
    const before = sample(await scrape(t), 'bazaar_db_statements_total');
    expect(before).toBeGreaterThanOrEqual(0); // exported (undefined when absent)
    const login = await statementsDuring(t.db, () => loginAs(t));
    expect(login.count).toBeGreaterThan(0);
    const text = await scrape(t);
    expect(text).toContain('# TYPE bazaar_db_statements_total counter');
    const after = sample(text, 'bazaar_db_statements_total')!;
    expect(after - before!).toBeGreaterThanOrEqual(login.count);
    expect(after).toBeLessThanOrEqual(t.db.statements.count);
  });

  it('no trace_id in problem bodies while tracing is off', async () => {
    expect(isTracing()).toBe(false);
    const res = await request(t.app).get(`${API}/listings/${randomUUID()}`);
    expect(res.status).toBe(404);
    expect(res.body.request_id).toEqual(expect.any(String));
    expect(res.body).not.toHaveProperty('trace_id');
  });
});

describe('the metrics port (METRICS_PORT)', () => {
  it("defaults: npm start's embedded setup listens on 127.0.0.1:9464, a plain server nowhere; a short METRICS_TOKEN is refused", () => {
    const env = { JWT_SECRET: 'x'.repeat(32) };
    expect(loadConfig(env, { dev: true }).metrics).toEqual({ port: 9464, host: '127.0.0.1', token: null });
    expect(loadConfig(env).metrics).toEqual({ port: null, host: '127.0.0.1', token: null });
    expect(loadConfig({ ...env, METRICS_PORT: '9500', METRICS_TOKEN: TOKEN }, { dev: true }).metrics).toEqual({ port: 9500, host: '127.0.0.1', token: TOKEN });
    expect(() => loadConfig({ ...env, METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN must be at least 16 characters/);
    expect(loadConfig(env).tracing).toBeNull();
    expect(loadConfig({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).tracing).toEqual({ endpoint: 'http://127.0.0.1:4318', serviceName: 'bazaar' });
  });

  it('serves only GET /metrics, asking for METRICS_TOKEN when one is set', async () => {
    const metrics = createMetrics();
    metrics.httpRequests.inc({ method: 'GET', route: '/x', status: '200' });
    const open = createMetricsServer({ metrics, log: console });
    const guarded = createMetricsServer({ metrics, token: TOKEN, log: console });
    await Promise.all([open, guarded].map((s) => new Promise<void>((r) => s.listen(0, '127.0.0.1', r))));
    try {
      const url = (s: typeof open) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
      const ok = await fetch(`${url(open)}/metrics`);
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain('bazaar_http_requests_total{method="GET",route="/x",status="200"} 1');
      expect((await fetch(`${url(open)}/api/v1/listings`)).status).toBe(404);
      expect((await fetch(`${url(open)}/metrics`, { method: 'POST' })).status).toBe(405);
      const denied = await fetch(`${url(guarded)}/metrics`);
      expect(denied.status).toBe(401);
      expect(await denied.text()).not.toContain('bazaar_http_requests_total');
      expect((await fetch(`${url(guarded)}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
    } finally {
      await Promise.all([open, guarded].map((s) => new Promise((r) => s.close(r))));
    }
  });
});

describe.skipIf(!TEST_DATABASE_URL)('on PostgreSQL', () => {
  it('exports the pool gauges: connections in use / idle / max and queries waiting', async () => {
    const pg = await createTestApp({ postgres: true, config: { metrics: { port: null, host: '127.0.0.1', token: TOKEN } } });
    try {
      await request(pg.app).get('/readyz');
      const text = await scrape(pg);
      expect(sample(text, 'bazaar_db_pool_connections', { state: 'max' })).toBe(pg.ctx.config.db.poolMax);
      expect(sample(text, 'bazaar_db_pool_connections', { state: 'in_use' })).toBeGreaterThanOrEqual(0);
      expect(sample(text, 'bazaar_db_pool_waiting')).toBe(0);
    } finally {
      await pg.close();
    }
  });
});

describe('webhook metrics', () => {
  it('attempts count by outcome (a failure then a delivery) and the backlog drains', async () => {
    let fail = true;
    const m = createMetrics({ scrapeCacheMs: 0 });
    const { t: w } = await setup({
      config: { webhooks: { allowPrivateUrls: true, timeoutMs: 2_000, intervalMs: 0, concurrency: 8 }, metrics: { port: null, host: '127.0.0.1', token: TOKEN } },
      webhooks: {
        worker: {
          // the retry waits a minute: the test makes it due by resuming the endpoint
          retryDelaysMs: [60_000],
          jitter: 0,
          send: async () => (fail ? { ok: false, statusCode: 503, error: 'HTTP 503', durationMs: 1, body: '' } : { ok: true, statusCode: 200, error: null, durationMs: 1, body: '' }),
        },
      },
      metrics: m,
    });
    try {
      const u = await user(w);
      const hook = await request(w.app).post(`${API}/webhooks`).set(u.headers).send({ url: 'http://127.0.0.1:9/hook', event_types: ['listing.created'] });
      expect(hook.status, JSON.stringify(hook.body)).toBe(201);
      await createListing(w.app, u);
      const pending = await scrape(w);
      expect(sample(pending, 'bazaar_webhook_backlog', { kind: 'unfanned_events' })).toBeGreaterThan(0);
      await w.services.webhooks.worker.runOnce();
      const failed = await scrape(w);
      expect(sample(failed, 'bazaar_webhook_attempts_total', { outcome: 'retry' })).toBe(1);
      expect(sample(failed, 'bazaar_webhook_backlog', { kind: 'pending_deliveries' })).toBe(1);
      expect(sample(failed, 'bazaar_webhook_backlog', { kind: 'unfanned_events' })).toBe(0);
      fail = false;
      await w.services.webhooks.repo.resumeEndpoint(hook.body.webhook_id, new Date());
      await eventually(async () => {
        await w.services.webhooks.worker.runOnce();
        return sample(await scrape(w), 'bazaar_webhook_attempts_total', { outcome: 'delivered' }) === 1;
      }, { what: 'the retry delivered', intervalMs: 50 });
      expect(sample(await scrape(w), 'bazaar_webhook_backlog', { kind: 'pending_deliveries' })).toBe(0);
    } finally {
      await w.close();
    }
  });
});
