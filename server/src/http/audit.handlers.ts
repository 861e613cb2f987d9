/**
 * ts-rest handlers of `contract.audit` (admin only: the auth middleware enforces the routes' access.admin()):
 * GET /admin/audit-log and GET /admin/audit-log/verify, over the audit module's service.
 */
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import type { AuditService } from '../modules/audit/index.js';

export function auditHandlers(deps: { service: AuditService }) {
  const s = initServer();
  return s.router(contract.audit, {
    listAuditLog: async ({ query }) => ({ status: 200 as const, body: await deps.service.list(query) }),
    verifyAuditLog: async () => ({ status: 200 as const, body: await deps.service.verify() }),
  });
}
