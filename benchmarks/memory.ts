/**
 * `npm run bench:memory` (issue 28 item 5): where one server process's memory goes, and whether it grows
 * with the requests it served. Not a test: it prints and writes numbers.
 *
 * On a fresh bootstrapped localnet, the server runs as its own process (server/src/main.ts, as `npm run
 * start:server` runs it, or `--entry=<file>`) on a fresh database (PostgreSQL when TEST_DATABASE_URL names a
 * server, else PGlite under the DATA_DIR; `--db=pglite|postgres`), started with `--inspect=127.0.0.1:0` so
 * the harness reads its memory from outside (benchmarks/lib/inspector.ts: a full GC, then
 * `process.memoryUsage()`; heap snapshots through HeapProfiler).
 *
 * Phases: idle (the service started, 3 s after it listens), then `--bursts` (default 2) bursts of `--buyers`
 * (default 100) buyers, `--parallel` (default 8) in flight: each buyer logs in with SIWS, its seller's listing
 * is read, it orders it (POST /orders), takes the fund transaction (POST /orders/{id}/payment), signs and
 * sends it to the localnet, and polls GET /orders/{id} until `in_progress` (the payment watcher saw the
 * escrow funded); a search page is read too. The wallets are funded (SOL airdrop, test USDC) before each
 * burst, not measured. After each phase: RSS and heap before a GC (what the process holds as it runs) and
 * after a full GC (what is still referenced), and, with `--snapshots`, a heap snapshot summarised by
 * constructor, with the growth between consecutive snapshots (a leak grows per request: the same
 * constructors by about the same count per burst).
 *
 * The loaded module graph (every script V8 compiled, grouped by package, with source characters) is
 * printed for the idle process: what the server path loads.
 *
 *   npm run bench:memory -- [--buyers=100] [--bursts=2] [--parallel=8] [--db=postgres] [--snapshots] [--tag=before] [--short]
 *
 * `--short` (CI): 5 buyers, 1 burst, no snapshots. Results: printed, and written to
 * benchmarks/results/memory-<date>[-<tag>].md (+ .json) with the machine and the load average of each phase.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Keypair, LAMPORTS_PER_SOL, Transaction } from '@solana/web3.js';
import { startBootstrappedChain } from '../tests/helpers/localnet.js';
import { freePort } from '../tests/helpers/ports.js';
import { freshPostgres } from '../tests/helpers/db.js';
import { signSiws, walletOf } from '../tests/helpers/app.js';
import { ensureSol, mintTestUsdc } from '../server/scripts/bootstrap-localnet.js';
import { debuggerUrl, Inspector, snapshotGrowth, summariseSnapshot, type LoadedScript, type MemoryUsage, type SnapshotGroup } from './lib/inspector.js';

const SHORT = process.argv.includes('--short');
const arg = (name: string, dflt: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? dflt;
const BUYERS = Number(arg('buyers', SHORT ? '5' : '100'));
const BURSTS = Number(arg('bursts', SHORT ? '1' : '2'));
const PARALLEL = Number(arg('parallel', '8'));
const SNAPSHOTS = process.argv.includes('--snapshots') && !SHORT;
const DB = arg('db', process.env.TEST_DATABASE_URL ? 'postgres' : 'pglite') as 'postgres' | 'pglite';
const ENTRY = arg('entry', 'server/src/main.ts');
const TAG = arg('tag', '');
const API = '/api/v1';
const REPO = new URL('..', import.meta.url).pathname;

const loadavg = () => os.loadavg().map((x) => x.toFixed(2)).join(' ');
const mb = (bytes: number) => Math.round((bytes / 1048576) * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A worker pool: run `fn(i)` for i in 0..n with `parallel` in flight. */
async function pool(n: number, parallel: number, fn: (i: number) => Promise<void>) {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(parallel, n) }, async () => {
    while (next < n) await fn(next++);
  }));
}

/** The package a loaded script belongs to: `node_modules/<pkg>`, the workspace's own folders, or Node's internals. */
function packageOf(url: string): string {
  if (url.startsWith('node:')) return 'node (internals)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const local = url.replace(/^file:\/\//, '');
  if (local.startsWith(REPO)) return local.slice(REPO.length).split('/').slice(0, 2).join('/');
  return url.slice(0, 60);
}

function moduleGraph(scripts: LoadedScript[]) {
  const by = new Map<string, { pkg: string; scripts: number; chars: number }>();
  for (const s of scripts) {
    const pkg = packageOf(s.url);
    const g = by.get(pkg) ?? { pkg, scripts: 0, chars: 0 };
    g.scripts++;
    g.chars += s.length;
    by.set(pkg, g);
  }
  return [...by.values()].sort((a, b) => b.chars - a.chars);
}

/**
 * Resident memory of `pid` by mapping kind, from /proc/<pid>/smaps (Linux; null elsewhere), in bytes:
 * `wasm` = anonymous reservations of at least 1 GiB of address space (V8 reserves a WebAssembly memory with
 * guard regions: what is resident there is the module's linear memory), `malloc` = [heap] and the other anonymous
 * mappings (glibc arenas, V8's heap pages), `code` = file-backed mappings (the node binary, shared libraries).
 */
function residentByKind(pid: number): Record<'wasm' | 'anonymous' | 'files' | 'stack', number> | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/smaps`, 'utf8');
  } catch {
    return null;
  }
  const out = { wasm: 0, anonymous: 0, files: 0, stack: 0 };
  let kind: keyof typeof out = 'anonymous';
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) {
      const size = Number(BigInt(`0x${head[2]}`) - BigInt(`0x${head[1]}`));
      const name = head[3]!.trim();
      kind = name.startsWith('/') ? 'files' : name === '[stack]' ? 'stack' : size >= 1 << 30 ? 'wasm' : 'anonymous';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out[kind] += Number(rss[1]) * 1024;
  }
  return out;
}

interface Phase {
  phase: string;
  requests: number;
  loadavg: string;
  /** before a GC: what the process holds as it runs */
  live: MemoryUsage;
  /** after a full GC: what is still referenced */
  gc: MemoryUsage;
  /** resident bytes by mapping kind after the GC (Linux) */
  resident: ReturnType<typeof residentByKind>;
  snapshot?: { totalBytes: number; nodes: number; top: SnapshotGroup[]; growth?: Array<SnapshotGroup & { countDelta: number; bytesDelta: number }> };
}

const chainEnv = await startBootstrappedChain('bench-memory');
const pgdb = DB === 'postgres' ? await freshPostgres() : null;
const port = await freePort();
const snapDir = mkdtempSync(path.join(os.tmpdir(), 'bazaar-heap-'));
let child: ChildProcess | null = null;
let insp: Inspector | null = null;
let output = '';
const phases: Phase[] = [];
let graph: ReturnType<typeof moduleGraph> = [];
let scriptsTotal = { scripts: 0, chars: 0 };
let startMs = 0;
let requests = 0;
let retries = 0;

try {
  const t0 = performance.now();
  child = spawn(process.execPath, ['--inspect=127.0.0.1:0', ...(ENTRY.endsWith('.ts') ? ['--import', 'tsx'] : []), ENTRY], {
    cwd: REPO,
    env: {
      ...process.env,
      DATA_DIR: chainEnv.dataDir,
      DATABASE_URL: pgdb?.url ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      SOLANA_RPC_URL: chainEnv.localnet.rpcUrl,
      SOLANA_WS_URL: chainEnv.localnet.wsUrl,
      AUTH_RATE_LIMIT_PER_MINUTE: '1000000',
      ORDER_MAX_UNPAID_PER_IP: '100000',
      LOG_LEVEL: 'warn',
      NODE_OPTIONS: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const serverLog = path.join(snapDir, 'server.log');
  child.stdout!.on('data', (d) => {
    output += d;
    appendFileSync(serverLog, d);
  });
  child.stderr!.on('data', (d) => {
    output += d;
    appendFileSync(serverLog, d);
  });
  if (process.env.BENCH_MEMORY_DEBUG) console.log(`server log: ${serverLog}`);
  const base = `http://127.0.0.1:${port}`;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`server exited ${child.exitCode}:\n${output}`);
    const ok = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
    if (ok) break;
    await sleep(100);
  }
  startMs = Math.round(performance.now() - t0);
  const url = debuggerUrl(output);
  if (!url) throw new Error(`no debugger URL in the server's output:\n${output}`);
  insp = await Inspector.connect(url);
  const inspector = insp;
  await sleep(3000);

  let previous: SnapshotGroup[] | null = null;
  const measure = async (phase: string) => {
    const live = (await inspector.send('Runtime.evaluate', { expression: 'process.memoryUsage()', returnByValue: true })).result.value as MemoryUsage;
    const gc = await inspector.memoryUsage();
    const p: Phase = { phase, requests, loadavg: loadavg(), live, gc, resident: residentByKind(child!.pid!) };
    if (SNAPSHOTS) {
      const file = path.join(snapDir, `${phase}.heapsnapshot`);
      await inspector.heapSnapshot(file);
      const s = summariseSnapshot(file);
      rmSync(file);
      p.snapshot = { totalBytes: s.totalBytes, nodes: s.nodes, top: s.groups.slice(0, 25), ...(previous ? { growth: snapshotGrowth(previous, s.groups).slice(0, 25) } : {}) };
      previous = s.groups;
    }
    phases.push(p);
    console.log(`${phase}: rss ${mb(live.rss)} MB (after GC ${mb(gc.rss)}), heap used ${mb(live.heapUsed)} MB (after GC ${mb(gc.heapUsed)}), heap total ${mb(gc.heapTotal)} MB, external ${mb(gc.external)} MB; resident ${JSON.stringify(Object.fromEntries(Object.entries(p.resident ?? {}).map(([k, v]) => [k, mb(v)])))}; load ${p.loadavg}`);
  };

  await measure('idle');
  const scripts = await inspector.scripts();
  console.log(`loaded scripts: ${scripts.length}`);
  graph = moduleGraph(scripts);
  scriptsTotal = { scripts: scripts.length, chars: scripts.reduce((n, s) => n + s.length, 0) };

  const call = async (method: string, p: string, token?: string, body?: unknown, extra: Record<string, string> = {}) => {
    requests++;
    if (process.env.BENCH_MEMORY_DEBUG) console.log(method, p);
    // a 503 (a statement timed out on a loaded machine) or 429 is retried after Retry-After, as a client
    // does; writes carry their Idempotency-Key, so a retry never acts twice
    for (let attempt = 1; ; attempt++) {
      const r = await fetch(`${base}${API}${p}`, {
        method,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}), ...extra },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      const text = await r.text();
      if ((r.status === 503 || r.status === 429) && attempt < 6) {
        retries++;
        await sleep(1000 * Math.min(5, Number(r.headers.get('retry-after') ?? '1') || 1));
        continue;
      }
      if (!r.ok) throw new Error(`${method} ${p} ${r.status}: ${text}`);
      return text ? JSON.parse(text) : null;
    }
  };
  const login = async (kp: Keypair) => {
    const wallet = walletOf(kp);
    const r1 = await call('POST', '/auth/request_login', undefined, { address: wallet });
    const r2 = await call('POST', '/auth/verify_login', undefined, signSiws(kp, r1.sign_in_input));
    return r2.access_token as string;
  };
  const connection = chainEnv.chain.connection;

  for (let b = 1; b <= BURSTS; b++) {
    // not measured: the wallets' SOL and test USDC, the seller and its listings
    const sellerKp = Keypair.generate();
    await ensureSol(connection, sellerKp.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL);
    const sellerToken = await login(sellerKp);
    const buyers: Array<{ kp: Keypair; listingId: string }> = [];
    await pool(BUYERS, PARALLEL, async (i) => {
      const kp = Keypair.generate();
      await ensureSol(connection, kp.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL);
      await mintTestUsdc(chainEnv.dataDir, chainEnv.localnet.rpcUrl, kp.publicKey.toBase58(), 20_000_000n);
      const l = await call('POST', '/listings', sellerToken, { title: `Memory bench ${b}.${i} logo design`, description: 'A logo, three drafts.', price: 10, currency: 'USDC', category: 'design', duration: 3 });
      buyers.push({ kp, listingId: l.listing_id });
    });
    console.log(`burst ${b}: ${buyers.length} wallets funded, listings created; load ${loadavg()}`);
    await pool(buyers.length, PARALLEL, async (i) => {
      const { kp, listingId } = buyers[i]!;
      const token = await login(kp);
      await call('GET', `/listings/${listingId}`, token);
      await call('GET', '/listings?q=logo%20design', token);
      const order = await call('POST', '/orders', token, { listing_id: listingId }, { 'idempotency-key': crypto.randomUUID() });
      const payment = await call('POST', `/orders/${order.order_id}/payment`, token);
      const tx = Transaction.from(Buffer.from(payment.transaction, 'base64'));
      tx.partialSign(kp);
      const sig = await connection.sendRawTransaction(tx.serialize());
      await connection.confirmTransaction(sig, 'confirmed');
      const deadline = Date.now() + 60_000;
      for (;;) {
        const o = await call('GET', `/orders/${order.order_id}`, token);
        if (o.status === 'in_progress') break;
        if (Date.now() > deadline) throw new Error(`order ${order.order_id} not in_progress after 60 s (${o.status})`);
        await sleep(100);
      }
    });
    await sleep(2000);
    await measure(`burst ${b}`);
  }
} finally {
  // a process with a debugger attached waits for it to disconnect before it exits
  insp?.close();
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await new Promise((r) => child!.once('exit', r));
  }
  await pgdb?.drop().catch(() => undefined);
  await chainEnv.stop();
  if (!process.env.BENCH_MEMORY_DEBUG) rmSync(snapDir, { recursive: true, force: true });
}

const commit = (() => {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
})();
const date = new Date().toISOString().slice(0, 10);
const cpu = os.cpus()[0]?.model ?? 'unknown';
const result = { commit, date, entry: ENTRY, retries, database: DB, buyers_per_burst: BUYERS, parallel: PARALLEL, start_ms: startMs, node: process.version, cpus: `${os.cpus().length} x ${cpu}`, scripts: scriptsTotal, module_graph: graph, phases };
const md = [
  `# Memory of one server process (${date}, commit ${commit})`,
  '',
  `\`npm run bench:memory -- --buyers=${BUYERS} --bursts=${BURSTS} --parallel=${PARALLEL}\` (benchmarks/memory.ts): \`${ENTRY}\` as its own process on ${DB},`,
  `bursts of ${BUYERS} buyers (SIWS login, listing read, search page, POST /orders, fund transaction signed and sent to the localnet, polled until in_progress).`,
  `Machine: ${result.cpus}, Node ${process.version}; started (spawn to /readyz) in ${startMs} ms; ${retries} requests retried after a 503/429. MB = 2^20 bytes.`,
  '',
  '| phase | requests | RSS | RSS after GC | heap used | heap used after GC | heap total after GC | external after GC | resident: wasm / anonymous / files | load average |',
  '|---|---|---|---|---|---|---|---|---|---|',
  ...phases.map((p) => `| ${p.phase} | ${p.requests} | ${mb(p.live.rss)} | ${mb(p.gc.rss)} | ${mb(p.live.heapUsed)} | ${mb(p.gc.heapUsed)} | ${mb(p.gc.heapTotal)} | ${mb(p.gc.external)} | ${p.resident ? `${mb(p.resident.wasm)} / ${mb(p.resident.anonymous)} / ${mb(p.resident.files)}` : 'n/a'} | ${p.loadavg} |`),
  '',
  `Loaded scripts (idle): ${scriptsTotal.scripts}, ${mb(scriptsTotal.chars)} M characters of source. Largest packages:`,
  '',
  '| package | scripts | source (k chars) |',
  '|---|---|---|',
  ...graph.slice(0, 30).map((g) => `| ${g.pkg} | ${g.scripts} | ${Math.round(g.chars / 1000)} |`),
  '',
  ...phases.flatMap((p) =>
    p.snapshot?.growth
      ? [
          `Heap snapshot growth up to ${p.phase} (after GC; shallow sizes; total ${mb(p.snapshot.totalBytes)} MB, ${p.snapshot.nodes} nodes):`,
          '',
          '| constructor / type | count | +count | +KB |',
          '|---|---|---|---|',
          ...p.snapshot.growth.slice(0, 15).map((g) => `| ${g.key.replace(/\|/g, '\\|')} | ${g.count} | ${g.countDelta} | ${Math.round(g.bytesDelta / 1024)} |`),
          '',
        ]
      : [],
  ),
].join('\n');
console.log(md);
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
const stem = new URL(`./results/memory-${date}${TAG ? `-${TAG}` : ''}`, import.meta.url).pathname;
writeFileSync(`${stem}.md`, md);
writeFileSync(`${stem}.json`, JSON.stringify(result, null, 2));
console.log(`written ${stem}.md and .json`);
// the harness's web3.js connection keeps retrying its websocket to the stopped localnet: exit explicitly
process.exit(0);
