/**
 * Events module wiring (issue 11): the outbox reads, GET /events and the SSE hub.
 *
 *   const events = createEventsModule({ db, log });
 *   await events.start();   // the hub follows the events table
 *   await events.stop();    // ends every open stream
 */
import type { Explorer } from '../../lib/explorer.js';
import type { EventEmitter } from 'node:events';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { createEventsRepo } from './events.repo.js';
import { createEventsService } from './events.service.js';
import { EventHub } from './events.stream.js';
import { OutboxListener } from './outbox-listener.js';
import type { Log } from '../../lib/log.js';

export { appendEvents, notifyAppended, outboxSignal, withEvents, type NewEvent, type SqlClient } from './outbox.js';
export { createEventsRepo, toEventDto, matches, type EventRecord, type EventViewer, type EventFilter } from './events.repo.js';
export { createEventsService, filterOf, parsePosition, viewerOf, type EventsService } from './events.service.js';
export { EventHub, type EventHubOptions, type StreamAccess } from './events.stream.js';
export { EVENT_READ_SCOPES, eventTypesFor, resourceTypesFor } from './events.scopes.js';
export { EventRetention, type EventRetentionOptions, type RetentionPass } from './events.retention.js';
export { OutboxListener } from './outbox-listener.js';

/** Stream limits (EVENTS_STREAM_* variables); absent fields: contract STREAM_DEFAULTS. */
export interface StreamSettings {
  maxPerUser?: number;
  replayMax?: number;
  recheckMs?: number;
}

/**
 * `databaseUrl` (PostgreSQL): also LISTEN for other replicas' commits (OutboxListener), so their
 * events reach this process's streams and webhook worker at once rather than at the next poll.
 * `credentialChanges`: emits `'changed'` with a credential key when one is revoked on this process (auth
 * `credentialSignal`): the streams of that credential are re-checked at once.
 */
export function createEventsModule(o: {
  db: PrismaClient;
  log?: Log;
  pollMs?: number;
  databaseUrl?: string;
  stream?: StreamSettings;
  credentialChanges?: EventEmitter;
  /** explorer links in the streamed events (lib/explorer.ts) */
  explorer?: Pick<Explorer, 'explorerUrl'>;
}) {
  const repo = createEventsRepo(o.db);
  const service = createEventsService({ repo });
  const hub = new EventHub(repo, { pollMs: o.pollMs, log: o.log, ...o.stream, ...(o.explorer ? { explorer: o.explorer } : {}) });
  const onChanged = (key: string) => {
    void hub.revalidate(key).catch((err) => o.log?.error({ err }, 'event stream re-check failed'));
  };
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
      o.credentialChanges?.off('changed', onChanged);
      o.credentialChanges?.on('changed', onChanged);
    },
    async stop() {
      o.credentialChanges?.off('changed', onChanged);
      await listener?.stop();
      await hub.stop();
    },
  };
}

export type EventsModule = ReturnType<typeof createEventsModule>;
