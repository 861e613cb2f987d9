/**
 * GET /openapi.json names the running service as its server (PUBLIC_BASE_URL, else the request's origin),
 * the pages' CSP lets /docs call it, and the origin the start banner announces is the one the served
 * document names. The browser run of /docs is tests/docs.browser.test.ts.
 */
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { announcedOrigin } from '../server/src/http/docs.js';
import type { Config } from '../server/src/config.js';
import { createTestApp, type TestApp } from './helpers/app.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const cspDirective = (csp: string | undefined, name: string) =>
  (csp ?? '')
    .split(';')
    .map((d) => d.trim().split(/\s+/))
    .find(([n]) => n === name)
    ?.slice(1);

describe('served OpenAPI document', () => {
  it('names the origin of the request when PUBLIC_BASE_URL is not configured, and keeps everything else', async () => {
    t = await createTestApp();
    const res = await request(t.app).get('/openapi.json').set('Host', '127.0.0.1:4321');
    expect(res.status).toBe(200);
    expect(res.body.servers).toEqual([{ url: 'http://127.0.0.1:4321', description: expect.any(String) }]);
    expect(res.body.paths['/api/v1/marketplace/search']).toBeDefined();
    const other = await request(t.app).get('/openapi.json').set('Host', 'localhost:3107');
    expect(other.body.servers[0].url).toBe('http://localhost:3107');
  });

  it('uses the forwarded scheme behind a trusted proxy', async () => {
    t = await createTestApp({ config: { trustProxy: 1 } });
    const res = await request(t.app).get('/openapi.json').set('Host', 'api.example.org').set('X-Forwarded-Proto', 'https');
    expect(res.body.servers[0].url).toBe('https://api.example.org');
  });

  it('falls back to the default public URL for a Host header that is not a plain host', async () => {
    t = await createTestApp({ config: { publicBaseUrl: 'http://localhost:3000' } });
    const res = await request(t.app).get('/openapi.json').set('Host', 'evil.example/<script>');
    expect(res.body.servers[0].url).toBe('http://localhost:3000');
  });

  it('names PUBLIC_BASE_URL when configured, whatever the request, and the CSP lets pages connect to it', async () => {
    t = await createTestApp({ config: { publicBaseUrl: 'https://api.bazaar.example', publicBaseUrlSet: true } });
    const res = await request(t.app).get('/openapi.json').set('Host', '127.0.0.1:4321');
    expect(res.body.servers).toEqual([{ url: 'https://api.bazaar.example', description: expect.any(String) }]);
    const page = await request(t.app).get('/docs/');
    expect(page.status).toBe(200);
    expect(cspDirective(page.headers['content-security-policy'], 'connect-src')).toEqual(["'self'", 'https://api.bazaar.example']);
  });

  it('serves /docs with a CSP that allows its own origin and loads /openapi.json', async () => {
    t = await createTestApp();
    const page = await request(t.app).get('/docs/');
    expect(page.status).toBe(200);
    expect(cspDirective(page.headers['content-security-policy'], 'connect-src')).toEqual(["'self'"]);
    const init = await request(t.app).get('/docs/swagger-ui-init.js');
    expect(init.text).toContain('"url": "/openapi.json"');
  });

  it('announces (start banner) the origin that its /openapi.json names', async () => {
    const check = async (config: Partial<Config>) => {
      t = await createTestApp({ config });
      const server = t.app.listen(0, '127.0.0.1');
      await new Promise((resolve) => server.once('listening', resolve));
      try {
        const port = (server.address() as AddressInfo).port;
        const origin = announcedOrigin({ ...t.ctx.config }, port);
        // the browser's view: /docs opened at the announced origin (a configured public URL is not served here)
        const url = config.publicBaseUrlSet ? `http://127.0.0.1:${port}` : origin;
        const res = await fetch(`${url}/openapi.json`);
        return { origin, served: ((await res.json()) as { servers: { url: string }[] }).servers[0]!.url, port };
      } finally {
        await new Promise((resolve) => server.close(resolve));
        await t.close();
        t = undefined;
      }
    };
    const local = await check({ publicBaseUrl: 'http://localhost:3000' });
    expect(local.origin).toBe(`http://localhost:${local.port}`);
    expect(local.served).toBe(local.origin);
    const configured = await check({ publicBaseUrl: 'https://api.bazaar.example', publicBaseUrlSet: true });
    expect(configured.served).toBe('https://api.bazaar.example');
    expect(configured.origin).toBe(configured.served);
  });
});
