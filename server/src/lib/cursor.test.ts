import { describe, expect, it } from 'vitest';
import { cursorKey, decodeCursor, encodeCursor, newestPage, type CursorSpec } from './cursor.js';

const ID = '0b6c2c4e-5a3f-4c1e-9a51-7f3b2d1e0c9a';
const spec: CursorSpec = { sort: 'newest', filters: { category: 'design', q: undefined }, keys: [cursorKey.timestamp] };

function expectInvalid(fn: () => unknown) {
  try {
    fn();
  } catch (e) {
    expect((e as { slug?: string }).slug ?? (e as { type?: string }).type).toContain('validation-error');
    return;
  }
  throw new Error('expected a validation-error');
}

describe('cursor: opaque keyset cursors', () => {
  it('round-trips the sort key and id and is url-safe', () => {
    const c = encodeCursor(spec, ['2026-01-01T00:00:00.000Z'], ID);
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(c, spec)).toEqual({ keys: ['2026-01-01T00:00:00.000Z'], id: ID });
  });

  it('ignores undefined filters and filter order in the binding', () => {
    const c = encodeCursor({ sort: 'newest', filters: { b: 1, a: 'x' } }, ['2026-01-01T00:00:00.000Z'], ID);
    expect(decodeCursor(c, { ...spec, filters: { a: 'x', b: 1, z: undefined } }).id).toBe(ID);
  });

  it('rejects garbage, other sorts, other filters and malformed keys', () => {
    const good = encodeCursor(spec, ['2026-01-01T00:00:00.000Z'], ID);
    expectInvalid(() => decodeCursor('!!!', spec));
    expectInvalid(() => decodeCursor('bm90IGpzb24', spec)); // "not json"
    expectInvalid(() => decodeCursor(Buffer.from('[1,2]').toString('base64url'), spec));
    expectInvalid(() => decodeCursor(good, { ...spec, sort: 'price_asc' }));
    expectInvalid(() => decodeCursor(good, { ...spec, filters: { category: 'writing' } }));
    expectInvalid(() => decodeCursor(encodeCursor(spec, ['yesterday'], ID), spec));
    expectInvalid(() => decodeCursor(encodeCursor(spec, ['2026-01-01T00:00:00.000Z'], 'not-a-uuid'), spec));
    expectInvalid(() => decodeCursor(encodeCursor(spec, [], ID), spec));
  });

  it('validates key kinds', () => {
    expect(cursorKey.uint('1500000')).toBe(true);
    expect(cursorKey.uint('-1')).toBe(false);
    expect(cursorKey.uint(15)).toBe(false);
    expect(cursorKey.decimal('0.123456')).toBe(true);
    expect(cursorKey.decimal('1; drop table')).toBe(false);
  });

  it('refuses key values JavaScript parses but PostgreSQL does not (forged cursors)', () => {
    expect(cursorKey.timestamp('2026-01-31T12:00:00.000Z')).toBe(true);
    for (const ts of ['0', '2026-02-30T00:00:00.000Z', '2026-02-30T00:00:00Z', '+275760-09-13T00:00:00.000Z', '2026-01-01', '2026-01-01T00:00:00.000+01:00', 1e12]) {
      expect(cursorKey.timestamp(ts), String(ts)).toBe(false);
    }
    expect(cursorKey.uint('9223372036854775807')).toBe(true);
    for (const n of ['9223372036854775808', '18446744073709551615', '99999999999999999999']) expect(cursorKey.uint(n), n).toBe(false);
    expectInvalid(() => decodeCursor(encodeCursor(spec, ['2026-02-30T00:00:00.000Z'], ID), spec));
  });
});

describe('newestPage', () => {
  const spec = { sort: 'created_desc', filters: { what: 'test' }, keys: [cursorKey.timestamp] };
  const uuid = (n: number) => `00000000-0000-4000-8000-00000000000${n}`;
  const rows = [3, 2, 1].map((n) => ({ id: uuid(n), createdAt: new Date(Date.UTC(2026, 0, n)) }));

  it('keeps `limit` rows and points the cursor at the last kept row when one more was read', () => {
    const page = newestPage(rows, 2, spec);
    expect(page.items.map((r) => r.id)).toEqual([uuid(3), uuid(2)]);
    expect(decodeCursor(page.nextCursor!, spec)).toMatchObject({ id: uuid(2), keys: ['2026-01-02T00:00:00.000Z'] });
  });

  it('has no next cursor on the last page', () => {
    expect(newestPage(rows, 3, spec)).toEqual({ items: rows, nextCursor: null });
    expect(newestPage([], 3, spec)).toEqual({ items: [], nextCursor: null });
  });
});
