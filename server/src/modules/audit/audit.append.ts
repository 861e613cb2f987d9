/**
 * Appending to the audit log. Every writer holds the outbox advisory lock (lib/outbox-lock.ts) while it reads
 * the chain's head and inserts, and keeps it to commit: appends are serialized, so each entry's `prev_hash` is
 * the hash of the entry committed just before it (and `prev_hash` is unique in the table: a fork cannot commit).
 *
 * - `appendAuditLocked(tx, entries)`: for a caller that holds the lock already (`appendEvents`, which appends
 *   one entry per audited event right after its event rows);
 * - `appendAudit(tx, entry)`: an operator action that writes no event (takes the lock; call it last in the
 *   transaction, after every row lock, as with `appendEvents`).
 * Who and which request: the entry's `actor` / `requestId` when given, else the request context's
 * (lib/request-context.ts), else the `unattributed` system actor.
 */
import { randomUUID } from 'node:crypto';
import { Prisma } from '../../generated/prisma/client.js';
import { currentRequestContext, UNATTRIBUTED, type Actor } from '../../lib/request-context.js';
import { takeOutboxLock, type SqlClient } from '../../lib/outbox-lock.js';
import { asStoredJson, entryHash, GENESIS_HASH, type ChainedEntry } from './audit.chain.js';

/** An entry to append. */
export interface NewAuditEntry {
  /** what happened: an event type (`order.funded`) or an operator action (`api_key.created`) */
  action: string;
  /** what it happened to: `order`, `withdrawal`, `api_key`, ... and its id */
  resourceType: string;
  resourceId: string;
  /** the state before and after (JSON objects; omitted: null) */
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
  /** transaction signature when the chain moved */
  signature?: string | null;
  /** the event this entry records */
  eventId?: string | null;
  /** default: the request context's actor */
  actor?: Actor;
  /** default: the request context's request id */
  requestId?: string | null;
}

/** The stored form of `e` (without seq, with hash) chained after `prevHash`. */
function chained(e: NewAuditEntry, prevHash: string, now: Date): ChainedEntry & { hash: string } {
  const ctx = currentRequestContext();
  const actor = e.actor ?? ctx?.actor ?? UNATTRIBUTED;
  const entry: ChainedEntry = {
    id: randomUUID(),
    created_at: new Date(now.getTime()).toISOString(),
    actor_type: actor.type,
    actor_id: actor.id,
    actor_user_id: actor.userId ?? null,
    action: e.action,
    resource_type: e.resourceType,
    resource_id: e.resourceId,
    before: asStoredJson(e.before),
    after: asStoredJson(e.after),
    request_id: e.requestId !== undefined ? e.requestId : (ctx?.requestId ?? null),
    signature: e.signature ?? null,
    event_id: e.eventId ?? null,
    prev_hash: prevHash,
  };
  return { ...entry, hash: entryHash(entry) };
}

const jsonParam = (v: unknown) => (v === null ? null : JSON.stringify(v));

/**
 * Append `entries` in order, chained after the current head. The caller MUST hold the outbox lock in `tx`'s
 * transaction (see the module comment). Two statements whatever the number of entries: read the head, insert.
 */
export async function appendAuditLocked(tx: SqlClient, entries: readonly NewAuditEntry[]): Promise<void> {
  if (entries.length === 0) return;
  const head = await tx.$queryRaw<Array<{ hash: string }>>`SELECT hash FROM audit_log ORDER BY seq DESC LIMIT 1`;
  let prev = head[0]?.hash ?? GENESIS_HASH;
  const now = new Date();
  const rows = entries.map((e) => {
    const r = chained(e, prev, now);
    prev = r.hash;
    return Prisma.sql`(${r.id}::uuid, ${r.created_at}::timestamptz, ${r.actor_type}, ${r.actor_id}, ${r.actor_user_id}::uuid, ${r.action},
      ${r.resource_type}, ${r.resource_id}, ${jsonParam(r.before)}::jsonb, ${jsonParam(r.after)}::jsonb, ${r.request_id}, ${r.signature},
      ${r.event_id}::uuid, ${r.prev_hash}, ${r.hash})`;
  });
  // one statement: seq (bigserial) is drawn in VALUES order, so the chain order is the seq order
  await tx.$executeRaw`
    INSERT INTO audit_log (id, created_at, actor_type, actor_id, actor_user_id, action, resource_type, resource_id,
                           before, after, request_id, signature, event_id, prev_hash, hash)
    VALUES ${Prisma.join(rows)}`;
}

/**
 * Append one operator action that writes no event (or several), in the caller's transaction `tx`: takes the
 * outbox lock (free when the transaction holds it already), then appends. Call it last in the transaction.
 */
export async function appendAudit(tx: SqlClient, entry: NewAuditEntry | readonly NewAuditEntry[]): Promise<void> {
  const list = Array.isArray(entry) ? (entry as readonly NewAuditEntry[]) : [entry as NewAuditEntry];
  if (list.length === 0) return;
  await takeOutboxLock(tx);
  await appendAuditLocked(tx, list);
}
