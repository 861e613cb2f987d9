/**
 * The accounting of `npm test` (scripts/test-all.mjs, issue 22 item 13): the summary counts skipped tests
 * in a line before the last one, `N passed, N failed` stays the last line, and a skip outside the
 * documented conditions (README, "Skipped tests") fails the run. The runner is run for real, with
 * stand-ins for `npx` (writing a vitest JSON report) and `cargo` (printing `test result:` lines) first
 * on PATH, so no suite runs.
 */
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const REPO = path.resolve(__dirname, '..');
const bin = mkdtempSync(path.join(tmpdir(), 'bazaar-test-all-'));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

// npx vitest run ... --outputFile.json=<file>: writes $STUB_REPORT there, exits $STUB_CODE
writeFileSync(
  path.join(bin, 'npx'),
  `#!${process.execPath}
const arg = process.argv.find((a) => a.startsWith('--outputFile.json='));
require('node:fs').writeFileSync(arg.slice('--outputFile.json='.length), process.env.STUB_REPORT);
process.exit(Number(process.env.STUB_CODE || 0));
`,
);
// cargo test ...: prints $STUB_CARGO
writeFileSync(path.join(bin, 'cargo'), `#!${process.execPath}\nconsole.log(process.env.STUB_CARGO);\n`);
chmodSync(path.join(bin, 'npx'), 0o755);
chmodSync(path.join(bin, 'cargo'), 0o755);

interface Case {
  status: 'passed' | 'failed' | 'skipped' | 'pending' | 'todo';
  file: string;
  name: string[];
}

function report(cases: Case[]) {
  const files = [...new Set(cases.map((c) => c.file))];
  return JSON.stringify({
    numPassedTests: cases.filter((c) => c.status === 'passed').length,
    numFailedTests: cases.filter((c) => c.status === 'failed').length,
    testResults: files.map((f) => ({
      name: path.join(REPO, f),
      status: cases.some((c) => c.file === f && c.status === 'failed') ? 'failed' : 'passed',
      assertionResults: cases
        .filter((c) => c.file === f)
        .map((c) => ({ ancestorTitles: c.name.slice(0, -1), title: c.name.at(-1), status: c.status })),
    })),
  });
}

/** Run scripts/test-all.mjs with ONLY=`only` and the stand-ins; env: the variables that decide the skips. */
function testAll(only: string, env: Record<string, string | undefined>) {
  const keep = Object.fromEntries(Object.entries(process.env).filter(([k]) => !['TEST_DATABASE_URL', 'BAZAAR_REQUIRE_CHROMIUM', 'CHROMIUM_PATH'].includes(k)));
  return new Promise<{ code: number; lines: string[] }>((resolve) => {
    execFile(
      process.execPath,
      ['scripts/test-all.mjs'],
      { cwd: REPO, env: { ...keep, ...env, ONLY: only, PATH: `${bin}:${process.env.PATH}` } as NodeJS.ProcessEnv },
      (error, stdout) => resolve({ code: error ? Number(error.code ?? 1) : 0, lines: stdout.trim().split('\n') }),
    );
  });
}

const passed: Case = { status: 'passed', file: 'tests/a.test.ts', name: ['a', 'works'] };
const pgSkip: Case = { status: 'skipped', file: 'tests/db.faults.test.ts', name: ['PostgreSQL', 'server gone'] };
const browserSkip: Case = { status: 'skipped', file: 'tests/web.browser.test.ts', name: ['the web app in headless Chromium', 'buys'] };
const noChromium = path.join(bin, 'no-chromium');

describe('npm test counts skipped tests and fails on a skip outside the documented conditions', () => {
  it('an it.skip with no documented condition fails the run; the skip line comes before the last line', async () => {
    const r = await testAll('vitest', { STUB_REPORT: report([passed, { status: 'skipped', file: 'tests/b.test.ts', name: ['b', 'later'] }]) });
    expect(r.code, r.lines.join('\n')).toBe(1);
    expect(r.lines.at(-1)).toBe('1 passed, 1 failed');
    expect(r.lines.at(-2)).toBe('1 skipped (0 allowed; 1 not allowed)');
    expect(r.lines).toContain('skipped outside the allowed conditions (counted as failed): tests/b.test.ts > b > later');
    expect(r.lines.find((l) => l.startsWith('vitest: '))).toMatch(/^vitest: 1 passed, 0 failed, 1 skipped \(\d+\.\d s\)$/);
  });

  it('todo and pending tests count as skipped too', async () => {
    const r = await testAll('vitest', {
      STUB_REPORT: report([passed, { status: 'todo', file: 'tests/b.test.ts', name: ['b', 'some day'] }, { status: 'pending', file: 'tests/b.test.ts', name: ['b', 'pending'] }]),
    });
    expect(r.code).toBe(1);
    expect(r.lines.slice(-2)).toEqual(['2 skipped (0 allowed; 2 not allowed)', '1 passed, 2 failed']);
  });

  it('PostgreSQL variants may skip only without TEST_DATABASE_URL', async () => {
    const without = await testAll('vitest', { STUB_REPORT: report([passed, pgSkip]) });
    expect(without.code, without.lines.join('\n')).toBe(0);
    expect(without.lines.slice(-2)).toEqual(['1 skipped (1 allowed: 1 no-database-url; 0 not allowed)', '1 passed, 0 failed']);

    const withUrl = await testAll('vitest', { STUB_REPORT: report([passed, pgSkip]), TEST_DATABASE_URL: 'postgres://x@127.0.0.1:1/x' });
    expect(withUrl.code).toBe(1);
    expect(withUrl.lines.slice(-2)).toEqual(['1 skipped (0 allowed; 1 not allowed)', '1 passed, 1 failed']);
  });

  it("a PostgreSQL-only case may skip in the PGlite variant of marketplace.scale (describe.each titles it 'PGlite'), nowhere else", async () => {
    const scale = (variant: string): Case => ({ status: 'skipped', file: 'tests/marketplace.scale.test.ts', name: [variant, 'concurrent reviews'] });
    const allowed = await testAll('vitest', { STUB_REPORT: report([passed, scale("'PGlite'")]), TEST_DATABASE_URL: 'postgres://x@127.0.0.1:1/x' });
    expect(allowed.code, allowed.lines.join('\n')).toBe(0);
    expect(allowed.lines.at(-2)).toBe('1 skipped (1 allowed: 1 postgresql-only-case; 0 not allowed)');
    const other = await testAll('vitest', { STUB_REPORT: report([passed, { ...scale("'PGlite'"), file: 'tests/listings.http.test.ts' }]) });
    expect(other.code).toBe(1);
  });

  it('browser suites may skip only without Chromium and without BAZAAR_REQUIRE_CHROMIUM=1', async () => {
    const allowed = await testAll('vitest', { STUB_REPORT: report([passed, browserSkip]), CHROMIUM_PATH: noChromium });
    expect(allowed.code, allowed.lines.join('\n')).toBe(0);
    expect(allowed.lines.at(-2)).toBe('1 skipped (1 allowed: 1 no-chromium; 0 not allowed)');

    const required = await testAll('vitest', { STUB_REPORT: report([passed, browserSkip]), CHROMIUM_PATH: noChromium, BAZAAR_REQUIRE_CHROMIUM: '1' });
    expect(required.code).toBe(1);
    expect(required.lines.at(-1)).toBe('1 passed, 1 failed');
  });

  it('an ignored cargo test fails the run', async () => {
    const r = await testAll('program', { STUB_CARGO: 'test result: ok. 3 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s' });
    expect(r.code, r.lines.join('\n')).toBe(1);
    expect(r.lines.slice(-2)).toEqual(['1 skipped (0 allowed; 1 not allowed)', '3 passed, 1 failed']);
  });
});
