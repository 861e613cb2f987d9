import { describe, expect, it } from 'vitest';
import { formatUiAmount, parseDecimal, parseUnits, toBaseUnits, toBaseUnitsBound, toUiNumber, U64_MAX } from './money.js';

describe('money: UI amounts <-> base units, exact', () => {
  it('converts UI numbers to base units without floating-point error', () => {
    expect(toBaseUnits(12.5, 6)).toEqual({ ok: true, value: 12_500_000n });
    expect(toBaseUnits(0.1, 6)).toEqual({ ok: true, value: 100_000n });
    expect(toBaseUnits(0.000001, 6)).toEqual({ ok: true, value: 1n });
    expect(toBaseUnits(1.1, 9)).toEqual({ ok: true, value: 1_100_000_000n });
    expect(toBaseUnits(0.3, 9)).toEqual({ ok: true, value: 300_000_000n }); // 0.1 + 0.2 style traps
    expect(toBaseUnits(1e-7, 9)).toEqual({ ok: true, value: 100n }); // String(1e-7) === '1e-7'
    expect(toBaseUnits('42', 0)).toEqual({ ok: true, value: 42n });
    expect(toBaseUnits(123456789.123456, 6)).toEqual({ ok: true, value: 123_456_789_123_456n });
  });

  it('refuses more decimals than the currency has, zero, negatives and u64 overflow', () => {
    expect(toBaseUnits(0.0000001, 6)).toMatchObject({ ok: false, code: 'too_many_decimals' });
    expect(toBaseUnits(1.2345678, 6)).toMatchObject({ ok: false, code: 'too_many_decimals' });
    expect(toBaseUnits(0, 6)).toMatchObject({ ok: false, code: 'not_positive' });
    expect(toBaseUnits(-1, 6)).toMatchObject({ ok: false, code: 'not_positive' });
    expect(toBaseUnits(1e12, 9)).toMatchObject({ ok: false, code: 'too_big' });
    expect(toBaseUnits(Number.NaN, 6)).toMatchObject({ ok: false, code: 'invalid_number' });
    expect(toBaseUnits('abc', 6)).toMatchObject({ ok: false, code: 'invalid_number' });
    expect(toBaseUnits('18446744073709.551615', 6)).toEqual({ ok: true, value: U64_MAX });
    expect(toBaseUnits('18446744073709.551616', 6)).toMatchObject({ ok: false, code: 'too_big' });
  });

  it('trailing zeros are not extra decimals', () => {
    expect(toBaseUnits('1.50000000', 6)).toEqual({ ok: true, value: 1_500_000n });
  });

  it('rounds filter bounds towards the inside of the range', () => {
    expect(toBaseUnitsBound('0.0000015', 6, 'min')).toBe(2n);
    expect(toBaseUnitsBound('0.0000015', 6, 'max')).toBe(1n);
    expect(toBaseUnitsBound(10, 6, 'min')).toBe(10_000_000n);
    expect(toBaseUnitsBound(0, 6, 'min')).toBe(0n);
    expect(toBaseUnitsBound(-1, 6, 'min')).toBeNull();
  });

  it('formats base units back to exact UI text and numbers', () => {
    expect(formatUiAmount(12_500_000n, 6)).toBe('12.5');
    expect(formatUiAmount(1n, 6)).toBe('0.000001');
    expect(formatUiAmount(3_000_000_000n, 9)).toBe('3');
    expect(formatUiAmount(0n, 6)).toBe('0');
    // the one base-unit formatter (was also chain/balances.ts formatUnits, with these cases)
    expect(formatUiAmount(24_375_000n, 6)).toBe('24.375');
    expect(formatUiAmount(18_446_744_073_709_551_615n, 9)).toBe('18446744073.709551615');
    expect(formatUiAmount(5n, 0)).toBe('5');
    expect(toUiNumber(1_100_000_000n, 9)).toBe(1.1);
  });

  it('parses exponent notation exactly', () => {
    expect(parseDecimal('1.5e3')).toEqual({ negative: false, int: '1500', frac: '' });
    expect(parseDecimal(1e21)).toEqual({ negative: false, int: '1000000000000000000000', frac: '' });
    expect(parseDecimal('.5')).toEqual({ negative: false, int: '0', frac: '5' });
    expect(parseDecimal('.')).toBeNull();
  });
});

// moved from tests/chain.errors.test.ts with the parser (chain/balances.ts had a second one)
describe('exact decimal amounts', () => {
  it('parses decimal strings and refuses excess precision', () => {
    expect(parseUnits('100.5', 6)).toBe(100_500_000n);
    expect(parseUnits('0.000001', 6)).toBe(1n);
    expect(parseUnits('2', 9)).toBe(2_000_000_000n);
    expect(() => parseUnits('0.0000001', 6)).toThrow(RangeError);
    expect(() => parseUnits('-1', 6)).toThrow(TypeError);
  });
});
