/**
 * Reports (issue 25, admin): the marketplace's revenue per day, from what the chain paid (GET
 * /admin/revenue-report): a chart of the volume and the fee revenue per day in one currency, drawn by uPlot
 * (`uplot@1.6.32`: a canvas time-series chart, ≈ 20 kB gzip with its CSS, loaded with this page only, so it
 * never weighs on a shopper's first load), the same figures as a table (what a screen reader reads; the chart
 * is an image with a text summary), and the CSV of the report to download.
 */
import { useQuery } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import './operator.css';
import type { RevenueReport } from '@bazaar/client-sdk';
import { client, ok } from '../api.js';
import { baseUnitsToDecimal, formatAmount } from '../format.js';
import { ErrorBox, Field, Loading, PageHeading } from '../ui.js';

const DAY = 86_400_000;
const dateOnly = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** The chart: volume and fee revenue per day (UI amounts) of `currency`; its width follows its box. */
function RevenueChart({ report, currency }: { report: RevenueReport; currency: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const rows = report.rows.filter((r) => r.currency === currency);
    const ui = (base: string, decimals: number) => Number(baseUnitsToDecimal(base, decimals));
    const data: uPlot.AlignedData = [
      rows.map((r) => Date.parse(r.period_start) / 1000),
      rows.map((r) => ui(r.volume_base_units, r.decimals)),
      rows.map((r) => ui(r.fee_revenue_base_units, r.decimals)),
    ];
    const size = () => ({ width: Math.max(240, el.clientWidth), height: 260 });
    const plot = new uPlot(
      {
        ...size(),
        legend: { show: true, live: false },
        cursor: { show: false },
        // the fee is a small share of the volume: its own scale on the right, so its line is not flat
        scales: { x: { time: true }, volume: {}, fee: {} },
        axes: [
          {},
          { scale: 'volume', label: `Volume (${currency})`, size: 60 },
          { scale: 'fee', label: `Fee revenue (${currency})`, side: 1, size: 60, grid: { show: false } },
        ],
        series: [
          {},
          { label: `Volume (${currency}, left)`, scale: 'volume', stroke: '#14213d', width: 2, fill: 'rgba(20,33,61,0.08)' },
          { label: `Fee revenue (${currency}, right)`, scale: 'fee', stroke: '#b35900', width: 2, dash: [6, 4] },
        ],
      },
      data,
      el,
    );
    const ro = new ResizeObserver(() => plot.setSize(size()));
    ro.observe(el);
    return () => {
      ro.disconnect();
      plot.destroy();
    };
  }, [report, currency]);
  return <div ref={box} class="chart" data-testid="revenue-chart" aria-hidden="true" />;
}

export function ReportsPage() {
  const now = Date.now();
  const [range, setRange] = useState({ from: dateOnly(now - 29 * DAY), to: dateOnly(now) });
  const [draft, setDraft] = useState(range);
  const [currency, setCurrency] = useState<string | null>(null);
  // [from, to + 1 day): `to` is the last day shown
  const query = { granularity: 'day' as const, from: `${range.from}T00:00:00.000Z`, to: new Date(Date.parse(`${range.to}T00:00:00.000Z`) + DAY).toISOString() };
  const q = useQuery({ queryKey: ['report', query], queryFn: async () => ok(await client.reports.getRevenueReport({ query }), 200) });
  const csv = useQuery({
    queryKey: ['report.csv', query],
    queryFn: async () => URL.createObjectURL(new Blob([String(ok(await client.reports.getRevenueReportCsv({ query }), 200))], { type: 'text/csv' })),
  });
  useEffect(() => () => void (csv.data && URL.revokeObjectURL(csv.data)), [csv.data]);
  if (q.error) return <ErrorBox heading="Reports" error={q.error} retry={() => void q.refetch()} />;
  const report = q.data;
  const currencies = report?.totals.map((t) => t.currency) ?? [];
  const shown = currency && currencies.includes(currency) ? currency : (report?.totals.find((t) => t.volume_base_units !== '0')?.currency ?? currencies[0] ?? null);
  const rows = report && shown ? report.rows.filter((r) => r.currency === shown) : [];
  const total = report?.totals.find((t) => t.currency === shown);
  return (
    <section>
      <PageHeading text="Reports" />
      <p>The marketplace’s revenue per day (UTC), from what the chain paid out of the escrows.</p>
      <form
        class="search"
        aria-label="Period"
        onSubmit={(e) => {
          e.preventDefault();
          if (draft.from && draft.to && draft.from <= draft.to) setRange(draft);
        }}
      >
        <Field id="r-from" label="From (day, UTC)">
          <input id="r-from" type="date" value={draft.from} max={draft.to} onInput={(e) => setDraft({ ...draft, from: e.currentTarget.value })} />
        </Field>
        <Field id="r-to" label="To (day, UTC, included)">
          <input id="r-to" type="date" value={draft.to} min={draft.from} onInput={(e) => setDraft({ ...draft, to: e.currentTarget.value })} />
        </Field>
        <button type="submit" class="primary">
          Show
        </button>
        {csv.data ? (
          <a class="button" href={csv.data} download={`bazaar-revenue-${range.from}-${range.to}.csv`} data-testid="csv-link">
            Download CSV
          </a>
        ) : null}
      </form>
      {!report ? (
        <Loading what="Reading the report" />
      ) : !shown ? (
        <p class="empty">No currency is configured.</p>
      ) : (
        <>
          <Field id="r-currency" label="Currency">
            <select id="r-currency" value={shown} onChange={(e) => setCurrency(e.currentTarget.value)}>
              {currencies.map((c) => (
                <option value={c}>{c}</option>
              ))}
            </select>
          </Field>
          <figure class="chart-figure">
            <figcaption id="chart-caption">
              Volume and fee revenue per day in {shown}
              {total ? (
                <>
                  : {formatAmount(total.volume_base_units, total.decimals, shown)} volume, {formatAmount(total.fee_revenue_base_units, total.decimals, shown)} fee revenue,{' '}
                  {total.escrows_closed} escrow{total.escrows_closed === 1 ? '' : 's'} closed over the period
                </>
              ) : null}
              . The table below holds the same figures.
            </figcaption>
            <RevenueChart report={report} currency={shown} />
          </figure>
          <div class="table-scroll" tabIndex={0} role="region" aria-label={`Revenue per day in ${shown}`}>
            <table data-testid="report-table">
              <caption>Per day in {shown}</caption>
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col">Volume</th>
                  <th scope="col">Fee revenue</th>
                  <th scope="col">Seller payouts</th>
                  <th scope="col">Refunds</th>
                  <th scope="col">Tips</th>
                  <th scope="col">Escrows closed</th>
                </tr>
              </thead>
              <tbody>
                {rows
                  .filter((r) => r.escrows_closed || r.tips)
                  .map((r) => (
                    <tr>
                      <th scope="row">{r.period_start.slice(0, 10)}</th>
                      <td class="num">{formatAmount(r.volume_base_units, r.decimals, shown)}</td>
                      <td class="num">{formatAmount(r.fee_revenue_base_units, r.decimals, shown)}</td>
                      <td class="num">{formatAmount(r.seller_payouts_base_units, r.decimals, shown)}</td>
                      <td class="num">{formatAmount(r.buyer_refunds_base_units, r.decimals, shown)}</td>
                      <td class="num">{formatAmount(r.tips_base_units, r.decimals, shown)}</td>
                      <td class="num">{r.escrows_closed}</td>
                    </tr>
                  ))}
              </tbody>
            </table>
          </div>
          <p class="meta">Days without a closed escrow or a tip are left out of the table; the chart shows them as zero.</p>
        </>
      )}
    </section>
  );
}
