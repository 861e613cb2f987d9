/**
 * `npx tsx benchmarks/events.ts` (issue 11): event delivery figures. Not a test: it prints numbers.
 *
 *  1. Latency from a chain confirmation to the webhook and to the SSE event, over --orders orders
 *     (default 200) on a fresh localnet (--ws: the payment watcher subscribes over the websocket, issue 14): the buyer's wallet sends the escrow fund transaction itself
 *     (the Solana Pay path) and confirms it with web3.js (t0 = confirmation seen by the buyer); the
 *     service's payment watcher (every --watcher-ms, default 2000 = ORDER_WATCHER_INTERVAL_MS) finds
 *     it, commits in_progress + order.funded in one transaction, and the event reaches the seller's
 *     webhook (a receiver in this process) and the seller's SSE stream. p50/p90/p99/max per path.
 *     Also from the commit of order.funded (its created_at) to arrival: the outbox -> delivery part alone.
 *  2. Webhook throughput with --endpoints registered endpoints (default 1000, marketplace-wide, all on
 *     one local receiver) and --events events (default 20): wall time from the commit of the events to
 *     the last accepted delivery, deliveries/s, at WEBHOOK_CONCURRENCY (--concurrency, default 32).
 *
 * The server runs in this process (createApp over PGlite, or PostgreSQL with BENCH_DATABASE_URL /
 * TEST_DATABASE_URL) on an ephemeral port; receiver and SSE client share its event loop, so the
 * figures include that contention. Results: printed, and written to benchmarks/results/events-<date>.json.
 */
import http from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Keypair, LAMPORTS_PER_SOL, Transaction } from '@solana/web3.js';
import request from 'supertest';
import { followEvents } from '@bazaar/client-sdk/events';
import { verifyWebhook } from '@bazaar/client-sdk/webhooks';
import { startBootstrappedChain } from '../tests/helpers/localnet.js';
import { createApiKey, createTestApp, loginAs } from '../tests/helpers/app.js';
import { ensureSol, mintTestUsdc } from '../server/scripts/bootstrap-localnet.js';
import { appendEvents, notifyAppended } from '../server/src/modules/events/outbox.js';
import { createChain } from '../server/src/chain/index.js';
import { chainOptionsFromDataDir } from '../server/src/chain/keys.js';
import { setRoles } from '../tests/helpers/roles.js';

const arg = (name: string, dflt: number) => Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt);
const ORDERS = arg('orders', 200);
const WATCHER_MS = arg('watcher-ms', 2000);
const ENDPOINTS = arg('endpoints', 1000);
const EVENTS = arg('events', 20);
const CONCURRENCY = arg('concurrency', 32);
const PARALLEL = arg('parallel', 4);
/** --ws: the service subscribes to the escrow's order accounts over the localnet's websocket (issue 14) instead of polling only */
const WS = process.argv.includes('--ws');
const API = '/api/v1';

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const summary = (xs: number[]) => ({ n: xs.length, p50: pct(xs, 50), p90: pct(xs, 90), p99: pct(xs, 99), max: Math.max(...xs) });

async function latency() {
  const env = await startBootstrappedChain('bench-events');
  const postgres = !!(process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL);
  const chain = WS ? createChain({ ...chainOptionsFromDataDir(env.dataDir, env.localnet.rpcUrl)!, wsUrl: env.localnet.wsUrl }) : env.chain;
  const t = await createTestApp({
    chain,
    postgres,
    config: { currencies: env.boot.currencies, webhooks: { allowPrivateUrls: true, timeoutMs: 5_000, intervalMs: 1_000, concurrency: CONCURRENCY } },
    // every buyer of the benchmark is 127.0.0.1: no per-network hold limit
    orders: { watcherIntervalMs: WATCHER_MS, reconcileIntervalMs: 0, maxUnpaidOrdersPerIp: ORDERS },
  });
  const server = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await t.services.start();

  const sellerKp = Keypair.generate();
  await ensureSol(env.chain.connection, sellerKp.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL);
  const seller = await loginAs(t, sellerKp);
  const hookAt = new Map<string, number>();
  const sseAt = new Map<string, number>();
  /** commit -> arrival (wall clock ms; the event's created_at is its transaction's start, just before the commit) */
  const commitToHook: number[] = [];
  const commitToSse: number[] = [];
  let secret = '';
  const rx = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const e = verifyWebhook(Buffer.concat(chunks), req.headers, secret);
      if (e.type === 'order.funded' && !hookAt.has(e.resource_id)) {
        hookAt.set(e.resource_id, performance.now());
        commitToHook.push(Date.now() - Date.parse(e.created_at));
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
  const hook = await request(t.app).post(`${API}/webhooks`).set(seller.headers).send({ url: `http://127.0.0.1:${(rx.address() as AddressInfo).port}/`, event_types: ['order.funded'] });
  secret = hook.body.secret;
  const stop = new AbortController();
  const following = followEvents({
    baseUrl: base,
    token: seller.token,
    types: ['order.funded'],
    signal: stop.signal,
    onEvent: (e) => {
      if (sseAt.has(e.resource_id)) return;
      sseAt.set(e.resource_id, performance.now());
      commitToSse.push(Date.now() - Date.parse(e.created_at));
    },
  });

  const confirmedAt = new Map<string, number>();
  let next = 0;
  const t0 = Date.now();
  async function one(i: number) {
    const kp = Keypair.generate();
    await ensureSol(env.chain.connection, kp.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL);
    await mintTestUsdc(env.dataDir, env.localnet.rpcUrl, kp.publicKey.toBase58(), 20_000_000n);
    const buyer = await loginAs(t, kp);
    const l = await request(t.app).post(`${API}/listings`).set(seller.headers).send({ title: `Bench listing ${i}`, description: 'x', price: 10, currency: 'USDC', category: 'design', duration: 3 });
    if (l.status !== 201) throw new Error(`listing ${l.status} ${JSON.stringify(l.body)}`);
    const o = await request(t.app).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', randomUUID()).send({ listing_id: l.body.listing_id });
    if (o.status !== 201) throw new Error(`order ${o.status} ${JSON.stringify(o.body)}`);
    const tx = Transaction.from(Buffer.from(o.body.payment.transaction, 'base64'));
    tx.partialSign(kp);
    const sig = await env.chain.connection.sendRawTransaction(tx.serialize());
    await env.chain.connection.confirmTransaction(sig, 'confirmed');
    confirmedAt.set(o.body.order_id, performance.now());
  }
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < ORDERS) await one(next++);
    }),
  );
  const deadline = Date.now() + 60_000;
  while ((hookAt.size < ORDERS || sseAt.size < ORDERS) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  stop.abort();
  await following;
  const toHook = [...confirmedAt].filter(([id]) => hookAt.has(id)).map(([id, at]) => hookAt.get(id)! - at);
  const toSse = [...confirmedAt].filter(([id]) => sseAt.has(id)).map(([id, at]) => sseAt.get(id)! - at);
  const result = {
    orders: ORDERS,
    watcher_interval_ms: WATCHER_MS,
    watcher_subscription: WS,
    database: postgres ? 'postgresql' : 'pglite',
    setup_seconds: Math.round((Date.now() - t0) / 1000),
    confirmation_to_webhook_ms: summary(toHook.map(Math.round)),
    confirmation_to_sse_ms: summary(toSse.map(Math.round)),
    commit_to_webhook_ms: summary(commitToHook),
    commit_to_sse_ms: summary(commitToSse),
  };
  rx.close();
  await new Promise((r) => server.close(r));
  await t.close();
  await env.stop();
  return result;
}

async function throughput() {
  const postgres = !!(process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL);
  const t = await createTestApp({
    postgres,
    config: { webhooks: { allowPrivateUrls: true, timeoutMs: 10_000, intervalMs: 0, concurrency: CONCURRENCY } },
  });
  let accepted = 0;
  let lastAt = 0;
  const agent = new http.Agent({ keepAlive: true });
  void agent;
  const rx = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      accepted += 1;
      lastAt = performance.now();
      res.writeHead(204).end();
    });
  });
  rx.maxConnections = 10_000;
  await new Promise<void>((r) => rx.listen(0, '127.0.0.1', r));
  const port = (rx.address() as AddressInfo).port;
  const adminKp = Keypair.generate();
  const admin = await loginAs(t, adminKp);
  await setRoles(t.ctx.db, { id: admin.userId }, ['admin']);
  const adminHeaders = { 'x-api-key': (await createApiKey(t, { name: 'bench', isAdmin: true, userId: admin.userId })).key };
  for (let i = 0; i < ENDPOINTS; i++) {
    const r = await request(t.app).post(`${API}/webhooks`).set(adminHeaders).send({ url: `http://127.0.0.1:${port}/e${i}`, marketplace_wide: true });
    if (r.status !== 201) throw new Error(`webhook ${r.status} ${JSON.stringify(r.body)}`);
  }
  const resourceIds = Array.from({ length: EVENTS }, () => randomUUID());
  await new Promise((r) => setTimeout(r, 10)); // endpoints created strictly before the events
  const started = performance.now();
  await t.ctx.db.$transaction(async (tx) => {
    await appendEvents(
      tx,
      resourceIds.map((id) => ({ type: 'listing.updated' as const, resourceType: 'listing' as const, resourceId: id, audience: [], data: { listing_id: id } })),
    );
  });
  notifyAppended();
  const worker = t.services.webhooks.worker;
  const expected = ENDPOINTS * EVENTS;
  while (accepted < expected) {
    const n = await worker.runOnce();
    if (n === 0 && accepted < expected) await new Promise((r) => setTimeout(r, 20));
  }
  const seconds = (lastAt - started) / 1000;
  const result = {
    endpoints: ENDPOINTS,
    events: EVENTS,
    deliveries: expected,
    concurrency: CONCURRENCY,
    database: postgres ? 'postgresql' : 'pglite',
    seconds: Number(seconds.toFixed(2)),
    deliveries_per_second: Math.round(expected / seconds),
  };
  rx.close();
  await t.close();
  return result;
}

const only = process.argv.find((a) => a.startsWith('--only='))?.split('=')[1];
const results: Record<string, unknown> = { at: new Date().toISOString(), cpus: (await import('node:os')).cpus().length };
if (!only || only === 'throughput') {
  results.throughput = await throughput();
  console.log('webhook throughput', results.throughput);
}
if (!only || only === 'latency') {
  results.latency = await latency();
  console.log('latency', results.latency);
}
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
const tag = process.argv.find((a) => a.startsWith('--tag='))?.split('=')[1];
const file = new URL(`./results/events-${new Date().toISOString().slice(0, 10)}${only ? `-${only}` : ''}${tag ? `-${tag}` : ''}.json`, import.meta.url);
writeFileSync(file, JSON.stringify(results, null, 2) + '\n');
console.log(`written to ${file.pathname}`);
process.exit(0);
