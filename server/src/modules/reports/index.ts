/**
 * Reports module wiring (issue 25 part 6; README.md):
 *
 *   const reports = createReportsModule({ db, currencies: () => currencies });
 *   createExpressEndpoints(contract.reports, reportsHandlers(reports.http), router);
 */
import type { PrismaClient } from '../../generated/prisma/client.js';
import { createReportsRepo } from './reports.repo.js';
import { createReportsService, type ReportCurrency } from './reports.service.js';

export { createReportsRepo, ESCROW_LEDGER_EVENTS, type ReportsRepo, type EscrowSums, type TipSums } from './reports.repo.js';
export { createReportsService, type ReportsService, type ReportCurrency, type ReportRequest } from './reports.service.js';
export { reportPeriods, periodStart, nextPeriodStart, type ReportPeriod } from './periods.js';
export { reportCsv, csvField } from './csv.js';

export function createReportsModule(o: { db: PrismaClient; currencies: () => readonly ReportCurrency[]; now?: () => Date }) {
  const repo = createReportsRepo(o.db);
  const service = createReportsService({ repo, currencies: o.currencies, now: o.now });
  return { repo, service, http: { service } };
}

export type ReportsModule = ReturnType<typeof createReportsModule>;
