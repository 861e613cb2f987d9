/**
 * Revenue reports (contract reports.contract.ts, whose overview defines every figure): the range and periods
 * checked and cut (periods.ts), the ledger sums read (reports.repo.ts) and laid out as one row per period and
 * currency, zero rows included, plus totals per currency.
 *
 * Errors: DomainError validation-error (`errors[].code` range_empty: `from` not before `to`; too_many_periods:
 * more than MAX_REPORT_PERIODS periods; out_of_range: before 1970-01-01), not-found (a seller wallet no user has).
 */
import {
  DEFAULT_REPORT_DAYS,
  MAX_REPORT_PERIODS,
  type ReportGranularity,
  type RevenueReport,
  type RevenueReportRow,
} from '@bazaar/contract';
import { DomainError } from '../../errors.js';
import { reportPeriods } from './periods.js';
import type { ReportsRepo } from './reports.repo.js';

/** A configured currency: its code and decimals (GET /currencies). */
export interface ReportCurrency {
  code: string;
  decimals: number;
}

/** A report request: granularity and the optional range ([from, to); defaults: the 30 days before now). */
export interface ReportRequest {
  granularity: ReportGranularity;
  from?: string;
  to?: string;
}

type Figures = Omit<RevenueReportRow, 'period_start' | 'period_end' | 'currency' | 'decimals'>;

const ZERO: Figures = {
  volume_base_units: '0',
  fee_revenue_base_units: '0',
  seller_payouts_base_units: '0',
  buyer_refunds_base_units: '0',
  tips_base_units: '0',
  escrows_closed: 0,
  escrows_unverified: 0,
  tips: 0,
};

function add(a: Figures, b: Figures): Figures {
  const s = (k: keyof Figures) => (BigInt(a[k] as string) + BigInt(b[k] as string)).toString();
  return {
    volume_base_units: s('volume_base_units'),
    fee_revenue_base_units: s('fee_revenue_base_units'),
    seller_payouts_base_units: s('seller_payouts_base_units'),
    buyer_refunds_base_units: s('buyer_refunds_base_units'),
    tips_base_units: s('tips_base_units'),
    escrows_closed: a.escrows_closed + b.escrows_closed,
    escrows_unverified: a.escrows_unverified + b.escrows_unverified,
    tips: a.tips + b.tips,
  };
}

/** The earliest instant a report covers (the Unix epoch: before it nothing was paid on any chain). */
const EARLIEST = new Date(0);

const invalid = (code: string, message: string, path = 'query.from') =>
  new DomainError('validation-error', message, { errors: [{ path, message, code }] });

export function createReportsService(o: { repo: ReportsRepo; currencies: () => readonly ReportCurrency[]; now?: () => Date }) {
  const now = o.now ?? (() => new Date());

  async function build(req: ReportRequest, seller: { id: string; wallet: string } | null): Promise<RevenueReport> {
    const to = req.to ? new Date(req.to) : now();
    const from = req.from ? new Date(req.from) : new Date(to.getTime() - DEFAULT_REPORT_DAYS * 86_400_000);
    if (from < EARLIEST) throw invalid('out_of_range', '`from` must be 1970-01-01 or later.');
    if (to < EARLIEST) throw invalid('out_of_range', '`to` must be 1970-01-01 or later.', 'query.to');
    if (!(from < to)) throw invalid('range_empty', '`from` must be before `to`.');
    const periods = reportPeriods(from, to, req.granularity, MAX_REPORT_PERIODS);
    if (periods.length > MAX_REPORT_PERIODS) {
      throw invalid('too_many_periods', `The range holds more than ${MAX_REPORT_PERIODS} ${req.granularity} periods: shorten it or use a longer granularity.`);
    }
    const bounds = [...periods.map((p) => p.start), to];
    const sellerId = seller?.id ?? null;
    const [escrows, tips] = await Promise.all([o.repo.escrowSums(bounds, sellerId), o.repo.tipSums(bounds, sellerId)]);

    // currency -> decimals: the configured ones, then any other the ledger paid in (an unconfigured one keeps its orders' decimals)
    const decimals = new Map<string, number>(o.currencies().map((c) => [c.code, c.decimals]));
    for (const r of [...escrows, ...tips]) if (!decimals.has(r.currency)) decimals.set(r.currency, r.decimals);
    const codes = [...decimals.keys()].sort();

    const cells = new Map<string, Figures>();
    const cell = (bucket: number, currency: string) => `${bucket}\u0000${currency}`;
    for (const e of escrows) {
      const volume = BigInt(e.buyer) + BigInt(e.seller) + BigInt(e.treasury);
      const k = cell(e.bucket, e.currency);
      cells.set(k, add(cells.get(k) ?? ZERO, {
        ...ZERO,
        volume_base_units: volume.toString(),
        fee_revenue_base_units: e.treasury,
        seller_payouts_base_units: e.seller,
        buyer_refunds_base_units: e.buyer,
        escrows_closed: e.closed,
        escrows_unverified: e.unverified,
      }));
    }
    for (const t of tips) {
      const k = cell(t.bucket, t.currency);
      cells.set(k, add(cells.get(k) ?? ZERO, { ...ZERO, tips_base_units: t.amount, tips: t.count }));
    }

    const rows: RevenueReportRow[] = [];
    const totals = new Map<string, Figures>(codes.map((c) => [c, ZERO]));
    periods.forEach((p, i) => {
      for (const currency of codes) {
        const f = cells.get(cell(i + 1, currency)) ?? ZERO;
        totals.set(currency, add(totals.get(currency)!, f));
        rows.push({ period_start: p.start.toISOString(), period_end: p.end.toISOString(), currency, decimals: decimals.get(currency)!, ...f });
      }
    });
    return {
      scope: seller ? 'seller' : 'marketplace',
      seller_wallet: seller?.wallet ?? null,
      granularity: req.granularity,
      from: from.toISOString(),
      to: to.toISOString(),
      rows,
      totals: codes.map((currency) => ({ currency, decimals: decimals.get(currency)!, ...totals.get(currency)! })),
    };
  }

  return {
    /** The report of seller `userId` (her own: the caller). */
    async sellerReport(userId: string, req: ReportRequest): Promise<RevenueReport> {
      const wallet = await o.repo.walletOf(userId);
      if (!wallet) throw new DomainError('not-found', 'No such user.');
      return build(req, { id: userId, wallet });
    },
    /** An admin's report: the marketplace, or the seller with wallet `sellerWallet` (404 not-found when no user has it). */
    async adminReport(req: ReportRequest & { seller?: string }): Promise<RevenueReport> {
      if (!req.seller) return build(req, null);
      const id = await o.repo.userIdByWallet(req.seller);
      if (!id) throw new DomainError('not-found', 'No user has this wallet.');
      return build(req, { id, wallet: req.seller });
    },
  };
}

export type ReportsService = ReturnType<typeof createReportsService>;
