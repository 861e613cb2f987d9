/**
 * Report periods in UTC: a day runs from 00:00 UTC to the next 00:00 UTC, a week is an ISO 8601 week
 * (Monday 00:00 UTC to the next Monday), a month a calendar month (the 1st 00:00 UTC to the next 1st).
 * The one place period edges are computed: the repository assigns events to these edges
 * (`width_bucket` over the boundaries), so the database's time zone plays no part.
 */
import type { ReportGranularity } from '@bazaar/contract';

/** One period of a report: [start, end), cut at the report's range. */
export interface ReportPeriod {
  start: Date;
  end: Date;
}

/** Midnight UTC of day `d` of month `m` (0-based; overflow rolls over) of year `y`, for any year (Date.UTC reads 0..99 as 1900..1999). */
function utcDay(y: number, m: number, d: number): Date {
  const t = new Date(0);
  t.setUTCFullYear(y, m, d);
  return t;
}

/** The start (UTC) of the period of `granularity` that contains `t`. */
export function periodStart(t: Date, granularity: ReportGranularity): Date {
  const y = t.getUTCFullYear();
  const m = t.getUTCMonth();
  const d = t.getUTCDate();
  if (granularity === 'month') return utcDay(y, m, 1);
  if (granularity === 'day') return utcDay(y, m, d);
  // ISO week: Monday is day 1, Sunday day 7
  const isoDay = t.getUTCDay() === 0 ? 7 : t.getUTCDay();
  return utcDay(y, m, d - (isoDay - 1));
}

/** The start of the period after the one starting at `start` (a period start). */
export function nextPeriodStart(start: Date, granularity: ReportGranularity): Date {
  const y = start.getUTCFullYear();
  const m = start.getUTCMonth();
  const d = start.getUTCDate();
  if (granularity === 'month') return utcDay(y, m + 1, 1);
  return utcDay(y, m, d + (granularity === 'week' ? 7 : 1));
}

/**
 * The periods covering [from, to) in order, the first starting at `from` and the last ending at `to` (cut
 * periods). Stops after `max + 1` periods, so a caller can refuse a range longer than `max` without building
 * it. `from` must be before `to` (else: no period).
 */
export function reportPeriods(from: Date, to: Date, granularity: ReportGranularity, max = Number.POSITIVE_INFINITY): ReportPeriod[] {
  const out: ReportPeriod[] = [];
  let start = from;
  while (start < to && out.length <= max) {
    const next = nextPeriodStart(periodStart(start, granularity), granularity);
    const end = next < to ? next : to;
    out.push({ start, end });
    start = end;
  }
  return out;
}
