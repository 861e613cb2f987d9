/**
 * Issue 27 item 4: the routing decision of public reads between the primary and a standby
 * (server/src/db/read-routing.ts), with a fake lag source.
 */
import { describe, expect, it } from 'vitest';
import type { PrismaClient } from '../server/src/generated/prisma/client.js';
import { ReadRouter, type LagSample } from '../server/src/db/read-routing.js';
import { runWithContext, withSystemActor, type RequestContext } from '../server/src/lib/request-context.js';

const primary = { name: 'primary' } as unknown as PrismaClient;
const standby = { name: 'standby' } as unknown as PrismaClient;

/** A router over a fake lag source that answers `lag` (or throws when it is an Error). */
async function router(lag: number | null | Error, opts: { enabled?: boolean; maxLagMs?: number; standby?: PrismaClient | null } = {}) {
  const r = new ReadRouter({
    enabled: opts.enabled ?? true,
    maxLagMs: opts.maxLagMs ?? 1000,
    primary,
    standby: opts.standby === undefined ? standby : opts.standby,
    sample: async (): Promise<LagSample> => {
      if (lag instanceof Error) throw lag;
      return { lagMs: lag, inRecovery: true };
    },
  });
  await r.sampleOnce();
  return r;
}

const anonymousGet: RequestContext = { requestId: 'r1', actor: null, method: 'GET' };
const pick = (r: ReadRouter, ctx: RequestContext = anonymousGet) => runWithContext({ ...ctx }, () => (r.readDb() === standby ? 'standby' : 'primary'));

describe('standby reads: the routing decision (db/read-routing.ts)', () => {
  it('an anonymous GET goes to the standby while its replay lag is within DATABASE_STANDBY_MAX_LAG_MS', async () => {
    expect(pick(await router(0))).toBe('standby');
    expect(pick(await router(999))).toBe('standby');
    expect(pick(await router(1000))).toBe('standby');
  });

  it('a lag past the bound, or an unknown lag (none yet, a failed sample, nothing replayed), sends reads to the primary', async () => {
    expect(pick(await router(1001))).toBe('primary');
    expect(pick(await router(null))).toBe('primary');
    expect(pick(await router(new Error('connection refused')))).toBe('primary');
    const fresh = new ReadRouter({ enabled: true, maxLagMs: 1000, primary, standby, sample: async () => ({ lagMs: 0, inRecovery: true }) });
    expect(pick(fresh)).toBe('primary'); // before the first sample
  });

  it('a standby that falls behind and catches up moves reads back and forth with each sample', async () => {
    let lag = 50;
    const r = new ReadRouter({ enabled: true, maxLagMs: 200, primary, standby, sample: async () => ({ lagMs: lag, inRecovery: true }) });
    await r.sampleOnce();
    expect(pick(r)).toBe('standby');
    lag = 5_000;
    await r.sampleOnce();
    expect(pick(r)).toBe('primary');
    lag = 10;
    await r.sampleOnce();
    expect(pick(r)).toBe('standby');
    expect(r.served).toEqual({ primary: 1, standby: 2 });
  });

  it('a run of failed samples is reported once, and again after a good sample', async () => {
    let fail = true;
    const told: unknown[] = [];
    const r = new ReadRouter({
      enabled: true,
      maxLagMs: 1000,
      primary,
      standby,
      sample: async () => {
        if (fail) throw new Error('standby down');
        return { lagMs: 0, inRecovery: true };
      },
      onSampleError: (e) => told.push(e),
    });
    await r.sampleOnce();
    await r.sampleOnce();
    expect(told).toHaveLength(1);
    fail = false;
    await r.sampleOnce();
    expect(pick(r)).toBe('standby');
    fail = true;
    await r.sampleOnce();
    expect(told).toHaveLength(2);
    expect(pick(r)).toBe('primary');
  });

  it('the setting off (or no standby client) reads from the primary whatever the lag', async () => {
    expect(pick(await router(0, { enabled: false }))).toBe('primary');
    expect(pick(await router(0, { standby: null }))).toBe('primary');
  });

  it('a credentialed read (an authenticated actor) goes to the primary: a seller reads her own writes', async () => {
    const r = await router(0);
    expect(pick(r, { requestId: 'r2', actor: { type: 'user', id: 'u1', userId: 'u1' }, method: 'GET' })).toBe('primary');
    expect(pick(r, { requestId: 'r3', actor: { type: 'api_key', id: 'k1', userId: null }, method: 'GET' })).toBe('primary');
  });

  it('a write request, a background loop and code outside any request read from the primary', async () => {
    const r = await router(0);
    expect(pick(r, { requestId: 'r4', actor: null, method: 'POST' })).toBe('primary'); // a blink buy reads the listing it orders
    expect(withSystemActor('reconciler', () => r.readDb())).toBe(primary);
    expect(r.readDb()).toBe(primary);
    expect(pick(r, { requestId: 'r5', actor: null, method: 'HEAD' })).toBe('standby');
  });
});
