/**
 * Text the service cannot store (issue 20 item 14): a NUL character, or an unpaired UTF-16 surrogate (a
 * lone high or low one, a reversed pair), in any text the contract takes is 400 validation-error naming
 * the field, never a 500 from PostgreSQL or the token metadata. The test walks the contract: every text
 * field of every request body, every text query parameter and every path parameter of every route.
 */
import request from 'supertest';
import type { AppRoute } from '@ts-rest/core';
import type { ZodTypeAny } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contract } from '@bazaar/contract';
import { API, createTestApp, loginAs, newKeypair, walletOf, type TestApp } from './helpers/app.js';

const PROBLEM = (slug: string) => `https://bazaar.dev/problems/${slug}`;
const BAD: Array<[string, string]> = [
  ['a\u0000b', 'invalid_text_nul'],
  ['a\ud800b', 'invalid_text_surrogate'], // lone high surrogate
  ['a\udc00b', 'invalid_text_surrogate'], // lone low surrogate
  ['a\udc00\ud800b', 'invalid_text_surrogate'], // a pair in the wrong order
  ['Invoice \u202Efdp.exe', 'invalid_text_bidi'], // right-to-left override: displays "Invoice exe.pdf" (issue 23 item 4)
  ['a\u2067b\u2069', 'invalid_text_bidi'], // right-to-left isolate ... pop directional isolate
];

let t: TestApp;
beforeAll(async () => {
  // custody on (without a chain): its routes reach the contract's handlers instead of the custody-disabled stub
  t = await createTestApp({ config: { custodyEnabled: true } });
});
afterAll(async () => {
  await t?.close();
});

const routes = Object.entries(contract).flatMap(([group, rs]) =>
  Object.entries(rs as Record<string, AppRoute>).map(([name, r]) => ({ key: `${group}.${name}`, route: r })),
);

function unwrap(s: ZodTypeAny): ZodTypeAny {
  for (;;) {
    if (!s?._def) return s;
    const d = s._def as { typeName: string; innerType?: ZodTypeAny; type?: ZodTypeAny; schema?: ZodTypeAny; in?: ZodTypeAny };
    if (['ZodOptional', 'ZodNullable', 'ZodDefault', 'ZodReadonly', 'ZodCatch'].includes(d.typeName)) s = d.innerType!;
    else if (d.typeName === 'ZodBranded') s = d.type!;
    else if (d.typeName === 'ZodEffects') s = d.schema!;
    else if (d.typeName === 'ZodPipeline') s = d.in!;
    else return s;
  }
}

/** Paths (as key lists; an array's first element is index 0) of the text fields of an object schema. */
function textFields(schema: ZodTypeAny, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const s = unwrap(schema);
  if (s?._def?.typeName !== 'ZodObject') return [];
  const shape = (s as unknown as { shape: Record<string, ZodTypeAny> }).shape;
  return Object.entries(shape).flatMap(([k, v]) => {
    const u = unwrap(v);
    const t = u._def.typeName as string;
    if (t === 'ZodString' || t === 'ZodEnum') return [[...prefix, k]];
    if (t === 'ZodArray') {
      const el = unwrap((u._def as { type: ZodTypeAny }).type);
      if (el._def.typeName === 'ZodString' || el._def.typeName === 'ZodEnum') return [[...prefix, k, 0]];
      return textFields(el, [...prefix, k, 0]);
    }
    if (t === 'ZodObject') return textFields(u, [...prefix, k]);
    return [];
  });
}

function bodyWith(path: Array<string | number>, value: string): unknown {
  let out: unknown = value;
  for (let i = path.length - 1; i >= 0; i--) out = typeof path[i] === 'number' ? [out] : { [path[i]!]: out };
  return out;
}

const UUID = '0d8f3c1e-7b2a-4c5d-9e6f-a1b2c3d4e5f6';
const pathOf = (r: AppRoute, params: Record<string, string> = {}) =>
  r.path.replace(/:(\w+)/g, (_m, name: string) => params[name] ?? (/wallet/.test(name) ? walletOf(newKeypair()) : UUID));

function send(r: AppRoute, url: string) {
  const m = r.method.toLowerCase() as 'get' | 'post' | 'patch' | 'delete' | 'put';
  return request(t.app)[m](url);
}

function expectRefused(res: request.Response, path: string, code: string, what: string) {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(400);
  expect(res.body.type, what).toBe(PROBLEM('validation-error'));
  expect(res.body.errors, what).toEqual([expect.objectContaining({ path, code })]);
  expect(res.body.detail, what).toContain(path);
}

describe('NUL, unpaired surrogates and bidi controls: 400 naming the field, on every route that takes text', () => {
  it('every text field of every request body', async () => {
    let fields = 0;
    for (const { key, route } of routes) {
      if (!('body' in route) || !route.body) continue;
      for (const path of textFields(route.body as ZodTypeAny)) {
        fields++;
        for (const [bad, code] of BAD) {
          const res = await send(route, pathOf(route)).set('content-type', 'application/json').send(JSON.stringify(bodyWith(path, bad)));
          expectRefused(res, ['body', ...path].join('.'), code, `${key} body.${path.join('.')} ${JSON.stringify(bad)}`);
        }
      }
    }
    console.log(`text body fields: ${fields}`);
    expect(fields).toBeGreaterThanOrEqual(30);
  });

  it('every text query parameter', async () => {
    let params = 0;
    for (const { key, route } of routes) {
      if (!route.query) continue;
      for (const [name] of textFields(route.query as ZodTypeAny)) {
        params++;
        const res = await send(route, `${pathOf(route)}?${String(name)}=a%00b`);
        expectRefused(res, `query.${String(name)}`, 'invalid_text_nul', `${key} query.${String(name)}`);
      }
    }
    console.log(`text query params: ${params}`);
    expect(params).toBeGreaterThanOrEqual(10);
  });

  it('every path parameter', async () => {
    let params = 0;
    for (const { key, route } of routes) {
      for (const [, name] of route.path.matchAll(/:(\w+)/g)) {
        params++;
        const res = await send(route, pathOf(route, { [name!]: 'a%00b' })).set('content-type', 'application/json').send('{}');
        expectRefused(res, `params.${name}`, 'invalid_text_nul', `${key} params.${name}`);
      }
    }
    console.log(`path params: ${params}`);
    expect(params).toBeGreaterThanOrEqual(20);
  });
});

describe('the cases found by sending malformed requests', () => {
  it('request_login / verify_login with a NUL in address', async () => {
    for (const route of ['request_login', 'verify_login']) {
      const res = await request(t.app).post(`${API}/auth/${route}`).send({ address: `${walletOf(newKeypair())}\u0000`, signed_message: 'AA==', signature: 'AA==' });
      expectRefused(res, 'body.address', 'invalid_text_nul', route);
    }
  });

  it('POST /listings with a lone high or low surrogate, or a reversed pair, in title; a member name too', async () => {
    const seller = await loginAs(t);
    const listing = { description: 'A logo', price: 10, currency: 'USDC', category: 'design', duration: 3 };
    for (const [bad] of BAD.filter(([, code]) => code === 'invalid_text_surrogate')) {
      const res = await request(t.app).post(`${API}/listings`).set(seller.headers).send(JSON.stringify({ ...listing, title: bad })).type('json');
      expectRefused(res, 'body.title', 'invalid_text_surrogate', JSON.stringify(bad));
    }
    const key = await request(t.app).post(`${API}/listings`).set(seller.headers).type('json').send('{"title":"Logo","x\\u0000":1}');
    expect(key.status).toBe(400);
    expect(key.body.errors[0].code).toBe('invalid_text_nul');
  });

  it('well-formed text outside the BMP (a surrogate pair) is accepted', async () => {
    const res = await request(t.app).post(`${API}/auth/request_login`).send({ address: walletOf(newKeypair()), statement: 'Sign in 😀 to Bazaar' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.sign_in_input.statement).toBe('Sign in 😀 to Bazaar');
  });
});

describe('deep JSON (issue 21 item 8)', () => {
  const deep = (levels: number) => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
  it('a body nested 10,000 levels is 400 naming the depth, before the Idempotency-Key fingerprint walks it', async () => {
    const user = await loginAs(t);
    for (const [method, path, key] of [
      ['post', `${API}/listings`, true],
      ['post', `${API}/orders`, true],
      ['post', `${API}/wallet/withdraw`, true],
      ['post', `${API}/webhooks`, false],
      ['patch', `${API}/user/me`, false],
    ] as const) {
      let req = request(t.app)[method](path).set(user.headers).type('json');
      if (key) req = req.set('Idempotency-Key', `deep-${method}-${path.length}`);
      const res = await req.send(deep(10_000));
      expect(res.status, `${method} ${path}: ${JSON.stringify(res.body).slice(0, 300)}`).toBe(400);
      expect(res.body.type).toBe(PROBLEM('validation-error'));
      expect(res.body.errors).toEqual([expect.objectContaining({ code: 'too_deep' })]);
      expect(res.body.detail).toMatch(/nested deeper than 32 levels/);
    }
  });

  it('32 levels pass the guard (the schema then decides), 33 do not', async () => {
    const user = await loginAs(t);
    const at = async (levels: number) => (await request(t.app).patch(`${API}/user/me`).set(user.headers).type('json').send(deep(levels))).body.errors?.[0]?.code;
    expect(await at(32)).not.toBe('too_deep');
    expect(await at(33)).toBe('too_deep');
  });
});
