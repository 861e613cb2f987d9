/**
 * The web app's first-load budget (web/README.md "Bundle and its budget"): the JS and CSS that index.html
 * loads (its script, stylesheets and modulepreload links), gzip -9, at most 100 kB (100 000 bytes). The chunks
 * loaded on demand (the order page's milestones, the conversations) are printed but not counted. Run by
 * `npm run web:build` after the build, so the CI stage that builds the app fails when the first load grows
 * past the budget; `web/scripts/measure.ts` reports the same figures.
 *
 *   tsx web/scripts/budget.ts [DIST]     prints each chunk (raw, gzip) and the totals; exit 1 over budget
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

/** The first-load budget in bytes of gzip -9 (JS + CSS that index.html loads). */
export const FIRST_LOAD_BUDGET_BYTES = 100_000;

/**
 * Each built JS and CSS file of `dir` (a Vite build: index.html, assets/): name, raw and gzip -9 bytes, and
 * whether index.html loads it (`initial`), sorted initial first, then by size.
 * @throws when `dir` has no index.html or assets/ (the app is not built)
 */
/** One built JS or CSS file: bytes raw and gzip -9; `initial`: index.html loads it. */
export interface Chunk {
  name: string;
  raw: number;
  gzip: number;
  initial: boolean;
}

export function chunks(dir: string): Chunk[] {
  const html = readFileSync(join(dir, 'index.html'), 'utf8');
  return readdirSync(join(dir, 'assets'))
    .filter((name) => /\.(js|css)$/.test(name))
    .map((name) => {
      const bytes = readFileSync(join(dir, 'assets', name));
      return { name, raw: bytes.length, gzip: gzipSync(bytes, { level: 9 }).length, initial: html.includes(`assets/${name}`) };
    })
    .sort((a, b) => Number(b.initial) - Number(a.initial) || b.gzip - a.gzip);
}

/** Totals of `chunks(dir)`: raw and gzip of all, gzip of the first load (`initial_gzip`) and of the rest. */
export function totals(list: Chunk[]) {
  const sum = (xs: Chunk[], k: 'raw' | 'gzip') => xs.reduce((n, c) => n + c[k], 0);
  const initial = list.filter((c) => c.initial);
  const gzip = sum(list, 'gzip');
  return { files: list.length, raw: sum(list, 'raw'), gzip, initial_gzip: sum(initial, 'gzip'), lazy_gzip: gzip - sum(initial, 'gzip') };
}

const kB = (n: number) => `${(n / 1000).toFixed(1)} kB`;

/** The command: 0 within the budget, 1 over it or without a build. */
export function main(argv: string[]): number {
  const dir = resolve(argv[0] ?? fileURLToPath(new URL('../dist', import.meta.url)));
  const budget = FIRST_LOAD_BUDGET_BYTES;
  let list: Chunk[];
  try {
    list = chunks(dir);
  } catch (err) {
    console.error(`web budget: cannot read the build in ${dir} (${(err as Error).message}); build the app first`);
    return 1;
  }
  for (const c of list) {
    console.log(`web budget: ${c.initial ? 'first load' : 'on demand '}  ${c.name.padEnd(32)} ${kB(c.raw).padStart(9)} raw ${kB(c.gzip).padStart(8)} gzip`);
  }
  const t = totals(list);
  const line = `first load ${kB(t.initial_gzip)} gzip of a ${kB(budget)} budget (on demand ${kB(t.lazy_gzip)}; all ${kB(t.raw)} raw)`;
  if (t.initial_gzip > budget) {
    console.error(
      `web budget: OVER BUDGET: ${line}. Split what the first page does not need into lazy chunks or drop it ` +
        '(web/README.md "Bundle and its budget").',
    );
    return 1;
  }
  console.log(`web budget: ok: ${line}`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv.slice(2));
