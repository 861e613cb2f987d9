/**
 * Events across replicas (issue 14): a commit on one replica wakes the other replicas' event hubs
 * (and webhook workers) through PostgreSQL LISTEN/NOTIFY instead of their next poll. Runs when
 * TEST_DATABASE_URL is set (CI sets it).
 *
 * "Replica B" is an events module on its own Prisma client with a 10-minute poll and the outbox
 * listener; "replica A" writes events with `appendEvents` in its own transaction and does NOT emit the
 * in-process signal (another process would not reach B's memory), so only the database can wake B.
 * Then the listener's connection is killed on the server: it reconnects, and catches up what was
 * committed while it was away.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../server/src/db/client.js';
import { appendEvents } from '../server/src/modules/events/outbox.js';
import { createEventsModule, type EventRecord, type EventsModule } from '../server/src/modules/events/index.js';
import { freshPostgres, TEST_DATABASE_URL } from './helpers/db.js';
import { eventually } from './helpers/eventually.js';

const ev = (id: string) => ({ type: 'listing.updated' as const, resourceType: 'listing' as const, resourceId: id, audience: [], data: {} });

describe.skipIf(!TEST_DATABASE_URL)('outbox LISTEN/NOTIFY across replicas', () => {
  let database: Awaited<ReturnType<typeof freshPostgres>>;
  let a: Db;
  let b: Db;
  let replicaB: EventsModule;
  const seen: EventRecord[] = [];

  beforeAll(async () => {
    database = await freshPostgres();
    a = await createDb({ databaseUrl: database.url });
    b = await createDb({ databaseUrl: database.url });
    replicaB = createEventsModule({ db: b.prisma, pollMs: 600_000, databaseUrl: database.url });
    replicaB.hub.onEvent((e) => seen.push(e));
    await replicaB.start();
    await eventually(() => replicaB.listener!.listening, { what: 'the listener', timeoutMs: 10_000, intervalMs: 10 });
  });

  afterAll(async () => {
    await replicaB?.stop();
    await a?.close();
    await b?.close();
    await database?.drop();
  });

  const writeOnA = (id: string) => a.prisma.$transaction(async (tx) => appendEvents(tx, [ev(id)]));

  it("replica A's commit reaches replica B's hub at once, not at its poll 10 minutes away; a rollback notifies nothing", async () => {
    const id = randomUUID();
    await writeOnA(id);
    await eventually(() => seen.some((e) => e.resourceId === id), { what: "B's hub to read A's event", timeoutMs: 10_000, intervalMs: 10 });

    const rolledBack = randomUUID();
    await a.prisma
      .$transaction(async (tx) => {
        await appendEvents(tx, [ev(rolledBack)]);
        throw new Error('abort');
      })
      .catch(() => undefined);
    const after = randomUUID();
    await writeOnA(after);
    await eventually(() => seen.some((e) => e.resourceId === after), { what: 'the next event', timeoutMs: 10_000, intervalMs: 10 });
    expect(seen.some((e) => e.resourceId === rolledBack)).toBe(false);
  });

  it('the listener connection killed by the server: it reconnects and catches up what was committed meanwhile', async () => {
    const admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    try {
      const killed = await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'bazaar-outbox-listener' AND datname = current_database()",
      );
      expect(killed.rowCount).toBe(1);
      await eventually(() => !replicaB.listener!.listening, { what: 'the listener to notice', timeoutMs: 10_000, intervalMs: 10 });
      const meanwhile = randomUUID();
      await writeOnA(meanwhile); // nobody listens now
      await eventually(() => replicaB.listener!.listening, { what: 'the listener to reconnect', timeoutMs: 10_000, intervalMs: 10 });
      await eventually(() => seen.some((e) => e.resourceId === meanwhile), { what: 'the catch-up read after reconnecting', timeoutMs: 10_000, intervalMs: 10 });
      const later = randomUUID();
      await writeOnA(later);
      await eventually(() => seen.some((e) => e.resourceId === later), { what: 'notifications after reconnecting', timeoutMs: 10_000, intervalMs: 10 });
    } finally {
      await admin.end();
    }
  });
});
