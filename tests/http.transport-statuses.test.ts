/**
 * The statuses the transport layer answers (413, 414, 431, 429, 503; 408 in process.http-limits) reach a
 * real HTTP client as problem+json, and openapi.json documents each on the operation that answered it
 * (issue 20 item 16: a long `type` filter on GET /events answered an undocumented 431).
 */
import { readFileSync } from 'node:fs';
import nodeHttp from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS } from '../server/src/config.js';
import { createHttpServer, type HttpServer } from '../server/src/http/server.js';
import { createLogger } from '../server/src/logger.js';
import { API, createTestApp, loginAs, type TestApp } from './helpers/app.js';

const openapi = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8'));
let t: TestApp;
let http: HttpServer;
let base: string;
let auth: Record<string, string>;

beforeAll(async () => {
  t = await createTestApp({ config: { authRateLimitPerMinute: 2 } });
  http = createHttpServer(t.app, DEFAULT_LIMITS.http, createLogger('silent'));
  await new Promise<void>((r) => http.server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(http.server.address() as AddressInfo).port}`;
  auth = (await loginAs(t)).headers;
});
afterAll(async () => {
  await http?.drain();
  await t?.close();
});

/** The response as a client gets it, checked to be a problem of `slug` documented on `method path` in openapi.json. */
async function expectDocumentedProblem(res: Response, status: number, slug: string, method: string, openapiPath: string) {
  const body = await res.text();
  expect(res.status, body.slice(0, 300)).toBe(status);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(JSON.parse(body)).toMatchObject({ type: `https://bazaar.dev/problems/${slug}`, status });
  const documented = openapi.paths[openapiPath][method].responses[String(status)];
  expect(documented, `${method} ${openapiPath} documents ${status}`).toBeDefined();
  const response = documented.$ref ? openapi.components.responses[documented.$ref.split('/').pop()] : documented;
  expect(Object.keys(response.content)).toEqual(['application/problem+json']);
  const examples = Object.keys(response.content['application/problem+json'].examples);
  expect(examples).toContain(slug);
}

const typeFilter = (bytes: number) => `${base}${API}/events?type=${'order.funded,'.repeat(Math.ceil(bytes / 13)).slice(0, bytes)}`;

describe('transport-layer statuses as a client gets them, each documented', () => {
  it('a request target over 8 KiB: 414 uri-too-long', async () => {
    await expectDocumentedProblem(await fetch(typeFilter(9 * 1024), { headers: auth }), 414, 'uri-too-long', 'get', '/api/v1/events');
  });

  it('a request line over 16 kB (the schemathesis case: a long type filter on GET /events): 431', async () => {
    await expectDocumentedProblem(await fetch(typeFilter(17 * 1024), { headers: auth }), 431, 'header-fields-too-large', 'get', '/api/v1/events');
  });

  it('a body over the limit, on a body route and on a GET: 413', async () => {
    const big = JSON.stringify({ title: 'x'.repeat(200 * 1024) });
    const post = await fetch(`${base}${API}/listings`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: big });
    await expectDocumentedProblem(post, 413, 'payload-too-large', 'post', '/api/v1/listings');
    // fetch sends no body with GET: node:http does
    const get = await new Promise<Response>((resolve, reject) => {
      const req = nodeHttp.request(`${base}${API}/events`, { method: 'GET', headers: { ...auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(big) } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(new Response(Buffer.concat(chunks), { status: res.statusCode, headers: res.headers as Record<string, string> })));
      });
      req.on('error', reject);
      req.end(big);
    });
    await expectDocumentedProblem(get, 413, 'payload-too-large', 'get', '/api/v1/events');
  });

  it('over a rate limit: 429 with Retry-After', async () => {
    const send = () => fetch(`${base}${API}/auth/request_login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"address":"AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r"}' });
    for (let i = 0; i < 2; i++) await (await send()).text();
    const limited = await send();
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    await expectDocumentedProblem(limited, 429, 'rate-limited', 'post', '/api/v1/auth/request_login');
  });

  it('while draining (the database or a dependency down is db.faults): 503 service-unavailable', async () => {
    const draining = await createTestApp();
    try {
      draining.ctx.draining = () => true;
      const { default: request } = await import('supertest');
      const res = await request(draining.app).get('/readyz');
      expect(res.status).toBe(503);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.body.type).toBe('https://bazaar.dev/problems/service-unavailable');
      for (const [path, ops] of Object.entries(openapi.paths as Record<string, Record<string, { responses: Record<string, unknown> }>>)) {
        for (const [method, op] of Object.entries(ops)) expect(op.responses['503'], `${method} ${path}`).toBeDefined();
      }
    } finally {
      await draining.close();
    }
  });
});
