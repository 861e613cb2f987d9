/**
 * The outbox's ordering guarantee on a real PostgreSQL server (concurrent transactions; PGlite runs one
 * transaction at a time, so it cannot show the race). Runs when TEST_DATABASE_URL is set (CI sets it).
 *
 * Without the outbox lock, transaction A can draw seq n, B draw n+1 and commit first: a reader that
 * saw n+1 would never go back for n (the stream and the webhook fan-out read `seq > position`). With
 * it, B's insert waits for A's commit, so positions become visible in order.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvents } from '../server/src/modules/events/outbox.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { TEST_DATABASE_URL } from './helpers/db.js';

const ev = (id: string) => ({ type: 'listing.updated' as const, resourceType: 'listing' as const, resourceId: id, audience: [], data: {} });
const A = '00000000-0000-4000-8000-00000000000a';
const B = '00000000-0000-4000-8000-00000000000b';

describe.skipIf(!TEST_DATABASE_URL)('outbox ordering on PostgreSQL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ postgres: true });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a transaction that writes events after another one still open commits them after it: no position appears behind a reader', async () => {
    const db = t.ctx.db;
    let releaseA!: () => void;
    const holdA = new Promise<void>((r) => (releaseA = r));
    let aWrote!: () => void;
    const aHasWritten = new Promise<void>((r) => (aWrote = r));
    const txA = db.$transaction(
      async (tx) => {
        await appendEvents(tx, [ev(A)]);
        aWrote();
        await holdA; // A's events are written, its commit is late
      },
      { timeout: 20_000 },
    );
    await aHasWritten;
    let bCommitted = false;
    const txB = db.$transaction(async (tx) => appendEvents(tx, [ev(B)])).then(() => (bCommitted = true));
    // the event to wait for: B's session blocked on a lock (A's outbox lock), seen from the server's side
    const blocked = async () =>
      (
        await db.$queryRaw<Array<{ n: number }>>`
          SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`
      )[0]!.n;
    await expect.poll(blocked, { interval: 10, timeout: 10_000 }).toBe(1);
    // B waits for A: a reader now sees neither, not B alone
    expect(bCommitted).toBe(false);
    expect(await db.event.count()).toBe(0);
    releaseA();
    await Promise.all([txA, txB]);
    const rows = await db.event.findMany({ orderBy: { seq: 'asc' } });
    expect(rows.map((r) => r.resourceId)).toEqual([A, B]);
  });
});
