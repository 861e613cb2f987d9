/**
 * Revenue reports (issue 25 part 6): fee revenue, volume, payouts, refunds and tips per currency and period,
 * for the whole marketplace (an admin) or one seller (the seller herself, or an admin for any seller), as JSON
 * or CSV.
 *
 * Source: the ledger of events, i.e. what the chain paid. Each escrow unit (one per milestone; a one-milestone
 * order is one unit) enters the report once, at the first money event of its order whose snapshot (`data`, the
 * Order as the API returns it) shows the unit's `payout` (OrderPayout: what left the escrow vault per payee,
 * read by the service from the closing transaction on chain). The money events are REVENUE_LEDGER_EVENTS:
 * order.completed (release), order.auto_released (claim), order.refunded, order.resolved (arbiter split),
 * settlement.accepted (split by agreement), milestone.released / milestone.refunded / milestone.resolved, and
 * tip.received (a tip confirmed from the chain). An order.* event of a multi-milestone order repeats the payouts
 * its milestone.* events already carried: the unit is counted once. Custodial deposits and withdrawals move the
 * users' own money, not the marketplace's: they are not in the report. These events are kept past
 * EVENTS_RETENTION_DAYS (the retention pass never deletes them), so a report covers the whole history.
 *
 * Figures (base units of the currency, decimal strings, exact; `decimals` says how to show them):
 * - `volume_base_units`: everything the escrows that closed in the period paid out = buyer + seller + treasury
 *   shares (= the amounts those escrows held);
 * - `fee_revenue_base_units`: the treasury's share (the platform fee on the seller's share, plus any surplus a
 *   vault held above the order's amount, which the program sweeps to the treasury);
 * - `seller_payouts_base_units`: the sellers' shares (releases, claims, the seller's part of splits);
 * - `buyer_refunds_base_units`: the buyers' shares (refunds, the buyer's part of splits; for a custodial order
 *   the share went to the buyer's deposit address);
 * - `tips_base_units`: tips confirmed on chain (buyer to seller directly, outside escrow: not in the volume, no fee);
 * - `escrows_closed`, `escrows_unverified` (closed escrows whose payout the service could not verify against the
 *   vault's transfers: `payout.verified` false), `tips`: counts.
 * So volume = fee revenue + seller payouts + buyer refunds in every row.
 *
 * Periods: `granularity` day (UTC midnight to midnight), week (ISO 8601: Monday 00:00 UTC to the next Monday)
 * or month (calendar month, UTC). The report covers [from, to) (`from` inclusive, `to` exclusive; default the
 * 30 days before now); the first and last periods are cut at `from` and `to` (`period_start`, `period_end`).
 * A money event belongs to the period in which the service recorded it (the event's `created_at`, the commit of
 * the change it read from the chain; a few seconds after the block time). At most MAX_REPORT_PERIODS periods per
 * request (400 validation-error, code `too_many_periods`); `from` must be before `to` (`range_empty`), neither before
 * 1970-01-01 (`out_of_range`).
 * One row per period and currency, for every configured currency and any other currency the period paid in,
 * zero rows included (a chart needs them): rows ordered by period, then currency.
 *
 * Formats: JSON (the routes without a suffix) or CSV (`.csv`, `text/csv; charset=utf-8`, RFC 4180: a header
 * line, CRLF line ends, fields with a comma, quote or line break quoted, quotes doubled). Decision: a CSV is
 * its own URL rather than `Accept` negotiation or `format=csv`, so that a link, `curl -O` or a spreadsheet's
 * "import from URL" gets a file without headers, and openapi.json describes each operation with the one
 * content type it answers. CSV columns: CSV_COLUMNS; amounts in base units, as in JSON.
 *
 * Who: `GET /user/revenue-report` is the caller's own report as a seller (a personal access token needs
 * `orders:read`: the report adds up the payouts and tips of her orders, which that scope reads already, so no
 * new scope; R's operator scope `reports:read` is for the marketplace report). `GET /admin/revenue-report` is
 * an admin's: the marketplace, or one seller with `seller=<wallet>` (404 not-found for a wallet no user has).
 * A seller cannot name another seller: her route has no such parameter, the admin route answers 403 forbidden.
 */
import { z } from 'zod';
import { BaseUnits, c, CurrencyCode, named, Pubkey, Timestamp } from './common.js';
import { access } from './access.js';
import { routeErrors } from './problems.js';

/** The money events a revenue report reads (kept past EVENTS_RETENTION_DAYS: the retention pass skips them). */
export const REVENUE_LEDGER_EVENTS = [
  'order.completed',
  'order.auto_released',
  'order.refunded',
  'order.resolved',
  'settlement.accepted',
  'milestone.released',
  'milestone.refunded',
  'milestone.resolved',
  'tip.received',
] as const;

export const REPORT_GRANULARITIES = ['day', 'week', 'month'] as const;
export const ReportGranularity = z.enum(REPORT_GRANULARITIES);
export type ReportGranularity = z.infer<typeof ReportGranularity>;

/** At most this many periods per report request. */
export const MAX_REPORT_PERIODS = 400;
/** The default range when `from` is absent: this many days before `to`. */
export const DEFAULT_REPORT_DAYS = 30;

/** The CSV columns, in order (the header line). */
export const CSV_COLUMNS = [
  'period_start',
  'period_end',
  'currency',
  'decimals',
  'volume_base_units',
  'fee_revenue_base_units',
  'seller_payouts_base_units',
  'buyer_refunds_base_units',
  'tips_base_units',
  'escrows_closed',
  'escrows_unverified',
  'tips',
] as const;

const figures = {
  volume_base_units: BaseUnits.describe('Paid out of the escrows that closed: buyer + seller + treasury shares'),
  fee_revenue_base_units: BaseUnits.describe('The treasury\'s share: the platform fee (and any vault surplus swept to the treasury)'),
  seller_payouts_base_units: BaseUnits.describe('The sellers\' shares (releases, claims, the seller\'s part of splits)'),
  buyer_refunds_base_units: BaseUnits.describe('The buyers\' shares (refunds, the buyer\'s part of splits)'),
  tips_base_units: BaseUnits.describe('Tips confirmed on chain (outside escrow: not in the volume, no fee)'),
  escrows_closed: z.number().int().min(0).describe('Escrow units (milestones) that closed'),
  escrows_unverified: z.number().int().min(0).describe('Of those, closed escrows whose payout the service could not verify (payout.verified false)'),
  tips: z.number().int().min(0).describe('Tips confirmed'),
};

export const RevenueReportRow = named(
  'RevenueReportRow',
  z.object({
    period_start: Timestamp.describe('Start of the period (UTC), or `from` for a period cut by it'),
    period_end: Timestamp.describe('End of the period, exclusive (UTC), or `to` for a period cut by it'),
    currency: CurrencyCode,
    decimals: z.number().int().min(0).describe('Decimals of the currency (UI amount = base units / 10^decimals)'),
    ...figures,
  }),
  'The figures of one period in one currency',
);
export type RevenueReportRow = z.infer<typeof RevenueReportRow>;

export const RevenueReportTotal = named(
  'RevenueReportTotal',
  z.object({ currency: CurrencyCode, decimals: z.number().int().min(0), ...figures }),
  'The figures of the whole range in one currency',
);

export const RevenueReport = named(
  'RevenueReport',
  z.object({
    scope: z.enum(['marketplace', 'seller']).describe('marketplace: every order; seller: the orders (and tips) of `seller_wallet`'),
    seller_wallet: Pubkey.nullable().describe('The seller of a seller report; null for the marketplace'),
    granularity: ReportGranularity,
    from: Timestamp.describe('Start of the range (inclusive)'),
    to: Timestamp.describe('End of the range (exclusive)'),
    rows: z.array(RevenueReportRow).describe('One per period and currency, by period then currency; zero rows included'),
    totals: z.array(RevenueReportTotal).describe('One per currency of `rows`: the sums over the range'),
  }),
  'Fee revenue, volume, payouts, refunds and tips per period and currency, from what the chain paid (see the reports overview)',
);
export type RevenueReport = z.infer<typeof RevenueReport>;

export const RevenueReportCsv = named(
  'RevenueReportCsv',
  z.string().describe(`RFC 4180 CSV (CRLF): the header line \`${CSV_COLUMNS.join(',')}\`, then one line per row of the JSON report`),
);

export const RevenueReportQuery = z.object({
  granularity: ReportGranularity.default('day').describe('day, week (ISO, Monday) or month; UTC. Default day'),
  from: Timestamp.optional().describe(`Start of the range, inclusive (default: ${DEFAULT_REPORT_DAYS} days before \`to\`)`),
  to: Timestamp.optional().describe('End of the range, exclusive (default: now)'),
});
export type RevenueReportQuery = z.infer<typeof RevenueReportQuery>;

export const AdminRevenueReportQuery = RevenueReportQuery.extend({
  seller: Pubkey.optional().describe('A seller\'s wallet: that seller\'s report; absent: the whole marketplace'),
});
export type AdminRevenueReportQuery = z.infer<typeof AdminRevenueReportQuery>;

// not-found: a credential without a user (a service API key) has no seller report
const own = routeErrors(access.user('orders:read'), ['validation-error', 'not-found'], { actors: ['seller'] });
const admin = routeErrors(access.role('admin', 'reports:read'), ['validation-error', 'forbidden', 'not-found'], { actors: ['admin'] });

const ownDescription =
  'The caller\'s revenue as a seller: the payouts of her orders\' escrows and the tips she received, per period ' +
  'and currency (see the reports overview in the contract for each figure). A personal access token needs `orders:read`. ' +
  '400 validation-error: `from` not before `to` (`range_empty`), more than 400 periods (`too_many_periods`), a time ' +
  'before 1970-01-01 (`out_of_range`). 404 not-found for a credential without a user (a service API key).';
const adminDescription =
  'Admin only (403 forbidden otherwise; never a personal access token). The whole marketplace, or one seller with ' +
  '`seller=<wallet>` (404 not-found when no user has that wallet). Figures, periods and limits as GET /user/revenue-report.';

export const reports = c.router({
  getMyRevenueReport: {
    method: 'GET',
    path: '/user/revenue-report',
    query: RevenueReportQuery,
    summary: 'The caller\'s revenue report as a seller (JSON)',
    description: ownDescription,
    responses: { 200: RevenueReport, ...own.responses },
    metadata: own.metadata,
  },
  getMyRevenueReportCsv: {
    method: 'GET',
    path: '/user/revenue-report.csv',
    query: RevenueReportQuery,
    summary: 'The caller\'s revenue report as a seller (CSV)',
    description: `${ownDescription} The rows of the JSON report as RFC 4180 CSV (text/csv).`,
    responses: { 200: c.otherResponse({ contentType: 'text/csv', body: RevenueReportCsv }), ...own.responses },
    metadata: own.metadata,
  },
  getRevenueReport: {
    method: 'GET',
    path: '/admin/revenue-report',
    query: AdminRevenueReportQuery,
    summary: 'The marketplace\'s or a seller\'s revenue report (JSON, admin)',
    description: adminDescription,
    responses: { 200: RevenueReport, ...admin.responses },
    metadata: admin.metadata,
  },
  getRevenueReportCsv: {
    method: 'GET',
    path: '/admin/revenue-report.csv',
    query: AdminRevenueReportQuery,
    summary: 'The marketplace\'s or a seller\'s revenue report (CSV, admin)',
    description: `${adminDescription} The rows of the JSON report as RFC 4180 CSV (text/csv).`,
    responses: { 200: c.otherResponse({ contentType: 'text/csv', body: RevenueReportCsv }), ...admin.responses },
    metadata: admin.metadata,
  },
});
