/**
 * Money: UI amounts (what people type, e.g. 12.5 USDC) <-> base units (u64 as bigint, what the DB and
 * the chain hold), exactly, without floating-point arithmetic.
 *
 * A UI amount arrives as a JS number (JSON) or as query-string text. A JS number is turned into its
 * shortest round-trip decimal text (`String(n)`, which is the text the client sent for any amount a
 * client can reasonably send), and that text is converted digit by digit.
 *
 * `toBaseUnits` refuses more decimal places than the currency has (`too_many_decimals`), zero or
 * negative amounts (`not_positive`) and amounts above u64 (`too_big`). Bounds for filters use
 * `toBaseUnitsBound`, which rounds towards the inside of the range instead of refusing.
 */

export const U64_MAX = 18_446_744_073_709_551_615n;

export type AmountErrorCode = 'invalid_number' | 'not_positive' | 'too_many_decimals' | 'too_big';

export type AmountResult = { ok: true; value: bigint } | { ok: false; code: AmountErrorCode; message: string };

interface DecimalParts {
  negative: boolean;
  /** digits without sign or dot, leading zeros allowed */
  int: string;
  /** fraction digits, trailing zeros removed */
  frac: string;
}

const DECIMAL = /^([+-])?(\d+)?(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** Parse decimal text (optionally in exponent form, as `String(1e-7)` gives) into exact digits. */
export function parseDecimal(input: number | string): DecimalParts | null {
  if (typeof input === 'number' && !Number.isFinite(input)) return null;
  const text = typeof input === 'number' ? String(input) : input.trim();
  const m = DECIMAL.exec(text);
  if (!m || (m[2] === undefined && (m[3] === undefined || m[3] === ''))) return null;
  let digits = (m[2] ?? '') + (m[3] ?? '');
  let point = (m[2] ?? '').length; // position of the decimal point within `digits`
  const exp = m[4] ? Number(m[4]) : 0;
  if (!Number.isSafeInteger(exp) || Math.abs(exp) > 400) return null;
  point += exp;
  if (point < 0) {
    digits = '0'.repeat(-point) + digits;
    point = 0;
  } else if (point > digits.length) {
    digits = digits + '0'.repeat(point - digits.length);
  }
  const int = digits.slice(0, point).replace(/^0+(?=\d)/, '') || '0';
  const frac = digits.slice(point).replace(/0+$/, '');
  return { negative: m[1] === '-', int, frac };
}

/** Exact UI amount -> base units; refuses extra decimals, non-positive amounts and u64 overflow. */
export function toBaseUnits(amount: number | string, decimals: number): AmountResult {
  const p = parseDecimal(amount);
  if (!p) return { ok: false, code: 'invalid_number', message: 'must be a decimal number' };
  if (p.frac.length > decimals) {
    return {
      ok: false,
      code: 'too_many_decimals',
      message: `at most ${decimals} decimal place${decimals === 1 ? '' : 's'} for this currency`,
    };
  }
  const value = BigInt(p.int + p.frac.padEnd(decimals, '0'));
  if (p.negative || value === 0n) return { ok: false, code: 'not_positive', message: 'must be greater than 0' };
  if (value > U64_MAX) return { ok: false, code: 'too_big', message: 'is too large for this currency' };
  return { ok: true, value };
}

/**
 * Exact decimal text ("12.5", "0") -> base units, throwing: for amounts a script or a setting gives
 * (request input goes through toBaseUnits, which answers a result instead). Zero is allowed. Throws
 * TypeError when the text is not a non-negative decimal, RangeError for more fractional digits than
 * `decimals` or a value above u64. Same name and arguments as ethers' `parseUnits(value, decimals)`.
 */
export function parseUnits(value: string, decimals: number): bigint {
  const p = parseDecimal(value);
  if (!p || p.negative) throw new TypeError(`not a decimal amount: ${value}`);
  if (p.frac.length > decimals) throw new RangeError(`${value} has more than ${decimals} decimals`);
  const units = BigInt(p.int + p.frac.padEnd(decimals, '0'));
  if (units > U64_MAX) throw new RangeError(`${value} is too large for a u64 amount`);
  return units;
}

/**
 * A filter bound in UI units -> the equivalent bound in base units, exactly:
 * `price >= min` <=> `base >= ceil(min * 10^d)`, `price <= max` <=> `base <= floor(max * 10^d)`.
 * Returns null when the text is not a non-negative decimal.
 */
export function toBaseUnitsBound(amount: number | string, decimals: number, direction: 'min' | 'max'): bigint | null {
  const p = parseDecimal(amount);
  if (!p || (p.negative && (p.int !== '0' || p.frac !== ''))) return null;
  const kept = p.frac.slice(0, decimals).padEnd(decimals, '0');
  const dropped = p.frac.slice(decimals);
  let value = BigInt(p.int + kept);
  if (direction === 'min' && /[1-9]/.test(dropped)) value += 1n;
  return value;
}

/** Base units -> exact decimal text without trailing zeros ("12.5", "0.000001", "3"). */
export function formatUiAmount(baseUnits: bigint, decimals: number): string {
  const negative = baseUnits < 0n;
  const digits = (negative ? -baseUnits : baseUnits).toString().padStart(decimals + 1, '0');
  const int = digits.slice(0, digits.length - decimals);
  const frac = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return (negative ? '-' : '') + int + (frac ? `.${frac}` : '');
}

/** Base units -> the UI number shown in JSON (`price`); display only, never computed with. */
export function toUiNumber(baseUnits: bigint, decimals: number): number {
  return Number(formatUiAmount(baseUnits, decimals));
}
