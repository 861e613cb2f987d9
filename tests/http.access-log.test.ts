/**
 * The access log: one short JSON line per request (id, method, URL, client, status, time), without
 * the request and response headers pino-http logged by default (issue 14: 1 124-byte lines, ~8 % of
 * the server's CPU under load).
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from './helpers/eventually';
import { createApp } from '../server/src/app.js';
import { createDb, type Db } from '../server/src/db/client.js';
import { freshPGlite } from './helpers/db.js';
import { testConfig } from './helpers/app.js';

describe('access log', () => {
  const lines: string[] = [];
  let db: Db;
  let app: ReturnType<typeof createApp>;
  beforeAll(async () => {
    db = await createDb({ pglite: await freshPGlite() });
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        cb();
      },
    });
    const config = testConfig({ publicMarketplace: true, logLevel: 'info' });
    app = createApp({ config, db: db.prisma, log: pino({ level: 'info' }, sink), chain: null, now: () => new Date() });
  });
  afterAll(async () => {
    await app.services.stop();
    await db.close();
  });

  it('logs id, method, URL, client, status and time, and no header', async () => {
    const res = await request(app)
      .get('/api/v1/categories')
      .set('X-Request-Id', 'req-access-log-1')
      .set('X-Some-Header', 'header-value-that-must-not-be-logged');
    expect(res.status).toBe(200);
    const line = await eventually(() => lines.find((l) => l.includes('req-access-log-1')), { what: 'the access log line of the request', timeoutMs: 2_000 });
    const entry = JSON.parse(line) as Record<string, unknown> & { req: Record<string, unknown>; res: Record<string, unknown> };
    expect(entry.req).toEqual({ id: 'req-access-log-1', method: 'GET', url: '/api/v1/categories', remote: expect.any(String) });
    expect(entry.res).toEqual({ status: 200 });
    expect(entry.responseTime).toEqual(expect.any(Number));
    expect(line).not.toContain('header-value-that-must-not-be-logged');
    expect(line).not.toMatch(/content-security-policy|x-request-id"/i); // no response headers either
    expect(line.length).toBeLessThan(400);
  });
  it('one line per request at the level of its status (info, warn for 4xx) with msg "request completed", and no child logger per request', async () => {
    const res = await request(app).get('/api/v1/listings/00000000-0000-4000-8000-000000000000').set('X-Request-Id', 'req-access-log-404');
    expect(res.status).toBe(404);
    const line = await eventually(() => lines.find((l) => l.includes('req-access-log-404')), { what: 'the access log line of the 404', timeoutMs: 2_000 });
    const entry = JSON.parse(line) as Record<string, unknown>;
    expect(entry).toMatchObject({ level: 40, msg: 'request completed', res: { status: 404 } });
    expect(lines.filter((l) => l.includes('req-access-log-404'))).toHaveLength(1);
    const ok = await request(app).get('/api/v1/categories').set('X-Request-Id', 'req-access-log-200');
    expect(ok.status).toBe(200);
    const okLine = await eventually(() => lines.find((l) => l.includes('req-access-log-200')), { what: 'the access log line of the 200', timeoutMs: 2_000 });
    expect(JSON.parse(okLine)).toMatchObject({ level: 30, msg: 'request completed', req: { id: 'req-access-log-200', method: 'GET', url: '/api/v1/categories' } });
  });
});
