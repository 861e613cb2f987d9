/**
 * The HTTP server's socket limits on the real server process (issue 9 item 7, and the socket-level
 * cases of item 8): configured through HTTP_* env, as an operator sets them. Connections that never
 * send a byte, slow headers and bodies shorter than their Content-Length are closed with a 408
 * problem; idle keep-alive connections close after the keep-alive timeout; connections over the cap
 * are refused; URLs and headers over 16 kB get a 431 problem+json instead of Node's bare status line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migratedDataDir } from './helpers/db.js';
import { freePort } from './helpers/ports.js';
import { rawExchange as rawConnection } from './helpers/raw-http.js';

const REPO = path.resolve(__dirname, '..');
let child: ChildProcess;
let port: number;
let dataDir: string;
let output = '';

/** Limits small enough to observe in a test; the defaults are documented in server/src/config.ts. */
const LIMITS = {
  HTTP_HEADERS_TIMEOUT_MS: '1000',
  HTTP_REQUEST_TIMEOUT_MS: '2000',
  HTTP_KEEP_ALIVE_TIMEOUT_MS: '800',
  HTTP_MAX_CONNECTIONS: '8',
  HTTP_TIMEOUT_CHECK_INTERVAL_MS: '100',
};

/** Open a raw connection to the server under test (tests/helpers/raw-http.ts). */
const rawExchange = (data?: string, waitMs = 10_000) => rawConnection(port, data, waitMs);

function problemOf(raw: string): { status: number; contentType: string; body: Record<string, unknown> } {
  const [head, body] = raw.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head!)?.[1]);
  const contentType = /content-type: ([^\r\n]+)/i.exec(head!)?.[1] ?? '';
  return { status, contentType, body: JSON.parse(body!) };
}

beforeAll(async () => {
  // a copy of the migrated DATA_DIR template: the server opens a ready database
  dataDir = await migratedDataDir('bazaar-limits-');
  port = await freePort();
  child = spawn(process.execPath, ['--import', 'tsx', 'server/src/main.ts'], {
    cwd: REPO,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      DATABASE_URL: '',
      PORT: String(port),
      HOST: '127.0.0.1',
      SERVICE_KEYPAIR_PATH: path.join(dataDir, 'no-keypair.json'),
      CURRENCIES: 'USDC:Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB:6',
      LOG_LEVEL: 'warn',
      ...LIMITS,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const end = Date.now() + 60_000;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) =>
      http
        .get({ host: '127.0.0.1', port, path: '/healthz', agent: false }, (res) => {
          res.resume();
          resolve(res.statusCode === 200);
        })
        .on('error', () => resolve(false)),
    );
    if (ok) break;
    if (Date.now() > end) throw new Error(`server did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 100));
  }
});

afterAll(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe('HTTP server limits (HTTP_* configuration)', () => {
  it('connections that never send a byte are closed after the headers timeout, at most twice it, never before it', async () => {
    // several at once: fresh sockets get fresh parsers, which Node's headers-timeout checker alone never sees
    // (a socket reusing a pooled parser is closed by that checker after one headers timeout, the others by the server's timer)
    const all = await Promise.all([rawExchange(undefined), rawExchange(undefined), rawExchange(undefined), rawExchange(undefined)]);
    for (const r of all) {
      expect(r.closed).toBe(true);
      expect(r.ms).toBeGreaterThanOrEqual(900);
      expect(r.ms).toBeLessThan(5000);
    }
  });

  it('headers that never finish: 408 request-timeout problem, connection closed', async () => {
    const r = await rawExchange('GET /api/v1/categories HTTP/1.1\r\nHost: x\r\n');
    expect(r.closed).toBe(true);
    const p = problemOf(r.text);
    expect(p.status).toBe(408);
    expect(p.contentType).toMatch(/^application\/problem\+json/);
    expect(p.body.type).toBe('https://bazaar.dev/problems/request-timeout');
  });

  it('a body shorter than its Content-Length: 408 problem when the request timeout passes', async () => {
    const r = await rawExchange(
      'POST /api/v1/auth/request_login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"address"',
    );
    expect(r.closed).toBe(true);
    expect(problemOf(r.text).status).toBe(408);
  });

  it('a Content-Length over the body limit is refused at once with 413', async () => {
    const r = await rawExchange(
      'POST /api/v1/auth/request_login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 10485760\r\nConnection: close\r\n\r\n{"a":1}',
    );
    expect(problemOf(r.text).status).toBe(413);
  });

  it('an idle keep-alive connection is closed after the keep-alive timeout', async () => {
    const r = await rawExchange('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(r.closed).toBe(true);
    expect(r.text).toMatch(/^HTTP\/1\.1 200/);
    expect(r.text).toMatch(/Keep-Alive: timeout=0?\.?\d/i);
  });

  it('URLs and headers over 16 kB: 431 header-fields-too-large problem+json', async () => {
    for (const req of [
      `GET /api/v1/marketplace/search?query=${'a'.repeat(17 * 1024)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(17 * 1024)}\r\n\r\n`,
    ]) {
      const r = await rawExchange(req);
      const p = problemOf(r.text);
      expect(p.status).toBe(431);
      expect(p.contentType).toMatch(/^application\/problem\+json/);
      expect(p.body).toMatchObject({ type: 'https://bazaar.dev/problems/header-fields-too-large', status: 431 });
      expect(r.closed).toBe(true);
    }
  });

  it('connections over HTTP_MAX_CONNECTIONS are closed at once; the open ones keep working', async () => {
    const max = Number(LIMITS.HTTP_MAX_CONNECTIONS);
    const open: net.Socket[] = [];
    try {
      for (let i = 0; i < max; i++) {
        const s = net.connect(port, '127.0.0.1');
        s.on('error', () => undefined);
        await new Promise((r) => s.once('connect', r));
        open.push(s);
      }
      await new Promise((r) => setTimeout(r, 100));
      const extra = await rawExchange('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n', 800);
      expect(extra.closed).toBe(true);
      expect(extra.text).toBe('');
      // one of the accepted connections is served
      const reply = await new Promise<string>((resolve) => {
        let text = '';
        open[0]!.on('data', (d) => (text += d));
        open[0]!.on('close', () => resolve(text));
        open[0]!.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      });
      expect(reply).toMatch(/^HTTP\/1\.1 200/);
    } finally {
      for (const s of open) s.destroy();
    }
  });
});
