/**
 * Reads of the audit_log table (appends: audit.append.ts). Newest-first pages with filters, and the whole
 * chain in seq order, in batches, for verification.
 */
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { ChainedEntry } from './audit.chain.js';

/** A stored entry: the hashed fields, its position and its hash. */
export interface AuditRecord extends ChainedEntry {
  seq: bigint;
  hash: string;
}

/** Filters of a page (all optional; `from` inclusive, `to` exclusive, on created_at). */
export interface AuditFilter {
  actorType?: string;
  actorId?: string;
  action?: string;
  resourceType?: string;
  resourceId?: string;
  from?: Date;
  to?: Date;
}

type Row = Prisma.AuditLogEntryGetPayload<object>;

function toRecord(r: Row): AuditRecord {
  return {
    seq: r.seq,
    id: r.id,
    created_at: r.createdAt.toISOString(),
    actor_type: r.actorType,
    actor_id: r.actorId,
    actor_user_id: r.actorUserId,
    action: r.action,
    resource_type: r.resourceType,
    resource_id: r.resourceId,
    before: (r.before ?? null) as Record<string, unknown> | null,
    after: (r.after ?? null) as Record<string, unknown> | null,
    request_id: r.requestId,
    signature: r.signature,
    event_id: r.eventId,
    prev_hash: r.prevHash,
    hash: r.hash,
  };
}

export function createAuditRepo(db: PrismaClient) {
  return {
    /** Up to `limit` entries matching `f`, newest first (seq descending), below `beforeSeq` when given. */
    async listNewest(f: AuditFilter, limit: number, beforeSeq?: bigint): Promise<AuditRecord[]> {
      const createdAt = f.from || f.to ? { ...(f.from ? { gte: f.from } : {}), ...(f.to ? { lt: f.to } : {}) } : undefined;
      const rows = await db.auditLogEntry.findMany({
        where: {
          ...(f.actorType ? { actorType: f.actorType } : {}),
          ...(f.actorId ? { actorId: f.actorId } : {}),
          ...(f.action ? { action: f.action } : {}),
          ...(f.resourceType ? { resourceType: f.resourceType } : {}),
          ...(f.resourceId ? { resourceId: f.resourceId } : {}),
          ...(createdAt ? { createdAt } : {}),
          ...(beforeSeq !== undefined ? { seq: { lt: beforeSeq } } : {}),
        },
        orderBy: { seq: 'desc' },
        take: limit,
      });
      return rows.map(toRecord);
    },

    /** Up to `limit` entries after `afterSeq` (exclusive; null: from the first), in seq order. */
    async readAfter(afterSeq: bigint | null, limit: number): Promise<AuditRecord[]> {
      const rows = await db.auditLogEntry.findMany({
        where: afterSeq === null ? {} : { seq: { gt: afterSeq } },
        orderBy: { seq: 'asc' },
        take: limit,
      });
      return rows.map(toRecord);
    },
  };
}

export type AuditRepo = ReturnType<typeof createAuditRepo>;
