/**
 * Numbers and times for people. Amounts are exact: they come from base units (a decimal string of
 * an integer) and the currency's decimals, are divided with bigint/string maths (never floats: 1e-7 SOL
 * reads 0.0000001 SOL) and are formatted by Intl.NumberFormat from a decimal string (ECMA-402 formats
 * strings exactly), with the user's locale separators. Times are shown in the user's time zone, with
 * the zone named, and relative where they matter ("in 14 min").
 */

/** Decimals of the currencies the service knows by default, until GET /currencies answered. */
export const DEFAULT_DECIMALS: Record<string, number> = { SOL: 9, USDC: 6 };

/** "1234567" base units with 6 decimals -> "1.234567" (exact; trailing zeros dropped; sign kept). */
export function baseUnitsToDecimal(baseUnits: string | bigint, decimals: number): string {
  let n = BigInt(baseUnits);
  const negative = n < 0n;
  if (negative) n = -n;
  const digits = n.toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** "2.5" UI units with 6 decimals -> 2500000n; null for anything that is not a plain decimal within the decimals. */
export function decimalToBaseUnits(text: string, decimals: number): bigint | null {
  const m = /^(\d*)(?:\.(\d*))?$/.exec(text.trim());
  if (!m || (!m[1] && !m[2])) return null;
  const fraction = m[2] ?? '';
  if (fraction.length > decimals) return null;
  return BigInt((m[1] || '0') + fraction.padEnd(decimals, '0'));
}

/** 2.5 USDC in the user's locale ("2.5 USDC", "1,234,567.5 USDC", "0.0000001 SOL"). */
export function formatAmount(baseUnits: string | bigint, decimals: number, currency: string, locale?: string): string {
  const decimal = baseUnitsToDecimal(baseUnits, decimals);
  const format = new Intl.NumberFormat(locale, { maximumFractionDigits: Math.max(decimals, 0), minimumFractionDigits: 0 });
  // ECMA-402 (Intl.NumberFormat v3) formats a decimal string exactly; the type still says number
  return `${format.format(decimal as unknown as number)} ${currency}`;
}

/** A UI amount typed as a JS number (the API's display field) turned into a plain decimal string, never "1e-7". */
export function plainNumber(value: number, decimals = 20): string {
  return value.toLocaleString('en-US', { useGrouping: false, maximumFractionDigits: Math.min(decimals, 20) });
}

// (dateStyle/timeStyle cannot be combined with timeZoneName: the fields are spelled out)
const dateTime = () => new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });
const clockTime = () => new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', timeZoneName: 'short' });

/** "26 Nov 2026, 14:05 CET": date and time in the user's zone, the zone named. */
export function formatTime(iso: string | null | undefined): string {
  return iso ? dateTime().format(new Date(iso)) : '—';
}

/** "14:05 CET" (today) or the full date and time (another day). */
export function formatClock(iso: string, now = new Date()): string {
  const at = new Date(iso);
  return at.toDateString() === now.toDateString() ? clockTime().format(at) : formatTime(iso);
}

const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1000],
];

/** "in 14 minutes", "3 hours ago" (the largest unit that fits). */
export function formatRelative(iso: string, now = Date.now()): string {
  const diff = Date.parse(iso) - now;
  const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' });
  for (const [unit, ms] of UNITS) if (Math.abs(diff) >= ms || unit === 'second') return rtf.format(Math.round(diff / ms), unit);
  return '';
}

/** "14:32" (mm:ss) or "2:03:04" (h:mm:ss) left until `iso`; "0:00" once past. For a live countdown. */
export function formatCountdown(iso: string, now = Date.now()): string {
  const left = Math.max(0, Math.floor((Date.parse(iso) - now) / 1000));
  if (left >= 86_400) return formatRelative(iso, now);
  const h = Math.floor(left / 3600);
  const m = Math.floor((left % 3600) / 60);
  const s = left % 60;
  const mm = h ? String(m).padStart(2, '0') : String(m);
  return `${h ? `${h}:` : ''}${mm}:${String(s).padStart(2, '0')}`;
}

/** "7xKX…gAsU": first and last 4 characters of a base58 address. */
export const short = (address: string): string => (address.length > 12 ? `${address.slice(0, 4)}…${address.slice(-4)}` : address);
