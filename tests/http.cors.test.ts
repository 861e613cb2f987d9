/**
 * Browsers and wallets can call the API (issue 10 point 3): under `npm start` (config `dev`) local
 * origins are allowed without configuration, elsewhere only CORS_ORIGINS; the Solana Pay
 * transaction-request endpoints and the icon they name answer any origin; /icon.svg is a real SVG.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../server/src/config.js';
import { originAllowed } from '../server/src/http/cors.js';
import { API, createTestApp } from './helpers/app.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'bazaar-cors-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const env = { DATA_DIR: dataDir, JWT_SECRET: 'x'.repeat(40) };
const ORDER = '3f2b8a52-3c1e-4f4e-9a55-7d0c1e2b9a10';

const preflight = (app: Parameters<typeof request>[0], url: string, origin: string, method = 'GET') =>
  request(app).options(url).set('Origin', origin).set('Access-Control-Request-Method', method).set('Access-Control-Request-Headers', 'content-type,authorization');

describe('CORS of the API routes', () => {
  it('npm start (dev defaults): a Vite app on localhost or 127.0.0.1, any port, may call the API, without credentials', async () => {
    const config = loadConfig(env, { dev: true });
    expect(config.corsOrigins).toEqual(['http://localhost:*', 'http://127.0.0.1:*']);
    const t = await createTestApp({ config: { corsOrigins: config.corsOrigins } });
    try {
      for (const origin of ['http://localhost:5173', 'http://127.0.0.1:8080', 'http://localhost']) {
        const res = await preflight(t.app, `${API}/marketplace/search`, origin);
        expect(res.status, origin).toBe(204);
        expect(res.headers['access-control-allow-origin']).toBe(origin);
        // the session cookie is not for any local page (issue 21 item 6): only for an origin listed exactly
        expect(res.headers['access-control-allow-credentials'], origin).toBeUndefined();
        const get = await request(t.app).get(`${API}/categories`).set('Origin', origin);
        expect(get.headers['access-control-allow-origin']).toBe(origin);
        expect(get.headers['access-control-expose-headers']).toMatch(/Retry-After/);
      }
      for (const origin of ['https://evil.example', 'http://localhost.evil.example:5173', 'https://localhost:5173']) {
        const res = await preflight(t.app, `${API}/marketplace/search`, origin);
        expect(res.headers['access-control-allow-origin'], origin).toBeUndefined();
      }
    } finally {
      await t.close();
    }
  });

  it('credentials (the session cookie) only for an origin listed exactly, also in development (issue 21 item 6)', async () => {
    const t = await createTestApp({ config: { corsOrigins: ['http://localhost:5173', 'http://localhost:*', 'http://127.0.0.1:*'] } });
    try {
      const listed = await preflight(t.app, `${API}/user/tokens`, 'http://localhost:5173', 'POST');
      expect(listed.headers['access-control-allow-origin']).toBe('http://localhost:5173');
      expect(listed.headers['access-control-allow-credentials']).toBe('true');
      for (const origin of ['http://localhost:4000', 'http://127.0.0.1:5173']) {
        const pre = await preflight(t.app, `${API}/user/tokens`, origin, 'POST');
        expect(pre.headers['access-control-allow-origin'], origin).toBe(origin);
        expect(pre.headers['access-control-allow-credentials'], origin).toBeUndefined();
        const get = await request(t.app).get(`${API}/categories`).set('Origin', origin);
        expect(get.headers['access-control-allow-credentials'], origin).toBeUndefined();
      }
    } finally {
      await t.close();
    }
  });

  it('production (no dev defaults): no origin unless CORS_ORIGINS lists it', async () => {
    expect(loadConfig(env).corsOrigins).toEqual([]);
    const closed = await createTestApp({ config: { corsOrigins: loadConfig(env).corsOrigins } });
    try {
      const res = await preflight(closed.app, `${API}/marketplace/search`, 'http://localhost:5173');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await closed.close();
    }
    const listed = loadConfig({ ...env, CORS_ORIGINS: 'https://app.example.com' }).corsOrigins;
    const open = await createTestApp({ config: { corsOrigins: listed } });
    try {
      expect((await preflight(open.app, `${API}/marketplace/search`, 'https://app.example.com')).headers['access-control-allow-origin']).toBe('https://app.example.com');
      expect((await preflight(open.app, `${API}/marketplace/search`, 'http://localhost:5173')).headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await open.close();
    }
  });

  it('matches origins exactly or by port wildcard', () => {
    expect(originAllowed('http://localhost:5173', ['http://localhost:*'])).toBe(true);
    expect(originAllowed('http://localhost:5173x', ['http://localhost:*'])).toBe(false);
    expect(originAllowed('http://localhost.evil:5173', ['http://localhost:*'])).toBe(false);
    expect(originAllowed('https://a.example', ['https://a.example/'])).toBe(true);
    expect(originAllowed('https://b.example', ['*'])).toBe(true);
  });
});

describe('Solana Pay endpoints and the icon answer any origin (wallets fetch them cross-origin)', () => {
  it('preflight and requests of GET/POST /orders/{id}/solana-pay from any origin, without CORS_ORIGINS', async () => {
    const t = await createTestApp();
    try {
      const url = `${API}/orders/${ORDER}/solana-pay`;
      const pre = await preflight(t.app, url, 'https://wallet.example', 'POST');
      expect(pre.status).toBe(204);
      expect(pre.headers['access-control-allow-origin']).toBe('*');
      expect(pre.headers['access-control-allow-methods']).toMatch(/POST/);
      expect(pre.headers['access-control-allow-credentials']).toBeUndefined();
      // whatever the answer (no escrow in this app: 503), the browser may read it
      const get = await request(t.app).get(url).set('Origin', 'https://wallet.example');
      expect(get.headers['access-control-allow-origin']).toBe('*');
      expect(get.headers['cross-origin-resource-policy']).toBe('cross-origin');
      const post = await request(t.app).post(url).set('Origin', 'null').send({ account: '11111111111111111111111111111111' });
      expect(post.headers['access-control-allow-origin']).toBe('*');
      // other order routes stay closed
      expect((await preflight(t.app, `${API}/orders/${ORDER}`, 'https://wallet.example')).headers['access-control-allow-origin']).toBeUndefined();
    } finally {
      await t.close();
    }
  });

  it('/icon.svg is an SVG image any origin may load, and the default Solana Pay icon', async () => {
    const t = await createTestApp({ config: { publicBaseUrl: 'https://market.example' } });
    try {
      expect(t.ctx.config.orders.solanaPayIcon).toBe('https://market.example/icon.svg');
      const res = await request(t.app).get('/icon.svg').set('Origin', 'https://wallet.example').buffer(true).parse((r, cb) => {
        let text = '';
        r.on('data', (c: Buffer) => (text += c.toString()));
        r.on('end', () => cb(null, text));
      });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toMatch(/^image\/svg\+xml/);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
      const svg = String(res.body);
      expect(svg).toMatch(/^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
      expect(svg.trim().endsWith('</svg>')).toBe(true);
      expect(svg).not.toMatch(/<script/i);
    } finally {
      await t.close();
    }
  });
});
