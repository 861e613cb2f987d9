/**
 * Audit log (issue 25 item 4): who did what, to which resource, in answer to which request, with the state
 * before and after and the transaction signature when the chain moved. Admins only.
 *
 * What is recorded: every money-moving event (funding seen, release, auto-release, refund, the arbiter's
 * split, a settlement accepted, a tip received, a custodial deposit credited, a withdrawal held / confirmed /
 * failed: `action` = the event type, `event_id` = the event) and every operator action (today the operator's
 * API key CLI: `api_key.created`, `api_key.revoked`). The actor is the signed-in user (`user`), the API key
 * (`api_key`) or personal access token (`pat`) that made the request, with the user it acted for
 * (`actor_user_id`), or the service's own background loop (`system`, `actor_id` = the loop's name, e.g.
 * `payment-watcher`, `auto-release`, `reconciler`, `custody-worker`). `request_id` is the request's
 * `X-Request-Id` (and its problem `request_id`), null for background work. For an order's status change
 * `before` and `after` hold the status it left and the one it reached (with a summary of the order after);
 * other entries hold a summary of the resource after the change.
 *
 * Tamper evidence: entries are hash-chained. `hash` = SHA-256 (hex) of the RFC 8785 canonical JSON of the
 * entry's fields (every field of AuditEntry but `seq` and `hash`, plus `"v": 1`), `prev_hash` = the hash of
 * the entry before it (64 zeros for the first). An edited entry no longer matches its hash, a deleted one
 * leaves its successor pointing at a hash no entry has: `GET /admin/audit-log/verify` (or `npm run
 * audit:verify`) names the first broken entry. The database refuses UPDATE, DELETE and TRUNCATE on the table.
 */
import { z } from 'zod';
import { c, Cursor, extendApi, named, queryNumber, Timestamp, Uuid } from './common.js';
import { access } from './access.js';
import { routeErrors } from './problems.js';

export const AUDIT_ACTOR_TYPES = ['user', 'api_key', 'pat', 'system'] as const;
export const AuditActorType = z.enum(AUDIT_ACTOR_TYPES);

/** A JSON object of any members (OpenAPI: an object with free additional properties). */
const JsonObject = extendApi(z.record(z.string(), z.unknown()), { type: 'object', additionalProperties: true });

const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/).describe('SHA-256, lowercase hex');

export const AuditEntry = named(
  'AuditEntry',
  z.object({
    seq: z.string().regex(/^\d+$/).describe('Position in the log (decimal integer, grows with each entry)'),
    id: Uuid,
    created_at: Timestamp,
    actor_type: AuditActorType.describe('user (a session), api_key, pat (personal access token) or system (a background loop)'),
    actor_id: z.string().describe('The user id, API key id or token id; for system, the loop\'s name (payment-watcher, auto-release, ...)'),
    actor_user_id: Uuid.nullable().describe('The user the credential acted for; null for the system and a service API key'),
    action: z.string().describe('The event type (order.funded, withdrawal.confirmed, ...) or the operator action (api_key.created, ...)'),
    resource_type: z.string().describe('order, withdrawal, deposit, tip, api_key, ...'),
    resource_id: z.string(),
    before: JsonObject.nullable().describe('The state before (a JSON object), when known'),
    after: JsonObject.nullable().describe('The state after (a JSON object)'),
    request_id: z.string().nullable().describe('X-Request-Id of the request that did it; null for background work'),
    signature: z.string().nullable().describe('Transaction signature when the chain moved'),
    event_id: Uuid.nullable().describe('The event this entry records (GET /events), when it records one'),
    prev_hash: Sha256Hex.describe('hash of the previous entry; 64 zeros for the first'),
    hash: Sha256Hex.describe('SHA-256 of the RFC 8785 canonical JSON of this entry without seq and hash, with "v": 1'),
  }),
  'One audit log entry',
);
export type AuditEntry = z.infer<typeof AuditEntry>;

export const AuditEntryPage = named(
  'AuditEntryPage',
  z.object({
    data: z.array(AuditEntry),
    next_cursor: z.string().nullable().describe('Cursor of the next (older) page; null on the last page'),
  }),
  'A page of audit entries, newest first',
);

export const ListAuditLogQuery = z
  .object({
    limit: queryNumber(z.number().int().min(1).max(100), { integer: true }).default(20).describe('Page size, 1..100 (default 20)'),
    cursor: Cursor.optional(),
    actor_type: AuditActorType.optional().describe('Only entries of this kind of actor'),
    actor_id: z.string().min(1).max(128).optional().describe('Only entries of this actor (user, key or token id; a loop\'s name)'),
    action: z.string().min(1).max(128).optional().describe('Only entries of this action (e.g. order.funded)'),
    resource_type: z.string().min(1).max(64).optional().describe('Only entries about this kind of resource'),
    resource_id: z.string().min(1).max(128).optional().describe('Only entries about this resource'),
    from: Timestamp.optional().describe('Only entries created at or after this instant'),
    to: Timestamp.optional().describe('Only entries created before this instant'),
  })
  .strict();
export type ListAuditLogQuery = z.infer<typeof ListAuditLogQuery>;

export const AuditVerification = named(
  'AuditVerification',
  z.object({
    ok: z.boolean().describe('true when every entry matches its hash and its predecessor'),
    checked: z.number().int().min(0).describe('Entries checked (up to the first broken one)'),
    head: z
      .object({ seq: z.string(), id: Uuid, hash: Sha256Hex })
      .nullable()
      .describe('The last entry when the chain verified (null for an empty log); record it to detect a truncated tail later'),
    first_broken: z
      .object({
        seq: z.string(),
        id: Uuid,
        reason: z
          .enum(['hash_mismatch', 'prev_hash_mismatch'])
          .describe('hash_mismatch: the entry was edited; prev_hash_mismatch: an entry before it was deleted, inserted or edited with its hash recomputed'),
        expected: Sha256Hex,
        found: Sha256Hex.or(z.string()),
      })
      .nullable()
      .describe('The first entry that breaks the chain, when one does'),
  }),
  'The result of walking the hash chain',
);
export type AuditVerification = z.infer<typeof AuditVerification>;

const listAuditLog = routeErrors(access.role('admin', 'audit:read'), []);
const verifyAuditLog = routeErrors(access.role('admin', 'audit:read'), []);

export const audit = c.router({
  listAuditLog: {
    method: 'GET',
    path: '/admin/audit-log',
    query: ListAuditLogQuery,
    summary: 'Read the audit log',
    description:
      'Admin only (403 admin-only otherwise; never a personal access token). Entries newest first, cursor ' +
      'pagination (limit 1..100, default 20; a cursor is bound to the filters it was issued with). Filters: ' +
      '`actor_type`, `actor_id`, `action`, `resource_type` / `resource_id`, and a time range `from` (inclusive) / ' +
      '`to` (exclusive) on created_at. See the audit overview in the contract for what is recorded.',
    responses: { 200: AuditEntryPage, ...listAuditLog.responses },
    metadata: listAuditLog.metadata,
  },
  verifyAuditLog: {
    method: 'GET',
    path: '/admin/audit-log/verify',
    summary: 'Verify the audit log\'s hash chain',
    description:
      'Admin only. Walks every entry in order and checks its hash and its link to the previous one; answers 200 ' +
      'with `ok: false` and `first_broken` (seq, id, reason) at the first entry that does not verify, or `ok: true` ' +
      'and the `head` (record it: entries removed from the end leave a whole chain, only a recorded head shows ' +
      'them). Reads the whole log: O(entries). The same check as `npm run audit:verify`.',
    responses: { 200: AuditVerification, ...verifyAuditLog.responses },
    metadata: verifyAuditLog.metadata,
  },
});
