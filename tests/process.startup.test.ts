/**
 * Start-up errors a person can act on, and the banner's demo command (issue 10 point 6), with the
 * real entry points as child processes: `npm start` (server/scripts/start.ts) and the server alone
 * (server/src/main.ts). Each failure prints ONE `[bazaar] error:` line naming the cause and the
 * variable to change, no stack trace, and exits 1; the known causes fail before the localnet starts.
 * Then a real `npm start` with a non-default PORT, DATA_DIR and SOLANA_RPC_PORT prints the exact
 * `npm run demo` command, which is run as printed and passes; the running service allows a local
 * frontend origin (CORS and SIWS domain) without configuration; the dev admin key is the first operator admin
 * and the printed `npm run demo:operator` command passes too (issue 25).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Connection, Keypair, LAMPORTS_PER_SOL, Transaction, sendAndConfirmRawTransaction } from '@solana/web3.js';
import { BlinkInstance, setProxyUrl, unfurlUrlToBlinkApiUrl, type ActionAdapter, type TransactionResponse } from '@dialectlabs/blinks-core';
import { ensureSol, mintTestUsdc } from '../server/scripts/bootstrap-localnet.js';
import { signSiws } from './helpers/app.js';
import { afterAll, describe, expect, it } from 'vitest';
import { migratedDataDir } from './helpers/db.js';
import { freePortPair } from './helpers/localnet.js';
import { freePort } from './helpers/ports.js';

const REPO = path.resolve(__dirname, '..');
const dirs: string[] = [];
const children: ChildProcess[] = [];
const servers: net.Server[] = [];
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const s of servers) await new Promise((r) => s.close(r));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const tmp = (name: string) => {
  const d = mkdtempSync(path.join(tmpdir(), `bazaar-startup-${name}-`));
  dirs.push(d);
  return d;
};

/** Something else listening on 127.0.0.1:port for the rest of the file. */
async function occupy(port: number): Promise<void> {
  const s = net.createServer();
  servers.push(s);
  await new Promise<void>((r) => s.listen(port, '127.0.0.1', r));
}

interface Run {
  code: number | null;
  output: string;
}

/** Environment of a child: none of this process's configuration leaks in (only PATH/HOME and tools). */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'CARGO_TARGET_DIR', 'RUSTUP_HOME', 'CARGO_HOME', 'NODE_EXTRA_CA_CERTS', 'LANG'];
  return { ...Object.fromEntries(keep.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]!])), LOG_LEVEL: 'warn', ...env };
}

function spawnEntry(entry: 'npm start' | 'server', env: Record<string, string>): { child: ChildProcess; output: () => string; exited: Promise<Run> } {
  const script = entry === 'npm start' ? 'server/scripts/start.ts' : 'server/src/main.ts';
  const child = spawn(process.execPath, ['--import', 'tsx', script], { cwd: REPO, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<Run>((resolve) => child.once('exit', (code) => resolve({ code, output: out })));
  return { child, output: () => out, exited };
}

async function baseEnv(): Promise<Record<string, string>> {
  // METRICS_PORT: npm start's default (9464) may be taken by another run on this machine
  return { PORT: String(await freePort()), SOLANA_RPC_PORT: String(await freePortPair()), DATA_DIR: tmp('data'), METRICS_PORT: String(await freePort()) };
}

/** Exit 1 with exactly one `[bazaar] error:` line that matches `line`, and no stack trace. */
function expectOneLine(run: Run, line: RegExp) {
  expect(run.code, run.output).toBe(1);
  const errors = run.output.split('\n').filter((l) => l.startsWith('[bazaar] error: '));
  expect(errors, run.output).toHaveLength(1);
  expect(errors[0]).toMatch(line);
  expect(run.output, 'no stack trace').not.toMatch(/^\s+at .+\(?.*:\d+:\d+\)?$/m);
  expect(run.output).not.toMatch(/bazaar-localnet listening|chain bootstrap/);
}

describe('start-up failures: one line naming the variable', () => {
  it('the HTTP port in use: PORT (npm start fails before the localnet; the server alone on listen)', async () => {
    const env = await baseEnv();
    await occupy(Number(env.PORT));
    expectOneLine(await spawnEntry('npm start', env).exited, new RegExp(`HTTP port 127\\.0\\.0\\.1:${env.PORT} is already in use.*set PORT`));
    const alone = await spawnEntry('server', { ...env, SERVICE_KEYPAIR_PATH: path.join(env.DATA_DIR!, 'none.json'), CURRENCIES: 'USDC:Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB:6' }).exited;
    expect(alone.code, alone.output).toBe(1);
    expect(alone.output).toMatch(new RegExp(`\\[bazaar\\] error: the HTTP port 127\\.0\\.0\\.1:${env.PORT} is already in use.*set PORT`));
    expect(alone.output).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);
  }, 300_000);

  it('the localnet port (or its websocket port) in use: SOLANA_RPC_PORT', async () => {
    const env = await baseEnv();
    await occupy(Number(env.SOLANA_RPC_PORT) + 1);
    expectOneLine(await spawnEntry('npm start', env).exited, /localnet port 127\.0\.0\.1:\d+ is already in use.*set SOLANA_RPC_PORT/);
  }, 300_000);

  it('cargo missing when the localnet must be built: names BAZAAR_LOCALNET_BIN and SOLANA_RPC_URL', async () => {
    const env = await baseEnv();
    const noCargo = (process.env.PATH ?? '').split(':').filter((d) => !/cargo|rustup/.test(d)).join(':');
    const run = await spawnEntry('npm start', { ...env, PATH: noCargo, CARGO_TARGET_DIR: tmp('empty-target') }).exited;
    expectOneLine(run, /cargo \(Rust\) is not on PATH.*BAZAAR_LOCALNET_BIN.*SOLANA_RPC_URL/);
  }, 300_000);

  it('DATA_DIR a file, under a file, or not writable: DATA_DIR', async () => {
    const file = path.join(tmp('file'), 'data');
    writeFileSync(file, 'not a directory');
    const env = await baseEnv();
    expectOneLine(await spawnEntry('npm start', { ...env, DATA_DIR: file }).exited, /DATA_DIR=.* is a file, not a directory: set DATA_DIR/);
    expectOneLine(await spawnEntry('npm start', { ...env, DATA_DIR: path.join(file, 'sub') }).exited, /DATA_DIR=.* cannot be used \(a parent of it is a file, ENOTDIR\): set DATA_DIR/);
    expectOneLine(await spawnEntry('npm start', { ...env, DATA_DIR: '/sys/bazaar-data' }).exited, /DATA_DIR=\/sys\/bazaar-data cannot be used \(not writable, E\w+\): set DATA_DIR/);
    expectOneLine(await spawnEntry('server', { ...env, DATA_DIR: file }).exited, /DATA_DIR=.* is a file/);
  }, 300_000);

  it('the database unreachable: DATABASE_URL (password hidden)', async () => {
    const env = await baseEnv();
    const url = `postgres://bazaar:s3cret@127.0.0.1:${await freePort()}/bazaar`;
    for (const entry of ['npm start', 'server'] as const) {
      const run = await spawnEntry(entry, { ...env, DATABASE_URL: url }).exited;
      expectOneLine(run, /cannot use the database at DATABASE_URL=postgres:\/\/bazaar:\*\*\*@127\.0\.0\.1:\d+\/bazaar: connection refused.*fix DATABASE_URL/);
      expect(run.output).not.toContain('s3cret');
    }
  }, 300_000);

  it('a bad value names its variable', async () => {
    const env = await baseEnv();
    expectOneLine(await spawnEntry('npm start', { ...env, PORT: 'eighty' }).exited, /PORT must be a non-negative integer, got "eighty"/);
    expectOneLine(await spawnEntry('server', { ...env, SIWS_DOMAIN: 'x.example' }).exited, /SIWS_DOMAIN was renamed SIWS_DOMAINS/);
  }, 300_000);
});

/** A SIWS session on a running service (fetch): the Bearer header of `kp`'s login. */
async function signIn(base: string, kp: Keypair): Promise<Record<string, string>> {
  const post = async (route: string, body: unknown) => {
    const res = await fetch(`${base}/api/v1/auth/${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(res.status, route).toBe(200);
    return (await res.json()) as Record<string, any>;
  };
  const { sign_in_input } = await post('request_login', { address: kp.publicKey.toBase58() });
  const { access_token } = await post('verify_login', signSiws(kp, sign_in_input));
  return { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' };
}

/**
 * Issue 26 item 1 against npm start (its defaults turn the Solana Actions on): a blink client library,
 * @dialectlabs/blinks-core, unfurls a listing's shared page through /actions.json, fetches and checks the card,
 * runs the POST; a test keypair signs and sends the transaction to npm start's localnet; the client follows
 * links.next; the buyer then signs in (SIWS) and finds the order funded.
 */
async function blinkPurchase(base: string, rpcUrl: string, dataDir: string) {
  setProxyUrl('');
  const connection = new Connection(rpcUrl, 'confirmed');
  const [seller, buyer] = [Keypair.generate(), Keypair.generate()];
  await Promise.all([seller, buyer].map((k) => ensureSol(connection, k.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL)));
  await mintTestUsdc(dataDir, rpcUrl, buyer.publicKey.toBase58(), 5_000_000n);
  const listing = await fetch(`${base}/api/v1/listings`, {
    method: 'POST',
    headers: await signIn(base, seller),
    body: JSON.stringify({ title: 'A blink from npm start', description: 'Bought from a wallet.', price: 2, currency: 'USDC', category: 'design', duration: 2 }),
  });
  expect(listing.status).toBe(201);
  const { listing_id } = (await listing.json()) as { listing_id: string };

  const apiUrl = await unfurlUrlToBlinkApiUrl(`${base}/app/listings/${listing_id}`);
  expect(apiUrl).toBe(`${base}/api/actions/listings/${listing_id}`);
  const blink = await BlinkInstance.fetch(apiUrl!);
  const chainId = `solana:${(await connection.getGenesisHash()).slice(0, 32)}`;
  expect(blink.metadata).toEqual({ version: '2.4', blockchainIds: [chainId] });
  const adapter = { metadata: { supportedBlockchainIds: [chainId] } } as ActionAdapter;
  expect(await blink.isSupported(adapter)).toEqual({ isSupported: true });
  expect([blink.title, blink.actions.map((a) => a.label)]).toEqual(['A blink from npm start', ['Buy for 2 USDC']]);
  const response = (await blink.actions[0]!.post(buyer.publicKey.toBase58())) as TransactionResponse;
  const tx = Transaction.from(Buffer.from(response.transaction, 'base64'));
  tx.partialSign(buyer);
  const signature = await sendAndConfirmRawTransaction(connection, tx.serialize(), { commitment: 'confirmed' });
  const next = await blink.chain(response.links!.next, { account: buyer.publicKey.toBase58(), signature });
  expect(next?.title).toBe('Payment in escrow');
  const orderId = new URL((response.links!.next as { href: string }).href, base).searchParams.get('order_id')!;
  const order = await fetch(`${base}/api/v1/orders/${orderId}`, { headers: await signIn(base, buyer) });
  expect(order.status).toBe(200);
  expect(await order.json()).toMatchObject({ status: 'in_progress', escrow_state: 'funded', buyer_wallet: buyer.publicKey.toBase58() });
}

describe('npm start on non-default PORT, DATA_DIR and SOLANA_RPC_PORT', () => {
  it('prints the exact npm run demo command, which passes as printed; a local frontend origin is allowed; the dev admin key is the first admin and npm run demo:operator passes as printed; a blink client buys a listing through its Solana Actions', async () => {
    // DATA_DIR holds a copy of the migrated embedded database (tests/helpers/db.ts): the start skips initdb
    // and the migrations (tests/process.shutdown.test.ts starts on an empty one); keys/, chain.json and the
    // ledger are created by this start
    const env: Record<string, string> = { ...(await baseEnv()), DATA_DIR: await migratedDataDir('bazaar-startup-demo-') };
    dirs.push(env.DATA_DIR);
    const started = spawnEntry('npm start', env);
    const line = await new Promise<string>((resolve, reject) => {
      const timer = setInterval(() => {
        const m = /^Try it: (.*) {3}\(stop with Ctrl-C\)$/m.exec(started.output());
        if (m) {
          clearInterval(timer);
          resolve(m[1]!);
        }
      }, 200);
      void started.exited.then((r) => {
        clearInterval(timer);
        reject(new Error(`npm start exited (${r.code}):\n${r.output}`));
      });
    });
    // the announced origin (http/docs.ts announcedOrigin): PUBLIC_BASE_URL's default, the SIWS domain's host
    const base = `http://localhost:${env.PORT}`;
    expect(line).toBe(`BAZAAR_URL=${base} DATA_DIR=${env.DATA_DIR} npm run demo`);

    // a Vite app on another local port: CORS and SIWS need no configuration under npm start
    const pre = await fetch(`${base}/api/v1/auth/request_login`, {
      method: 'OPTIONS',
      headers: { Origin: 'http://localhost:5173', 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('http://localhost:5173');
    const login = await fetch(`${base}/api/v1/auth/request_login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', Origin: 'http://localhost:5173' },
      body: JSON.stringify({ address: '11111111111111111111111111111111', domain: 'localhost:5173' }),
    });
    expect(login.status).toBe(200);

    // the metrics listener npm start opens (METRICS_PORT, loopback), with this start's requests counted
    const metrics = await fetch(`http://127.0.0.1:${env.METRICS_PORT}/metrics`);
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toMatch(/^bazaar_http_requests_total\{method="POST",route="\/api\/v1\/auth\/request_login",status="200"\} 1$/m);
    expect(started.output()).toContain(`metrics    http://127.0.0.1:${env.METRICS_PORT}/metrics`);

    const demo = spawn('sh', ['-c', line], { cwd: REPO, env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(demo);
    let out = '';
    demo.stdout!.on('data', (d) => (out += d));
    demo.stderr!.on('data', (d) => (out += d));
    const code = await new Promise<number | null>((r) => demo.once('exit', r));
    expect(code, out).toBe(0);
    expect(out).toContain(`Bazaar demo against ${base}`);

    // the operators' demo (issue 25), on the same service: it signs in with the dev admin key, which npm start
    // made the first admin (the admin:grant path), grants the moderator and arbiter roles, takes a listing down,
    // rules a dispute with evidence, reads the revenue report and the audit log and verifies its chain
    const ops = /^ {2}operators {2}the dev admin key (\S+) holds the admin role: (.*)$/m.exec(started.output());
    expect(ops, started.output()).not.toBeNull();
    const adminKey = JSON.parse(readFileSync(path.join(env.DATA_DIR, 'keys', 'admin.json'), 'utf8')) as number[];
    expect(ops![1]).toBe(Keypair.fromSecretKey(Uint8Array.from(adminKey)).publicKey.toBase58());
    expect(ops![2]).toBe(`BAZAAR_URL=${base} DATA_DIR=${env.DATA_DIR} npm run demo:operator`);
    const opsDemo = spawn('sh', ['-c', ops![2]!], { cwd: REPO, env: childEnv({}), stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(opsDemo);
    let opsOut = '';
    opsDemo.stdout!.on('data', (d) => (opsOut += d));
    opsDemo.stderr!.on('data', (d) => (opsOut += d));
    expect(await new Promise<number | null>((r) => opsDemo.once('exit', r)), opsOut).toBe(0);
    expect(opsOut).toContain(`Bazaar operator demo against ${base}`);
    expect(opsOut).toMatch(/user\.role_granted by system:dev-admin on user:/);
    expect(opsOut).toMatch(/^operator demo ok in /m);

    // after both demos the scrape shows the money and the requests they made (issue 25: the counters moved)
    const after = await (await fetch(`http://127.0.0.1:${env.METRICS_PORT}/metrics`)).text();
    const value = (series: string) => Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(after)?.[1] ?? 0);
    expect(value('bazaar_escrow_volume_base_units_total{currency="USDC",direction="funded"}')).toBeGreaterThan(0);
    expect(value('bazaar_escrow_volume_base_units_total{currency="USDC",direction="released"}')).toBeGreaterThan(0);
    expect(value('bazaar_escrow_volume_base_units_total{currency="USDC",direction="resolved"}')).toBeGreaterThan(0);
    expect(value('bazaar_http_requests_total{method="POST",route="/api/v1/orders",status="201"}')).toBeGreaterThanOrEqual(3);
    expect(value('bazaar_http_requests_total{method="POST",route="/api/v1/moderation/listings/:listing_id/takedown",status="200"}')).toBe(1);
    expect(value('bazaar_webhook_attempts_total{outcome="delivered"}')).toBeGreaterThan(0);
    expect(value('bazaar_leader_is_leader')).toBe(1);

    // issue 26 item 1: npm start serves the Solana Actions (its banner says where) and a blink client buys through them
    expect(started.output()).toContain(`blinks     ${base}/actions.json`);
    await blinkPurchase(base, `http://127.0.0.1:${env.SOLANA_RPC_PORT}`, env.DATA_DIR);

    started.child.kill('SIGTERM');
    expect((await started.exited).code).toBe(0);
  }, 300_000);
});
