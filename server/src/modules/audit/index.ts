/**
 * Audit module (issue 25 item 4): the hash-chained, append-only audit log.
 *
 *   appendEvents(tx, events)          // modules/events: one entry per audited event, under the outbox lock
 *   appendAudit(tx, entry)            // an operator action without an event (same lock, taken last)
 *   const audit = createAuditModule({ db });
 *   await audit.service.list(query);  // GET /admin/audit-log
 *   await audit.service.verify();     // GET /admin/audit-log/verify, npm run audit:verify
 */
import type { PrismaClient } from '../../generated/prisma/client.js';
import { createAuditRepo } from './audit.repo.js';
import { createAuditService } from './audit.service.js';

export { AUDITED_EVENT_TYPES, isAuditedEvent, type AuditedEventType } from './audited-events.js';
export { appendAudit, appendAuditLocked, type NewAuditEntry } from './audit.append.js';
export { canonicalEntry, entryHash, GENESIS_HASH, type ChainedEntry } from './audit.chain.js';
export { createAuditRepo, type AuditRecord, type AuditRepo, type AuditFilter } from './audit.repo.js';
export { createAuditService, toAuditEntryDto, type AuditService } from './audit.service.js';
export { verifyChain, type ChainVerification, type BrokenReason } from './audit.verify.js';
export { summaryOf } from './audit.summary.js';

export function createAuditModule(o: { db: PrismaClient }) {
  const repo = createAuditRepo(o.db);
  const service = createAuditService({ repo });
  return { repo, service, http: { service } };
}

export type AuditModule = ReturnType<typeof createAuditModule>;
