/**
 * The route walk (issue 20): every route of the contract, called with a personal access token holding
 * each single scope, against the real app (PGlite, FakeChain, over a socket so the event stream can be
 * opened and dropped). The grants come from docs/threat-model.md ("Personal access tokens: scope per
 * route"), the reviewed statement of who may do what; the contract's table (`routeAccess`) and the server
 * must both agree with it. The walk fails when
 * - a route of the contract has no line in the threat model (new routes add their line), or the line
 *   differs from the contract;
 * - a route answers anything but 403 insufficient-scope to a token the threat model does not grant it,
 *   or 403 insufficient-scope to one it does;
 * - a money path (a request with a money capability, e.g. POST /orders with payment_source custodial)
 *   is reachable by a token without a money scope, even one holding every other scope.
 *
 * Ids in paths are random (nothing exists): a reachable route answers 404, 400, 409 ... but never
 * 403 insufficient-scope, which the auth middleware answers before any handler runs.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Keypair } from '@solana/web3.js';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contract, MONEY_CAPABILITIES, MONEY_SCOPES, routeAccess, TOKEN_SCOPES, type RouteAccess, type TokenScope } from '@bazaar/contract';
import { isAppRoute, type AppRoute, type AppRouter } from '@ts-rest/core';
import { declaresBody } from '../server/src/http/route-table.js';
import { API, setup, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';
import { setRoles } from './helpers/roles.js';

const SCOPES = Object.keys(TOKEN_SCOPES) as TokenScope[];
const NON_MONEY_SCOPES = SCOPES.filter((s) => !(MONEY_SCOPES as readonly string[]).includes(s));

/** A line of the threat model's route table. */
interface Grant {
  key: string;
  request: string;
  /** 'public' | 'no token' | a scope */
  scope: string;
  money: { capability: string; scope: string; unless?: { field: string; values: string[] } } | null;
}

/** The table under "## Personal access tokens: scope per route" of docs/threat-model.md, by route key. */
function threatModelGrants(): Map<string, Grant> {
  const md = readFileSync(new URL('../docs/threat-model.md', import.meta.url), 'utf8');
  const start = md.indexOf('## Personal access tokens: scope per route');
  expect(start, 'docs/threat-model.md has the section "Personal access tokens: scope per route"').toBeGreaterThan(-1);
  const section = md.slice(start, md.indexOf('\n## ', start + 10) === -1 ? undefined : md.indexOf('\n## ', start + 10));
  const out = new Map<string, Grant>();
  const row = /^\| ([a-z]+\.[A-Za-z]+) \| ((?:GET|POST|PATCH|PUT|DELETE) \S+) \| (public|no token|[a-z]+:[a-z]+) \| (.+?) \|$/gm;
  for (const m of section.matchAll(row)) {
    const moneyCell = m[4]!.trim();
    let money: Grant['money'] = null;
    if (moneyCell !== '—') {
      const mm = /^([a-z-]+) \(([a-z]+:[a-z]+)\)(?: unless `([a-z_]+)` is absent or (.+))?$/.exec(moneyCell);
      expect(mm, `${m[1]}: money cell "${moneyCell}" reads "capability (scope)[ unless \`field\` is absent or \`v\`, ...]"`).not.toBeNull();
      money = {
        capability: mm![1]!,
        scope: mm![2]!,
        ...(mm![3] ? { unless: { field: mm![3], values: [...mm![4]!.matchAll(/`([^`]+)`/g)].map((v) => v[1]!) } } : {}),
      };
    }
    expect(out.has(m[1]!), `${m[1]} has one line`).toBe(false);
    out.set(m[1]!, { key: m[1]!, request: m[2]!, scope: m[3]!, money });
  }
  return out;
}

function flatten(router: AppRouter, prefix = ''): Array<[string, AppRoute]> {
  return Object.entries(router).flatMap(([key, value]) =>
    isAppRoute(value as AppRoute) ? [[prefix + key, value as AppRoute] as [string, AppRoute]] : flatten(value as AppRouter, `${prefix}${key}.`),
  );
}
const routes = flatten(contract);
const grants = threatModelGrants();

/** One request of the walk: a route, and for a money rule with `unless`, which side of it. */
interface Probe {
  name: string;
  key: string;
  route: AppRoute;
  body: Record<string, unknown> | undefined;
  /** the scopes the threat model says this request needs */
  needs: string[];
  moneyPath: boolean;
}

function probes(): Probe[] {
  const out: Probe[] = [];
  for (const [key, route] of routes) {
    const g = grants.get(key)!;
    if (g.scope === 'public') continue;
    const body = declaresBody(route) ? {} : undefined;
    if (g.scope === 'no token') {
      out.push({ name: key, key, route, body, needs: ['no token'], moneyPath: false });
      continue;
    }
    if (!g.money) {
      out.push({ name: key, key, route, body, needs: [g.scope], moneyPath: false });
      continue;
    }
    const withMoney = [...new Set([g.scope, g.money.scope])];
    if (g.money.unless) {
      // the side without the capability: the field absent, and each exempt value
      out.push({ name: `${key} (${g.money.unless.field} absent)`, key, route, body: {}, needs: [g.scope], moneyPath: false });
      for (const v of g.money.unless.values) {
        out.push({ name: `${key} (${g.money.unless.field}: ${v})`, key, route, body: { [g.money.unless.field]: v }, needs: [g.scope], moneyPath: false });
      }
      // the money side: every value the contract accepts besides the exempt ones, and one it does not
      const field = g.money.unless.field;
      const body = (route as { body?: unknown }).body as { shape?: Record<string, { unwrap?: () => { options?: string[] } }> };
      const schema = body.shape?.[field];
      const options = schema?.unwrap?.().options ?? [];
      for (const v of [...options.filter((o) => !g.money!.unless!.values.includes(o)), 'CUSTODIAL']) {
        out.push({ name: `${key} (${field}: ${v})`, key, route, body: { [field]: v }, needs: withMoney, moneyPath: true });
      }
    } else out.push({ name: key, key, route, body, needs: withMoney, moneyPath: true });
  }
  return out;
}

let t: TestApp;
let server: Server;
let base: string;
let owner: TestUser;
const tokens = new Map<string, string>();

async function token(scopes: readonly string[]): Promise<string> {
  const id = [...scopes].sort().join(' ');
  if (!tokens.has(id)) {
    const res = await request(t.app).post(`${API}/user/tokens`).set(owner.headers).send({ name: `walk ${id}`.slice(0, 100), scopes });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    tokens.set(id, res.body.token);
  }
  return tokens.get(id)!;
}

/** The route's path with every parameter filled: a random UUID, or a wallet for wallet parameters. */
function fill(path: string): string {
  const wallet = Keypair.generate().publicKey.toBase58();
  return path.replace(/:(\w+)/g, (_m, name: string) => (name.endsWith('wallet') ? wallet : randomUUID()));
}

/** Send the probe with a bearer token: status and, for a problem, its type slug and required_scope. */
async function call(p: Probe, bearer: string): Promise<{ status: number; slug?: string; required?: string | null }> {
  const ac = new AbortController();
  const headers: Record<string, string> = { authorization: `Bearer ${bearer}`, 'idempotency-key': randomUUID() };
  if (p.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + fill(p.route.path), {
    method: p.route.method,
    headers,
    body: p.body === undefined ? undefined : JSON.stringify(p.body),
    signal: ac.signal,
  });
  if (!(res.headers.get('content-type') ?? '').includes('json')) {
    ac.abort(); // the event stream (or anything else that is not a problem): reached
    return { status: res.status };
  }
  const body = (await res.json()) as { type?: string; required_scope?: string | null };
  return { status: res.status, slug: body.type?.split('/').pop(), required: body.required_scope };
}

const refused = (r: { status: number; slug?: string }) => r.status === 403 && r.slug === 'insufficient-scope';

beforeAll(async () => {
  ({ t } = await setup());
  owner = await user(t);
  // every operator role, so that the walk can hold a token with each operator scope (OPERATOR_SCOPES)
  await setRoles(t.ctx.db, { id: owner.userId });
  server = t.app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await t?.close();
});

describe('threat model: the route table', () => {
  it('has one line per contract route, and each line says what the contract says (routeAccess)', () => {
    expect([...grants.keys()].sort()).toEqual(routes.map(([k]) => k).sort());
    for (const [key, route] of routes) {
      const g = grants.get(key)!;
      expect(g.request, key).toBe(`${route.method} ${route.path.replace(API, '').replace(/:(\w+)/g, '{$1}')}`);
      const a = (routeAccess as Record<string, RouteAccess>)[key]!;
      expect(g.scope, key).toBe(a.scope === null ? 'no token' : a.scope);
      expect(g.money, key).toEqual(
        a.money
          ? {
              capability: a.money.capability,
              scope: MONEY_CAPABILITIES[a.money.capability].scope,
              ...(a.money.unless ? { unless: { field: a.money.unless.body_field, values: [...a.money.unless.absent_or] } } : {}),
            }
          : null,
      );
    }
  });
});

describe('threat model: the capability tables', () => {
  const md = readFileSync(new URL('../docs/threat-model.md', import.meta.url), 'utf8');
  const capabilities = md.slice(md.indexOf('## Capabilities'), md.indexOf('## Decisions'));

  it('has a section per capability the issue names', () => {
    const sections = [...capabilities.matchAll(/^### (.+)$/gm)].map((m) => m[1]!.toLowerCase());
    for (const s of ['wallet payment', 'escrow actions', 'custodial payment', 'custody deposit', 'tokens', 'webhooks', 'streams', 'chat', 'operator roles']) {
      expect(sections.some((x) => x.includes(s)), s).toBe(true);
    }
  });

  it('every row names its proving tests, and each of them exists', () => {
    const rows = [...capabilities.matchAll(/^\| (?!capability \||---)(.+) \|$/gm)].map((m) => m[1]!.split(' | '));
    expect(rows.length).toBeGreaterThan(20);
    const missing: string[] = [];
    for (const cells of rows) {
      expect(cells, cells[0]).toHaveLength(5);
      for (const citation of cells[4]!.split(' · ')) {
        const m = /^((?:tests|programs)\/[\w./-]+): (.+)$/.exec(citation.trim());
        if (!m) {
          missing.push(`${cells[0]}: "${citation}" is not "file: test name"`);
          continue;
        }
        let source: string;
        try {
          source = readFileSync(new URL(`../${m[1]}`, import.meta.url), 'utf8').replace(/\\(['"`])/g, '$1');
        } catch {
          missing.push(`${cells[0]}: ${m[1]} does not exist`);
          continue;
        }
        const name = m[2]!;
        const found = m[1]!.endsWith('.rs') ? new RegExp(`fn ${name}\\b`).test(source) : source.includes(name);
        if (!found) missing.push(`${cells[0]}: ${m[1]} has no test "${name}"`);
      }
    }
    expect(missing).toEqual([]);
  });
});

describe('route walk: a token with each single scope', () => {
  const all = probes();

  it.each(SCOPES)('with only %s: reaches exactly the routes the threat model grants that scope, and nothing with two scopes or none', async (scope) => {
    const wrong: string[] = [];
    const bearer = await token([scope]);
    for (const p of all) {
      const r = await call(p, bearer);
      expect(r.status, `${p.name} with ${scope}`).not.toBe(401);
      const granted = p.needs.length === 1 && p.needs[0] === scope;
      if (granted === refused(r)) wrong.push(`${p.name} with [${scope}]: ${r.status} ${r.slug ?? ''} (threat model: ${granted ? 'granted' : 'refused'})`);
      if (refused(r) && p.needs[0] !== 'no token') {
        // the problem names a scope the request needs and the token lacks
        expect(p.needs, p.name).toContain(r.required);
        expect(r.required, p.name).not.toBe(scope);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('a request that needs two scopes is reached with exactly those two', async () => {
    const pairs = all.filter((p) => p.needs.length === 2);
    expect(pairs.map((p) => p.key).sort()).toEqual(
      expect.arrayContaining(['orders.confirmOrder', 'orders.createOrder', 'orders.refundOrder']),
    );
    for (const p of pairs) expect(refused(await call(p, await token(p.needs))), p.name).toBe(false);
  });

  it('no money path is reachable without a money scope, even by a token holding every other scope', async () => {
    const moneyPaths = all.filter((p) => p.moneyPath);
    expect(moneyPaths.length).toBeGreaterThanOrEqual(4);
    const everythingElse = await token(NON_MONEY_SCOPES);
    for (const p of moneyPaths) {
      expect(p.needs.some((s) => (MONEY_SCOPES as readonly string[]).includes(s)), `${p.name} needs a money scope`).toBe(true);
      const r = await call(p, everythingElse);
      expect(refused(r), `${p.name} with every scope but the money scopes: ${r.status} ${r.slug}`).toBe(true);
      expect(MONEY_SCOPES as readonly string[], p.name).toContain(r.required);
    }
    // and the same token still reaches the wallet-paid side of POST /orders (the buyer's wallet signs)
    const walletSide = all.filter((p) => p.key === 'orders.createOrder' && !p.moneyPath);
    expect(walletSide.length).toBe(2);
    for (const p of walletSide) expect(refused(await call(p, everythingElse)), p.name).toBe(false);
  });
});
