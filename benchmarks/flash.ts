/**
 * `npm run bench:flash` (issue 28 item 4): a flash sale. Not a test: it prints and writes numbers.
 *
 * One localnet (bootstrapped into a temp DATA_DIR), one PostgreSQL server (BENCH_DATABASE_URL or
 * TEST_DATABASE_URL, else a cluster of its own from Debian's postgresql on BENCH_PG_PORT, 55511), and for
 * each replica count of --replicas (default `1,2`) a fresh database and that many server processes
 * (`node server/src/main.ts`, production defaults, their own processes; two replicas share the database
 * and the leader lease elects one for the payment watcher; no load balancer: buyer i talks to replica
 * i mod R, which is what round robin does). Then:
 *
 *   setup (not measured)  --sellers (50) log in and list --buyers (1,000) services between them (a
 *                         listing is reserved by its first buyer: one per buyer); the buyers' wallets get
 *                         SOL and test USDC;
 *   ceiling               the localnet's own rate in the same run: every buyer wallet sends one plain SOL
 *                         transfer, --concurrency at a time, sendRawTransaction + confirmTransaction
 *                         ('confirmed'): confirmed transfers / (last confirmation - first send);
 *   the sale              every buyer, --concurrency (32) in flight: SIWS login (client SDK
 *                         loginWithWallet: request_login + verify_login), opens its event stream (SDK
 *                         followEvents, type order.funded), POST /orders for its listing (of seller
 *                         i mod 50), signs the fund transaction of the response, sends it and waits for
 *                         `confirmed` (web3.js), then waits for `order.funded` on its stream.
 *
 * Reported per replica count: logins/s, orders/s, orders funded/s (funded buyers / (last funded event -
 * first send)) and its ratio to the ceiling, p50/p99 of each step (login, order, send+confirm,
 * detection = confirmed -> order.funded on the stream, whole buyer), funded within 60 s of the sale's
 * start, 503 answers (retried after Retry-After, as a client does) and other failures, SQL statements
 * per buyer (the servers' `bazaar_db_statements_total`, GET /metrics with METRICS_TOKEN, summed over the
 * replicas, divided by the buyers), and the load average (os.loadavg()) before and after. --profile runs
 * the servers under `node --cpu-prof` and summarises self time by package (benchmarks/lib/profile.ts).
 *
 *   npm run bench:flash -- [--buyers=1000] [--sellers=50] [--concurrency=32] [--replicas=1,2]
 *                          [--profile] [--short] [--tag=name] [--out=benchmarks/results]
 *
 * --short (CI): 20 buyers, 5 sellers, concurrency 8, results under $TMPDIR; exits non-zero only when the
 * harness could not run (set-up failed, a buyer failed with anything but a timing, or a 5xx other than
 * 503), never on a timing.
 * Results: benchmarks/results/flash-<date>[-tag].md and .json (machine, commit, load averages).
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, createWriteStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Connection, Keypair, SystemProgram, Transaction } from '@solana/web3.js';
import pg from 'pg';
import { createBazaarClient, newIdempotencyKey } from '@bazaar/client-sdk';
import { followEvents } from '@bazaar/client-sdk/events';
import { keypairSigner } from '@bazaar/client-sdk/keypair';
import { loginWithWallet } from '@bazaar/client-sdk/login';
import { adminPublicKeyFor, bootstrapLocalnet } from '../server/scripts/bootstrap-localnet.js';
import { startLocalnet } from '../server/scripts/localnet-process.js';
import { fundWallets, pool } from '../tests/helpers/replicas.js';
import { freePort } from '../tests/helpers/ports.js';
import { sample } from '../tests/helpers/metrics.js';
import { summariseProfile } from './lib/profile.js';
import { cpuMsOf, cpuMsOfTree } from './lib/proc.js';
import { arg } from './lib/args.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SHORT = arg('short') === 'true';
const BUYERS = Number(arg('buyers', SHORT ? '20' : '1000'));
const SELLERS = Number(arg('sellers', SHORT ? '5' : '50'));
const CONCURRENCY = Number(arg('concurrency', SHORT ? '8' : '32'));
const REPLICAS = (arg('replicas', '1,2') ?? '1').split(',').map(Number);
const PROFILE = arg('profile') === 'true';
const TAG = arg('tag', '');
const OUT = path.resolve(arg('out', SHORT ? mkdtempSync(path.join(os.tmpdir(), 'bazaar-flash-')) : path.join(ROOT, 'benchmarks/results'))!);
/** a buyer still waiting this long after the sale's start gives up (reported, not a harness failure) */
const SALE_DEADLINE_MS = Number(arg('deadline-s', '180')) * 1000;
const METRICS_TOKEN = 'flash-metrics-token-0123456789abcdef';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const loadavg = () => os.loadavg().map((x) => Number(x.toFixed(2)));
const pct = (xs: number[], p: number) => {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
};
const summary = (xs: number[]) => ({ n: xs.length, p50: Math.round(pct(xs, 50)), p99: Math.round(pct(xs, 99)), max: Math.round(xs.length ? Math.max(...xs) : NaN) });
const log = (m: string) => console.log(`[flash ${new Date().toISOString().slice(11, 19)}] ${m}`);

// ---------------------------------------------------------------- PostgreSQL

function ownServer(): { url: string; pid(): number | undefined; stop(): void } {
  const bins = readdirSync('/usr/lib/postgresql').map((v) => `/usr/lib/postgresql/${v}/bin`).filter((b) => existsSync(`${b}/initdb`));
  const bin = bins.sort().at(-1);
  if (!bin) throw new Error('no BENCH_DATABASE_URL / TEST_DATABASE_URL and no PostgreSQL server installed (apt-get install postgresql)');
  const port = Number(process.env.BENCH_PG_PORT ?? 55511);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bazaar-flash-pg-'));
  const asRoot = process.getuid?.() === 0;
  const run = (cmd: string) => {
    const r = asRoot ? spawnSync('su', ['postgres', '-c', cmd], { encoding: 'utf8' }) : spawnSync('sh', ['-c', cmd], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd}: ${r.stderr || r.stdout}`);
  };
  if (asRoot) chownSync(dir, Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim()), Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim()));
  run(`${bin}/initdb -D ${dir} -A trust -U postgres >/dev/null`);
  run(`${bin}/pg_ctl -D ${dir} -o '-p ${port} -k /tmp -c listen_addresses=127.0.0.1 -c max_connections=200' -l ${dir}/log -w start >/dev/null`);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    /** the postmaster's pid (first line of postmaster.pid) */
    pid: () => {
      try {
        return Number(readFileSync(path.join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]) || undefined;
      } catch {
        return undefined;
      }
    },
    stop: () => {
      run(`${bin}/pg_ctl -D ${dir} -m fast stop >/dev/null`);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function freshDatabase(base: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `bazaar_flash_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const u = new URL(base);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await c.end();
    },
  };
}

// ---------------------------------------------------------------- servers

interface Server {
  port: number;
  base: string;
  proc: ChildProcess;
  logFile: string;
}

async function startServer(name: string, env: Record<string, string>, work: string, profileDir?: string): Promise<Server> {
  const port = await freePort();
  const logFile = path.join(work, `${name}.log`);
  const out = createWriteStream(logFile);
  const node = ['--import', 'tsx', ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), 'server/src/main.ts'];
  const proc = spawn(process.execPath, node, { cwd: ROOT, env: { ...process.env, ...env, PORT: String(port), BAZAAR_MAIN: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stdout!.pipe(out);
  proc.stderr!.pipe(out);
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (proc.exitCode !== null) throw new Error(`${name} exited with ${proc.exitCode} (log: ${logFile})`);
    if (await fetch(`${base}/readyz`).then((r) => r.ok, () => false)) break;
    if (i > 600) throw new Error(`${name} not ready after 120 s (log: ${logFile})`);
    await sleep(200);
  }
  return { port, base, proc, logFile };
}

async function stopServer(s: Server): Promise<void> {
  if (s.proc.exitCode !== null) return;
  const done = new Promise((r) => s.proc.once('exit', r));
  s.proc.kill('SIGTERM');
  await Promise.race([done, sleep(40_000)]);
  if (s.proc.exitCode === null) s.proc.kill('SIGKILL');
}

async function statementsOf(servers: Server[]): Promise<number> {
  let total = 0;
  for (const s of servers) {
    const text = await fetch(`${s.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => (r.ok ? r.text() : ''), () => '');
    const v = sample(text, 'bazaar_db_statements_total');
    if (v === undefined) return NaN; // a commit without the counter (before issue 28)
    total += v;
  }
  return total;
}

/** Sum and count of a histogram's series, keyed by their labels (`method="getSlot",outcome="ok"`). */
type HistogramTotals = Map<string, { sum: number; count: number }>;

/** The `name` histogram's _sum and _count per label set, summed over `servers`' GET /metrics. */
async function histogramOf(servers: Server[], name: string): Promise<HistogramTotals> {
  const out: HistogramTotals = new Map();
  for (const s of servers) {
    const text = await fetch(`${s.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => (r.ok ? r.text() : ''), () => '');
    for (const line of text.split('\n')) {
      const m = new RegExp(`^${name}_(sum|count)\\{(.*)\\} (\\S+)$`).exec(line);
      if (!m) continue;
      const e = out.get(m[2]!) ?? { sum: 0, count: 0 };
      e[m[1] as 'sum' | 'count'] += Number(m[3]);
      out.set(m[2]!, e);
    }
  }
  return out;
}

/** after - before, per label set, with the mean in ms; the series with calls only, most time first. */
function histogramDelta(before: HistogramTotals, after: HistogramTotals): Array<{ labels: string; count: number; total_s: number; mean_ms: number }> {
  return [...after.entries()]
    .map(([labels, a]) => {
      const b = before.get(labels) ?? { sum: 0, count: 0 };
      const count = a.count - b.count;
      const total = a.sum - b.sum;
      return { labels, count, total_s: Number(total.toFixed(2)), mean_ms: count ? Number(((1000 * total) / count).toFixed(1)) : 0 };
    })
    .filter((r) => r.count > 0)
    .sort((x, y) => y.total_s - x.total_s);
}

const RPC_HISTOGRAM = 'bazaar_rpc_request_duration_seconds';
const HTTP_HISTOGRAM = 'bazaar_http_request_duration_seconds';

// ---------------------------------------------------------------- one sale

/** A 503 (Retry-After honoured, at most 5 tries) is retried as a client does, and counted. */
async function with503Retry<T>(what: string, counts: Record<string, number>, fn: () => Promise<T>, details?: Set<string>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if ((err as { status?: number }).status !== 503 || attempt >= 5) throw err;
      counts[what] = (counts[what] ?? 0) + 1;
      details?.add(`${what}: ${String((err as Error).message).slice(0, 200)}`);
      await sleep(2_000);
    }
  }
}

interface Steps {
  login: number;
  order: number;
  send_confirm: number;
  detection: number;
  buyer: number;
}

/** CPU time so far, ms, of each part that shares the machine (NaN where unknown: an external database). */
interface CpuPids {
  localnet?: number;
  /** the PostgreSQL postmaster (its backends are its children), when the harness runs its own cluster */
  postgres?: () => number | undefined;
}

function cpuNow(servers: Server[], pids: CpuPids): { servers: number; postgres: number; localnet: number; buyers: number } {
  const own = process.cpuUsage();
  return {
    servers: servers.reduce((n, s) => n + cpuMsOf(s.proc.pid), 0),
    postgres: cpuMsOfTree(pids.postgres?.()),
    localnet: cpuMsOf(pids.localnet),
    buyers: (own.user + own.system) / 1000,
  };
}

async function sale(opts: { replicas: number; databaseBase: string; dataDir: string; rpcUrl: string; wsUrl: string; connection: Connection; work: string; pids: CpuPids }) {
  const { replicas, connection } = opts;
  const db = await freshDatabase(opts.databaseBase);
  const profileDir = PROFILE ? path.join(opts.work, `profile-${replicas}`) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const env: Record<string, string> = {
    DATABASE_URL: db.url,
    DATA_DIR: opts.dataDir,
    SOLANA_RPC_URL: opts.rpcUrl,
    SOLANA_WS_URL: opts.wsUrl,
    JWT_SECRET: randomBytes(32).toString('hex'),
    PUBLIC_BASE_URL: 'http://127.0.0.1',
    // request_login's default domain is the first; the others accept each replica's host:port
    SIWS_DOMAINS: '127.0.0.1,127.0.0.1:*',
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    METRICS_TOKEN,
    // every buyer comes from 127.0.0.1: the per-IP limits of a public service would stop the benchmark
    AUTH_RATE_LIMIT_PER_MINUTE: '1000000',
    AUTH_ADDRESS_RATE_LIMIT_PER_MINUTE: '1000000',
    ORDER_MAX_UNPAID_PER_IP: String(BUYERS * 2),
    LISTING_CREATE_DAILY_LIMIT_PER_IP: '1000000',
    LISTING_CREATE_DAILY_LIMIT: '1000000',
    CHAIN_DAILY_BUDGET_LAMPORTS: '1000000000000',
  };
  const servers: Server[] = [];
  servers.push(await startServer(`replica-${replicas}-a`, env, opts.work, profileDir));
  for (let i = 1; i < replicas; i++) servers.push(await startServer(`replica-${replicas}-${String.fromCharCode(97 + i)}`, env, opts.work, profileDir));
  const baseOf = (i: number) => servers[i % servers.length]!.base;
  try {
    // a listing is reserved by its first buyer until paid: one listing per buyer, spread over the sellers
    log(`${replicas} replica(s) ready; ${SELLERS} sellers list ${BUYERS} services (one per buyer)`);
    const sellerClients = await pool(
      Array.from({ length: SELLERS }, (_, i) => i),
      8,
      async (i) => {
        const c = createBazaarClient({ baseUrl: baseOf(i) });
        await loginWithWallet(c, keypairSigner(Keypair.generate().secretKey));
        return c;
      },
    );
    const listings = await pool(
      Array.from({ length: BUYERS }, (_, i) => i),
      4,
      async (i) => {
        const c = sellerClients[i % SELLERS]!;
        // set-up, not measured: a 503 (a mint not confirmed in time on a loaded machine) is tried again with a new listing
        for (let attempt = 1; ; attempt++) {
          const r = await c.listings.createListing({ body: { title: `Flash sale service ${i}`, description: `Service ${i} of seller ${i % SELLERS} in the flash sale benchmark.`, price: 5, currency: 'USDC', category: 'design', duration: 5 } });
          if (r.status === 201) return r.body.listing_id;
          if (r.status !== 503 || attempt >= 5) throw new Error(`createListing ${r.status}: ${JSON.stringify(r.body)}`);
          await sleep(2_000);
        }
      },
    );
    log(`${BUYERS} buyers get SOL and test USDC`);
    const buyers = Array.from({ length: BUYERS }, () => Keypair.generate());
    await fundWallets(connection, opts.dataDir, buyers.map((b) => b.publicKey), 20_000_000n);

    // --- the ceiling: the localnet's own confirmed transfers/s, same wallets, same concurrency
    log(`ceiling: ${BUYERS} plain SOL transfers, ${CONCURRENCY} in flight`);
    const { blockhash } = await connection.getLatestBlockhash('confirmed');
    const load0 = loadavg();
    const ceilingCpu0 = cpuNow(servers, opts.pids);
    const c0 = performance.now();
    let cLast = c0;
    let ceilingFailed = 0;
    await pool(buyers, CONCURRENCY, async (kp, i) => {
      try {
        const tx = new Transaction({ feePayer: kp.publicKey, recentBlockhash: blockhash }).add(SystemProgram.transfer({ fromPubkey: kp.publicKey, toPubkey: buyers[(i + 1) % buyers.length]!.publicKey, lamports: 1_000 + i }));
        tx.sign(kp);
        const sig = await connection.sendRawTransaction(tx.serialize());
        const r = await connection.confirmTransaction(sig, 'confirmed');
        if (r.value.err) throw new Error(JSON.stringify(r.value.err));
        cLast = Math.max(cLast, performance.now());
      } catch {
        ceilingFailed++;
      }
    });
    const ceilingTps = (BUYERS - ceilingFailed) / ((cLast - c0) / 1000);
    const ceilingCpu1 = cpuNow(servers, opts.pids);
    log(`ceiling ${ceilingTps.toFixed(1)} confirmed tx/s`);

    // --- the sale
    const stmts0 = await statementsOf(servers);
    const [rpc0, http0] = [await histogramOf(servers, RPC_HISTOGRAM), await histogramOf(servers, HTTP_HISTOGRAM)];
    const retried503: Record<string, number> = {};
    const details503 = new Set<string>();
    const failures: string[] = [];
    const steps: Steps[] = [];
    const loginDone: number[] = [];
    const orderDone: number[] = [];
    const sentAt: number[] = [];
    const fundedAt: number[] = [];
    const loadBefore = loadavg();
    const cpu0 = cpuNow(servers, opts.pids);
    log(`the sale: ${BUYERS} buyers, ${CONCURRENCY} in flight, over ${replicas} replica(s)`);
    const t0 = performance.now();
    await pool(buyers, CONCURRENCY, async (kp, i) => {
      const base = baseOf(i);
      const stop = new AbortController();
      let following: Promise<unknown> = Promise.resolve();
      try {
        const b0 = performance.now();
        const client = createBazaarClient({ baseUrl: base });
        // the SDK's own Retry-After retry is off so that every 503 is seen and counted here
        const { token } = await with503Retry('login', retried503, () => loginWithWallet(client, keypairSigner(kp.secretKey), { retryAfter: false }), details503);
        const b1 = performance.now();
        loginDone.push(b1);
        // the buyer's event stream, open before the order exists (its `order.funded` cannot be missed)
        let funded: (at: number) => void = () => undefined;
        const fundedP = new Promise<number>((r) => (funded = r));
        let opened: () => void = () => undefined;
        const openedP = new Promise<void>((r) => (opened = r));
        let orderId = '';
        following = followEvents({
          baseUrl: base,
          token,
          types: ['order.funded'],
          signal: stop.signal,
          fetch: async (input, init) => {
            const res = await fetch(input, init);
            opened();
            return res;
          },
          onEvent: (e) => {
            if (e.resource_id === orderId) funded(performance.now());
          },
        }).catch(() => undefined);
        await openedP;
        const key = newIdempotencyKey();
        const ordered = await with503Retry('order', retried503, async () => {
          const r = await client.orders.createOrder({ headers: { 'idempotency-key': key }, body: { listing_id: listings[i % listings.length]! } });
          if (r.status === 503) throw Object.assign(new Error(`createOrder: HTTP 503 ${(r.body as { detail?: string }).detail ?? ''}`), { status: 503 });
          return r;
        }, details503);
        if (ordered.status !== 201 || !ordered.body.payment) throw new Error(`createOrder ${ordered.status}: ${JSON.stringify(ordered.body).slice(0, 300)}`);
        orderId = ordered.body.order_id;
        const b2 = performance.now();
        orderDone.push(b2);
        const tx = Transaction.from(Buffer.from(ordered.body.payment.transaction, 'base64'));
        tx.partialSign(kp);
        sentAt.push(performance.now());
        const sig = await connection.sendRawTransaction(tx.serialize());
        const conf = await connection.confirmTransaction(sig, 'confirmed');
        if (conf.value.err) throw new Error(`fund transaction failed: ${JSON.stringify(conf.value.err)}`);
        const b3 = performance.now();
        const left = SALE_DEADLINE_MS - (b3 - t0);
        const b4 = await Promise.race([fundedP, sleep(Math.max(left, 1)).then(() => null)]);
        if (b4 === null) throw new Error('timing: order.funded not seen before the deadline');
        fundedAt.push(b4);
        steps.push({ login: b1 - b0, order: b2 - b1, send_confirm: b3 - b2, detection: b4 - b3, buyer: b4 - b0 });
      } catch (err) {
        failures.push(String((err as Error)?.message ?? err).slice(0, 300));
      } finally {
        stop.abort();
        await following;
      }
    });
    const t1 = performance.now();
    const loadAfter = loadavg();
    const cpu1 = cpuNow(servers, opts.pids);
    const perUnit = (a: ReturnType<typeof cpuNow>, b: ReturnType<typeof cpuNow>, n: number) =>
      Object.fromEntries(Object.entries(b).map(([k, v]) => [k, Number.isNaN(v) ? null : Number(((v - a[k as keyof typeof a]) / n).toFixed(1))])) as Record<keyof typeof a, number | null>;
    await sleep(500); // the last statements of the leader's pass
    const stmts1 = await statementsOf(servers);
    // where the servers' time went during the sale: their own request durations and the JSON-RPC calls they waited for
    const rpcDuringSale = histogramDelta(rpc0, await histogramOf(servers, RPC_HISTOGRAM));
    const httpDuringSale = histogramDelta(http0, await histogramOf(servers, HTTP_HISTOGRAM));
    const span = (xs: number[]) => (xs.length ? (Math.max(...xs) - t0) / 1000 : NaN);
    const fundedSpan = fundedAt.length && sentAt.length ? (Math.max(...fundedAt) - Math.min(...sentAt)) / 1000 : NaN;
    const fundedPerS = fundedAt.length / fundedSpan;
    const of = (k: keyof Steps) => summary(steps.map((s) => s[k]));
    const result = {
      replicas,
      buyers: BUYERS,
      sellers: SELLERS,
      concurrency: CONCURRENCY,
      loadavg_ceiling_start: load0,
      loadavg_before: loadBefore,
      loadavg_after: loadAfter,
      ceiling_confirmed_tx_per_s: Number(ceilingTps.toFixed(1)),
      ceiling_failed: ceilingFailed,
      sale_seconds: Number(((t1 - t0) / 1000).toFixed(1)),
      logins_per_s: Number((loginDone.length / span(loginDone)).toFixed(1)),
      orders_per_s: Number((orderDone.length / span(orderDone)).toFixed(1)),
      funded: fundedAt.length,
      funded_within_60s: fundedAt.filter((t) => t - t0 <= 60_000).length,
      funded_per_s: Number(fundedPerS.toFixed(1)),
      funded_vs_ceiling_pct: Number(((100 * fundedPerS) / ceilingTps).toFixed(1)),
      steps_ms: { login: of('login'), order: of('order'), send_confirm: of('send_confirm'), detection: of('detection'), buyer: of('buyer') },
      retried_503: retried503,
      retried_503_reasons: [...details503].slice(0, 5),
      failures: failures.length,
      first_failures: [...new Set(failures)].slice(0, 5),
      sql_statements_per_buyer: Number.isNaN(stmts0) || Number.isNaN(stmts1) ? null : Number(((stmts1 - stmts0) / BUYERS).toFixed(1)),
      // CPU ms per funded buyer (the sale) and per confirmed transfer (the ceiling), by process: the rate each part
      // could sustain on one core alone is 1000 / that figure, whatever else the machine runs
      cpu_ms_per_buyer: perUnit(cpu0, cpu1, Math.max(1, fundedAt.length)),
      cpu_ms_per_ceiling_transfer: perUnit(ceilingCpu0, ceilingCpu1, Math.max(1, BUYERS - ceilingFailed)),
      server_http: httpDuringSale.slice(0, 8),
      server_rpc: rpcDuringSale.slice(0, 12),
      rpc_calls_per_buyer: Number((rpcDuringSale.reduce((n, r) => n + r.count, 0) / BUYERS).toFixed(1)),
    };
    return { result, servers, profileDir };
  } finally {
    await Promise.all(servers.map(stopServer));
    await db.drop().catch(() => undefined);
  }
}

// ---------------------------------------------------------------- main

async function main() {
  const work = mkdtempSync(path.join(os.tmpdir(), 'bazaar-flash-'));
  const dataDir = path.join(work, 'data');
  mkdirSync(dataDir);
  const own = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL ? null : ownServer();
  const databaseBase = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL || own!.url;
  log(`localnet (one, bootstrapped into ${dataDir})`);
  const localnet = await startLocalnet({ escrowUpgradeAuthority: adminPublicKeyFor(dataDir) });
  const results: Array<Awaited<ReturnType<typeof sale>>['result']> = [];
  const profiles: Record<number, string> = {};
  try {
    await bootstrapLocalnet({ rpcUrl: localnet.rpcUrl, dataDir });
    const connection = new Connection(localnet.rpcUrl, { commitment: 'confirmed', wsEndpoint: localnet.wsUrl });
    for (const replicas of REPLICAS) {
      const { result, profileDir } = await sale({ replicas, databaseBase, dataDir, rpcUrl: localnet.rpcUrl, wsUrl: localnet.wsUrl, connection, work, pids: { localnet: localnet.pid, ...(own ? { postgres: own.pid } : {}) } });
      console.log(JSON.stringify(result));
      results.push(result);
      if (profileDir) profiles[replicas] = summariseProfile(profileDir);
    }
  } finally {
    await localnet.stop();
    own?.stop();
  }

  const commit = (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  })();
  const cpu = os.cpus()[0]?.model ?? 'unknown';
  const date = new Date().toISOString().slice(0, 10);
  const st = (s: { p50: number; p99: number }) => `${s.p50} / ${s.p99}`;
  const md = [
    `# Flash sale (${date}, commit ${commit})`,
    '',
    `\`npm run bench:flash -- --buyers=${BUYERS} --sellers=${SELLERS} --concurrency=${CONCURRENCY}\` (benchmarks/flash.ts): each buyer logs in`,
    '(SIWS), opens its event stream, orders, signs and sends the fund transaction, waits for `confirmed`, then for',
    '`order.funded` on its stream. Ceiling: the same wallets each send one plain SOL transfer at the same concurrency,',
    'in the same run, right before the sale. Steps in ms, p50 / p99. Statements: the servers\' `bazaar_db_statements_total`.',
    '',
    `Machine: ${os.cpus().length} x ${cpu}, Node ${process.version}; localnet (debug build), PostgreSQL, the servers and the`,
    'buyers share it (load average 1 / 5 / 15 min before / after the sale).',
    '',
    '| replicas | ceiling tx/s | funded/s | % of ceiling | funded (in 60 s) | logins/s | orders/s | login | order | send+confirm | detection | buyer | 503 retried | failed | SQL/buyer | load before / after |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...results.map(
      (r) =>
        `| ${r.replicas} | ${r.ceiling_confirmed_tx_per_s} | ${r.funded_per_s} | ${r.funded_vs_ceiling_pct} % | ${r.funded}/${r.buyers} (${r.funded_within_60s}) | ${r.logins_per_s} | ${r.orders_per_s} | ${st(r.steps_ms.login)} | ${st(r.steps_ms.order)} | ${st(r.steps_ms.send_confirm)} | ${st(r.steps_ms.detection)} | ${st(r.steps_ms.buyer)} | ${JSON.stringify(r.retried_503)} | ${r.failures} | ${r.sql_statements_per_buyer ?? 'n/a'} | ${r.loadavg_before.join(' ')} / ${r.loadavg_after.join(' ')} |`,
    ),
    '',
    '',
    'CPU time per funded buyer during the sale and per confirmed transfer during the ceiling, ms, by process (/proc/<pid>/stat user + system;',
    'PostgreSQL: the postmaster and its backends, n/a with an external database). 1000 / a figure = what that part could sustain per',
    'second on one core of its own; the parts share 2 cores here.',
    '',
    '| replicas | per | servers | PostgreSQL | localnet | buyers (this harness) |',
    '|---|---|---|---|---|---|',
    ...results.flatMap((r) => [
      `| ${r.replicas} | funded buyer | ${r.cpu_ms_per_buyer.servers ?? 'n/a'} | ${r.cpu_ms_per_buyer.postgres ?? 'n/a'} | ${r.cpu_ms_per_buyer.localnet ?? 'n/a'} | ${r.cpu_ms_per_buyer.buyers ?? 'n/a'} |`,
      `| ${r.replicas} | ceiling transfer | ${r.cpu_ms_per_ceiling_transfer.servers ?? 'n/a'} | ${r.cpu_ms_per_ceiling_transfer.postgres ?? 'n/a'} | ${r.cpu_ms_per_ceiling_transfer.localnet ?? 'n/a'} | ${r.cpu_ms_per_ceiling_transfer.buyers ?? 'n/a'} |`,
    ]),
    '',
    ...results.flatMap((r) => [
      `Where the server's time went during the sale, ${r.replicas} replica(s) (\`${HTTP_HISTOGRAM}\` and \`${RPC_HISTOGRAM}\`, deltas over the sale, summed over the replicas; `,
      `server-side durations, so the gap to the buyers' step times above is time on the buyers' side and in transit): ${r.rpc_calls_per_buyer} JSON-RPC calls per buyer.`,
      '',
      '| server-side | calls | mean ms | total s |',
      '|---|---|---|---|',
      ...r.server_http.map((h) => `| HTTP ${h.labels.replace(/"/g, '')} | ${h.count} | ${h.mean_ms} | ${h.total_s} |`),
      ...r.server_rpc.map((h) => `| RPC ${h.labels.replace(/"/g, '')} | ${h.count} | ${h.mean_ms} | ${h.total_s} |`),
      '',
    ]),
    ...results.flatMap((r) => (r.first_failures.length ? [`Failures (${r.replicas} replica(s)): ${r.first_failures.map((f) => `\`${f.replace(/`/g, "'")}\``).join('; ')}`, ''] : [])),
    ...Object.entries(profiles).flatMap(([n, p]) => [`CPU profile of the server process(es), ${n} replica(s) (node --cpu-prof, whole run incl. set-up), self time by where the code lives:`, '', p, '']),
  ].join('\n');
  mkdirSync(OUT, { recursive: true });
  const stem = path.join(OUT, `flash-${date}${TAG ? `-${TAG}` : ''}`);
  writeFileSync(`${stem}.md`, md);
  writeFileSync(`${stem}.json`, JSON.stringify({ at: new Date().toISOString(), commit, cpus: os.cpus().length, cpu, node: process.version, results, profiles }, null, 2) + '\n');
  console.log(md);
  console.log(`written to ${stem}.md and .json`);
  rmSync(work, { recursive: true, force: true });
  if (SHORT) {
    // CI proves the harness runs: any failure that is not a timing, or nothing funded, fails it
    const broken = results.flatMap((r) => [...(r.funded === 0 ? [`${r.replicas}: nothing funded`] : []), ...r.first_failures.filter((f) => !f.startsWith('timing:')).map((f) => `${r.replicas}: ${f}`)]);
    if (broken.length) {
      console.error(`bench:flash --short: the harness did not run through:\n${broken.join('\n')}`);
      process.exit(1);
    }
  }
  process.exit(0);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
