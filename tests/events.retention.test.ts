/**
 * Events retention (modules/events/events.retention.ts) on PGlite, and on PostgreSQL when
 * TEST_DATABASE_URL is set: old events go, except the newest of each resource and what the webhook
 * worker still needs; finished deliveries go with the same cutoff; per-resource sequences continue.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendEvents, createEventsRepo, EventRetention } from '../server/src/modules/events/index.js';
import { createWebhooksRepo } from '../server/src/modules/webhooks/index.js';
import { createTestApp, type TestApp } from './helpers/app.js';
import { dbBackends } from './helpers/shared-db.js';

const DAY = 86_400_000;

describe.each(dbBackends)('events retention on $name', ({ postgres }) => {
  let t: TestApp;
  const now = new Date();
  beforeAll(async () => {
    t = await createTestApp({ postgres });
  });
  afterAll(async () => {
    await t?.close();
  });

  /** append one listing event per resource id, `daysAgo` old; returns their positions */
  async function append(resourceIds: string[], daysAgo: number): Promise<bigint[]> {
    const db = t.ctx.db;
    const seqs: bigint[] = [];
    for (const id of resourceIds) {
      await db.$transaction((tx) => appendEvents(tx, [{ type: 'listing.updated', resourceType: 'listing', resourceId: id, audience: [], data: {} }]));
      const row = await db.event.findFirstOrThrow({ orderBy: { seq: 'desc' } });
      await db.event.update({ where: { seq: row.seq }, data: { createdAt: new Date(now.getTime() - daysAgo * DAY) } });
      seqs.push(row.seq);
    }
    return seqs;
  }

  const retention = (batch: number) => {
    const webhooks = createWebhooksRepo(t.ctx.db);
    return new EventRetention({
      repo: createEventsRepo(t.ctx.db),
      retentionDays: 30,
      holdBack: [() => webhooks.oldestNeededSeq()],
      alsoPurge: [(cutoff, n) => webhooks.purgeFinishedBefore(cutoff, n)],
      batch,
      now: () => now,
    });
  };
  const kept = async () => (await t.ctx.db.event.findMany({ orderBy: { seq: 'asc' } })).map((e) => e.seq);

  it('deletes old events but the newest of each resource and those a pending delivery or the fan-out still needs', async () => {
    const db = t.ctx.db;
    const [r1, r2, r3] = [randomUUID(), randomUUID(), randomUUID()];
    const [r1a, r1b, r1c, r2a, r3a, r3b] = await append([r1, r1, r1, r2, r3, r3], 40);
    const [r2b] = await append([r2], 1);
    const endpoint = await db.webhookEndpoint.create({ data: { url: 'https://hooks.example/x', secret: 'whsec_dGVzdA==', eventTypes: [] } });
    const delivery = (seq: bigint, status: string, daysAgo: number) =>
      db.webhookDelivery.create({
        data: { endpointId: endpoint.id, eventSeq: seq, eventId: randomUUID(), resourceKey: `listing:${r1}`, status, createdAt: new Date(now.getTime() - daysAgo * DAY) },
      });
    await delivery(r1a!, 'delivered', 40);
    await delivery(r1b!, 'failed', 40);
    const recentDone = await delivery(r2b!, 'delivered', 1);
    const pending = await delivery(r3a!, 'pending', 40);

    // the fan-out has not passed r1b yet: only r1a may go
    await db.$executeRaw`UPDATE webhook_dispatch_cursor SET last_seq = ${r1a} WHERE id = 1`;
    expect(await retention(100).runOnce()).toEqual({ events: 1, other: 2 });
    expect(await kept()).toEqual([r1b, r1c, r2a, r3a, r3b, r2b]);
    expect((await db.webhookDelivery.findMany()).map((d) => d.id).sort()).toEqual([recentDone.id, pending.id].sort());

    // fanned out: r1b and r2a go (one per DELETE with batch 1); r1c is r1's newest; the pending delivery holds r3a and after
    await db.$executeRaw`UPDATE webhook_dispatch_cursor SET last_seq = ${r2b} WHERE id = 1`;
    expect(await retention(1).runOnce()).toEqual({ events: 2, other: 0 });
    expect(await kept()).toEqual([r1c, r3a, r3b, r2b]);

    // delivered at last: r3a goes, r3b is r3's newest
    await db.webhookDelivery.update({ where: { id: pending.id }, data: { status: 'delivered', createdAt: new Date(now.getTime() - 40 * DAY) } });
    expect(await retention(100).runOnce()).toEqual({ events: 1, other: 1 });
    expect(await kept()).toEqual([r1c, r3b, r2b]);

    // the per-resource sequence continues after a purge
    await append([r1], 0);
    const r1Events = await db.event.findMany({ where: { resourceId: r1 }, orderBy: { seq: 'asc' } });
    expect(r1Events.map((e) => e.resourceSeq)).toEqual([3, 4]);
  });

  it('refuses a retention of 0 days (0 means keep forever: no job at all)', () => {
    expect(() => new EventRetention({ repo: createEventsRepo(t.ctx.db), retentionDays: 0 })).toThrow(RangeError);
  });
});
