/**
 * Cross-cutting HTTP behaviour: problem+json for every failure, request ids, body limits and
 * content types, ops endpoints.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Chain } from '../server/src/chain/index.js';
import { API, createTestApp, loginAs, type TestApp } from './helpers/app.js';

const PROBLEM = (slug: string) => `https://bazaar.dev/problems/${slug}`;

let t: TestApp;
let token: string;
beforeAll(async () => {
  t = await createTestApp();
  token = (await loginAs(t)).token;
});
afterAll(async () => {
  await t?.close();
});

function expectProblem(res: request.Response, status: number, slug: string) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({ type: PROBLEM(slug), status });
  expect(typeof res.body.title).toBe('string');
  expect(typeof res.body.detail).toBe('string');
  expect(res.body.request_id).toBe(res.headers['x-request-id']);
  expect(res.body).not.toHaveProperty('stack');
}

describe('errors are RFC 9457 problems', () => {
  it('unknown route -> 404 route-not-found with instance', async () => {
    const res = await request(t.app).get(`${API}/nope`);
    expectProblem(res, 404, 'route-not-found');
    expect(res.body.instance).toBe(`${API}/nope`);
  });

  it('malformed JSON -> 400 malformed-json', async () => {
    const res = await request(t.app)
      .post(`${API}/auth/request_login`)
      .set('content-type', 'application/json')
      .send('{"address": ');
    expectProblem(res, 400, 'malformed-json');
  });

  it('body over 100 kB -> 413 payload-too-large', async () => {
    const res = await request(t.app)
      .patch(`${API}/user/me`)
      .set('authorization', `Bearer ${token}`)
      .send({ bio: 'x'.repeat(110 * 1024) });
    expectProblem(res, 413, 'payload-too-large');
  });

  it('non-JSON body -> 415 unsupported-media-type', async () => {
    const res = await request(t.app).post(`${API}/auth/request_login`).set('content-type', 'text/plain').send('address=x');
    expectProblem(res, 415, 'unsupported-media-type');
  });

  it('validation errors list every field with path, message and code', async () => {
    const res = await request(t.app).post(`${API}/auth/request_login`).send({ address: 5, extra: true });
    expectProblem(res, 400, 'validation-error');
    const paths = res.body.errors.map((e: { path: string }) => e.path);
    expect(paths).toContain('body.address');
    expect(paths).toContain('body');
    for (const e of res.body.errors) expect(e).toEqual({ path: expect.any(String), message: expect.any(String), code: expect.any(String) });
  });

  it('an unexpected error -> 500 internal-error without leaking the message', async () => {
    const broken = await createTestApp();
    try {
      const session = await loginAs(broken);
      await broken.ctx.db.$executeRawUnsafe('ALTER TABLE users RENAME TO users_gone');
      const res = await request(broken.app).get(`${API}/user/me`).set(session.headers);
      expectProblem(res, 500, 'internal-error');
      expect(res.body.detail).not.toMatch(/users|relation|prisma/i);
    } finally {
      await broken.close();
    }
  });
});

describe('request ids', () => {
  it('echoes a well-formed X-Request-Id and generates one otherwise', async () => {
    const a = await request(t.app).get('/healthz').set('x-request-id', 'abc-123');
    expect(a.headers['x-request-id']).toBe('abc-123');
    const b = await request(t.app).get('/healthz').set('x-request-id', 'bad id with spaces;$');
    expect(b.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('ops', () => {
  it('/healthz is up without a database round trip', async () => {
    const res = await request(t.app).get('/healthz');
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
    // with the database gone (readyz says so), liveness still answers ok: it never touches it
    const t2 = await createTestApp();
    try {
      await t2.db.pglite!.close();
      expect((await request(t2.app).get('/readyz')).status).toBe(503);
      const live = await request(t2.app).get('/healthz');
      expect(live.status).toBe(200);
      expect(live.body.status).toBe('ok');
    } finally {
      await t2.close();
    }
  });

  it('/readyz checks the database', async () => {
    const res = await request(t.app).get('/readyz');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ready', checks: { db: { ok: true } } });
  });

  it('/readyz is 503 when the chain RPC is down, with the slot when up', async () => {
    let up = false;
    const chain = { health: async () => (up ? { ok: true, slot: 42 } : { ok: false }) } as unknown as Chain;
    const t2 = await createTestApp({ chain });
    try {
      const down = await request(t2.app).get('/readyz');
      expect(down.status).toBe(503);
      expect(down.headers['retry-after']).toBe('5');
      expect(down.body.checks.chain.ok).toBe(false);
      up = true;
      const ok = await request(t2.app).get('/readyz');
      expect(ok.status).toBe(200);
      expect(ok.body.checks.chain).toEqual({ ok: true, slot: 42 });
    } finally {
      await t2.close();
    }
  });

  it('serves the OpenAPI document and the docs UI', async () => {
    const doc = await request(t.app).get('/openapi.json');
    expect(doc.status).toBe(200);
    expect(doc.body.openapi).toMatch(/^3\./);
    const ui = await request(t.app).get('/docs/');
    expect(ui.status).toBe(200);
    expect(ui.text).toMatch(/swagger/i);
  });

  it('sets security headers and no x-powered-by', async () => {
    const res = await request(t.app).get('/healthz');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-powered-by']).toBeUndefined();
  });
});

describe('CORS', () => {
  it('allows configured origins only', async () => {
    const t2 = await createTestApp({ config: { corsOrigins: ['https://app.example'] } });
    try {
      const ok = await request(t2.app).options(`${API}/user/me`).set('origin', 'https://app.example').set('access-control-request-method', 'GET');
      expect(ok.headers['access-control-allow-origin']).toBe('https://app.example');
      const no = await request(t2.app).options(`${API}/user/me`).set('origin', 'https://evil.example').set('access-control-request-method', 'GET');
      expect(no.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await t2.close();
    }
  });
});
