/**
 * Bad input never answers 500 (issue 9 item 8): every class a fault-injection run and schemathesis
 * found is refused with a 400-range problem+json naming the field, before any handler runs.
 *
 * NUL and other control characters in text fields and queries, malformed percent-encoding in path
 * parameters, bodies that do not decode under their Content-Encoding, forged cursors, loose number
 * parsing in query strings, a missing required body, undeclared methods (405 + Allow derived from
 * the contract), and the published category example.
 */
import { readFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contract } from '@bazaar/contract';
import type { AppRoute, AppRouter } from '@ts-rest/core';
import { DEFAULT_CATEGORIES } from '../server/src/config.js';
import {
  API,
  createListing,
  expectProblem,
  listingBody,
  setup,
  user,
  type TestApp,
  type TestUser,
} from './helpers/marketplace-fixtures.js';
import type { FakeChain } from './helpers/fake-chain.js';

let t: TestApp;
let app: TestApp['app'];
let chain: FakeChain;
let alice: TestUser;
let listingId: string;

beforeAll(async () => {
  ({ t, app, chain } = await setup());
  alice = await user(t);
  listingId = (await createListing(app, alice)).listing_id;
  await createListing(app, alice, { title: 'Second listing for paging' });
});

afterAll(async () => {
  await t?.close();
});

function routesOf(router: AppRouter): AppRoute[] {
  return Object.values(router).flatMap((v) =>
    typeof (v as AppRoute).method === 'string' ? [v as AppRoute] : routesOf(v as AppRouter),
  );
}

const mintCalls = () => chain.calls.filter((c) => c.method === 'mintListingToken').length;
const renameCalls = () => chain.calls.filter((c) => c.method === 'updateListingToken').length;

describe('NUL and control characters in text are refused by validation, before any handler', () => {
  it('PATCH /user/me display_name and bio', async () => {
    for (const body of [{ display_name: 'Al\u0000ice' }, { bio: 'hello\u0000world' }, { display_name: 'bell\u0007' }]) {
      const res = await request(app).patch(`${API}/user/me`).set(alice.headers).send(body);
      expectProblem(res, 400, 'validation-error', [`body.${Object.keys(body)[0]}`]);
    }
    // tabs and line breaks stay allowed in a bio
    const ok = await request(app).patch(`${API}/user/me`).set(alice.headers).send({ bio: 'line one\n\tline two\r\n' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('POST /listings with a NUL in the title mints nothing', async () => {
    const before = mintCalls();
    const res = await request(app).post(`${API}/listings`).set(alice.headers).send(listingBody({ title: 'Logo\u0000design' }));
    expectProblem(res, 400, 'validation-error', ['body.title']);
    expect(mintCalls()).toBe(before);
  });

  it('PATCH /listings/{id} with a NUL in the title or description renames nothing on chain', async () => {
    const before = renameCalls();
    for (const body of [{ title: 'New\u0000title' }, { description: 'desc\u0000ription' }]) {
      const res = await request(app).patch(`${API}/listings/${listingId}`).set(alice.headers).send(body);
      expectProblem(res, 400, 'validation-error', [`body.${Object.keys(body)[0]}`]);
    }
    expect(renameCalls()).toBe(before);
  });

  it('search?query=%00 and other text in query strings', async () => {
    const res = await request(app).get(`${API}/marketplace/search?query=%00`).set(alice.headers);
    expectProblem(res, 400, 'validation-error', ['query.query']);
    const res2 = await request(app).get(`${API}/marketplace/search?query=logo%00design`).set(alice.headers);
    expectProblem(res2, 400, 'validation-error', ['query.query']);
  });

  it('dispute reasons and review texts', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const d = await request(app).post(`${API}/orders/${id}/dispute`).set(alice.headers).send({ reason: 'not delivered\u0000 at all' });
    expectProblem(d, 400, 'validation-error', ['body.reason']);
    const r = await request(app).post(`${API}/orders/${id}/review`).set(alice.headers).send({ rating: 5, text: 'great\u0000' });
    expectProblem(r, 400, 'validation-error', ['body.text']);
  });
});

describe('malformed percent-encoding in a path parameter -> 400, on every parameterised route', () => {
  const parameterised = routesOf(contract).filter((r) => r.path.includes(':'));

  it('covers the parameterised routes of the contract', () => {
    expect(parameterised.length).toBeGreaterThanOrEqual(7);
  });

  for (const bad of ['%E0%A4%A', '%ZZ']) {
    it(`"${bad}"`, async () => {
      for (const r of parameterised) {
        const path = r.path.replace(/:(\w+)/, bad).replace(/:(\w+)/g, '00000000-0000-4000-8000-000000000000');
        const res = await request(app)[r.method.toLowerCase() as 'get' | 'post' | 'patch'](path).set(alice.headers);
        expectProblem(res, 400, 'malformed-request');
        expect(res.body.errors?.[0]?.path, `${r.method} ${r.path}`).toMatch(/^params\./);
      }
    });
  }
});

describe('request bodies that do not decode', () => {
  it('Content-Encoding deflate with bytes that are not deflate -> 400', async () => {
    const res = await request(app)
      .patch(`${API}/user/me`)
      .set(alice.headers)
      .set('content-type', 'application/json')
      .set('content-encoding', 'deflate')
      .serialize((b: unknown) => b as string)
      .send(Buffer.from('{"bio":"not compressed"}'));
    expectProblem(res, 400, 'malformed-request');
  });

  it('a real deflate body is accepted', async () => {
    const res = await request(app)
      .patch(`${API}/user/me`)
      .set(alice.headers)
      .set('content-type', 'application/json')
      .set('content-encoding', 'deflate')
      .serialize((b: unknown) => b as string)
      .send(deflateSync(Buffer.from('{"bio":"compressed"}')));
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.bio).toBe('compressed');
  });
});

describe('forged cursors -> 400 validation-error on query.cursor', () => {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const unb64 = (s: string) => JSON.parse(Buffer.from(s, 'base64url').toString()) as { k: unknown[] };

  async function cursorOf(url: string): Promise<{ k: unknown[] }> {
    const res = await request(app).get(url).set(alice.headers);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.next_cursor).toMatch(/^[A-Za-z0-9_-]+$/); // base64url
    return unb64(res.body.next_cursor);
  }

  it('timestamps JavaScript accepts and PostgreSQL refuses', async () => {
    for (const url of [`${API}/listings?limit=1`, `${API}/marketplace/listings?limit=1`, `${API}/marketplace/search?sort=newest&limit=1`]) {
      const real = await cursorOf(url);
      for (const ts of ['0', '2026-02-30T00:00:00Z', '+275760-09-13T00:00:00.000Z', '2026-01-01', '1e3']) {
        const forged = b64({ ...real, k: [ts] });
        const res = await request(app).get(`${url}&cursor=${forged}`).set(alice.headers);
        expectProblem(res, 400, 'validation-error', ['query.cursor']);
      }
    }
  });

  it('counts that do not fit a bigint', async () => {
    const url = `${API}/marketplace/search?sort=rating&limit=1`;
    const real = await cursorOf(url);
    for (const n of ['9223372036854775808', '18446744073709551615']) {
      const res = await request(app).get(`${url}&cursor=${b64({ ...real, k: [real.k[0], n] })}`).set(alice.headers);
      expectProblem(res, 400, 'validation-error', ['query.cursor']);
    }
  });

  it('characters outside base64url are refused by the schema', async () => {
    const res = await request(app).get(`${API}/listings?cursor=${encodeURIComponent('abc\u0000def')}`).set(alice.headers);
    expectProblem(res, 400, 'validation-error', ['query.cursor']);
  });
});

describe('strict decimal numbers in query strings', () => {
  it('min_price="" / 0x10 / 1e3 / " 5" and limit=0x10 -> 400; plain decimals pass', async () => {
    for (const [q, field] of [
      ['min_price=', 'query.min_price'],
      ['min_price=0x10', 'query.min_price'],
      ['max_price=1e3', 'query.max_price'],
      ['max_price=%205', 'query.max_price'],
      ['max_price=Infinity', 'query.max_price'],
      ['limit=0x10', 'query.limit'],
      ['limit=', 'query.limit'],
      ['limit=2.0', 'query.limit'],
    ] as const) {
      const res = await request(app).get(`${API}/marketplace/search?${q}`).set(alice.headers);
      expectProblem(res, 400, 'validation-error', [field]);
    }
    const ok = await request(app).get(`${API}/marketplace/search?min_price=0.5&max_price=100&limit=5`).set(alice.headers);
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const ol = await request(app).get(`${API}/orders?limit=0x10`).set(alice.headers);
    expectProblem(ol, 400, 'validation-error', ['query.limit']);
  });
});

describe('a required body that is missing -> 400', () => {
  it('PATCH /user/me without a body', async () => {
    const res = await request(app).patch(`${API}/user/me`).set(alice.headers);
    expectProblem(res, 400, 'validation-error', ['body']);
    const empty = await request(app).patch(`${API}/user/me`).set(alice.headers).set('content-type', 'application/json').set('content-length', '0');
    expectProblem(empty, 400, 'validation-error', ['body']);
  });

  it('routes without a body schema still take none', async () => {
    const res = await request(app).post(`${API}/orders/00000000-0000-4000-8000-000000000000/deliver`).set(alice.headers);
    expect(res.status).not.toBe(400);
  });
});

describe('undeclared methods -> 405 with Allow from the contract', () => {
  it('on contract paths', async () => {
    const cases: Array<[string, string, string[]]> = [
      ['delete', `${API}/user/me`, ['GET', 'PATCH']],
      ['put', `${API}/listings/${listingId}`, ['GET', 'PATCH']],
      ['delete', `${API}/listings`, ['GET', 'POST']],
      ['post', `${API}/categories`, ['GET']],
      ['get', `${API}/orders/${listingId}/deliver`, ['POST']],
    ];
    for (const [method, path, allowed] of cases) {
      const res = await (request(app) as unknown as Record<string, (p: string) => request.Test>)[method]!(path).set(alice.headers);
      expectProblem(res, 405, 'method-not-allowed');
      const allow = String(res.headers.allow).split(/,\s*/);
      for (const m of allowed) expect(allow, `${method} ${path}`).toContain(m);
      expect(allow).not.toContain(method.toUpperCase());
    }
  });

  it('the Allow header lists every method the contract declares for the path', async () => {
    const declared = new Map<string, Set<string>>();
    for (const r of routesOf(contract)) {
      if (!declared.has(r.path)) declared.set(r.path, new Set());
      declared.get(r.path)!.add(r.method);
    }
    for (const [path, methods] of declared) {
      const concrete = path.replace(/:(\w+)/g, '00000000-0000-4000-8000-000000000000');
      // a method the path does not declare (DELETE, else PUT, else PATCH: role grants declare PUT and DELETE)
      const probe = (['delete', 'put', 'patch'] as const).find((m) => !methods.has(m.toUpperCase()))!;
      const res = await request(app)[probe](concrete).set(alice.headers);
      expect(res.status, `${probe.toUpperCase()} ${path}`).toBe(405);
      expect(new Set(String(res.headers.allow).split(/,\s*/).filter((m) => m !== 'HEAD'))).toEqual(methods);
    }
  });

  it('unknown paths stay 404', async () => {
    expectProblem(await request(app).delete(`${API}/nope`).set(alice.headers), 404, 'route-not-found');
  });
});

describe('the published schema states the rules the server applies', () => {
  const doc = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8'));
  /** a schema with its `$ref` to #/components/schemas/... followed (request bodies are named components) */
  const deref = (schema: { $ref?: string }): any =>
    schema.$ref ? deref(doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')]) : schema;
  const body = (path: string, method: string) => deref(doc.paths[path][method].requestBody.content['application/json'].schema);

  it('text fields carry the no-control-characters pattern', () => {
    const title = body('/api/v1/listings', 'post').properties.title;
    const re = new RegExp(title.pattern);
    expect(re.test('Logo design\nwith\ttabs')).toBe(true);
    expect(re.test('Logo\u0000design')).toBe(false);
    const query = doc.paths['/api/v1/marketplace/search'].get.parameters.find((p: { name: string }) => p.name === 'query');
    expect(new RegExp(query.schema.pattern).test('a\u0000')).toBe(false);
  });

  it('avatar_url must be https, PATCH /listings/{id} needs a field', () => {
    const avatar = body('/api/v1/user/me', 'patch').properties.avatar_url;
    expect(new RegExp(avatar.pattern).test('http://example.com/a.png')).toBe(false);
    expect(new RegExp(avatar.pattern).test('https://example.com/a.png')).toBe(true);
    expect(body('/api/v1/listings/{listing_id}', 'patch').minProperties).toBe(1);
  });
});

describe('published examples are valid against the default configuration', () => {
  it('every category example in openapi.json is a default category', () => {
    const doc = JSON.parse(readFileSync(new URL('../openapi.json', import.meta.url), 'utf8'));
    const examples: unknown[] = [];
    const walk = (node: unknown) => {
      if (Array.isArray(node)) return node.forEach(walk);
      if (!node || typeof node !== 'object') return;
      const o = node as Record<string, unknown>;
      if (o.name === 'category' && o.in === 'query') examples.push((o.schema as { example?: unknown })?.example);
      const props = o.properties as Record<string, { example?: unknown }> | undefined;
      if (props?.category) examples.push(props.category.example);
      Object.values(o).forEach(walk);
    };
    walk(doc);
    expect(examples.length).toBeGreaterThan(0);
    for (const e of examples.filter((x) => x !== undefined)) expect(DEFAULT_CATEGORIES).toContain(e);
  });
});
