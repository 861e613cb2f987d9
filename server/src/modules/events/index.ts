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
import { OutboxListener } from './outbox-listener.js';

export { appendEvents, notifyAppended, outboxSignal, withEvents, type NewEvent, type SqlClient } from './outbox.js';
export { createEventsRepo, toEventDto, matches, type EventRecord, type EventViewer, type EventFilter } from './events.repo.js';
export { createEventsService, filterOf, parsePosition, viewerOf, type EventsService } from './events.service.js';
export { EventHub } from './events.stream.js';
export { EventRetention, type EventRetentionOptions, type RetentionPass } from './events.retention.js';
export { OutboxListener } from './outbox-listener.js';

type Log = { info: (...a: unknown[]) => void; warn: (...a: unknown[]) => void; error: (...a: unknown[]) => void };

/**
 * `databaseUrl` (PostgreSQL): also LISTEN for other replicas' commits (OutboxListener), so their
 * events reach this process's streams and webhook worker at once rather than at the next poll.
 */
export function createEventsModule(o: { db: PrismaClient; log?: Log; pollMs?: number; databaseUrl?: string }) {
  const repo = createEventsRepo(o.db);
  const service = createEventsService({ repo });
  const hub = new EventHub(repo, { pollMs: o.pollMs, log: o.log });
  const listener = o.databaseUrl ? new OutboxListener({ connectionString: o.databaseUrl, log: o.log }) : null;
  return {
    repo,
    service,
    hub,
    listener,
    http: { service, hub },
    async start() {
      await hub.start();
      listener?.start();
    },
    async stop() {
      await listener?.stop();
      await hub.stop();
    },
  };
}

export type EventsModule = ReturnType<typeof createEventsModule>;
