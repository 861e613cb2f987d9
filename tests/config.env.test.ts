/**
 * One truth per documented value (issue 10 point 5):
 * - every variable in ENV_VARS is read: set to its documented example it changes what a reader returns;
 * - every variable config.ts reads is in ENV_VARS, and no documented variable is read elsewhere in server/;
 * - the README's configuration table is the one generated from ENV_VARS;
 * - literal defaults are the values the loaders use (an unset variable and its documented default agree);
 * - the JWT lifetime the contract documents is what a login under the default configuration returns;
 * - the orders settings (ORDER_*, SOLANA_PAY_*) reach the orders module.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ENV_VARS,
  RENAMED_VARS,
  loadConfig,
  loadStartConfig,
  loadToolConfig,
  renderConfigTable,
  type EnvReader,
} from '../server/src/config.js';
import { DEFAULT_WATCHER_FALLBACK_INTERVAL_MS } from '../server/src/modules/orders/payment-watcher.js';
import { withConfigTable, README_PATH } from '../server/scripts/config-docs.js';
import { API, createTestApp, newKeypair, signSiws, walletOf } from './helpers/app.js';
import { FakeChain } from './helpers/fake-chain.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const dataDir = mkdtempSync(path.join(tmpdir(), 'bazaar-config-env-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const base = { DATA_DIR: dataDir, JWT_SECRET: 'x'.repeat(40) };

const readers: Record<EnvReader, (env: NodeJS.ProcessEnv) => unknown> = {
  server: (env) => loadConfig(env),
  'npm start': (env) => loadStartConfig(env),
  scripts: (env) => loadToolConfig(env),
};

describe('ENV_VARS: the one definition of the environment', () => {
  it.each(ENV_VARS.map((v) => [v.name, v] as const))('%s is read by what it says reads it', (_name, v) => {
    for (const reader of v.readers) {
      const env = { ...base, ...(v.with ?? {}) };
      const before = readers[reader](env);
      const after = readers[reader]({ ...env, [v.name]: v.example });
      expect(after, `${v.name}=${v.example} changes nothing for ${reader}`).not.toEqual(before);
    }
  });

  it('a literal default is what an unset variable reads as', () => {
    for (const v of ENV_VARS.filter((x) => 'literal' in x.default)) {
      const literal = (v.default as { literal: string }).literal;
      for (const reader of v.readers) {
        const { [v.name]: _unset, ...env } = { ...base, ...(v.with ?? {}) } as NodeJS.ProcessEnv;
        expect(readers[reader]({ ...env, [v.name]: literal }), `${v.name} default`).toEqual(readers[reader](env));
      }
    }
  });

  it('config.ts reads no variable that is not documented', () => {
    const src = readFileSync(path.join(ROOT, 'server/src/config.ts'), 'utf8');
    const names = new Set<string>();
    for (const m of src.matchAll(/\braw\(env, '([A-Z0-9_]+)'\)|\b(?:int|positive|port|bool|list)\(env, '([A-Z0-9_]+)'\)|\benv\.([A-Z][A-Z0-9_]+)|\benv\['([A-Z0-9_]+)'\]/g)) {
      names.add((m[1] ?? m[2] ?? m[3] ?? m[4])!);
    }
    expect(names.size).toBeGreaterThan(40);
    const documented = new Set([...ENV_VARS.map((v) => v.name), ...Object.keys(RENAMED_VARS)]);
    expect([...names].filter((n) => !documented.has(n))).toEqual([]);
    expect(ENV_VARS.map((v) => v.name).filter((n) => !names.has(n))).toEqual([]);
  });

  it('no documented variable is read outside config.ts (server/)', () => {
    const documented = new Set(ENV_VARS.map((v) => v.name));
    // process.env reads that are not configuration: the entry-point switch of main.ts, and the
    // schema-engine path db-generate.mjs hands to the Prisma CLI it spawns
    const internal = new Set(['BAZAAR_MAIN', 'PRISMA_SCHEMA_ENGINE_BINARY']);
    const offending: string[] = [];
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((f) => {
        const p = path.join(dir, f);
        if (f === 'generated' || f === 'node_modules') return [];
        return statSync(p).isDirectory() ? walk(p) : /\.(ts|mjs|js)$/.test(f) ? [p] : [];
      });
    for (const file of walk(path.join(ROOT, 'server'))) {
      if (file.endsWith(path.join('server', 'src', 'config.ts'))) continue;
      const src = readFileSync(file, 'utf8');
      for (const m of src.matchAll(/\b(process\.env|env)(?:\.([A-Z][A-Z0-9_]*)|\['([A-Z0-9_]+)'\])(?!\s*=[^=])/g)) {
        const name = (m[2] ?? m[3])!;
        const isProcessEnv = m[1] === 'process.env';
        if (documented.has(name) || (isProcessEnv && !internal.has(name))) offending.push(`${path.relative(ROOT, file)}: ${m[0]}`);
      }
    }
    expect(offending).toEqual([]);
  });

  it('the README configuration table is generated from ENV_VARS', () => {
    const readme = readFileSync(README_PATH, 'utf8');
    expect(withConfigTable(readme), 'run npm run docs:config').toBe(readme);
    for (const v of ENV_VARS) expect(readme).toContain(`| \`${v.name}\` |`);
    expect(renderConfigTable().split('\n').filter((l) => l.startsWith('| `')).length).toBe(ENV_VARS.length);
  });

  it('refuses a renamed variable with its new name, and bad values naming the variable', () => {
    expect(() => loadConfig({ ...base, SIWS_DOMAIN: 'x.example' })).toThrow(/SIWS_DOMAIN was renamed SIWS_DOMAINS/);
    expect(() => loadConfig({ ...base, SOLANA_PAY_ICON: 'https://cdn.example.com/icon.gif' })).toThrow(/SOLANA_PAY_ICON must end in .svg, .png or .webp/);
    expect(() => loadConfig({ ...base, PUBLIC_MARKETPLACE: 'maybe' })).toThrow(/PUBLIC_MARKETPLACE must be true or false/);
    expect(() => loadConfig({ ...base, PORT: '70000' })).toThrow(/PORT must be a TCP port/);
    expect(() => loadConfig({ ...base, SIWS_CHAIN_ID: 'solana:mainnet-beta' })).toThrow(/SIWS_CHAIN_ID/);
    expect(() => loadConfig({ ...base, SIWS_DOMAINS: 'localhost:*' })).toThrow(/SIWS_DOMAINS must name at least one plain domain/);
    expect(loadConfig({ ...base, SIWS_DOMAINS: 'app.example.com, localhost:*' }).siwsDomains).toEqual(['app.example.com', 'localhost:*']);
  });

  it('the orders defaults are the service\'s own defaults', async () => {
    const { orders } = loadConfig(base);
    const { solanaPayIcon: _icon, watcherIntervalMs: _w, watcherFallbackIntervalMs: fallback, reconcileIntervalMs: _r, idempotencyLeaseMs: _l, ...rest } = orders;
    // the service has no defaults of its own (one set: ENV_VARS): what it runs with is what config.ts read
    const chain = Object.assign(new FakeChain(), { escrow: {} as never, currencies: [] });
    const t = await createTestApp({ chain, config: { orders } });
    try {
      expect(t.services.orders!.service.config).toMatchObject(rest);
    } finally {
      await t.close();
    }
    expect(fallback).toBe(DEFAULT_WATCHER_FALLBACK_INTERVAL_MS);
  });

  it('SOLANA_WS_URL: derived from the RPC URL as web3.js derives it, `off` for none, a ws(s) URL otherwise', () => {
    const ws = (env: NodeJS.ProcessEnv) => loadConfig({ ...base, ...env }).solanaWsUrl;
    expect(ws({})).toBe('ws://127.0.0.1:8900');
    expect(ws({ SOLANA_RPC_PORT: '18301' })).toBe('ws://127.0.0.1:18302');
    expect(ws({ SOLANA_RPC_URL: 'https://api.devnet.solana.com' })).toBe('wss://api.devnet.solana.com');
    expect(ws({ SOLANA_RPC_URL: 'http://rpc.example.com:8899/key/abc' })).toBe('ws://rpc.example.com:8900/key/abc');
    expect(ws({ SOLANA_WS_URL: 'wss://ws.example.com/x' })).toBe('wss://ws.example.com/x');
    expect(ws({ SOLANA_WS_URL: 'off' })).toBeNull();
    expect(() => ws({ SOLANA_WS_URL: 'https://ws.example.com' })).toThrow(/SOLANA_WS_URL must be a ws:\/\/ or wss:\/\/ URL or off/);
  });
});

describe('documented values are the served ones', () => {
  it('the JWT lifetime openapi.json documents is what a login returns under the default configuration', async () => {
    const openapi = JSON.parse(readFileSync(path.join(ROOT, 'openapi.json'), 'utf8'));
    const documented = Number(/default (\d+)/.exec(openapi.components.schemas.LoginResponse.properties.expires_in.description)?.[1]);
    const { jwtTtlSeconds } = loadConfig(base);
    expect(documented).toBe(jwtTtlSeconds);
    const verify = Object.values(openapi.paths as Record<string, { post?: { description?: string } }>).find((p) =>
      p.post?.description?.includes('Verifies the SIWS message'),
    )!.post!.description!;
    expect(verify).toContain(`${jwtTtlSeconds} s`);
    const t = await createTestApp({ config: { jwtTtlSeconds } });
    try {
      const kp = newKeypair();
      const r1 = await request(t.app).post(`${API}/auth/request_login`).send({ address: walletOf(kp) });
      const login = await request(t.app).post(`${API}/auth/verify_login`).send(signSiws(kp, r1.body.sign_in_input));
      expect(login.status).toBe(200);
      expect(login.body.expires_in).toBe(documented);
      expect(Date.parse(login.body.expires_at) - Date.now()).toBeGreaterThan((documented - 60) * 1000);
    } finally {
      await t.close();
    }
  });

  it('ORDER_* and SOLANA_PAY_* reach the orders module', async () => {
    const loaded = loadConfig({
      ...base,
      PUBLIC_BASE_URL: 'https://market.example',
      ORDER_PAYMENT_TTL_SECONDS: '600',
      ORDER_REVIEW_WINDOW_SECONDS: '86400',
      ORDER_MAX_UNPAID_PER_BUYER: '5',
      SOLANA_PAY_LABEL: 'Example Market',
    });
    const chain = Object.assign(new FakeChain(), { escrow: {} as never, currencies: [] });
    const t = await createTestApp({ chain, config: { publicBaseUrl: loaded.publicBaseUrl, orders: loaded.orders } });
    try {
      expect(t.services.orders!.service.config).toMatchObject({
        paymentTtlSeconds: 600,
        reviewWindowSeconds: 86_400,
        maxUnpaidOrdersPerBuyer: 5,
        solanaPayLabel: 'Example Market',
        solanaPayIcon: 'https://market.example/icon.svg',
        publicBaseUrl: 'https://market.example',
      });
    } finally {
      await t.close();
    }
  });
});
