/**
 * `@bazaar/client-sdk/lite`: the typed client over the route table (routes.generated.ts) instead of the
 * contract's zod schemas. It must send exactly what the full client sends, for every route, and bundle
 * without the contract's schemas (what the web app's first-load budget needs: web/README.md "Bundle").
 */
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { contractRouteEntries } from '@bazaar/contract';
import { describe, expect, it } from 'vitest';
import { createBazaarClient as createFullClient, type BazaarClient } from './index.js';
import { createBazaarClient, isProblem, type LiteClientOptions } from './lite.js';

interface Call {
  url: string;
  method: string | undefined;
  headers: Record<string, string>;
  body: unknown;
  credentials: RequestInit['credentials'];
}

/** A recording fetch stub: every call answers `status` with `body` as JSON. */
function stubFetch(status: number, body: unknown) {
  const calls: Call[] = [];
  const fetch = (async (url: string | URL | Request, init?: RequestInit) => {
    calls.push({
      url: String(url),
      method: init?.method,
      headers: Object.fromEntries(new Headers(init?.headers as ConstructorParameters<typeof Headers>[0])),
      body: init?.body,
      credentials: init?.credentials,
    });
    return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

type AnyRoute = (args?: Record<string, unknown>) => Promise<{ status: number; body: unknown }>;
const routeOf = (client: BazaarClient, key: string) => {
  const [group, name] = key.split('.') as [string, string];
  return (client as unknown as Record<string, Record<string, AnyRoute>>)[group]![name]!;
};

describe('@bazaar/client-sdk/lite', () => {
  it('sends exactly the request of the full client for every route of the contract (path params, query, body, headers, credentials)', async () => {
    const options = { baseUrl: 'http://api.test/', token: 'jwt-1', apiKey: 'key-1', credentials: 'include' } as const;
    const full = stubFetch(200, {});
    const lite = stubFetch(200, {});
    const fullClient = createFullClient({ ...options, fetch: full.fetch });
    const liteClient = createBazaarClient({ ...options, fetch: lite.fetch });
    const entries = contractRouteEntries();
    expect(entries.length).toBeGreaterThan(50);
    for (const [key, route] of entries) {
      const params = Object.fromEntries([...route.path.matchAll(/:(\w+)/g)].map(([, p]) => [p, `${p}-1`]));
      const args = {
        params,
        query: { q: 'logo design', limit: 5, tags: ['a', 'b'] },
        headers: { 'idempotency-key': `k-${key}` },
        ...(route.method === 'GET' ? {} : { body: { title: 'T', amount: 10, list: [1, 2] } }),
      };
      await routeOf(fullClient, key)(args);
      await routeOf(liteClient, key)(args);
      expect(lite.calls.at(-1), key).toEqual(full.calls.at(-1));
    }
    expect(lite.calls).toHaveLength(entries.length);
    expect(new URL(lite.calls[0]!.url).origin).toBe('http://api.test');
  });

  it('keeps the credential setters of the full client', async () => {
    const { fetch, calls } = stubFetch(200, { data: [] });
    const client = createBazaarClient({ baseUrl: 'http://api.test', fetch });
    await client.marketplace.listCategories();
    client.setToken('jwt-2');
    client.setApiKey('key-2');
    await client.marketplace.listCategories();
    expect(calls.map((c) => [c.url, c.headers.authorization ?? null, c.headers['x-api-key'] ?? null])).toEqual([
      ['http://api.test/api/v1/categories', null, null],
      ['http://api.test/api/v1/categories', 'Bearer jwt-2', 'key-2'],
    ]);
    expect(client.getToken()).toBe('jwt-2');
  });

  it('does not validate responses (no schemas): the body is the service\'s JSON as sent; validateResponse is refused', async () => {
    const answer = { data: [{ slug: 42 }], extra: true };
    const lite = createBazaarClient({ baseUrl: 'http://api.test', fetch: stubFetch(200, answer).fetch });
    const res = await lite.marketplace.listCategories();
    expect(res).toMatchObject({ status: 200, body: answer });
    // the full client with validateResponse rejects the same answer: the schemas are what lite leaves out
    const full = createFullClient({ baseUrl: 'http://api.test', validateResponse: true, fetch: stubFetch(200, answer).fetch });
    await expect(full.marketplace.listCategories()).rejects.toThrow();
    expect(() => createBazaarClient({ baseUrl: 'http://api.test', validateResponse: true } as unknown as LiteClientOptions)).toThrow(TypeError);
    // @ts-expect-error validateResponse: true needs the schemas (@bazaar/client-sdk)
    const typed: LiteClientOptions = { baseUrl: 'http://api.test', validateResponse: true };
    expect(typed.validateResponse).toBe(true);
  });

  it('types every call like the full client (problem bodies included)', async () => {
    const problem = { type: 'https://bazaar.dev/problems/not-found', title: 'Not found', status: 404, detail: 'no such order', instance: '/x', request_id: 'r' };
    const client: BazaarClient = createBazaarClient({ baseUrl: 'http://api.test', fetch: stubFetch(404, problem).fetch });
    const res = await client.orders.getOrder({ params: { order_id: '7f0c4a4e-5b7e-4c36-9a0e-0d1c5a8f2b11' } });
    expect(isProblem(res.body)).toBe(true);
    if (res.status === 404) expect(res.body.detail).toBe('no such order');
    // @ts-expect-error limit is a number
    void client.marketplace.searchListings({ query: { limit: 'ten' } }).catch(() => undefined);
  });

  it('bundles without the contract\'s schemas, and so does the login entry (Vite, minified): the full client\'s bundle carries them', async () => {
    // the web app's bundler (the web workspace's Vite)
    const vitePath = createRequire(fileURLToPath(new URL('../../web/package.json', import.meta.url))).resolve('vite');
    const { build } = (await import(pathToFileURL(vitePath).href)) as { build(config: object): Promise<unknown> };
    const bundle = async (entry: string) => {
      const out = await build({
        configFile: false,
        logLevel: 'silent',
        // the contract from source (its dist/ may be rebuilding: tests/sdk.package.test.ts packs it)
        resolve: {
          alias: [
            { find: /^@bazaar\/contract$/, replacement: fileURLToPath(new URL('../../contract/src/index.ts', import.meta.url)) },
            { find: /^@bazaar\/contract\/ts-rest$/, replacement: fileURLToPath(new URL('../../contract/src/ts-rest.ts', import.meta.url)) },
          ],
        },
        build: {
          write: false,
          minify: true,
          lib: { entry: fileURLToPath(new URL(entry, import.meta.url)), formats: ['es'], fileName: 'out' },
          rollupOptions: { external: [] },
        },
      });
      const outputs = (Array.isArray(out) ? out : [out]) as { output: { type: string; code?: string }[] }[];
      return outputs.flatMap((o) => o.output).map((c) => c.code ?? '').join('\n');
    };
    // texts only the contract's schemas carry: a problem type's title and a field's description
    const markers = ['Revision limit reached', 'Escrow program instruction'];
    const full = await bundle('./index.ts');
    for (const m of markers) expect(full, `full client: ${m}`).toContain(m);
    const lite = await bundle('./lite.ts');
    for (const m of markers) expect(lite, `lite client: ${m}`).not.toContain(m);
    // loginWithWallet builds its client (from a base URL) on lite: a login page carries no schemas either
    const login = await bundle('./login.ts');
    for (const m of markers) expect(login, `login: ${m}`).not.toContain(m);
    expect(login).toContain('/api/v1/auth/verify_login');
    expect(lite).toContain('/api/v1/orders/:order_id/milestones/fund');
    expect(lite.length).toBeLessThan(full.length / 2);
  }, 120_000);
});
