/**
 * OpenTelemetry traces (issue 25 part 5; server/src/tracing.ts) with the SDK's in-memory exporter, on the
 * localnet: one order request's spans nest (the HTTP server span is the ancestor of its Prisma and
 * JSON-RPC spans), a problem body's `trace_id` is its request's trace, log lines carry the trace id, and no
 * span carries a credential, a header or a request body.
 */
import { Writable } from 'node:stream';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { SpanKind } from '@opentelemetry/api';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app';
import { sharedBootstrappedChain } from './helpers/shared-chain';
import type { BootstrappedChain } from './helpers/localnet';
import { listing, order, party, pay, signedBy } from './helpers/parties';
import { createLogger } from '../server/src/logger';
import { isTracing, rpcMethodsOf, startTracing, stopTracing, tracedFetch } from '../server/src/tracing';

const API = '/api/v1';
const exporter = new InMemorySpanExporter();
const lines: Array<Record<string, unknown>> = [];
let env: BootstrappedChain;
let t: TestApp;

beforeAll(async () => {
  await startTracing({ endpoint: 'http://127.0.0.1:1', serviceName: 'bazaar-test' }, { exporter });
  env = await sharedBootstrappedChain('traces');
  const destination = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l.trim()) lines.push(JSON.parse(l));
      cb();
    },
  });
  t = await createTestApp({
    chain: env.chain,
    config: { currencies: env.boot.currencies },
    orders: { watcherIntervalMs: 0, reconcileIntervalMs: 0, maxUnpaidOrdersPerIp: 10_000 },
    log: createLogger('info', { traceIds: true, destination }),
  });
});
afterAll(async () => {
  await t?.close();
  await env?.stop();
  await stopTracing();
});

const parentOf = (s: ReadableSpan): string | undefined =>
  (s as unknown as { parentSpanContext?: { spanId: string } }).parentSpanContext?.spanId ?? (s as unknown as { parentSpanId?: string }).parentSpanId;

/** Is `ancestor` on the parent chain of `s` (within `spans`)? */
function descendsFrom(s: ReadableSpan, ancestor: ReadableSpan, spans: readonly ReadableSpan[]): boolean {
  const byId = new Map(spans.map((x) => [x.spanContext().spanId, x]));
  let cur: ReadableSpan | undefined = s;
  for (let i = 0; cur && i < 50; i++) {
    const p = parentOf(cur);
    if (p === ancestor.spanContext().spanId) return true;
    cur = p ? byId.get(p) : undefined;
  }
  return false;
}

/** The HTTP server span of `method route` (named by the route template, with `http.route`). */
const serverSpan = (spans: readonly ReadableSpan[], method: string, route: string) =>
  spans.find((s) => s.kind === SpanKind.SERVER && s.name === `${method} ${route}` && s.attributes['http.route'] === route);

describe('traces of an order', () => {
  it("one order request's spans nest: the HTTP server span is the parent of its database and RPC spans", async () => {
    expect(isTracing()).toBe(true);
    const [buyer, seller] = await Promise.all([party(t, env, { usdc: 50 }), party(t, env)]);
    const l = await listing(t, seller, { price: 3 });
    exporter.reset();
    const created = await order(t, buyer, l.listing_id);
    const spans = exporter.getFinishedSpans();
    const http = serverSpan(spans, 'POST', '/api/v1/orders');
    expect(http, spans.map((s) => `${s.name} ${SpanKind[s.kind]}`).join('\n')).toBeDefined();
    expect(http!.name).toBe('POST /api/v1/orders');
    const inTrace = spans.filter((s) => s.spanContext().traceId === http!.spanContext().traceId);
    const db = inTrace.filter((s) => s.name.startsWith('prisma:'));
    const rpc = inTrace.filter((s) => s.attributes['rpc.system'] === 'jsonrpc');
    expect(db.length).toBeGreaterThan(0);
    expect(rpc.length).toBeGreaterThan(0);
    expect(db.some((s) => s.name === 'prisma:client:db_query')).toBe(true);
    for (const s of [...db, ...rpc]) expect(descendsFrom(s, http!, spans), s.name).toBe(true);
    // a span per JSON-RPC call, named by its method
    for (const s of rpc) {
      expect(s.kind).toBe(SpanKind.CLIENT);
      expect(s.name).toBe(s.attributes['rpc.method']);
    }
    expect(rpc.map((s) => s.name)).toContain('getLatestBlockhash');

    // paying it: the transaction submission's RPC spans (sendTransaction) nest under its request too
    exporter.reset();
    await pay(t, buyer, created);
    const paySpans = exporter.getFinishedSpans();
    const payHttp = serverSpan(paySpans, 'POST', '/api/v1/orders/:order_id/transaction')!;
    expect(payHttp).toBeDefined();
    const sends = paySpans.filter((s) => s.name === 'sendTransaction');
    expect(sends.length).toBeGreaterThan(0);
    for (const s of sends) expect(descendsFrom(s, payHttp, paySpans)).toBe(true);
  });

  it("a problem body's trace_id is its request's trace id, and the request's log lines carry it", async () => {
    const buyer = await party(t, env, { sol: 0 });
    exporter.reset();
    lines.length = 0;
    const res = await request(t.app).get(`${API}/orders/00000000-0000-4000-8000-000000000000`).set(buyer.headers);
    expect(res.status).toBe(404);
    expect(res.body.trace_id).toMatch(/^[0-9a-f]{32}$/);
    const http = serverSpan(exporter.getFinishedSpans(), 'GET', '/api/v1/orders/:order_id');
    expect(http).toBeDefined();
    expect(res.body.trace_id).toBe(http!.spanContext().traceId);
    const access = lines.find((l) => (l.req as { id?: string } | undefined)?.id === res.body.request_id);
    expect(access, JSON.stringify(lines)).toBeDefined();
    expect(access!.trace_id).toBe(res.body.trace_id);
  });

  it('no span records a credential, a header, a request body or a signed transaction', async () => {
    const [buyer, seller] = await Promise.all([party(t, env, { usdc: 50 }), party(t, env)]);
    const l = await listing(t, seller, { price: 2 });
    exporter.reset();
    const created = await order(t, buyer, l.listing_id);
    const signed = signedBy(buyer.kp, created.payment.transaction);
    await request(t.app).post(`${API}/orders/${created.order_id}/transaction`).set(buyer.headers).send({ signed_transaction: signed });
    const spans = exporter.getFinishedSpans();
    expect(spans.length).toBeGreaterThan(10);
    const text = JSON.stringify(spans.map((s) => ({ name: s.name, attributes: s.attributes, events: s.events })));
    const secrets = Object.values(buyer.headers).map((h) => String(h).replace(/^Bearer /, ''));
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toContain(signed.slice(0, 40));
    expect(text).not.toContain(created.payment.transaction.slice(0, 40));
    expect(text).not.toMatch(/"http\.request\.header|"http\.response\.header|authorization|cookie/i);
  });
});

describe('the JSON-RPC span (tracedFetch)', () => {
  it("names the call by its method and records only host and port: never the URL's path or query (API keys) nor params", async () => {
    exporter.reset();
    const fetchFn = tracedFetch(async () => new Response('{"jsonrpc":"2.0","id":1,"result":1}', { status: 200 }));
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'getBalance', params: ['SecretParamValue111'] });
    await fetchFn('https://rpc.example.com:8443/v2/sekrit-path-key?api-key=sekrit-query-key', { method: 'POST', body });
    const [span] = exporter.getFinishedSpans();
    expect(span!.name).toBe('getBalance');
    expect(span!.attributes).toEqual({
      'rpc.system': 'jsonrpc',
      'rpc.method': 'getBalance',
      'server.address': 'rpc.example.com',
      'server.port': 8443,
      'http.response.status_code': 200,
    });
    expect(JSON.stringify(span!.attributes)).not.toMatch(/sekrit|SecretParamValue/);
    expect(rpcMethodsOf(JSON.stringify([{ method: 'getSlot' }, { method: 'getBalance' }]))).toBe('getSlot,getBalance');
    expect(rpcMethodsOf(undefined)).toBe('unknown');
  });
});
