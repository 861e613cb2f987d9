/**
 * Events storage (table events, written by outbox.ts): reads for GET /events, the live stream and the
 * webhook fan-out. Positions are the `seq` column (commit order, see outbox.ts).
 */
import { withExplorerLinks, type Explorer } from '../../lib/explorer.js';
import { REVENUE_LEDGER_EVENTS, type Event, type EventType, type ResourceType } from '@bazaar/contract';
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { AccessPrincipal } from '../auth/index.js';

/**
 * Who reads: a user sees events whose audience holds them; an admin every event. `types`: the event
 * types the credential's scopes may read (events.scopes.ts `eventTypesFor`); absent or null = all.
 */
/** The event types the retention pass never deletes: the ledger of what the chain paid (reports). */
const LEDGER_TYPES: readonly string[] = [...REVENUE_LEDGER_EVENTS];

export interface EventViewer extends AccessPrincipal {
  types?: readonly EventType[] | null;
  /**
   * Event types this viewer sees beyond its audience because of an operator role (issue 25; events.scopes.ts
   * `operatorEventTypes`): a moderator the moderation events, an arbiter the dispute events. Absent: none.
   */
  operatorTypes?: readonly EventType[];
}

export interface EventFilter {
  types?: readonly EventType[];
  resourceType?: ResourceType;
  resourceId?: string;
}

/** An event row with its position (seq) as a bigint. */
export interface EventRecord {
  seq: bigint;
  id: string;
  type: EventType;
  resourceType: ResourceType;
  resourceId: string;
  resourceSeq: number;
  audience: string[];
  data: unknown;
  signature: string | null;
  createdAt: Date;
}

type Row = Prisma.EventGetPayload<object>;

const toRecord = (r: Row): EventRecord => ({
  seq: r.seq,
  id: r.id,
  type: r.type as EventType,
  resourceType: r.resourceType as ResourceType,
  resourceId: r.resourceId,
  resourceSeq: r.resourceSeq,
  audience: r.audience,
  data: r.data,
  signature: r.signature,
  createdAt: r.createdAt,
});

/**
 * The contract's Event JSON of a record. `explorer`: add the explorer links of its signatures and mints (the envelope's
 * `signature` -> `explorer_url`, the resource's in `data`), computed when the event is read, stream-sent or delivered
 * (lib/explorer.ts), so a payload is the resource as the API renders it and no link is stored.
 */
export function toEventDto(e: EventRecord, explorer?: Pick<Explorer, 'explorerUrl'>): Event {
  const dto = {
    type: e.type,
    resource_type: e.resourceType,
    event_id: e.id,
    position: e.seq.toString(),
    resource_id: e.resourceId,
    sequence: e.resourceSeq,
    signature: e.signature,
    created_at: e.createdAt.toISOString(),
    data: e.data,
  } as Event;
  return explorer ? withExplorerLinks(dto, explorer) : dto;
}

/** Whether `viewer` may see `e` and it passes `f`. */
export function matches(e: EventRecord, viewer: EventViewer | null, f: EventFilter = {}): boolean {
  if (viewer && !viewer.isAdmin && !(viewer.userId && e.audience.includes(viewer.userId)) && !viewer.operatorTypes?.includes(e.type)) return false;
  if (viewer?.types && !viewer.types.includes(e.type)) return false;
  if (f.types?.length && !f.types.includes(e.type)) return false;
  if (f.resourceType && e.resourceType !== f.resourceType) return false;
  if (f.resourceId && e.resourceId !== f.resourceId) return false;
  return true;
}

function where(viewer: EventViewer | null, f: EventFilter): Prisma.EventWhereInput[] {
  const and: Prisma.EventWhereInput[] = [];
  if (viewer && !viewer.isAdmin) {
    const own: Prisma.EventWhereInput = viewer.userId ? { audience: { has: viewer.userId } } : { seq: { lt: 0n } };
    and.push(viewer.operatorTypes?.length ? { OR: [own, { type: { in: [...viewer.operatorTypes] } }] } : own);
  }
  if (viewer?.types) and.push({ type: { in: [...viewer.types] } });
  if (f.types?.length) and.push({ type: { in: [...f.types] } });
  if (f.resourceType) and.push({ resourceType: f.resourceType });
  if (f.resourceId) and.push({ resourceId: f.resourceId });
  return and;
}

export function createEventsRepo(db: PrismaClient) {
  return {
    /** Newest first, before position `beforeSeq` (exclusive) when given. */
    async listNewest(viewer: EventViewer, f: EventFilter, limit: number, beforeSeq?: bigint): Promise<EventRecord[]> {
      const and = where(viewer, f);
      if (beforeSeq !== undefined) and.push({ seq: { lt: beforeSeq } });
      const rows = await db.event.findMany({ where: { AND: and }, orderBy: { seq: 'desc' }, take: limit });
      return rows.map(toRecord);
    },

    /** Oldest first after position `afterSeq` (exclusive); `viewer` null = every event (fan-out). */
    async readAfter(afterSeq: bigint, limit: number, viewer: EventViewer | null = null, f: EventFilter = {}): Promise<EventRecord[]> {
      const rows = await db.event.findMany({ where: { AND: [...where(viewer, f), { seq: { gt: afterSeq } }] }, orderBy: { seq: 'asc' }, take: limit });
      return rows.map(toRecord);
    },

    /** The newest position (0 when there is no event). */
    async head(): Promise<bigint> {
      const r = await db.event.aggregate({ _max: { seq: true } });
      return r._max.seq ?? 0n;
    },

    /**
     * Retention: delete up to `limit` events created before `cutoff` (oldest positions first) whose
     * position is below `keepFromSeq` (what a consumer such as the webhook fan-out still needs), keeping
     * the newest event of every resource so its `sequence` never restarts at 1, and every money event a
     * revenue report reads (contract REVENUE_LEDGER_EVENTS: releases, claims, refunds, splits, settlements,
     * tips; a report covers the whole history). Returns how many went.
     */
    async purgeBefore(cutoff: Date, keepFromSeq: bigint, limit: number): Promise<number> {
      return db.$executeRaw`
        DELETE FROM events
         WHERE seq IN (
           SELECT e.seq FROM events e
            WHERE e.created_at < ${cutoff} AND e.seq < ${keepFromSeq}
              AND e.type <> ALL(${LEDGER_TYPES}::text[])
              AND EXISTS (
                SELECT 1 FROM events n
                 WHERE n.resource_type = e.resource_type AND n.resource_id = e.resource_id AND n.resource_seq > e.resource_seq)
            ORDER BY e.seq
            LIMIT ${limit})`;
    },

    async get(id: string): Promise<EventRecord | null> {
      const row = await db.event.findUnique({ where: { id } });
      return row ? toRecord(row) : null;
    },
  };
}

export type EventsRepo = ReturnType<typeof createEventsRepo>;
