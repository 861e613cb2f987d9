/**
 * `npx tsx benchmarks/replica-events.ts` (issue 14): how fast an event committed on one replica reaches
 * another replica's event hub (what feeds its SSE streams and webhook worker), PostgreSQL only
 * (TEST_DATABASE_URL names the server; a fresh database is made and dropped).
 *
 * Replica A commits --events (default 200) events, one every 20..120 ms (uniform), each in its own
 * transaction through `appendEvents` (no in-process signal: A stands for another process). Replica B
 * is an events module on its own connection pool, its hub polling every 1000 ms (the default), with:
 *   poll     no listener (before issue 14: other replicas' events wait for the poll);
 *   notify   the outbox listener (LISTEN bazaar_events; every commit's pg_notify wakes the hub).
 * Latency: A's commit returned -> B's hub handed the event out (same process, one clock). p50/p95/p99/max.
 * Results: printed and written to benchmarks/results/replica-events-<date>.json.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { createDb } from '../server/src/db/client.js';
import { appendEvents } from '../server/src/modules/events/outbox.js';
import { createEventsModule } from '../server/src/modules/events/index.js';
import { freshPostgres } from '../tests/helpers/db.js';

const EVENTS = Number(process.argv.find((a) => a.startsWith('--events='))?.split('=')[1] ?? 200);
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const summary = (xs: number[]) => ({ n: xs.length, p50: pct(xs, 50), p95: pct(xs, 95), p99: pct(xs, 99), max: Math.max(...xs) });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function run(mode: 'poll' | 'notify') {
  const database = await freshPostgres();
  const a = await createDb({ databaseUrl: database.url });
  const b = await createDb({ databaseUrl: database.url });
  const replica = createEventsModule({ db: b.prisma, pollMs: 1000, ...(mode === 'notify' ? { databaseUrl: database.url } : {}) });
  const arrived = new Map<string, number>();
  replica.hub.onEvent((e) => arrived.set(e.resourceId, performance.now()));
  await replica.start();
  while (mode === 'notify' && !replica.listener!.listening) await sleep(10);
  const committed = new Map<string, number>();
  const load = os.loadavg()[0]!.toFixed(2);
  for (let i = 0; i < EVENTS; i++) {
    const id = randomUUID();
    await a.prisma.$transaction(async (tx) => appendEvents(tx, [{ type: 'listing.updated', resourceType: 'listing', resourceId: id, audience: [], data: {} }]));
    committed.set(id, performance.now());
    await sleep(20 + Math.random() * 100);
  }
  const deadline = Date.now() + 5_000;
  while (arrived.size < EVENTS && Date.now() < deadline) await sleep(20);
  const lat = [...committed].filter(([id]) => arrived.has(id)).map(([id, at]) => Math.round(arrived.get(id)! - at));
  await replica.stop();
  await a.close();
  await b.close();
  await database.drop();
  return { mode, hub_poll_ms: 1000, events: EVENTS, loadavg_1m: load, commit_to_other_replica_ms: summary(lat) };
}

const results = { at: new Date().toISOString(), cpus: os.cpus().length, runs: [await run('poll'), await run('notify')] };
console.log(JSON.stringify(results, null, 2));
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
const file = new URL(`./results/replica-events-${new Date().toISOString().slice(0, 10)}.json`, import.meta.url);
writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
console.log(`written to ${file.pathname}`);
process.exit(0);
