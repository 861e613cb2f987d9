/**
 * The transactional outbox (issue 11): `appendEvents(tx, [...])` writes event rows inside the caller's
 * database transaction, as its LAST statements, so an event exists exactly when its change committed.
 *
 * Ordering: every event-writing transaction first takes one transaction-scoped advisory lock
 * (`pg_advisory_xact_lock(OUTBOX_LOCK)`), then draws `seq` (bigserial) and the per-resource sequence.
 * The lock is held until commit, so event-writing transactions commit one at a time in seq order: a
 * reader that saw seq n never sees a smaller seq appear later (no gap a stream could skip over), and
 * the events of one resource are in the order the resource changed. Call it last in the transaction
 * (after every row lock the transaction takes), so the lock is held only for the insert and the commit
 * and no lock-order cycle with it is possible.
 *
 * Audit (issue 25): an event of an audited type (modules/audit `AUDITED_EVENT_TYPES`) appends its audit
 * entry here too, after the event rows and under the same lock (the audit chain needs one writer at a time,
 * which this lock already gives: no lock of its own, no new contention; two more statements per transaction
 * that writes an audited event, none for the others).
 *
 * After the commit, call `outboxSignal.emit('appended')` (repos do it via `notifyAppended`) to wake this
 * process's stream and webhook fan-out at once. Other replicas are woken by PostgreSQL: the insert ends
 * with `pg_notify(OUTBOX_CHANNEL)`, delivered at commit to every replica's `OutboxListener`
 * (outbox-listener.ts); they also poll, in case a notification is lost.
 */
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type { EventType, ResourceType } from '@bazaar/contract';
import { Prisma } from '../../generated/prisma/client.js';
import { OUTBOX_LOCK, takeOutboxLock, type SqlClient } from '../../lib/outbox-lock.js';
import { appendAuditLocked, isAuditedEvent, summaryOf, type NewAuditEntry } from '../audit/index.js';

export { OUTBOX_LOCK, type SqlClient };

/** LISTEN/NOTIFY channel of committed events (see outbox-listener.ts). */
export const OUTBOX_CHANNEL = 'bazaar_events';

/** An event to write: `data` is the resource as the API returns it (JSON). */
export interface NewEvent {
  type: EventType;
  resourceType: ResourceType;
  /** uuid */
  resourceId: string;
  /** user ids the event concerns (parties of the resource); admins see all events */
  audience: readonly string[];
  data: unknown;
  /** transaction signature when the chain moved */
  signature?: string | null;
  /**
   * For an audited type (modules/audit AUDITED_EVENT_TYPES): the state before and after the change, as the
   * writer knows it (e.g. an order's status left and reached). The entry's `after` is the snapshot's
   * summary (audit `summaryOf`) with `after`'s members over it; `before` as given, else null.
   */
  audit?: { before?: Record<string, unknown> | null; after?: Record<string, unknown> };
}

/** Wakes the in-process readers after a commit that wrote events (they also poll). */
export const outboxSignal = new EventEmitter();
outboxSignal.setMaxListeners(0);

export function notifyAppended(): void {
  outboxSignal.emit('appended');
}

/** The audit entry of an audited event `e` whose row has id `eventId`. */
function auditEntryOf(e: NewEvent, eventId: string): NewAuditEntry {
  const summary = summaryOf(e.data);
  const after = e.audit?.after ? { ...(summary ?? {}), ...e.audit.after } : summary;
  return {
    action: e.type,
    resourceType: e.resourceType,
    resourceId: e.resourceId,
    before: e.audit?.before ?? null,
    after,
    signature: e.signature ?? null,
    eventId,
  };
}

/**
 * Insert `events` in the caller's transaction `tx` (call last; see the module comment). Events of an audited
 * type (modules/audit) also append their audit entries, under the same lock, after the event rows: the audit
 * chain's head is read and extended while this transaction is the only writer (no lock of its own).
 */
export async function appendEvents(tx: SqlClient, events: readonly NewEvent[]): Promise<void> {
  if (events.length === 0) return;
  await takeOutboxLock(tx);
  const audits: NewAuditEntry[] = [];
  const rows = events.map((e) => {
    const audience = [...new Set(e.audience)];
    const id = randomUUID();
    if (isAuditedEvent(e.type)) audits.push(auditEntryOf(e, id));
    return Prisma.sql`(
        ${id}::uuid, ${e.type}, ${e.resourceType}, ${e.resourceId}::uuid,
        COALESCE((SELECT max(resource_seq) FROM events WHERE resource_type = ${e.resourceType} AND resource_id = ${e.resourceId}::uuid), 0) + 1,
        ${audience}::uuid[], ${JSON.stringify(e.data)}::jsonb, ${e.signature ?? null}
      )`;
  });
  // events of distinct resources in ONE statement (issue 28: an order's funding writes the order's and the
  // listing's): the VALUES rows draw seq in their order; two events of one resource need the first inserted
  // before the second's resource_seq is drawn, so those go one statement each
  const distinct = new Set(events.map((e) => `${e.resourceType}/${e.resourceId}`)).size === events.length;
  const head = Prisma.sql`INSERT INTO events (id, type, resource_type, resource_id, resource_seq, audience, data, signature) VALUES `;
  if (distinct) await tx.$executeRaw`${head}${Prisma.join(rows)}`;
  else for (const r of rows) await tx.$executeRaw`${head}${r}`;
  await appendAuditLocked(tx, audits);
  // transactional: PostgreSQL delivers it at commit (never for a rollback), once per transaction
  await tx.$executeRaw`SELECT pg_notify(${OUTBOX_CHANNEL}, '')`;
}

/**
 * Run `work` in a transaction with the events it returns appended last, then wake the readers.
 * `work` returns `{ result, events }`; an empty `events` writes nothing.
 */
export async function withEvents<T>(
  db: { $transaction: <R>(fn: (tx: Prisma.TransactionClient) => Promise<R>) => Promise<R> },
  work: (tx: Prisma.TransactionClient) => Promise<{ result: T; events: NewEvent[] }>,
): Promise<T> {
  let wrote = false;
  const result = await db.$transaction(async (tx) => {
    const r = await work(tx);
    await appendEvents(tx, r.events);
    wrote = r.events.length > 0;
    return r.result;
  });
  if (wrote) notifyAppended();
  return result;
}
