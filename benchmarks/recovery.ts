/**
 * Recovery times of the order money paths (a script, not a timed test): the real server as a child
 * process (`tsx server/src/main.ts`, PGlite under a temporary DATA_DIR) against a localnet behind the
 * fault-injecting RPC proxy of the tests.
 *
 *   npx tsx benchmarks/recovery.ts [rounds=3]
 *
 * Scenarios, each measured as "time until a retried action succeeds" (the client retries every 200 ms):
 *  1. kill -9 of the server D ms into POST /orders/{id}/confirm, restart, retry confirm
 *     (D = 0, 20, 60, 150 ms): from the kill, and from the restarted server's first answer;
 *  2. kill -9 D ms into POST /orders (same Idempotency-Key on the retry): the retry returns the one
 *     order the dead request created, or creates it;
 *  3. RPC outage: the proxy resets every connection for N s (N = 3, 10) while the client keeps
 *     retrying confirm: from the moment the RPC is back.
 * Every round checks the money moved once (the seller's balance on chain) and that each listing has
 * one order. Ports: HTTP 3105 (BAZAAR_BENCH_PORT), the localnet on a free pair.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction } from '@solana/web3.js';
import { TOKEN_PROGRAM_ID, getAccount, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { createSignInMessage } from '@solana/wallet-standard-util';
import nacl from 'tweetnacl';
import { bootstrapLocalnet, ensureSol, mintTestUsdc } from '../server/scripts/bootstrap-localnet.js';
import { startLocalnet } from '../server/scripts/localnet-process.js';
import { createConnection } from '../server/src/chain/index.js';
import { startRpcProxy } from '../tests/helpers/rpc-proxy.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.argv[2] ?? 3);
const PORT = Number(process.env.BAZAAR_BENCH_PORT ?? 3105);
const BASE = `http://127.0.0.1:${PORT}`;
const API = `${BASE}/api/v1`;
const USDC = (n: number) => BigInt(Math.round(n * 1e6));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const localnet = await startLocalnet();
const dataDir = mkdtempSync(join(tmpdir(), 'bazaar-recovery-'));
const boot = await bootstrapLocalnet({ rpcUrl: localnet.rpcUrl, dataDir });
const proxy = await startRpcProxy(localnet.rpcUrl);
const connection = createConnection(localnet.rpcUrl);
let server: ChildProcess | null = null;

function startServer(): ChildProcess {
  // one process (node with tsx's loader, not the tsx CLI wrapper), in its own process group: kill -9 hits the server itself
  const child = spawn(process.execPath, ['--import', 'tsx', 'server/src/main.ts'], {
    cwd: ROOT,
    detached: true,
    env: {
      ...process.env,
      DATA_DIR: dataDir,
      PORT: String(PORT),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: BASE,
      SOLANA_RPC_URL: proxy.url,
      LOG_LEVEL: 'warn',
      AUTH_RATE_LIMIT_PER_MINUTE: '100000',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return child;
}

async function waitReady(): Promise<void> {
  for (;;) {
    const ok = await fetch(`${BASE}/healthz`).then((r) => r.ok, () => false);
    if (ok) return;
    await sleep(50);
  }
}

async function restart(): Promise<number> {
  const t = Date.now();
  // the killed process's port must be free (no orphan answering for it)
  while (await fetch(`${BASE}/healthz`).then(() => true, () => false)) await sleep(20);
  server = startServer();
  await waitReady();
  return Date.now() - t;
}

function kill9(): void {
  if (server?.pid) process.kill(-server.pid, 'SIGKILL');
  server = null;
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function call(method: string, path: string, headers: Record<string, string> = {}, body?: unknown): Promise<{ status: number; body: Json }> {
  try {
    const res = await fetch(`${API}${path}`, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json().catch(() => ({}))) as Json };
  } catch {
    return { status: 0, body: {} }; // connection refused / reset: the server is down
  }
}

async function login(kp: Keypair): Promise<Record<string, string>> {
  const address = kp.publicKey.toBase58();
  const r1 = await call('POST', '/auth/request_login', {}, { address });
  const message = createSignInMessage(r1.body.sign_in_input);
  const signature = nacl.sign.detached(message, kp.secretKey);
  const r2 = await call('POST', '/auth/verify_login', {}, {
    address,
    signed_message: Buffer.from(message).toString('base64'),
    signature: Buffer.from(signature).toString('base64'),
  });
  if (r2.status !== 200) throw new Error(`login ${r2.status} ${JSON.stringify(r2.body)}`);
  return { authorization: `Bearer ${r2.body.access_token}` };
}

async function usdc(owner: PublicKey): Promise<bigint> {
  const ata = getAssociatedTokenAddressSync(new PublicKey(boot.usdcMint), owner, true, TOKEN_PROGRAM_ID);
  return getAccount(connection, ata, 'confirmed', TOKEN_PROGRAM_ID).then((a) => a.amount, () => 0n);
}

/** Retry `fn` every 200 ms until it answers `ok`; ms from `since` and the number of tries. */
async function retry(fn: () => Promise<{ status: number; body: Json }>, ok: number, since: number) {
  for (let tries = 1; ; tries++) {
    const r = await fn();
    if (r.status === ok) return { ms: Date.now() - since, tries, body: r.body };
    if (tries > 1500) throw new Error(`never recovered: last ${r.status} ${JSON.stringify(r.body)}`);
    await sleep(200);
  }
}

interface Parties {
  buyer: Keypair;
  seller: Keypair;
  bh: Record<string, string>;
  sh: Record<string, string>;
}

async function parties(): Promise<Parties> {
  const buyer = Keypair.generate();
  const seller = Keypair.generate();
  await Promise.all([
    ensureSol(connection, buyer.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL),
    mintTestUsdc(dataDir, localnet.rpcUrl, buyer.publicKey.toBase58(), USDC(100)),
  ]);
  return { buyer, seller, bh: await login(buyer), sh: await login(seller) };
}

async function listing(p: Parties): Promise<string> {
  const r = await call('POST', '/listings', p.sh, { title: 'Logo design', description: 'A logo in three days.', price: 2, currency: 'USDC', category: 'design', duration: 3 });
  if (r.status !== 201) throw new Error(`listing ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.listing_id;
}

async function deliveredOrder(p: Parties): Promise<string> {
  const created = await call('POST', '/orders', { ...p.bh, 'idempotency-key': randomUUID() }, { listing_id: await listing(p) });
  if (created.status !== 201) throw new Error(`order ${created.status} ${JSON.stringify(created.body)}`);
  const tx = Transaction.from(Buffer.from(created.body.payment.transaction, 'base64'));
  tx.partialSign(p.buyer);
  const paid = await call('POST', `/orders/${created.body.order_id}/transaction`, p.bh, { signed_transaction: tx.serialize().toString('base64') });
  if (paid.status !== 200) throw new Error(`pay ${paid.status} ${JSON.stringify(paid.body)}`);
  const d = await call('POST', `/orders/${created.body.order_id}/deliver`, p.sh);
  if (d.status !== 200) throw new Error(`deliver ${d.status}`);
  return created.body.order_id;
}

const rows: string[] = [];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  await restart();
  const p = await parties();

  // 1. kill -9 mid-confirm
  for (const delay of [0, 20, 60, 150]) {
    const fromKill: number[] = [];
    const fromReady: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const id = await deliveredOrder(p);
      const before = await usdc(p.seller.publicKey);
      void call('POST', `/orders/${id}/confirm`, p.bh);
      await sleep(delay);
      kill9();
      const killedAt = Date.now();
      const startup = await restart();
      const r = await retry(() => call('POST', `/orders/${id}/confirm`, p.bh), 200, killedAt);
      if (r.body.status !== 'completed') throw new Error(`confirm ended ${r.body.status}`);
      const paid = (await usdc(p.seller.publicKey)) - before;
      if (paid !== USDC(2) - USDC(0.05)) throw new Error(`seller paid ${paid}`);
      fromKill.push(r.ms);
      fromReady.push(r.ms - startup);
    }
    rows.push(`kill -9 ${String(delay).padStart(3)} ms into confirm: retry ok ${median(fromKill)} ms after the kill (median of ${ROUNDS}; ${median(fromReady)} ms after the restarted server was up)`);
  }

  // 2. kill -9 mid POST /orders
  for (const delay of [0, 20, 60, 150]) {
    const fromKill: number[] = [];
    const fromReady: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const l = await listing(p);
      const key = randomUUID();
      const headers = { ...p.bh, 'idempotency-key': key };
      void call('POST', '/orders', headers, { listing_id: l });
      await sleep(delay);
      kill9();
      const killedAt = Date.now();
      const startup = await restart();
      const r = await retry(() => call('POST', '/orders', headers, { listing_id: l }), 201, killedAt);
      const mine = await call('GET', '/orders?role=buyer&limit=100', p.bh);
      const n = (mine.body.data as Json[]).filter((o) => o.listing_id === l).length;
      if (n !== 1) throw new Error(`${n} orders for one key`);
      fromKill.push(r.ms);
      fromReady.push(r.ms - startup);
      // let the unpaid order go: the buyer holds at most 3 unpaid orders
      await call('POST', `/orders/${r.body.order_id}/payment`, p.bh);
      const tx = Transaction.from(Buffer.from((await call('POST', `/orders/${r.body.order_id}/payment`, p.bh)).body.transaction, 'base64'));
      tx.partialSign(p.buyer);
      await call('POST', `/orders/${r.body.order_id}/transaction`, p.bh, { signed_transaction: tx.serialize().toString('base64') });
    }
    rows.push(`kill -9 ${String(delay).padStart(3)} ms into POST /orders: retry (same key) ok ${median(fromKill)} ms after the kill (median of ${ROUNDS}; ${median(fromReady)} ms after the restarted server was up)`);
  }

  // 3. RPC outage
  for (const seconds of [3, 10]) {
    const afterUp: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const id = await deliveredOrder(p);
      proxy.down();
      const upAt = Date.now() + seconds * 1000;
      setTimeout(() => proxy.up(), seconds * 1000);
      const r = await retry(() => call('POST', `/orders/${id}/confirm`, p.bh), 200, Date.now());
      afterUp.push(Math.max(0, Date.now() - upAt));
      if (r.body.status !== 'completed') throw new Error(`confirm ended ${r.body.status}`);
    }
    rows.push(`RPC down ${String(seconds).padStart(2)} s during confirm: retry ok ${median(afterUp)} ms after the RPC was back (median of ${ROUNDS})`);
  }
} finally {
  kill9();
  await proxy.stop();
  await localnet.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
console.log(rows.join('\n'));
