/**
 * GET /admin/audit-log and /admin/audit-log/verify: a page of entries newest first (cursor = seq of the
 * last entry, bound to the filters) and the chain's verification. Who may call them is the route's
 * `access.admin()` (the auth middleware); this module has no rule of its own about callers.
 */
import type { AuditEntry, AuditVerification, ListAuditLogQuery } from '@bazaar/contract';
import { cursorKey, decodeCursor, encodeCursor } from '../../lib/cursor.js';
import type { AuditRecord, AuditRepo } from './audit.repo.js';
import { verifyChain } from './audit.verify.js';

/** The API's AuditEntry of a stored entry. */
export function toAuditEntryDto(r: AuditRecord): AuditEntry {
  return { ...r, seq: r.seq.toString(), actor_type: r.actor_type as AuditEntry['actor_type'] };
}

export function createAuditService(deps: { repo: AuditRepo }) {
  return {
    /** A page of entries matching the query's filters, newest first; 400 validation-error for a bad cursor. */
    async list(q: ListAuditLogQuery): Promise<{ data: AuditEntry[]; next_cursor: string | null }> {
      const filters = {
        at: q.actor_type,
        aid: q.actor_id,
        act: q.action,
        rt: q.resource_type,
        rid: q.resource_id,
        from: q.from ? new Date(q.from).toISOString() : undefined,
        to: q.to ? new Date(q.to).toISOString() : undefined,
      };
      const spec = { sort: 'seq_desc', filters, keys: [cursorKey.uint] };
      const before = q.cursor ? BigInt(String(decodeCursor(q.cursor, spec).keys[0])) : undefined;
      const rows = await deps.repo.listNewest(
        {
          actorType: q.actor_type,
          actorId: q.actor_id,
          action: q.action,
          resourceType: q.resource_type,
          resourceId: q.resource_id,
          from: q.from ? new Date(q.from) : undefined,
          to: q.to ? new Date(q.to) : undefined,
        },
        q.limit + 1,
        before,
      );
      const items = rows.slice(0, q.limit);
      const last = items[items.length - 1];
      return {
        data: items.map(toAuditEntryDto),
        next_cursor: rows.length > q.limit && last ? encodeCursor(spec, [last.seq.toString()], last.id) : null,
      };
    },

    /** Walk the whole chain (see audit.verify.ts). */
    verify: (): Promise<AuditVerification> => verifyChain(deps.repo),
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
