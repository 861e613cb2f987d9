/**
 * The web app's static mount (server/src/http/web-app.ts): the build in a directory is served at /app/
 * (index.html never cached, hashed assets cached for a year, /app redirected to /app/), under the same
 * Content-Security-Policy as the service (scripts and fetches from its own origin only); without a build,
 * /app is an unknown path (404 problem). The page itself is tested in tests/web.browser.test.ts.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from './helpers/app.js';

const dir = mkdtempSync(join(tmpdir(), 'bazaar-web-app-'));
let served: TestApp;
let none: TestApp;

beforeAll(async () => {
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>Bazaar</title><script type="module" src="/app/assets/index-abc.js"></script>');
  writeFileSync(join(dir, 'assets', 'index-abc.js'), 'console.log(1)');
  [served, none] = await Promise.all([createTestApp({ webAppDir: dir }), createTestApp({ webAppDir: null })]);
});

afterAll(async () => {
  await Promise.all([served?.close(), none?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('the web app at /app/', () => {
  it('serves index.html at /app/, never cached, under the service CSP', async () => {
    const res = await request(served.app).get('/app/');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.text).toContain('<title>Bazaar</title>');
    expect(res.headers['cache-control']).toBe('no-cache');
    const csp = res.headers['content-security-policy'];
    expect(csp).toMatch(/script-src 'self'/);
    expect(csp).toMatch(/connect-src 'self'/);
  });

  it('redirects /app to /app/ and caches hashed assets for a year', async () => {
    const redirect = await request(served.app).get('/app');
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe('/app/');
    const asset = await request(served.app).get('/app/assets/index-abc.js');
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toMatch(/javascript/);
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
  });

  it('a missing file under /app/ and /app without a build are 404 problems', async () => {
    for (const [t, path] of [[served, '/app/nope.js'], [none, '/app/']] as const) {
      const res = await request(t.app).get(path);
      expect(res.status, path).toBe(404);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });
});
