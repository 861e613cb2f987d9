/**
 * Revenue reports, pure parts (issue 25 part 6): the UTC periods (day, ISO week, calendar month) and their
 * edges, the cut first and last periods, the period cap, and the CSV (RFC 4180 header, CRLF, quoting,
 * formula-leading text).
 */
import { describe, expect, it } from 'vitest';
import { CSV_COLUMNS, type RevenueReportRow } from '@bazaar/contract';
import { csvField, nextPeriodStart, periodStart, reportCsv, reportPeriods } from '../server/src/modules/reports/index.js';

const d = (iso: string) => new Date(iso);
const iso = (p: { start: Date; end: Date }) => [p.start.toISOString(), p.end.toISOString()];

describe('report periods (UTC)', () => {
  it('period edges: the last millisecond of a day, week or month belongs to it, its end to the next', () => {
    expect(periodStart(d('2026-03-01T23:59:59.999Z'), 'day').toISOString()).toBe('2026-03-01T00:00:00.000Z');
    expect(periodStart(d('2026-03-02T00:00:00.000Z'), 'day').toISOString()).toBe('2026-03-02T00:00:00.000Z');
    // ISO weeks start on Monday: Sunday 2026-03-01 is in the week of Monday 2026-02-23
    expect(periodStart(d('2026-03-01T23:59:59.999Z'), 'week').toISOString()).toBe('2026-02-23T00:00:00.000Z');
    expect(periodStart(d('2026-03-02T00:00:00.000Z'), 'week').toISOString()).toBe('2026-03-02T00:00:00.000Z');
    expect(periodStart(d('2026-02-28T23:59:59.999Z'), 'month').toISOString()).toBe('2026-02-01T00:00:00.000Z');
    expect(nextPeriodStart(d('2024-02-01T00:00:00.000Z'), 'month').toISOString()).toBe('2024-03-01T00:00:00.000Z');
    expect(nextPeriodStart(d('2026-12-01T00:00:00.000Z'), 'month').toISOString()).toBe('2027-01-01T00:00:00.000Z');
    // a week across the year's end
    expect(periodStart(d('2027-01-01T12:00:00.000Z'), 'week').toISOString()).toBe('2026-12-28T00:00:00.000Z');
  });

  it('any year: the years 0..99 are not read as 1900..1999 (Date.UTC\'s two-digit years)', () => {
    expect(periodStart(d('0050-06-15T12:00:00.000Z'), 'month').toISOString()).toBe('0050-06-01T00:00:00.000Z');
    expect(nextPeriodStart(d('0099-12-01T00:00:00.000Z'), 'month').toISOString()).toBe('0100-01-01T00:00:00.000Z');
    expect(periodStart(d('9999-12-31T23:59:59.999Z'), 'week').toISOString()).toBe('9999-12-27T00:00:00.000Z');
  });

  it('UTC, whatever the offset of the timestamp sent: 2026-03-02T01:00+02:00 is 2026-03-01 23:00 UTC, day 2026-03-01', () => {
    expect(periodStart(d('2026-03-02T01:00:00+02:00'), 'day').toISOString()).toBe('2026-03-01T00:00:00.000Z');
  });

  it('the range [from, to) is covered exactly: the first and last periods are cut at from and to', () => {
    const p = reportPeriods(d('2026-03-01T12:00:00.000Z'), d('2026-03-03T06:00:00.000Z'), 'day');
    expect(p.map(iso)).toEqual([
      ['2026-03-01T12:00:00.000Z', '2026-03-02T00:00:00.000Z'],
      ['2026-03-02T00:00:00.000Z', '2026-03-03T00:00:00.000Z'],
      ['2026-03-03T00:00:00.000Z', '2026-03-03T06:00:00.000Z'],
    ]);
    expect(reportPeriods(d('2026-01-15T00:00:00.000Z'), d('2026-03-01T00:00:00.000Z'), 'month').map(iso)).toEqual([
      ['2026-01-15T00:00:00.000Z', '2026-02-01T00:00:00.000Z'],
      ['2026-02-01T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
    ]);
    expect(reportPeriods(d('2026-03-04T00:00:00.000Z'), d('2026-03-18T00:00:00.000Z'), 'week').map((x) => x.start.toISOString())).toEqual([
      '2026-03-04T00:00:00.000Z',
      '2026-03-09T00:00:00.000Z',
      '2026-03-16T00:00:00.000Z',
    ]);
    expect(reportPeriods(d('2026-03-02T00:00:00.000Z'), d('2026-03-02T00:00:00.000Z'), 'day')).toEqual([]);
  });

  it('stops after max + 1 periods (a caller refuses longer ranges without building them)', () => {
    expect(reportPeriods(d('2000-01-01T00:00:00.000Z'), d('2100-01-01T00:00:00.000Z'), 'day', 400)).toHaveLength(401);
  });
});

describe('report CSV', () => {
  const row: RevenueReportRow = {
    period_start: '2026-03-01T00:00:00.000Z',
    period_end: '2026-03-02T00:00:00.000Z',
    currency: 'USDC',
    decimals: 6,
    volume_base_units: '25000000',
    fee_revenue_base_units: '625000',
    seller_payouts_base_units: '24375000',
    buyer_refunds_base_units: '0',
    tips_base_units: '2500000',
    escrows_closed: 1,
    escrows_unverified: 0,
    tips: 1,
  };

  it('RFC 4180: the header line of CSV_COLUMNS, one line per row in column order, CRLF after every line', () => {
    const csv = reportCsv([row, { ...row, currency: 'SOL', decimals: 9 }]);
    expect(csv.endsWith('\r\n')).toBe(true);
    const lines = csv.split('\r\n');
    expect(lines).toHaveLength(4); // header, two rows, '' after the last CRLF
    expect(lines[0]).toBe(
      'period_start,period_end,currency,decimals,volume_base_units,fee_revenue_base_units,seller_payouts_base_units,buyer_refunds_base_units,tips_base_units,escrows_closed,escrows_unverified,tips',
    );
    expect(lines[0]!.split(',')).toEqual([...CSV_COLUMNS]);
    expect(lines[1]).toBe('2026-03-01T00:00:00.000Z,2026-03-02T00:00:00.000Z,USDC,6,25000000,625000,24375000,0,2500000,1,0,1');
    expect(lines[2]!.split(',')[2]).toBe('SOL');
    expect(reportCsv([])).toBe(`${CSV_COLUMNS.join(',')}\r\n`);
  });

  it('escaping: commas, quotes and line breaks are quoted with quotes doubled; formula-leading text is prefixed', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\r\nlines')).toBe('"two\r\nlines"');
    expect(csvField('=HYPERLINK("x")')).toBe('"\'=HYPERLINK(""x"")"');
    expect(csvField('+1')).toBe("'+1");
    expect(csvField('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvField(0)).toBe('0');
    expect(csvField('plain')).toBe('plain');
  });
});
