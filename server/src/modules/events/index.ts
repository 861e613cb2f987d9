/**
 * Events module wiring (issue 11): the outbox reads, GET /events and the SSE hub.
 *
 *   const events = createEventsModule({ db, log });
 *   await events.start();   // the hub follows the events table
 *   await events.stop();    // ends every open stream
 */
import type { PrismaClient } from '../../generated/prisma/client.js';
import { createEventsRepo } from './events.repo.js';
import { createEventsService } from './events.service.js';
import { EventHub } from './events.stream.js';

export { appendEvents, notifyAppended, outboxSignal, withEvents, type NewEvent, type SqlClient } from './outbox.js';
export { createEventsRepo, toEventDto, matches, type EventRecord, type EventViewer, type EventFilter } from './events.repo.js';
export { createEventsService, filterOf, parsePosition, viewerOf, type EventsService } from './events.service.js';
export { EventHub } from './events.stream.js';
export { EventRetention, type EventRetentionOptions, type RetentionPass } from './events.retention.js';

type Log = { info: (...a: unknown[]) => void; warn: (...a: unknown[]) => void; error: (...a: unknown[]) => void };

export function createEventsModule(o: { db: PrismaClient; log?: Log; pollMs?: number }) {
  const repo = createEventsRepo(o.db);
  const service = createEventsService({ repo });
  const hub = new EventHub(repo, { pollMs: o.pollMs, log: o.log });
  return {
    repo,
    service,
    hub,
    http: { service, hub },
    async start() {
      await hub.start();
    },
    async stop() {
      await hub.stop();
    },
  };
}

export type EventsModule = ReturnType<typeof createEventsModule>;
