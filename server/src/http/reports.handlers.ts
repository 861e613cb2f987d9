/**
 * ts-rest handlers of `contract.reports` (revenue reports, issue 25 part 6): the caller's own report as a
 * seller and an admin's report, each as JSON or CSV (the `.csv` routes: RFC 4180 text, `text/csv; charset=utf-8`,
 * a `Content-Disposition: attachment` file name). Rules live in modules/reports.
 */
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import { reportCsv, type ReportsService } from '../modules/reports/index.js';
import { DomainError } from '../errors.js';

export interface ReportsHttpDeps {
  service: ReportsService;
}

/** The signed-in user (the auth middleware ran: access.user); a user-less API key has no seller report. */
function userIdOf(req: unknown): string {
  const p = (req as { principal?: { userId?: string | null } }).principal;
  if (!p) throw new DomainError('unauthorized', 'No credential was sent.');
  if (!p.userId) throw new DomainError('not-found', 'This credential has no user, so no seller report: use GET /admin/revenue-report.');
  return p.userId;
}

/** Send `csv` as the 200 body: text/csv with a file name (ts-rest would answer a string body as JSON text). */
function csvResponse(res: { setHeader(name: string, value: string): unknown }, csv: string, name: string) {
  res.setHeader('Content-Type', 'text/csv; charset=utf-8');
  res.setHeader('Content-Disposition', `attachment; filename="${name}"`);
  return { status: 200 as const, body: csv };
}

const fileName = (r: { scope: string; granularity: string; from: string; to: string }) =>
  `revenue-${r.scope}-${r.granularity}-${r.from.slice(0, 10)}-${r.to.slice(0, 10)}.csv`;

export function reportsHandlers(deps: ReportsHttpDeps) {
  const s = initServer();
  const { service } = deps;
  return s.router(contract.reports, {
    getMyRevenueReport: async ({ query, req }) => ({ status: 200 as const, body: await service.sellerReport(userIdOf(req), query) }),
    getMyRevenueReportCsv: async ({ query, req, res }) => {
      const report = await service.sellerReport(userIdOf(req), query);
      return csvResponse(res, reportCsv(report.rows), fileName(report));
    },
    getRevenueReport: async ({ query }) => ({ status: 200 as const, body: await service.adminReport(query) }),
    getRevenueReportCsv: async ({ query, res }) => {
      const report = await service.adminReport(query);
      return csvResponse(res, reportCsv(report.rows), fileName(report));
    },
  });
}
