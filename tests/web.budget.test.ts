/**
 * The web app's first-load budget check (web/scripts/budget.ts, run by `npm run web:build`): it counts the
 * JS and CSS that index.html loads (gzip -9), not the chunks loaded on demand, and fails over 100 kB.
 * Fixture builds here; the real build is checked by the web-build stage itself.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { chunks, FIRST_LOAD_BUDGET_BYTES, main, totals } from '../web/scripts/budget.js';

const dirs: string[] = [];

/** A fake Vite build: index.html loads `entry` (and the stylesheet); `lazy` is only on disk. Bytes are random (gzip keeps their size). */
function fakeBuild(entryBytes: number, lazyBytes: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'bazaar-web-budget-'));
  dirs.push(dir);
  mkdirSync(join(dir, 'assets'));
  writeFileSync(
    join(dir, 'index.html'),
    '<script type="module" crossorigin src="/app/assets/index-A.js"></script><link rel="stylesheet" href="/app/assets/index-B.css">',
  );
  writeFileSync(join(dir, 'assets', 'index-A.js'), randomBytes(entryBytes).toString('base64'));
  writeFileSync(join(dir, 'assets', 'index-B.css'), 'body{margin:0}');
  writeFileSync(join(dir, 'assets', 'order-deals-C.js'), randomBytes(lazyBytes).toString('base64'));
  writeFileSync(join(dir, 'assets', 'index-A.js.map'), randomBytes(lazyBytes).toString('base64'));
  return dir;
}

afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('web first-load budget (web/scripts/budget.ts)', () => {
  it('is 100 kB of gzip', () => {
    expect(FIRST_LOAD_BUDGET_BYTES).toBe(100_000);
  });

  it('counts what index.html loads, not the on-demand chunks nor source maps', () => {
    // base64 of random bytes gzips to about 3/4 of its length
    const list = chunks(fakeBuild(60_000, 120_000));
    expect(list.map((c) => [c.name, c.initial])).toEqual([
      ['index-A.js', true],
      ['index-B.css', true],
      ['order-deals-C.js', false],
    ]);
    const t = totals(list);
    expect(t.initial_gzip).toBe(list[0]!.gzip + list[1]!.gzip);
    expect(t.lazy_gzip).toBe(list[2]!.gzip);
    expect(t.initial_gzip).toBeLessThan(FIRST_LOAD_BUDGET_BYTES);
    expect(t.lazy_gzip).toBeGreaterThan(FIRST_LOAD_BUDGET_BYTES);
  });

  it('passes a first load within the budget however large the lazy chunks, fails one over it, and fails without a build', () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(main([fakeBuild(60_000, 200_000)])).toBe(0);
      expect(log.mock.calls.at(-1)?.[0]).toMatch(/^web budget: ok: first load \d+\.\d kB gzip of a 100\.0 kB budget/);
      expect(main([fakeBuild(200_000, 1_000)])).toBe(1);
      expect(error.mock.calls.at(-1)?.[0]).toMatch(/^web budget: OVER BUDGET: first load \d+\.\d kB gzip of a 100\.0 kB budget/);
      expect(main([join(tmpdir(), 'bazaar-web-budget-missing')])).toBe(1);
    } finally {
      log.mockRestore();
      error.mockRestore();
    }
  });
});
