#!/usr/bin/env node
/**
 * Which API operations the schemathesis run (.ci/schemathesis) actually reached: read its NDJSON report
 * (`--report ndjson`) and print, per operation, the statuses its schema-valid requests got; then the
 * operations that never got past "not found" or "too many requests" (every answer 404 or 429, or no
 * schema-valid request at all). Such an operation was only ever called with ids that do not exist (or was
 * rate-limited): its handler, its state machine and its money path were never fuzzed.
 *
 * Counted: requests of cases generated as valid (`meta.generation.mode` positive) in any phase, with the
 * operation's own method, not the requests a check derives from a case (a case with a `parent_id`, e.g. the
 * ignored_auth check's call without credentials) and not other methods (unsupported_method's 405s).
 *
 *   node .ci/schemathesis-reach.mjs <report.ndjson> <openapi.json> [max-unreached]
 *
 * Exit 1 when more than `max-unreached` operations (default 0) were not reached; excluded operations
 * (`--exclude-operation-id`, e.g. the SSE stream) are listed as untested but not counted.
 */
import { readFileSync } from 'node:fs';

const [reportPath, specPath, maxArg = '0', ...excluded] = process.argv.slice(2);
if (!reportPath || !specPath) {
  console.error('usage: schemathesis-reach.mjs <report.ndjson> <openapi.json> [max-unreached] [excluded operationId...]');
  process.exit(2);
}
const maxUnreached = Number(maxArg);
const STUCK = new Set([404, 429]);

const spec = JSON.parse(readFileSync(specPath, 'utf8'));
/** "METHOD /path/{template}" -> operationId */
const operations = new Map();
for (const [path, item] of Object.entries(spec.paths)) {
  for (const [method, op] of Object.entries(item)) {
    if (op && typeof op === 'object' && op.operationId) operations.set(`${method.toUpperCase()} ${path}`, op.operationId);
  }
}

/** operationId -> Map(status -> count) */
const statuses = new Map();
for (const line of readFileSync(reportPath, 'utf8').split('\n')) {
  if (!line.startsWith('{"ScenarioFinished"')) continue;
  const recorder = JSON.parse(line).ScenarioFinished.recorder ?? {};
  const cases = recorder.cases ?? {};
  for (const [id, interaction] of Object.entries(recorder.interactions ?? {})) {
    const node = cases[id];
    const value = node?.value;
    if (!value || node.parent_id || value.meta?.generation?.mode !== 'positive') continue;
    if (interaction.request?.method !== value.method || !interaction.response) continue;
    const operationId = operations.get(`${value.method} ${value.path}`);
    if (!operationId) continue;
    const counts = statuses.get(operationId) ?? new Map();
    const status = interaction.response.status_code;
    counts.set(status, (counts.get(status) ?? 0) + 1);
    statuses.set(operationId, counts);
  }
}

const rows = [];
const unreached = [];
const untested = [];
for (const operationId of [...operations.values()].sort()) {
  const counts = statuses.get(operationId);
  if (!counts) {
    (excluded.includes(operationId) ? untested : unreached).push(`${operationId} (no schema-valid request)`);
    rows.push(`  ${operationId.padEnd(30)} -`);
    continue;
  }
  const summary = [...counts].sort(([a], [b]) => a - b).map(([s, n]) => `${s}x${n}`).join(' ');
  rows.push(`  ${operationId.padEnd(30)} ${summary}`);
  if ([...counts.keys()].every((s) => STUCK.has(s))) unreached.push(`${operationId} (${summary})`);
}

console.log('schemathesis reach: statuses of the schema-valid requests per operation');
console.log(rows.join('\n'));
if (untested.length) console.log(`excluded from the run: ${untested.join(', ')}`);
console.log(`operations that answered only 404 or 429: ${unreached.length} of ${operations.size - untested.length} (allowed: ${maxUnreached})`);
for (const u of unreached) console.log(`  ${u}`);
process.exit(unreached.length > maxUnreached ? 1 : 0);
