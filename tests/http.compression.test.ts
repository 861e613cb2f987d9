/**
 * Compression (issue 23 item 5, server/src/http/compression.ts and http/web-app.ts):
 *  - JSON of at least 1 kB goes out brotli or gzip as Accept-Encoding asks, identity otherwise; smaller
 *    bodies raw; `Vary: Accept-Encoding` either way;
 *  - the event stream is never compressed (each event must arrive when written);
 *  - responses that carry a secret issued to the request (login JWT, personal access token, webhook
 *    secret) are never compressed (BREACH), whatever their size;
 *  - the web app's pre-compressed files (scripts/precompress.mjs, run by `npm run web:build`) are served
 *    with Content-Encoding, the original Content-Type and Vary, the file itself to identity clients.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contract } from '@bazaar/contract';
import { compressResponses, COMPRESSION_THRESHOLD_BYTES, SECRET_BEARING_ROUTES } from '../server/src/http/compression.js';
import { connectSse } from './helpers/sse.js';
import { API, createListing, setup, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';

/** A response as it came off the wire: status, headers and the body bytes undecoded. */
interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** GET/POST `path` on a listening server without any decoding (supertest's superagent unzips bodies). */
function rawRequest(server: Server, method: string, path: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const { port } = server.address() as { port: number };
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

async function listening(a: express.Express | TestApp['app']): Promise<Server> {
  const server = a.listen(0, '127.0.0.1');
  await new Promise<void>((r) => server.once('listening', () => r()));
  return server;
}
const closeServer = (s?: Server) => new Promise<void>((r) => (s ? s.close(() => r()) : r()));

const decode = (res: RawResponse): Buffer => {
  const enc = res.headers['content-encoding'];
  return enc === 'br' ? brotliDecompressSync(res.body) : enc === 'gzip' ? gunzipSync(res.body) : res.body;
};

let t: TestApp;
let app: TestApp['app'];
let alice: TestUser;
const web = mkdtempSync(join(tmpdir(), 'bazaar-precompressed-'));
const bundle = `export const words = ${JSON.stringify(Array.from({ length: 400 }, (_, i) => `word${i % 37}`))};\nconsole.log(words.length);\n`;
let served: TestApp;
let apiServer: Server;
let webServer: Server;

beforeAll(async () => {
  ({ t, app } = await setup());
  alice = await user(t);
  for (let i = 0; i < 4; i++) await createListing(app, alice, { title: `Logo design package number ${i}`, description: 'A logo, three rounds of changes, every file format. '.repeat(4) });
  mkdirSync(join(web, 'assets'));
  writeFileSync(join(web, 'index.html'), '<!doctype html><title>Bazaar</title><script type="module" src="/app/assets/index-abc.js"></script>');
  writeFileSync(join(web, 'assets', 'index-abc.js'), bundle);
  execFileSync(process.execPath, [join(__dirname, '..', 'scripts', 'precompress.mjs'), web], { encoding: 'utf8' });
  served = await (await import('./helpers/app.js')).createTestApp({ webAppDir: web });
  [apiServer, webServer] = await Promise.all([listening(app), listening(served.app)]);
});

afterAll(async () => {
  await Promise.all([closeServer(apiServer), closeServer(webServer)]);
  await Promise.all([t?.close(), served?.close()]);
  rmSync(web, { recursive: true, force: true });
});

describe('JSON responses', () => {
  const page = (accept: string) => rawRequest(apiServer, 'GET', `${API}/marketplace/listings?limit=20`, { ...alice.headers, 'accept-encoding': accept });

  it('above 1 kB: brotli or gzip as Accept-Encoding asks, identity otherwise; the same JSON; Vary: Accept-Encoding', async () => {
    const plain = await page('identity');
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(COMPRESSION_THRESHOLD_BYTES);
    expect(plain.headers.vary).toMatch(/Accept-Encoding/i);
    const json = JSON.parse(decode(plain).toString());
    for (const [accept, enc] of [['br', 'br'], ['gzip', 'gzip'], ['gzip, deflate, br', 'br'], ['br;q=0.1, gzip', 'gzip']] as const) {
      const res = await page(accept);
      expect(res.headers['content-encoding'], accept).toBe(enc);
      expect(res.headers.vary, accept).toMatch(/Accept-Encoding/i);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body.length, accept).toBeLessThan(plain.body.length / 2);
      expect(JSON.parse(decode(res).toString())).toEqual(json);
    }
  });

  it('below 1 kB: sent raw (Vary still set); /openapi.json above it is compressed', async () => {
    const small = await rawRequest(apiServer, 'GET', '/healthz', { 'accept-encoding': 'br, gzip' });
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.headers.vary).toMatch(/Accept-Encoding/i);
    const openapi = await rawRequest(apiServer, 'GET', '/openapi.json', { 'accept-encoding': 'gzip' });
    expect(openapi.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(decode(openapi).toString()).openapi).toMatch(/^3\./);
  });
});

describe('never compressed', () => {
  it('the event stream, even when the client accepts gzip and brotli', async () => {
    const { port } = apiServer.address() as { port: number };
    const sse = await connectSse(`http://127.0.0.1:${port}${API}/events/stream?last_event_id=0`, { ...alice.headers, 'accept-encoding': 'gzip, br' });
    try {
      expect(sse.status).toBe(200);
      expect(sse.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(sse.headers['content-encoding']).toBeUndefined();
      // the replay of alice's listing.created events arrives readable, event by event
      const got = await sse.waitFor(4, 10_000);
      expect(got.map((m) => m.event)).toContain('listing.created');
    } finally {
      sse.close();
    }
  });

  it('responses carrying a secret issued to the request (BREACH): login, personal access token, webhook secret', async () => {
    expect(SECRET_BEARING_ROUTES).toEqual([contract.auth.verifyLogin, contract.tokens.createToken, contract.webhooks.createWebhook, contract.webhooks.rotateWebhookSecret]);
    // a bare app with the middleware: the same 8 kB body on each secret-bearing path and on another path
    const bare = express();
    bare.use(compressResponses());
    const big = { secret: 'whsec_' + 'A'.repeat(40), filler: 'x'.repeat(8000) };
    bare.all('*', (_req, res) => res.json(big));
    const server = await listening(bare);
    try {
      for (const r of SECRET_BEARING_ROUTES) {
        const path = r.path.replace(/:(\w+)/g, '0d8f3c1e-7b2a-4c5d-9e6f-a1b2c3d4e5f6');
        const res = await rawRequest(server, r.method, path, { 'accept-encoding': 'gzip, br' });
        expect(res.headers['content-encoding'], path).toBeUndefined();
        expect(res.body.length).toBeGreaterThan(8000);
      }
      const other = await rawRequest(server, 'POST', `${API}/listings`, { 'accept-encoding': 'gzip, br' });
      expect(other.headers['content-encoding']).toBe('br');
    } finally {
      await closeServer(server);
    }
  });
});

describe('the web app: pre-compressed at build', () => {
  it('the build step writes .br and .gz next to the bundle (smaller files only)', () => {
    expect(existsSync(join(web, 'assets', 'index-abc.js.br'))).toBe(true);
    expect(existsSync(join(web, 'assets', 'index-abc.js.gz'))).toBe(true);
    // index.html is under 1 kB: left alone
    expect(existsSync(join(web, 'index.html.br'))).toBe(false);
    expect(brotliDecompressSync(readFileSync(join(web, 'assets', 'index-abc.js.br'))).toString()).toBe(bundle);
  });

  it('the bundle goes out br, gzip or identity with its JavaScript type, Vary and the year-long cache', async () => {
    const get = (accept: string) => rawRequest(webServer, 'GET', '/app/assets/index-abc.js', { 'accept-encoding': accept });
    for (const [accept, enc, file] of [
      ['gzip, deflate, br', 'br', 'index-abc.js.br'],
      ['gzip', 'gzip', 'index-abc.js.gz'],
      ['identity', undefined, 'index-abc.js'],
    ] as const) {
      const res = await get(accept);
      expect(res.status, accept).toBe(200);
      expect(res.headers['content-encoding'], accept).toBe(enc);
      expect(res.headers['content-type'], accept).toMatch(/^(text|application)\/javascript/);
      expect(res.headers.vary, accept).toMatch(/Accept-Encoding/i);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(Buffer.compare(res.body, readFileSync(join(web, 'assets', file))), accept).toBe(0);
      expect(decode(res).toString()).toBe(bundle);
    }
    const none = await rawRequest(webServer, 'GET', '/app/assets/index-abc.js');
    expect(none.headers['content-encoding']).toBeUndefined();
  });
});
