/**
 * CSV (RFC 4180) of a revenue report: the header line CSV_COLUMNS, then one line per row, CRLF line ends.
 * A field holding a comma, a double quote, CR or LF is quoted and its quotes doubled. A field starting with
 * `=`, `+`, `-`, `@`, tab or CR is prefixed with `'` (OWASP "CSV injection"), so a spreadsheet never reads it
 * as a formula; today every field is a timestamp, a currency code (A-Z) or a number, so nothing is prefixed, but
 * the rule holds for any column added later.
 */
import { CSV_COLUMNS, type RevenueReportRow } from '@bazaar/contract';

/** One CSV field (RFC 4180 quoting; formula-leading text prefixed with `'`). */
export function csvField(value: string | number): string {
  let s = String(value);
  if (/^[=+\-@\t\r]/.test(s) && typeof value === 'string') s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The report's rows as CSV text (header line first, every line ended by CRLF). */
export function reportCsv(rows: readonly RevenueReportRow[]): string {
  const lines = [CSV_COLUMNS.join(',')];
  for (const r of rows) lines.push(CSV_COLUMNS.map((c) => csvField(r[c])).join(','));
  return lines.map((l) => `${l}\r\n`).join('');
}
