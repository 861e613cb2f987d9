/**
 * `npm run bench`: the side-by-side benchmark of issue 14. For each size (listings) it seeds a
 * PostgreSQL database (benchmarks/lib/seed.ts), starts the real server (server/src/main.ts, its own
 * process, PUBLIC_MARKETPLACE=true, logging on as in production) and a bare Express app
 * (benchmarks/lib/bare.ts), and measures in interleaved rounds:
 *
 *   bare Express              GET /bare (a listing-sized JSON body), the floor of any route;
 *   the API                   each route / query class below, with autocannon;
 *   its SQL alone             the exact statements the server issued for that request (captured from
 *                             an in-process app's Prisma query log, parameters inlined), replayed by
 *                             pgbench at the same concurrency;
 *   EXPLAIN (ANALYZE, BUFFERS) of every search class, page 1 and page 50 (min and median of `rounds`
 *                             x 5 runs, shared buffers touched: a cost that the machine's load
 *                             does not change);
 *   overload                  search at 8 x the connections: how many 2xx / 503 / other answers.
 *
 * Issue 28: each route's req/s as "% of bare Express" (per round, and a `ratio:` line per route), the
 * listing read anonymous and with a Bearer token, and conditional GETs (If-None-Match with the ETag the
 * route's 200 carried: 304 Not Modified) of the listing and the categories, all against the same bare runs.
 *
 * Everything runs on one machine, so the API, PostgreSQL and the load generator share the cores; the
 * load average is recorded before and after each measurement, and the table gives medians over the
 * rounds and, per round, the ratio API / SQL alone (measured back to back, so the ratio is robust to
 * the background load that moves both).
 *
 *   npm run bench -- [--sizes=10000,100000,1000000] [--rounds=3] [--duration=10] [--connections=32]
 *                    [--out=benchmarks/results] [--profile] [--short] [--reseed] [--only=name,...]
 *                    [--explain-only]
 *
 * PostgreSQL: BENCH_DATABASE_URL (or TEST_DATABASE_URL) names a server the harness may create
 * databases on (bazaar_bench_<size>, or BENCH_DB_PREFIX_<size>; reused when already seeded with the current
 * migrations); without
 * either it starts its own cluster from /usr/lib/postgresql/<v>/bin on BENCH_PG_PORT (55510).
 * Ports: BENCH_PORT (3109) for the API, BENCH_BARE_PORT (BENCH_PORT+1) for bare Express.
 * --short (CI): 2 000 listings, 1 round of 1 s, 4 connections, results under $TMPDIR; it proves the
 * harness works end to end and fails only when a measurement could not run or the API answered 5xx
 * other than the overload scenario's 503s, never on a timing.
 * --explain-only: seed (or reuse) and EXPLAIN the search classes, no load (the 1M search figures).
 * --profile: the API runs with `node --cpu-prof`; the profile of the read scenarios is summarised
 * (self time by package) next to the table.
 */
import { cpuMsOf } from './lib/proc.js';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { PrismaClient } from '../server/src/generated/prisma/client.js';
import { createApp } from '../server/src/app.js';
import { loadConfig } from '../server/src/config.js';
import { BazaarPgAdapterFactory } from '../server/src/db/postgres.js';
import { migrateDatabase, MIGRATIONS_DIR } from '../server/src/db/migrate.js';
import { createLogger } from '../server/src/logger.js';
import { signAccessToken } from '../server/src/modules/auth/tokens.js';
import { seed } from './lib/seed.js';
import { summariseProfile } from './lib/profile.js';
import { arg } from './lib/args.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SHORT = arg('short') === 'true';
const SIZES = (arg('sizes', SHORT ? '2000' : '10000,100000') ?? '').split(',').map(Number);
const ROUNDS = Number(arg('rounds', SHORT ? '1' : '3'));
const DURATION = Number(arg('duration', SHORT ? '1' : '10'));
const CONNECTIONS = Number(arg('connections', SHORT ? '4' : '32'));
const OUT = path.resolve(arg('out', SHORT ? mkdtempSync(path.join(os.tmpdir(), 'bazaar-bench-')) : path.join(ROOT, 'benchmarks/results'))!);
const PROFILE = arg('profile') === 'true';
const RESEED = arg('reseed') === 'true';
const ONLY = arg('only')?.split(',');
const EXPLAIN_ONLY = arg('explain-only') === 'true';
const PORT = Number(process.env.BENCH_PORT ?? 3109);
const BARE_PORT = Number(process.env.BENCH_BARE_PORT ?? PORT + 1);
const JWT_SECRET = 'bench-secret-bench-secret-bench-secret-0123456789';
const CURRENCIES = 'USDC:Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB:6,SOL:So11111111111111111111111111111111111111112:9';

const loadavg = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const median = (xs: number[]) => (xs.length ? [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]! : NaN);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- PostgreSQL

function pgBin(): string {
  const dirs = readdirSync('/usr/lib/postgresql').map((v) => `/usr/lib/postgresql/${v}/bin`).filter((d) => existsSync(`${d}/pgbench`));
  if (!dirs.length) throw new Error('no PostgreSQL server binaries under /usr/lib/postgresql (apt-get install postgresql)');
  return dirs.sort().at(-1)!;
}

async function ownServer(): Promise<{ url: string; stop(): void }> {
  const bin = pgBin();
  const port = Number(process.env.BENCH_PG_PORT ?? 55510);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bazaar-bench-pg-'));
  const asPg = (cmd: string) => execFileSync('su', ['postgres', '-c', cmd], { stdio: 'ignore' });
  execFileSync('chown', ['postgres', dir]);
  asPg(`${bin}/initdb -D ${dir} -A trust -U postgres`);
  asPg(`${bin}/pg_ctl -D ${dir} -o '-p ${port} -k /tmp -c listen_addresses=127.0.0.1 -c max_connections=300' -l ${dir}/log -w start`);
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    stop: () => {
      asPg(`${bin}/pg_ctl -D ${dir} -m fast stop`);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const withDb = (base: string, db: string) => {
  const u = new URL(base);
  u.pathname = `/${db}`;
  return u.toString();
};

const latestMigration = () => readdirSync(MIGRATIONS_DIR).filter((d) => /^\d/.test(d)).sort().at(-1)!;

/** A seeded database of `size` listings (reused when it already holds them with the current migrations). */
async function database(base: string, size: number): Promise<{ url: string; seedMs: number | null }> {
  const name = `${process.env.BENCH_DB_PREFIX ?? 'bazaar_bench'}_${size}`;
  const url = withDb(base, name);
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount! > 0;
  if (exists && !RESEED) {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      const ok = await c.query(
        `SELECT (SELECT count(*) FROM listings)::int AS n,
                EXISTS (SELECT 1 FROM _prisma_migrations WHERE migration_name = $1 AND finished_at IS NOT NULL) AS current`,
        [latestMigration()],
      );
      if (ok.rows[0].n === size && ok.rows[0].current) {
        await admin.end();
        return { url, seedMs: null };
      }
    } catch {
      /* not a bench database: recreate */
    } finally {
      await c.end();
    }
  }
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  await migrateDatabase(new BazaarPgAdapterFactory(url));
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  const seedMs = await seed(c, size);
  await c.end();
  return { url, seedMs };
}

// ---------------------------------------------------------------- processes

function envFor(dbUrl: string, dataDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: dbUrl,
    PORT: String(PORT),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    JWT_SECRET,
    PUBLIC_MARKETPLACE: 'true',
    CURRENCIES,
    SOLANA_RPC_URL: 'http://127.0.0.1:1',
    SERVICE_KEYPAIR_PATH: path.join(dataDir, 'no-service-key.json'),
    BAZAAR_MAIN: '1',
  };
}

async function waitFor(url: string, proc: ChildProcess, what: string) {
  for (let i = 0; i < 300; i++) {
    if (proc.exitCode !== null) throw new Error(`${what} exited with ${proc.exitCode}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not yet */
    }
    await sleep(200);
  }
  throw new Error(`${what} did not answer ${url}`);
}

async function startApi(dbUrl: string, dataDir: string, profileDir?: string): Promise<ChildProcess> {
  const node = ['--import', 'tsx', ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []), 'server/src/main.ts'];
  const proc = spawn(process.execPath, node, { cwd: ROOT, env: envFor(dbUrl, dataDir), stdio: ['ignore', 'ignore', 'inherit'] });
  await waitFor(`http://127.0.0.1:${PORT}/healthz`, proc, 'the API');
  return proc;
}

async function startBare(bodyFile: string): Promise<ChildProcess> {
  const proc = spawn(process.execPath, ['--import', 'tsx', 'benchmarks/lib/bare.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: String(BARE_PORT), BARE_BODY_FILE: bodyFile },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitFor(`http://127.0.0.1:${BARE_PORT}/bare`, proc, 'bare Express');
  return proc;
}

async function stop(proc: ChildProcess) {
  if (proc.exitCode !== null) return;
  const done = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await Promise.race([done, sleep(30_000)]);
  if (proc.exitCode === null) proc.kill('SIGKILL');
}

const rssMb = (pid: number) => {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : NaN;
  } catch {
    return NaN;
  }
};


// ---------------------------------------------------------------- the SQL a request issues

interface Captured {
  status: number;
  body: string;
  /** the ETag the answer carried (issue 28 item 2), if any */
  etag: string | null;
  queries: string[];
}

/** Inline $n parameters as SQL literals (the values Prisma logged for the statement). */
function inline(query: string, params: unknown[]): string {
  const lit = (v: unknown): string => {
    if (v === null || v === undefined) return 'NULL';
    if (typeof v === 'number' || typeof v === 'bigint') return String(v);
    if (typeof v === 'boolean') return v ? 'true' : 'false';
    if (Array.isArray(v)) return `'{${v.map((x) => `"${String(x).replace(/["\\]/g, '\\$&')}"`).join(',')}}'`;
    if (v instanceof Date) return `'${v.toISOString()}'`;
    return `'${String(v).replace(/'/g, "''")}'`;
  };
  return query.replace(/\$(\d+)/g, (_, i: string) => lit(params[Number(i) - 1]));
}

/** An in-process app on the same database whose Prisma client logs every statement it sends. */
async function capturer(dbUrl: string, dataDir: string) {
  const prisma = new PrismaClient({ adapter: new BazaarPgAdapterFactory(dbUrl), log: [{ emit: 'event', level: 'query' }] });
  let log: string[] = [];
  (prisma as unknown as { $on(e: 'query', cb: (e: { query: string; params: string }) => void): void }).$on('query', (e) => {
    let params: unknown[] = [];
    try {
      params = JSON.parse(e.params) as unknown[];
    } catch {
      /* no params */
    }
    log.push(inline(e.query, params));
  });
  const config = { ...loadConfig(envFor(dbUrl, dataDir)), logLevel: 'silent' };
  const app = createApp({ config, db: prisma, log: createLogger('silent'), chain: null, now: () => new Date(), orders: { watcherIntervalMs: 0, reconcileIntervalMs: 0 }, listings: { recoveryIntervalMs: 0 } });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    async capture(url: string, headers: Record<string, string> = {}): Promise<Captured> {
      log = [];
      const res = await fetch(base + url, { headers });
      const body = await res.text();
      await sleep(20); // query events are emitted asynchronously
      return { status: res.status, body, etag: res.headers.get('etag'), queries: log.filter((q) => !/^(BEGIN|COMMIT|ROLLBACK)\b/i.test(q.trim())) };
    },
    async close() {
      await new Promise((r) => server.close(r));
      await prisma.$disconnect();
    },
  };
}

// ---------------------------------------------------------------- load

interface Load {
  rps: number;
  /** CPU time the server process spent per answered request, µs (NaN for pgbench): robust to the machine's load */
  cpuUsPerReq: number;
  p50: number;
  p99: number;
  errors: number;
  statuses: Record<string, number>;
  loadBefore: string;
  loadAfter: string;
}

async function cannon(url: string, headers: Record<string, string>, connections = CONNECTIONS, duration = DURATION, pid?: number): Promise<Load> {
  const loadBefore = loadavg();
  const cpu0 = cpuMsOf(pid);
  const r = await autocannon({ url, headers, connections, duration, pipelining: 1 });
  const cpuUsPerReq = ((cpuMsOf(pid) - cpu0) * 1000) / r.requests.total;
  const statuses: Record<string, number> = {};
  for (const [code, s] of Object.entries(r.statusCodeStats ?? {})) statuses[code] = (s as { count: number }).count;
  return {
    rps: r.requests.average,
    cpuUsPerReq,
    p50: r.latency.p50,
    p99: r.latency.p99,
    errors: r.errors + r.timeouts,
    statuses,
    loadBefore,
    loadAfter: loadavg(),
  };
}

/** pgbench over `script` (the request's statements), per-transaction latencies from its log. */
function pgbench(dbUrl: string, script: string, clients = CONNECTIONS, duration = DURATION): Load {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bazaar-pgbench-'));
  const file = path.join(dir, 'script.sql');
  writeFileSync(file, script);
  const loadBefore = loadavg();
  const u = new URL(dbUrl);
  const out = execFileSync(
    path.join(pgBin(), 'pgbench'),
    ['-n', '-c', String(clients), '-j', String(Math.min(clients, 2)), '-T', String(duration), '-f', file, '-l', '--log-prefix', path.join(dir, 'tx'),
      '-h', u.hostname, '-p', u.port || '5432', '-U', decodeURIComponent(u.username || 'postgres'), u.pathname.slice(1)],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lat: number[] = [];
  for (const f of readdirSync(dir).filter((f) => f.startsWith('tx'))) {
    for (const line of readFileSync(path.join(dir, f), 'utf8').split('\n')) {
      const parts = line.split(' ');
      if (parts.length >= 3) lat.push(Number(parts[2]) / 1000);
    }
  }
  rmSync(dir, { recursive: true, force: true });
  const tps = Number(/tps = ([\d.]+) \(without initial connection time\)/.exec(out)?.[1] ?? NaN);
  const failed = Number(/number of failed transactions: (\d+)/.exec(out)?.[1] ?? 0);
  lat.sort((a, b) => a - b);
  const pct = (p: number) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor(lat.length * p))]! : NaN);
  return { rps: tps, cpuUsPerReq: NaN, p50: pct(0.5), p99: pct(0.99), errors: failed, statuses: {}, loadBefore, loadAfter: loadavg() };
}

// ---------------------------------------------------------------- EXPLAIN

interface Explained {
  minMs: number;
  medMs: number;
  buffers: number;
  indexes: string[];
  seqScan: boolean;
}

async function explain(client: pg.Client, queries: string[], runs: number): Promise<Explained> {
  const times: number[] = [];
  let buffers = 0;
  const indexes = new Set<string>();
  let seqScan = false;
  for (let r = 0; r < runs; r++) {
    let t = 0;
    buffers = 0;
    for (const q of queries) {
      const res = await client.query(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${q}`);
      const plan = res.rows[0]['QUERY PLAN'][0];
      t += plan['Execution Time'] + plan['Planning Time'];
      buffers += (plan.Plan['Shared Hit Blocks'] ?? 0) + (plan.Plan['Shared Read Blocks'] ?? 0);
      const walk = (n: Record<string, unknown>) => {
        if (typeof n['Index Name'] === 'string') indexes.add(n['Index Name']);
        if (n['Node Type'] === 'Seq Scan' && n['Relation Name'] === 'listings') seqScan = true;
        for (const c of (n.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(c);
      };
      walk(plan.Plan);
    }
    times.push(t);
  }
  return { minMs: Math.min(...times), medMs: median(times), buffers, indexes: [...indexes].sort(), seqScan };
}

// ---------------------------------------------------------------- scenarios

interface Scenario {
  name: string;
  url: string;
  headers?: Record<string, string>;
  /** a search class: EXPLAIN it too, page 1 and page 50 */
  search?: boolean;
  /**
   * a conditional GET (issue 28 item 2): sends If-None-Match with the ETag the route's 200 carried (captured
   * first), so the server answers 304; a server without ETags answers 200 (the "before" of the table)
   */
  conditional?: boolean;
}

const S = (params: Record<string, string | number>) => `/api/v1/marketplace/search?${new URLSearchParams(Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)]))).toString()}`;

async function scenarios(dbUrl: string): Promise<{ list: Scenario[]; listingId: string; token: string }> {
  const c = new pg.Client({ connectionString: dbUrl });
  await c.connect();
  const l = (await c.query(`SELECT l.id::text AS id, u.id::text AS uid, u.wallet FROM listings l JOIN users u ON u.id = l.seller_id WHERE l.status = 'available' ORDER BY l.created_at DESC LIMIT 1`)).rows[0];
  await c.end();
  const { token } = await signAccessToken({ sub: l.uid, wallet: l.wallet }, JWT_SECRET, 24 * 3600, new Date());
  const list: Scenario[] = [
    { name: 'GET /listings/{id} anonymous', url: `/api/v1/listings/${l.id}` },
    { name: 'GET /listings/{id} Bearer', url: `/api/v1/listings/${l.id}`, headers: { authorization: `Bearer ${token}` } },
    { name: 'GET /categories', url: '/api/v1/categories' },
    // accept-encoding identity: what autocannon sends (no coding), so the captured tag is the one its requests get
    { name: 'GET /listings/{id} anonymous If-None-Match (304)', url: `/api/v1/listings/${l.id}`, headers: { 'accept-encoding': 'identity' }, conditional: true },
    { name: 'GET /categories If-None-Match (304)', url: '/api/v1/categories', headers: { 'accept-encoding': 'identity' }, conditional: true },
    { name: 'search "design" (common word, relevance)', url: S({ query: 'design' }), search: true },
    { name: 'search "logo design" (relevance)', url: S({ query: 'logo design' }), search: true },
    { name: 'search typo "logo desgin"', url: S({ query: 'logo desgin' }), search: true },
    { name: 'search "video editing" + category', url: S({ query: 'video editing', category: 'video' }), search: true },
    { name: 'search text + price range + category', url: S({ query: 'design', min_price: 10, max_price: 200, category: 'design' }), search: true },
    { name: 'search USDC 10..50 price_asc', url: S({ currency: 'USDC', min_price: 10, max_price: 50, sort: 'price_asc' }), search: true },
    { name: 'search price_desc (UI price, both currencies)', url: S({ sort: 'price_desc' }), search: true },
    { name: 'search rating', url: S({ sort: 'rating' }), search: true },
    { name: 'search newest', url: S({ sort: 'newest' }), search: true },
  ];
  return { list: ONLY ? list.filter((s) => ONLY.some((o) => s.name.includes(o))) : list, listingId: l.id, token };
}

/** The URL of page 50 (limit 20): follow next_cursor 49 times through the in-process app. */
async function page50(cap: Awaited<ReturnType<typeof capturer>>, url: string): Promise<string | null> {
  let next = url;
  for (let i = 1; i < 50; i++) {
    const r = await cap.capture(next);
    const cursor = (JSON.parse(r.body) as { next_cursor: string | null }).next_cursor;
    if (!cursor) return null;
    next = `${url}&cursor=${encodeURIComponent(cursor)}`;
  }
  return next;
}

// ---------------------------------------------------------------- run

interface Row {
  name: string;
  api: Load[];
  sql: Load[];
  queries: number;
  rss: number[];
}

async function runSize(base: string, size: number) {
  const t0 = Date.now();
  const { url: dbUrl, seedMs } = await database(base, size);
  console.log(`[${size}] database ready${seedMs !== null ? ` (seeded in ${(seedMs / 1000).toFixed(1)} s)` : ' (reused)'}`);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'bazaar-bench-data-'));
  const { list } = await scenarios(dbUrl);
  const cap = await capturer(dbUrl, dataDir);
  const explainClient = new pg.Client({ connectionString: dbUrl });
  await explainClient.connect();
  // the full-text index the server searches with (marketplace.repo.ts detectSearchIndex; log line "search index: ...")
  const searchIndex: 'rum' | 'gin' = (await explainClient.query(`SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'listings_search_rum_idx'`)).rows.length ? 'rum' : 'gin';
  console.log(`[${size}] search index: ${searchIndex}`);

  // capture each scenario's SQL (and check it answers 200)
  const captured = new Map<string, Captured>();
  for (const s of list) {
    await cap.capture(s.url, s.headers); // warm-up (first use of the route)
    const r = await cap.capture(s.url, s.headers);
    if (r.status !== 200) throw new Error(`${s.name}: ${r.status} ${r.body.slice(0, 300)}`);
    captured.set(s.name, r);
    if (s.conditional) {
      // the validator the route's 200 carries; without one (a server before issue 28) the request stays unconditional
      if (r.etag) {
        s.headers = { ...(s.headers ?? {}), 'if-none-match': r.etag };
        const again = await cap.capture(s.url, s.headers);
        if (again.status !== 304) throw new Error(`${s.name}: If-None-Match ${r.etag} answered ${again.status}, not 304`);
        captured.set(s.name, again);
      } else console.log(`[${size}] ${s.name}: no ETag on the 200, measured unconditional`);
    }
  }
  const bodyFile = path.join(dataDir, 'listing.json');
  writeFileSync(bodyFile, captured.get(list.find((s) => s.name.startsWith('GET /listings'))?.name ?? '')?.body ?? '{"ok":true}');

  // EXPLAIN every search class, page 1 and page 50
  const explained: Array<{ name: string; page: number; e: Explained; queries: number }> = [];
  for (const s of list.filter((x) => x.search)) {
    const p50url = await page50(cap, s.url);
    for (const [page, url] of [[1, s.url], [50, p50url]] as Array<[number, string | null]>) {
      if (!url) continue;
      const r = await cap.capture(url);
      explained.push({ name: s.name, page, e: await explain(explainClient, r.queries, SHORT ? 2 : Math.max(5, ROUNDS * 5)), queries: r.queries.length });
    }
  }
  console.log(`[${size}] EXPLAIN done`);
  if (EXPLAIN_ONLY) {
    await cap.close();
    await explainClient.end();
    rmSync(dataDir, { recursive: true, force: true });
    return { size, seedMs, searchIndex, rows: [] as Row[], bareRuns: [] as Load[], explained, overload: null as Load | null, idleRss: 0, profile: null as string | null, minutes: (Date.now() - t0) / 60_000 };
  }

  const profileDir = PROFILE ? path.join(OUT, 'profiles', `${size}`) : undefined;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const api = await startApi(dbUrl, dataDir, profileDir);
  const bare = await startBare(bodyFile);
  const rows: Row[] = list.map((s) => ({ name: s.name, api: [], sql: [], queries: captured.get(s.name)!.queries.length, rss: [] }));
  const bareRuns: Load[] = [];
  const idleRss = rssMb(api.pid!);
  let overload: Load | null = null;
  try {
    // warm the API (JIT, connection pool) on every route
    for (const s of list) await cannon(`http://127.0.0.1:${PORT}${s.url}`, s.headers ?? {}, 4, 1);
    for (let round = 0; round < ROUNDS; round++) {
      bareRuns.push(await cannon(`http://127.0.0.1:${BARE_PORT}/bare`, {}, CONNECTIONS, DURATION, bare.pid));
      for (const [i, s] of list.entries()) {
        rows[i]!.api.push(await cannon(`http://127.0.0.1:${PORT}${s.url}`, s.headers ?? {}, CONNECTIONS, DURATION, api.pid));
        rows[i]!.rss.push(rssMb(api.pid!));
        rows[i]!.sql.push(pgbench(dbUrl, captured.get(s.name)!.queries.map((q) => `${q.trim().replace(/;$/, '')};`).join('\n') + '\n'));
      }
      console.log(`[${size}] round ${round + 1}/${ROUNDS} done (load ${loadavg()})`);
    }
    const heavy = list.find((s) => s.search);
    if (heavy) overload = await cannon(`http://127.0.0.1:${PORT}${heavy.url}`, {}, CONNECTIONS * 8, Math.max(DURATION, 1));
  } finally {
    await stop(bare);
    await stop(api);
    await cap.close();
    await explainClient.end();
  }
  const profile = profileDir ? summariseProfile(profileDir) : null;
  rmSync(dataDir, { recursive: true, force: true });
  return { size, seedMs, searchIndex, rows, bareRuns, explained, overload, idleRss, profile, minutes: (Date.now() - t0) / 60_000 };
}

function report(results: Array<Awaited<ReturnType<typeof runSize>>>, pgVersion: string): string {
  const cpu = os.cpus();
  const commit = (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
    } catch {
      return 'unknown';
    }
  })();
  const f = (x: number, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : '-');
  const lines: string[] = [
    `# Benchmark ${new Date().toISOString()} (commit ${commit})`,
    '',
    `Hardware: ${cpu.length} x ${cpu[0]?.model ?? '?'}, ${Math.round(os.totalmem() / 2 ** 30)} GiB RAM; ${os.type()} ${os.release()}; Node ${process.version}; ${pgVersion}.`,
    `API, PostgreSQL and the load generator (autocannon ${CONNECTIONS} connections / pgbench ${CONNECTIONS} clients, ${DURATION} s each) share these cores;`,
    `${ROUNDS} interleaved rounds (bare Express, then per route: API, its SQL alone); medians over rounds. The machine is shared:`,
    'the load average (1/5/15 min) before and after each measurement is listed; ratios compare runs made back to back.',
    '',
  ];
  for (const r of results) {
    const bareRps = median(r.bareRuns.map((b) => b.rps));
    lines.push(`## ${r.size.toLocaleString('en-US')} listings`, '');
    lines.push(`Search index: ${r.searchIndex} (the server's start-up line "search index: ${r.searchIndex}"; docs/search-design.md).`, '');
    if (EXPLAIN_ONLY) lines.push(`Seeded in ${r.seedMs === null ? '(reused database)' : `${f(r.seedMs / 1000, 1)} s`}; run took ${f(r.minutes, 1)} min; --explain-only: no load. Load average at the end: ${loadavg()}.`, '');
    else lines.push(`Seeded in ${r.seedMs === null ? '(reused database)' : `${f(r.seedMs / 1000, 1)} s`}; run took ${f(r.minutes, 1)} min. Bare Express: ${f(bareRps)} req/s, p50 ${f(median(r.bareRuns.map((b) => b.p50)), 1)} ms, p99 ${f(median(r.bareRuns.map((b) => b.p99)), 1)} ms. API RSS idle ${r.idleRss} MB, under load up to ${Math.max(...r.rows.flatMap((x) => x.rss))} MB. Bare Express CPU per request ${f(median(r.bareRuns.map((b) => b.cpuUsPerReq)))} µs.`, '');
    if (!EXPLAIN_ONLY) lines.push('| route | API req/s | p50 ms | p99 ms | API CPU µs/req | % of bare Express (per-round ratios) | SQL alone req/s | SQL p50 ms | SQL p99 ms | API / SQL (per-round ratios) | statements | non-2xx | load avg before -> after |');
    if (!EXPLAIN_ONLY) lines.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const row of r.rows) {
      const api = median(row.api.map((x) => x.rps));
      const sql = median(row.sql.map((x) => x.rps));
      const ratios = row.api.map((a, i) => `${f((100 * a.rps) / (row.sql[i]?.rps ?? NaN))} %`).join(', ');
      const bareRatios = row.api.map((a, i) => `${f((100 * a.rps) / (r.bareRuns[i]?.rps ?? NaN))} %`).join(', ');
      const codes = new Map<string, number>();
      for (const a of row.api) {
        for (const [c, v] of Object.entries(a.statuses)) if (!c.startsWith('2')) codes.set(c, (codes.get(c) ?? 0) + v);
        if (a.errors) codes.set('socket errors', (codes.get('socket errors') ?? 0) + a.errors);
      }
      const non2xx = codes.size ? [...codes].map(([c, v]) => `${v} x ${c}`).join(', ') : '0';
      lines.push(
        `| ${row.name} | ${f(api)} | ${f(median(row.api.map((x) => x.p50)), 1)} | ${f(median(row.api.map((x) => x.p99)), 1)} | ${f(median(row.api.map((x) => x.cpuUsPerReq)))} | ${f((100 * api) / bareRps)} % (${bareRatios}) | ${f(sql)} | ${f(median(row.sql.map((x) => x.p50)), 1)} | ${f(median(row.sql.map((x) => x.p99)), 1)} | ${f((100 * api) / sql)} % (${ratios}) | ${row.queries} | ${non2xx} | ${row.api[0]?.loadBefore ?? ''} -> ${row.api.at(-1)?.loadAfter ?? ''} |`,
      );
    }
    // issue 28 item 1: each route's throughput as a share of bare Express measured in the same rounds
    lines.push(
      '',
      'Ratios to bare Express (median req/s of the route / median req/s of bare Express, same rounds; goal for the lean reads >= 40 %),',
      'and by CPU: bare Express\'s CPU time per request / the API process\'s CPU time per request (server processes only, from',
      '/proc/<pid>/stat: what the throughput ratio would be if the server\'s own CPU were the only limit; robust to the machine\'s load):',
      '',
    );
    const bareCpu = median(r.bareRuns.map((b) => b.cpuUsPerReq));
    for (const row of r.rows) {
      const api = median(row.api.map((x) => x.rps));
      const cpu = median(row.api.map((x) => x.cpuUsPerReq));
      lines.push(
        `- ratio: ${row.name} = ${f((100 * api) / bareRps)} % of bare Express (${f(api)} / ${f(bareRps)} req/s); by CPU ${f((100 * bareCpu) / cpu)} % (${f(cpu)} vs ${f(bareCpu)} µs per request); load ${row.api[0]?.loadBefore ?? ''} -> ${row.api.at(-1)?.loadAfter ?? ''}`,
      );
    }
    lines.push('', 'EXPLAIN (ANALYZE, BUFFERS) of the statements each search issues (summed), min / median over the runs:', '');
    lines.push('| query class | page | min ms | median ms | shared buffers | statements | indexes | seq scan of listings |');
    lines.push('|---|---|---|---|---|---|---|---|');
    for (const e of r.explained) lines.push(`| ${e.name} | ${e.page} | ${f(e.e.minMs, 2)} | ${f(e.e.medMs, 2)} | ${e.e.buffers} | ${e.queries} | ${e.e.indexes.join(', ')} | ${e.e.seqScan ? 'yes' : 'no'} |`);
    if (r.overload) {
      lines.push('', `Overload: search at ${CONNECTIONS * 8} connections for ${Math.max(DURATION, 1)} s: ${f(r.overload.rps)} req/s, p99 ${f(r.overload.p99)} ms, answers ${JSON.stringify(r.overload.statuses)}, socket errors/timeouts ${r.overload.errors}.`);
    }
    if (r.profile) lines.push('', `CPU profile of the API over the whole run (node --cpu-prof), self time by where the code lives:`, '', r.profile);
    lines.push('');
  }
  return lines.join('\n');
}

async function main() {
  let base = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL;
  let own: Awaited<ReturnType<typeof ownServer>> | null = null;
  if (!base) {
    own = await ownServer();
    base = own.url;
  }
  try {
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    const pgVersion = ((await c.query('SHOW server_version')).rows[0].server_version as string).replace(/ .*/, '');
    await c.end();
    const results = [];
    for (const size of SIZES) results.push(await runSize(base, size));
    const md = report(results, `PostgreSQL ${pgVersion}`);
    mkdirSync(OUT, { recursive: true });
    const file = path.join(OUT, `bench-${new Date().toISOString().slice(0, 19).replace(/[:T]/g, '-')}-${SIZES.join('_')}.md`);
    writeFileSync(file, md);
    console.log(md);
    console.log(`\nwritten to ${file}`);
    // --short proves the harness works: every measurement ran, no 5xx outside the overload scenario
    const failures = results.flatMap((r) =>
      r.rows.flatMap((row) => [
        ...row.api.filter((a) => Object.keys(a.statuses).some((c) => c.startsWith('5'))).map(() => `${r.size} ${row.name}: 5xx answers`),
        ...row.sql.filter((s) => !Number.isFinite(s.rps) || s.rps <= 0).map(() => `${r.size} ${row.name}: pgbench did not run`),
        ...row.api.filter((a) => !(a.rps > 0)).map(() => `${r.size} ${row.name}: no API answers`),
      ]).concat(r.overload && Object.keys(r.overload.statuses).some((c) => c.startsWith('5') && c !== '503') ? [`${r.size} overload: 5xx other than 503`] : []),
    );
    if (failures.length) {
      console.error(`bench: ${failures.length} problem(s):\n${failures.join('\n')}`);
      process.exitCode = 1;
    }
  } finally {
    own?.stop();
  }
}

await main();
