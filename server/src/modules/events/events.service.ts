/**
 * Events rules: who sees which events (the parties of a resource; an admin credential every event) and
 * the cursor paging of GET /events (newest first; cursor = position of the last event of a page, bound
 * to the filters).
 */
import type { Event, EventType, ResourceType } from '@bazaar/contract';
import { DomainError } from '../../errors.js';
import { cursorKey, decodeCursor, encodeCursor } from '../../lib/cursor.js';
import { eventTypesFor, operatorEventTypes } from './events.scopes.js';
import type { AccessPrincipal } from '../auth/index.js';
import { toEventDto, type EventFilter, type EventsRepo, type EventViewer } from './events.repo.js';

/** The caller as the events module sees it: `scopes`, a personal access token's (they limit the event types it sees); absent: no scopes (all types). */
export type EventsPrincipal = AccessPrincipal & { scopes?: readonly string[] | null };

export interface ListEventsInput {
  limit: number;
  cursor?: string;
  type?: EventType[];
  resource_type?: ResourceType;
  resource_id?: string;
}

/**
 * The viewer of a principal: a service API key without a user sees nothing unless it is an admin key;
 * a personal access token only the event types its scopes may read (events.scopes.ts); an operator role adds
 * the events of what it operates (`operatorEventTypes`).
 */
export function viewerOf(p: EventsPrincipal): EventViewer {
  return { userId: p.userId, isAdmin: p.isAdmin, types: eventTypesFor(p.scopes), operatorTypes: operatorEventTypes(p.roles) };
}

export function filterOf(q: { type?: EventType[]; resource_type?: ResourceType; resource_id?: string }): EventFilter {
  return { types: q.type, resourceType: q.resource_type, resourceId: q.resource_id };
}

/** Parse a stream position (Last-Event-ID); 400 validation-error when it is not one. */
export function parsePosition(raw: string, where: string): bigint {
  if (!/^(0|[1-9]\d{0,18})$/.test(raw)) {
    throw new DomainError('validation-error', `${where} must be a position from an event (decimal digits).`, {
      errors: [{ path: where, message: 'must be a position from an event (decimal digits)', code: 'invalid_position' }],
    });
  }
  return BigInt(raw);
}

export function createEventsService(deps: { repo: EventsRepo }) {
  return {
    /** GET /events: a page of the caller's events, newest first. */
    async list(p: EventsPrincipal, q: ListEventsInput): Promise<{ data: Event[]; next_cursor: string | null }> {
      const filter = filterOf(q);
      const spec = { sort: 'position_desc', filters: { type: q.type?.join(','), rt: q.resource_type, rid: q.resource_id }, keys: [cursorKey.uint] };
      const before = q.cursor ? BigInt(String(decodeCursor(q.cursor, spec).keys[0])) : undefined;
      const rows = await deps.repo.listNewest(viewerOf(p), filter, q.limit + 1, before);
      const items = rows.slice(0, q.limit);
      const last = items[items.length - 1];
      return {
        data: items.map((e) => toEventDto(e)),
        next_cursor: rows.length > q.limit && last ? encodeCursor(spec, [last.seq.toString()], last.id) : null,
      };
    },
  };
}

export type EventsService = ReturnType<typeof createEventsService>;
