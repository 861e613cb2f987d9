/**
 * ts-rest handlers of `contract.events` (GET /events) and the Express handler of the SSE stream
 * (GET /events/stream: app.ts mounts it ahead of ts-rest, which cannot stream). Rules live in
 * modules/events.
 */
import type { RequestHandler } from 'express';
import { initServer } from '@ts-rest/express';
import { contract, StreamEventsQuery } from '@bazaar/contract';
import { DomainError } from '../errors.js';
import { credentialKey, type Principal } from '../modules/auth/index.js';
import { filterOf, parsePosition, viewerOf, type EventHub, type EventsService, type StreamAccess } from '../modules/events/index.js';

export interface EventsHttpDeps {
  service: EventsService;
  hub: EventHub;
  /** re-read a stream's credential (auth refreshPrincipal): null once it no longer authenticates */
  refresh?: (p: Principal) => Promise<Principal | null>;
}

function principalOf(req: unknown): Principal {
  const p = (req as { principal?: Principal }).principal;
  if (!p) throw new DomainError('unauthorized', 'No credential was sent.');
  return p;
}

/** A stream's access: its viewer, the per-user cap's key, and how to re-check the credential later. */
function accessOf(p: Principal, refresh: EventsHttpDeps['refresh']): StreamAccess {
  const credential = credentialKey(p);
  return {
    viewer: viewerOf(p),
    owner: p.userId ?? credential,
    credential,
    recheck: refresh
      ? async () => {
          const now = await refresh(p);
          return now ? viewerOf(now) : null;
        }
      : undefined,
  };
}

export function eventsHandlers(deps: EventsHttpDeps) {
  const s = initServer();
  return s.router(contract.events, {
    listEvents: async ({ query, req }) => ({ status: 200 as const, body: await deps.service.list(principalOf(req), query) }),
    // served by streamEventsHandler (mounted before the ts-rest routes); never reached
    streamEvents: async () => {
      throw new DomainError('route-not-found', 'The event stream is served by its own handler.');
    },
  });
}

/** GET /events/stream: validate, then hand the response to the hub (after the auth middleware). */
export function streamEventsHandler(deps: EventsHttpDeps): RequestHandler {
  return (req, res, next) => {
    try {
      const p = principalOf(req);
      const parsed = StreamEventsQuery.safeParse(req.query);
      if (!parsed.success) {
        throw new DomainError('validation-error', 'The query does not match the schema.', {
          errors: parsed.error.issues.map((i) => ({ path: ['query', ...i.path].join('.'), message: i.message, code: i.code })),
        });
      }
      const header = req.get('last-event-id');
      const last =
        header !== undefined && header.trim() !== ''
          ? parsePosition(header.trim(), 'headers.last-event-id')
          : parsed.data.last_event_id !== undefined
            ? parsePosition(parsed.data.last_event_id, 'query.last_event_id')
            : null;
      deps.hub.serve(req, res, accessOf(p, deps.refresh), filterOf(parsed.data), last).catch(next);
    } catch (err) {
      next(err);
    }
  };
}
