#!/usr/bin/env node
/**
 * The whole test suite behind `npm test`: contract/IDL staleness checks, OpenAPI lint (swagger-parser +
 * redocly), typecheck, the web app's build (web/, npm run web:build), the escrow
 * program's Rust tests (solana-program-test, native mode), the localnet's Rust tests, and the
 * vitest suites (unit, HTTP, end-to-end against the localnet).
 *
 * Each stage runs even when an earlier one failed, so one report shows everything. The last
 * line is the plain summary `N passed, N failed` (checks count as one test each; cargo and vitest
 * contribute their own test counts). Exit code 0 only when nothing failed.
 *
 * Env: CARGO_TARGET_DIR (default $HOME/.cache/bazaar/cargo-target), TEST_DATABASE_URL (when
 * set, the database suites also run against that PostgreSQL server), ONLY=stage1,stage2 to run a subset.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir, homedir } from 'node:os';
import { join } from 'node:path';

process.env.CARGO_TARGET_DIR ??= join(homedir(), '.cache', 'bazaar', 'cargo-target');
const only = process.env.ONLY ? new Set(process.env.ONLY.split(',')) : null;

function run(cmd, args, { capture = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    let out = '';
    const onData = (stream) => (chunk) => {
      stream.write(chunk);
      if (capture) out += chunk.toString();
    };
    child.stdout.on('data', onData(process.stdout));
    child.stderr.on('data', onData(process.stderr));
    child.on('close', (code) => resolve({ code: code ?? 1, out }));
  });
}

/** Sum `test result: ok. N passed; M failed` lines of cargo test output. */
function cargoCounts(out) {
  let passed = 0;
  let failed = 0;
  for (const m of out.matchAll(/test result: \w+\. (\d+) passed; (\d+) failed/g)) {
    passed += Number(m[1]);
    failed += Number(m[2]);
  }
  return { passed, failed };
}

const stages = [
  { name: 'openapi', kind: 'check', cmd: ['npm', ['run', '-s', 'openapi:check']] },
  { name: 'openapi-lint', kind: 'check', cmd: ['npm', ['run', '-s', 'openapi:lint']] },
  { name: 'idl', kind: 'check', cmd: ['npm', ['run', '-s', 'idl:check']] },
  { name: 'typecheck', kind: 'check', cmd: ['npm', ['run', '-s', 'typecheck']] },
  // the web app (tsc + vite, on the SDK packages' dist/), built here before the suites run: tests/web.browser.test.ts
  // serves it, and no vitest file (sdk.package.test packs and so rebuilds the SDK's dist/) runs during the build
  { name: 'web-build', kind: 'check', cmd: ['npm', ['run', '-s', 'web:build']] },
  { name: 'program', kind: 'cargo', cmd: ['cargo', ['test', '--manifest-path', 'programs/Cargo.toml', '--workspace']] },
  { name: 'vitest', kind: 'vitest' },
];

const results = [];
for (const stage of stages) {
  if (only && !only.has(stage.name)) continue;
  console.log(`\n=== ${stage.name} ===`);
  if (stage.kind === 'check') {
    const { code } = await run(...stage.cmd);
    results.push({ name: stage.name, passed: code === 0 ? 1 : 0, failed: code === 0 ? 0 : 1 });
  } else if (stage.kind === 'cargo') {
    const { code, out } = await run(...stage.cmd, { capture: true });
    const c = cargoCounts(out);
    if (code !== 0 && c.failed === 0) c.failed = 1; // build failure: count it
    results.push({ name: stage.name, ...c });
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'bazaar-vitest-'));
    const file = join(dir, 'report.json');
    const { code } = await run('npx', ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${file}`]);
    let passed = 0;
    let failed = 0;
    if (existsSync(file)) {
      const r = JSON.parse(readFileSync(file, 'utf8'));
      passed = r.numPassedTests;
      failed = r.numFailedTests + (r.numFailedTestSuites ?? 0) - 0;
      // a suite that failed to load has no tests; count it once
      failed = r.numFailedTests + r.testResults.filter((t) => t.status === 'failed' && t.assertionResults.length === 0).length;
    }
    if (code !== 0 && failed === 0) failed = 1;
    results.push({ name: stage.name, passed, failed });
  }
}

console.log('\n=== summary ===');
for (const r of results) console.log(`${r.name}: ${r.passed} passed, ${r.failed} failed`);
const passed = results.reduce((a, r) => a + r.passed, 0);
const failed = results.reduce((a, r) => a + r.failed, 0);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
