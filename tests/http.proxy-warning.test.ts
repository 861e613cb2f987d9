/**
 * Behind a proxy with TRUST_PROXY=0 every client shares one login bucket (issue 20 item 9): the start-up
 * banner says where the client IP comes from, and the first request that arrives with X-Forwarded-For
 * while no proxy is trusted logs one warning (not one per request).
 */
import { Writable } from 'node:stream';
import { pino } from 'pino';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp } from '../server/src/app.js';
import { createDb, type Db } from '../server/src/db/client.js';
import { clientIpNote } from '../server/src/http/proxy-warning.js';
import { freshPGlite } from './helpers/db.js';
import { testConfig } from './helpers/app.js';

const WARNING = /X-Forwarded-For from a proxy that is not trusted/;
const opened: Array<{ app: ReturnType<typeof createApp>; db: Db }> = [];
afterEach(async () => {
  for (const { app, db } of opened.splice(0)) {
    await app.services.stop();
    await db.close();
  }
});

async function appWithLog(trustProxy: number) {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  const db = await createDb({ pglite: await freshPGlite() });
  const app = createApp({ config: testConfig({ trustProxy, logLevel: 'info' }), db: db.prisma, log: pino({ level: 'info' }, sink), chain: null, now: () => new Date() });
  opened.push({ app, db });
  const warnings = () => lines.filter((l) => WARNING.test(String(l.msg)));
  return { app, warnings };
}

describe('an untrusted proxy in front (TRUST_PROXY=0)', () => {
  it('the first request with X-Forwarded-For logs one warning naming the peer; later ones do not', async () => {
    const { app, warnings } = await appWithLog(0);
    expect((await request(app).get('/healthz')).status).toBe(200);
    expect(warnings()).toHaveLength(0); // no header, no warning
    for (const ip of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
      expect((await request(app).get('/healthz').set('x-forwarded-for', ip)).status).toBe(200);
    }
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]).toMatchObject({ level: 40, peer: expect.any(String), x_forwarded_for: '203.0.113.1' });
    expect(String(warnings()[0]!.msg)).toMatch(/shares one login rate-limit bucket; set TRUST_PROXY/);
  });

  it('no warning when a proxy is trusted', async () => {
    const { app, warnings } = await appWithLog(1);
    await request(app).get('/healthz').set('x-forwarded-for', '203.0.113.1');
    expect(warnings()).toHaveLength(0);
  });

  it('the start-up banner line says which client IP the limits use', () => {
    expect(clientIpNote(0)).toMatch(/TCP peer \(TRUST_PROXY=0\).*every client shares one login rate-limit bucket/);
    expect(clientIpNote(2)).toMatch(/X-Forwarded-For, 2 proxy hop\(s\) trusted/);
  });
});
