/**
 * Idempotency-Key middleware (IETF draft) on a bare Express app with the in-memory store:
 * 400 missing (when required), replay of the stored response, 422 different payload, 409 while the
 * first request runs, 5xx not stored, per-principal scope, 24 h expiry.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import request from 'supertest';
import { describe, expect, it, vi } from 'vitest';
import { DomainError } from '../server/src/errors.js';
import { IdempotencyLeases, MemoryIdempotencyStore, idempotency } from '../server/src/modules/idempotency/index.js';

function app(opts: { required?: boolean; now?: () => Date; leaseMs?: number; leases?: IdempotencyLeases } = {}) {
  const store = new MemoryIdempotencyStore();
  let calls = 0;
  let gate: Promise<void> | null = null;
  const waiters: Array<{ n: number; resolve: () => void }> = [];
  const a = express();
  a.use(express.json());
  a.use((req, _res, next) => {
    const u = req.get('x-user');
    if (u) (req as Request & { principal: unknown }).principal = { kind: 'user', userId: u, wallet: null, isAdmin: false, roles: [] };
    next();
  });
  a.post('/orders', idempotency({ store, required: opts.required ?? true, now: opts.now, leaseMs: opts.leaseMs, leases: opts.leases }), async (req, res, next) => {
    calls++;
    for (const w of waiters.filter((x) => calls >= x.n)) w.resolve();
    if (gate) await gate;
    if (req.body.fail === 500) return next(new Error('boom'));
    if (req.body.fail === 409) return next(new DomainError('listing-unavailable', 'taken'));
    res.status(201).location(`/orders/${calls}`).json({ n: calls, listing_id: req.body.listing_id });
  });
  a.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const e = err instanceof DomainError ? err : new DomainError('internal-error', 'unexpected');
    res.status(e.status).type('application/problem+json').send(JSON.stringify({ type: e.slug, status: e.status, detail: e.detail }));
  });
  return {
    a,
    store,
    calls: () => calls,
    /** resolves once the handler has been entered `n` times (a request holds its key from then on) */
    called: (n: number) => (calls >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }))),
    hold: () => {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return () => {
        gate = null;
        release();
      };
    },
  };
}

const post = (a: express.Express, key: string | null, body: object, userId = 'u1') => {
  const r = request(a).post('/orders').set('x-user', userId).send(body);
  return key === null ? r : r.set('Idempotency-Key', key);
};

describe('Idempotency-Key', () => {
  it('400 idempotency-key-missing when the route requires it; optional routes just run', async () => {
    const t = app();
    const r = await post(t.a, null, { listing_id: 'a' });
    expect(r.status).toBe(400);
    expect(r.body.type).toBe('idempotency-key-missing');
    const o = app({ required: false });
    expect((await post(o.a, null, { listing_id: 'a' })).status).toBe(201);
    expect((await post(o.a, null, { listing_id: 'a' })).status).toBe(201);
    expect(o.calls()).toBe(2);
  });

  it('replays the stored response for the same key and body (the handler runs once)', async () => {
    const t = app();
    const first = await post(t.a, 'k-1', { listing_id: 'a', x: 1 });
    const again = await post(t.a, 'k-1', { x: 1, listing_id: 'a' }); // key order does not matter
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['location']).toBe(first.headers['location']);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(t.calls()).toBe(1);
  });

  it('422 idempotency-key-reused for a different body with the same key', async () => {
    const t = app();
    await post(t.a, 'k-2', { listing_id: 'a' });
    const r = await post(t.a, 'k-2', { listing_id: 'b' });
    expect(r.status).toBe(422);
    expect(r.body.type).toBe('idempotency-key-reused');
  });

  it('409 idempotency-key-in-use while the first request is still running', async () => {
    const t = app();
    const release = t.hold();
    const first = post(t.a, 'k-3', { listing_id: 'a' }).then((r) => r);
    await t.called(1);
    const second = await post(t.a, 'k-3', { listing_id: 'a' });
    expect(second.status).toBe(409);
    expect(second.body.type).toBe('idempotency-key-in-use');
    // the seconds left on the first request's lease (10 s by default); was a fixed 1 before leases
    expect(second.headers['retry-after']).toBe('10');
    release();
    expect((await first).status).toBe(201);
    expect((await post(t.a, 'k-3', { listing_id: 'a' })).headers['idempotent-replayed']).toBe('true');
  });

  it('4xx answers are replayed; 5xx answers free the key for a retry', async () => {
    const t = app();
    expect((await post(t.a, 'k-4', { listing_id: 'a', fail: 409 })).status).toBe(409);
    const replay = await post(t.a, 'k-4', { listing_id: 'a', fail: 409 });
    expect(replay.status).toBe(409);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((await post(t.a, 'k-5', { listing_id: 'a', fail: 500 })).status).toBe(500);
    expect((await post(t.a, 'k-5', { listing_id: 'a', fail: 500 })).headers['idempotent-replayed']).toBeUndefined();
    expect(t.calls()).toBe(3);
  });

  it('keys are scoped per principal and expire after 24 h', async () => {
    let now = Date.now();
    const t = app({ now: () => new Date(now) });
    await post(t.a, 'shared', { listing_id: 'a' }, 'alice');
    const bob = await post(t.a, 'shared', { listing_id: 'b' }, 'bob');
    expect(bob.status).toBe(201);
    expect(bob.headers['idempotent-replayed']).toBeUndefined();
    now += 24 * 3600 * 1000 + 1;
    const later = await post(t.a, 'shared', { listing_id: 'c' }, 'alice');
    expect(later.status).toBe(201);
    expect(t.calls()).toBe(3);
  });

  it('a key whose request died is taken over once its lease lapsed; the live holder keeps renewing it', async () => {
    // a manual clock: the middleware reads `now`, the renewals run on fake intervals moved with it
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    let now = Date.now();
    const tick = async (ms: number) => {
      for (let left = ms; left > 0; left -= 10) {
        now += 10;
        await vi.advanceTimersByTimeAsync(10);
      }
    };
    try {
      const leases = new IdempotencyLeases();
      const t = app({ leaseMs: 150, leases, now: () => new Date(now) });
      const release = t.hold();
      const first = post(t.a, 'k-lease', { listing_id: 'a' }).then((r) => r);
      await t.called(1);
      await tick(400);
      // alive: the lease was renewed past its initial 150 ms
      const blocked = await post(t.a, 'k-lease', { listing_id: 'a' });
      expect(blocked.status).toBe(409);
      expect(Number(blocked.headers['retry-after'])).toBe(1);
      expect(t.calls()).toBe(1);
      // the process dies: nothing renews the lease any more
      leases.stopAll();
      await tick(250);
      const releaseTaker = t.hold();
      const racing = [post(t.a, 'k-lease', { listing_id: 'a' }).then((r) => r), post(t.a, 'k-lease', { listing_id: 'a' }).then((r) => r)];
      await t.called(2); // the taker holds the key and runs
      // the dead request's late answer is not stored over the taker's
      release();
      expect((await first).status).toBe(201);
      releaseTaker();
      const [a, b] = await Promise.all(racing);
      // of two retries racing for the lapsed key, one takes it over and runs, the other is told to wait
      expect([a.status, b.status].sort()).toEqual([201, 409]);
      const taker = a.status === 201 ? a : b;
      const replay = await post(t.a, 'k-lease', { listing_id: 'a' });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body).toEqual(taker.body);
      expect(t.calls()).toBe(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it('rejects malformed keys', async () => {
    const t = app();
    const r = await post(t.a, 'x'.repeat(256), { listing_id: 'a' });
    expect(r.status).toBe(400);
    expect(r.body.type).toBe('validation-error');
  });
});
