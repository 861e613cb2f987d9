/**
 * `npm run bench:payments` (issue 14): payment detection latency. Not a test: it prints and writes numbers.
 *
 * On one fresh localnet, for each database (PGlite; PostgreSQL when TEST_DATABASE_URL names a server:
 * a fresh database per run, as the test suites make them) and each mode:
 *   before  the payment watcher polls only (no websocket, ORDER_WATCHER_INTERVAL_MS = 2000, the default);
 *   after   it subscribes (programSubscribe on the escrow's order accounts, chain/pubsub.ts), the poll
 *           as fallback (defaults: 2000 ms while down, 10 000 ms while live);
 * --payments (default 100) buyers each pay their own order from their own wallet, as a wallet does:
 * the service's fund transaction, signed by the buyer, sent with sendRawTransaction and confirmed
 * with web3.js `confirmTransaction` (t0 = the buyer sees it confirmed). Measured from t0:
 *   api  until `GET /orders/{id}` (the buyer, polling every --poll-ms = 25 ms: each read of an unpaid
 *        order reads the chain clock too, so faster polling would load the localnet it measures) answers in_progress;
 *   sse  until the seller's event stream (`GET /events/stream`, client-sdk followEvents) delivers order.funded.
 * --parallel (default 4) payments are in flight at once. Everything before the payment (airdrop,
 * test USDC, SIWS login, listing, order; a fresh fund transaction from `POST /orders/{id}/payment`) is
 * done first and not measured. The server runs in this
 * process (createApp) on an ephemeral port, as benchmarks/events.ts does, so the figures include
 * the contention of the buyer/seller clients on its event loop.
 *
 * Buyers are prepared --prepare-parallel (default min(parallel, 8)) at a time.
 *
 *   npm run bench:payments -- [--payments=100] [--parallel=4] [--prepare-parallel=8] [--modes=before,after] [--dbs=pglite,postgres] [--poll-ms=10]
 *
 * Results: printed, and written to benchmarks/results/payments-<date>.md (+ .json) with the machine
 * (CPU, cores, Node) and the load average before and after each run (the machine is shared).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { randomUUID } from 'node:crypto';
import { Keypair, LAMPORTS_PER_SOL, Transaction } from '@solana/web3.js';
import request from 'supertest';
import { followEvents } from '@bazaar/client-sdk/events';
import { startBootstrappedChain, type BootstrappedChain } from '../tests/helpers/localnet.js';
import { createTestApp, loginAs } from '../tests/helpers/app.js';
import { ensureSol, mintTestUsdc } from '../server/scripts/bootstrap-localnet.js';
import { createChain } from '../server/src/chain/index.js';
import { chainOptionsFromDataDir } from '../server/src/chain/keys.js';

const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const PAYMENTS = Number(arg('payments', '100'));
const PARALLEL = Number(arg('parallel', '4'));
/** buyers prepared at once (not measured): SIWS logins at 32 in flight overflow the pool's queue (503; issue 28, FL's part) */
const PREPARE_PARALLEL = Number(arg('prepare-parallel', String(Math.min(PARALLEL, 8))));
const POLL_MS = Number(arg('poll-ms', '25'));
const MODES = arg('modes', 'before,after').split(',') as Array<'before' | 'after'>;
const POSTGRES_URL = process.env.TEST_DATABASE_URL;
const DBS = arg('dbs', POSTGRES_URL ? 'pglite,postgres' : 'pglite').split(',') as Array<'pglite' | 'postgres'>;
const API = '/api/v1';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!;
};
const summary = (xs: number[]) => ({ n: xs.length, p50: pct(xs, 50), p95: pct(xs, 95), p99: pct(xs, 99), max: Math.max(...xs) });
const loadavg = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A worker pool: run `fn(i)` for i in 0..n with `parallel` in flight. */
async function pool(n: number, parallel: number, fn: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(parallel, n) }, async () => {
    while (next < n) await fn(next++);
  }));
}

async function run(env: BootstrappedChain, db: 'pglite' | 'postgres', mode: 'before' | 'after') {
  const chain = createChain({ ...chainOptionsFromDataDir(env.dataDir, env.localnet.rpcUrl)!, ...(mode === 'after' ? { wsUrl: env.localnet.wsUrl } : {}) });
  const t = await createTestApp({
    chain,
    postgres: db === 'postgres',
    config: { currencies: env.boot.currencies },
    // the service's defaults: 2 s poll (and crank), 10 s fallback poll while subscribed
    // every buyer of the benchmark is 127.0.0.1 and all orders are prepared unpaid first: no per-network hold limit
    orders: { watcherIntervalMs: 2_000, reconcileIntervalMs: 30_000, maxUnpaidOrdersPerIp: PAYMENTS },
  });
  const server = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await t.services.start();
  const watcher = t.services.orders!.watcher;
  // when the subscription's notification reached the watcher (the breakdown of the "after" figures)
  const notedAt = new Map<string, number>();
  const note = watcher.noteOrder.bind(watcher);
  watcher.noteOrder = (id, view) => {
    if (!notedAt.has(id)) notedAt.set(id, performance.now());
    note(id, view);
  };
  if (mode === 'after') {
    while (watcher.subscription !== 'subscribed') await sleep(20);
  }

  const sellerKp = Keypair.generate();
  await ensureSol(chain.connection, sellerKp.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL);
  const seller = await loginAs(t, sellerKp);

  // prepare every payment (not measured)
  const prepared: Array<{ kp: Keypair; token: string; orderId: string }> = [];
  const t0 = Date.now();
  await pool(PAYMENTS, PREPARE_PARALLEL, (i) => prepareWithRetry(i));
  async function prepareWithRetry(i: number, attempt = 1): Promise<void> {
    try {
      await prepare(i);
    } catch (err) {
      // a shared machine under load: a 503 (pool queue full, a statement timed out) is retried after its Retry-After
      if (attempt >= 5 || !/\b503\b/.test(String(err))) throw err;
      await sleep(2_000);
      await prepareWithRetry(i, attempt + 1);
    }
  }
  async function prepare(i: number) {
    const kp = Keypair.generate();
    await ensureSol(chain.connection, kp.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL);
    await mintTestUsdc(env.dataDir, env.localnet.rpcUrl, kp.publicKey.toBase58(), 20_000_000n);
    const buyer = await loginAs(t, kp);
    const l = await request(t.app).post(`${API}/listings`).set(seller.headers).send({ title: `Bench payment ${i}`, description: 'x', price: 10, currency: 'USDC', category: 'design', duration: 3 });
    if (l.status !== 201) throw new Error(`listing ${l.status} ${JSON.stringify(l.body)}`);
    const o = await request(t.app).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', randomUUID()).send({ listing_id: l.body.listing_id });
    if (o.status !== 201) throw new Error(`order ${o.status} ${JSON.stringify(o.body)}`);
    prepared.push({ kp, token: buyer.token, orderId: o.body.order_id });
  }
  const prepSeconds = Math.round((Date.now() - t0) / 1000);

  const sseAt = new Map<string, number>();
  const stop = new AbortController();
  const following = followEvents({
    baseUrl: base,
    token: seller.token,
    types: ['order.funded'],
    signal: stop.signal,
    onEvent: (e) => {
      if (!sseAt.has(e.resource_id)) sseAt.set(e.resource_id, performance.now());
    },
  });
  await sleep(500); // the stream is open

  const loadBefore = loadavg();
  const toApi: number[] = [];
  const confirmedAt = new Map<string, number>();
  const started = Date.now();
  await pool(prepared.length, PARALLEL, async (i) => {
    const p = prepared[i]!;
    // a fresh fund transaction (the one of POST /orders may have outlived its blockhash while the others were prepared)
    const fresh = await fetch(`${base}${API}/orders/${p.orderId}/payment`, { method: 'POST', headers: { authorization: `Bearer ${p.token}` } });
    const payment = (await fresh.json()) as { transaction?: string };
    if (!fresh.ok || !payment.transaction) throw new Error(`payment refresh ${fresh.status} ${JSON.stringify(payment)}`);
    const tx = Transaction.from(Buffer.from(payment.transaction, 'base64'));
    tx.partialSign(p.kp);
    const sig = await chain.connection.sendRawTransaction(tx.serialize());
    await chain.connection.confirmTransaction(sig, 'confirmed');
    const at = performance.now();
    confirmedAt.set(p.orderId, at);
    const deadline = Date.now() + 30_000;
    for (;;) {
      const r = await fetch(`${base}${API}/orders/${p.orderId}`, { headers: { authorization: `Bearer ${p.token}` } });
      const body = (await r.json()) as { status?: string };
      if (body.status === 'in_progress') break;
      if (Date.now() > deadline) throw new Error(`order ${p.orderId} not in_progress after 30 s (${body.status})`);
      await sleep(POLL_MS);
    }
    toApi.push(performance.now() - at);
  });
  const paySeconds = Math.round((Date.now() - started) / 1000);
  const deadline = Date.now() + 30_000;
  while (sseAt.size < prepared.length && Date.now() < deadline) await sleep(50);
  stop.abort();
  await following.catch(() => undefined);
  const toSse = [...confirmedAt].filter(([id]) => sseAt.has(id)).map(([id, at]) => sseAt.get(id)! - at);
  const toNoted = [...confirmedAt].filter(([id]) => notedAt.has(id)).map(([id, at]) => notedAt.get(id)! - at);
  const notedToSse = [...notedAt].filter(([id]) => sseAt.has(id)).map(([id, at]) => sseAt.get(id)! - at);
  const result = {
    database: db,
    mode,
    watcher: mode === 'after' ? 'programSubscribe + poll every 10 s (2 s while down)' : 'poll every 2 s',
    payments: prepared.length,
    parallel: PARALLEL,
    prepare_seconds: prepSeconds,
    pay_seconds: paySeconds,
    loadavg_before: loadBefore,
    loadavg_after: loadavg(),
    confirmed_to_api_ms: summary(toApi.map(Math.round)),
    confirmed_to_sse_ms: summary(toSse.map(Math.round)),
    ...(toNoted.length
      ? { confirmed_to_notification_ms: summary(toNoted.map(Math.round)), notification_to_sse_ms: summary(notedToSse.map(Math.round)) }
      : {}),
  };
  await new Promise((r) => server.close(r));
  await t.close();
  return result;
}

const env = await startBootstrappedChain('bench-payments');
const results: Array<Awaited<ReturnType<typeof run>>> = [];
for (const db of DBS) {
  for (const mode of MODES) {
    const r = await run(env, db, mode);
    console.log(JSON.stringify(r));
    results.push(r);
  }
}
await env.stop();

const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();
const cpu = os.cpus()[0]?.model ?? 'unknown';
const date = new Date().toISOString().slice(0, 10);
const row = (r: (typeof results)[number], k: 'confirmed_to_api_ms' | 'confirmed_to_sse_ms') =>
  `| ${r.database} | ${r.mode} | ${k === 'confirmed_to_api_ms' ? 'API `GET /orders/{id}`' : 'SSE `order.funded`'} | ${r[k].n} | ${r[k].p50} | ${r[k].p95} | ${r[k].p99} | ${r[k].max} | ${r.loadavg_before} / ${r.loadavg_after} |`;
const md = [
  `# Payment detection latency (${date}, commit ${commit})`,
  '',
  `\`npm run bench:payments -- --payments=${PAYMENTS} --parallel=${PARALLEL}\` (benchmarks/payments.ts): a buyer's own fund transaction, from`,
  'the moment web3.js `confirmTransaction` returns to the buyer, until the order reads `in_progress` through the API',
  `(polled every ${POLL_MS} ms) and until the seller's event stream delivers \`order.funded\`. Milliseconds.`,
  '`before`: the payment watcher polls every 2 s (no websocket); `after`: one programSubscribe on the escrow\'s',
  'order accounts triggers a pass for the notified orders, the poll runs every 10 s as fallback.',
  '',
  `Machine: ${os.cpus().length} x ${cpu}, Node ${process.version}; localnet (debug build) and server in one VM,`,
  'shared with other engineers\' test runs (load average: 1 / 5 / 15 min, before / after the payments).',
  '',
  '| database | mode | visible through | n | p50 | p95 | p99 | max | load average |',
  '|---|---|---|---|---|---|---|---|---|',
  ...results.flatMap((r) => [row(r, 'confirmed_to_api_ms'), row(r, 'confirmed_to_sse_ms')]),
  '',
].join('\n');
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
const tag = arg('tag', '');
const stem = new URL(`./results/payments-${date}${tag ? `-${tag}` : ''}`, import.meta.url).pathname;
writeFileSync(`${stem}.md`, md);
writeFileSync(`${stem}.json`, JSON.stringify({ at: new Date().toISOString(), commit, cpus: os.cpus().length, cpu, node: process.version, results }, null, 2) + '\n');
console.log(md);
console.log(`written to ${stem}.md and .json`);
process.exit(0);
