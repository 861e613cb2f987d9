/**
 * Slowloris guard of server/src/http/server.ts: a connection that never sends a byte is closed by the server
 * itself after twice the headers timeout, whatever Node's headers-timeout checker does (here it is made to
 * check only once a minute, so the server's own timer is the only thing that can close the socket in time).
 */
import net from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpServer, type HttpServer } from '../server/src/http/server.js';
import { silentLog } from '../server/src/lib/log.js';
import { rawExchange } from './helpers/raw-http.js';

let http: HttpServer;
let port: number;

beforeAll(async () => {
  const app = express();
  app.get('/ok', (_req, res) => void res.json({ ok: true }));
  http = createHttpServer(app, { headersTimeoutMs: 500, requestTimeoutMs: 1000, keepAliveTimeoutMs: 5000, maxConnections: 8, timeoutCheckIntervalMs: 60_000 } as never, silentLog as never);
  await new Promise<void>((resolve) => http.server.listen(0, '127.0.0.1', resolve));
  port = (http.server.address() as net.AddressInfo).port;
});

afterAll(async () => {
  http.destroyAll();
  await new Promise((r) => http.server.close(r));
});

/** Connect, optionally write, read until the server closes (or `waitMs` passes). */
const exchange = (data?: string, waitMs = 4000) => rawExchange(port, data, waitMs);

describe('connections that never send a byte', () => {
  it('are closed by the server after twice the headers timeout, not before the headers timeout', async () => {
    const all = await Promise.all([exchange(), exchange(), exchange()]);
    for (const r of all) {
      expect(r.closed, 'closed by the server').toBe(true);
      expect(r.ms).toBeGreaterThanOrEqual(900);
      expect(r.ms).toBeLessThan(3000);
    }
  });

  it('a request on a keep-alive connection is answered, and the connection is then kept for the keep-alive timeout, not the silent-connection timer', async () => {
    const r = await exchange('GET /ok HTTP/1.1\r\nHost: x\r\n\r\n', 2500);
    expect(r.text).toMatch(/^HTTP\/1\.1 200/);
    expect(r.closed, 'still open 2.5 s later (keep-alive 5 s)').toBe(false);
  });
});
