/**
 * `npm run test:rpc-failover` (issue 27 item 6): the service with TWO RPC providers (SOLANA_RPC_URLS,
 * SOLANA_WS_URLS), each a fault-injecting proxy in front of ONE localnet (tests/helpers/rpc-fault-provider.ts),
 * driven with the client SDK. For each way a provider fails — `refuse` (connections refused), `hang`
 * (accepted, never answered), `stale` (answers as a node stuck at an old slot, getHealth still "ok") —
 * N (default 50) concurrent order lifecycles run while the PREFERRED provider fails that way: the buyer
 * logs in, orders, pays from their own wallet (sent to the chain directly: the buyer's wallet has its own
 * RPC), the service's payment watcher sees it through the pool, the seller delivers, the buyer confirms
 * and the service releases the escrow (a recorded send through the pool). The fault starts one second in.
 *
 *   PostgreSQL  none: the embedded database (PGlite) under a temp DATA_DIR (this test is about the RPC)
 *   localnet    one, bootstrapped
 *   service     one `npm run start:server` with METRICS_PORT (the provider gauges are read from it)
 *
 * Checks (each one test): per fault, every lifecycle completed (no stuck order: every order of the phase
 * reads `completed`), no double payout (every escrow account has exactly three transactions on chain:
 * fund, mark_delivered, release; each seller's USDC grew by exactly what the completed orders pay out),
 * the pool took the preferred provider out (gauge) and put it back after the fault ended. Printed, not
 * asserted: the time from the fault to the switch (the `RPC provider switched` log line), to the payment
 * subscription's move, to the first /readyz answering with a slot newer than the fault's, the time until
 * the provider is selected again after it recovers, and what clients saw (HTTP status counts of every API
 * call of the phase, incl. retried ones).
 *
 * Prints `N passed, N failed` last; exit code 0 only when all passed. Env: RPC_FAILOVER_ORDERS (default 50),
 * CARGO_TARGET_DIR (the localnet build).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { stopProcessGroup } from './helpers/process-group.js';
import { randomBytes } from 'node:crypto';
import { chmodSync, createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection, Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import { createAssociatedTokenAccountIdempotentInstruction, createMintToCheckedInstruction, getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import { createBazaarClient, newIdempotencyKey, type BazaarClient } from '@bazaar/client-sdk';
import { keypairSigner } from '@bazaar/client-sdk/keypair';
import { loginWithWallet } from '@bazaar/client-sdk/login';
import { adminPublicKeyFor, bootstrapLocalnet, loadOrCreateKeypair, readChainFile, TEST_USDC_DECIMALS } from '../server/scripts/bootstrap-localnet.js';
import { startLocalnet, type Localnet } from '../server/scripts/localnet-process.js';
import { eventually } from './helpers/eventually.js';
import { freePort } from './helpers/ports.js';
import { startFaultProvider, type FaultProvider, type ProviderFault } from './helpers/rpc-fault-provider.js';
import { checkRun } from './helpers/check-run.js';
import { pool } from './helpers/replicas.js';

const N = Number(process.env.RPC_FAILOVER_ORDERS ?? 50);
const FAULTS: ProviderFault[] = ['refuse', 'hang', 'stale'];
const SELLERS = 5;
const PRICE_BASE_UNITS = 5_000_000n; // 5 USDC
const REPO = join(import.meta.dirname, '..');
const { sec, log, check, allOk, cleanups, run } = checkRun('rpc-failover', 900_000, 'the RPC failover test');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


/**
 * `call` again while it answers 503 (chain-unavailable / service-unavailable, with Retry-After) or throws
 * (a login step), for at most 120 s: what any client does through an outage. Every answer is counted by
 * the client's fetch.
 */
async function retrying<R extends { status: number; headers?: Pick<Headers, 'get'> }>(call: () => Promise<R>): Promise<R> {
  const until = Date.now() + 120_000;
  for (;;) {
    let r: R | null = null;
    let failure: unknown = null;
    try {
      r = await call();
    } catch (err) {
      failure = err;
    }
    if (r && r.status !== 503) return r;
    if (Date.now() > until) {
      if (r) return r;
      throw failure;
    }
    const wait = Number(r?.headers?.get('retry-after') ?? 1);
    await sleep(Math.min(Number.isFinite(wait) ? wait : 1, 5) * 1000);
  }
}

/** Wait until `sig` is confirmed (polling). */
async function waitConfirmed(connection: Connection, sig: string): Promise<void> {
  const st = await eventually(
    async () => {
      const st = (await connection.getSignatureStatuses([sig])).value[0];
      return st && (st.err || st.confirmationStatus === 'confirmed' || st.confirmationStatus === 'finalized') ? st : null;
    },
    { what: `transaction ${sig} confirmed`, timeoutMs: 30_000, intervalMs: 100 },
  );
  if (st.err) throw new Error(`transaction ${sig} failed: ${JSON.stringify(st.err)}`);
}

/** SOL for fees and rent and test USDC for each owner (the dev faucet keys of `dataDir`), 5 per transaction. */
async function fundWallets(connection: Connection, dataDir: string, owners: PublicKey[], usdcBaseUnits: bigint): Promise<void> {
  const chainFile = readChainFile(dataDir)!;
  const service = loadOrCreateKeypair(dataDir, 'service');
  const authority = loadOrCreateKeypair(dataDir, 'usdc-mint-authority');
  const mint = new PublicKey(chainFile.usdcMint);
  const faucet = Keypair.generate();
  await waitConfirmed(connection, await connection.requestAirdrop(faucet.publicKey, owners.length * 0.1 * LAMPORTS_PER_SOL + LAMPORTS_PER_SOL));
  const batches: PublicKey[][] = [];
  for (let i = 0; i < owners.length; i += 5) batches.push(owners.slice(i, i + 5));
  await pool(batches, 4, async (batch) => {
    const tx = new Transaction();
    for (const owner of batch) {
      const ata = getAssociatedTokenAddressSync(mint, owner, true, TOKEN_PROGRAM_ID);
      tx.add(
        SystemProgram.transfer({ fromPubkey: faucet.publicKey, toPubkey: owner, lamports: 0.1 * LAMPORTS_PER_SOL }),
        createAssociatedTokenAccountIdempotentInstruction(service.publicKey, ata, owner, mint, TOKEN_PROGRAM_ID),
        createMintToCheckedInstruction(mint, ata, authority.publicKey, usdcBaseUnits, TEST_USDC_DECIMALS, [], TOKEN_PROGRAM_ID),
      );
    }
    tx.feePayer = service.publicKey;
    tx.recentBlockhash = (await connection.getLatestBlockhash('confirmed')).blockhash;
    tx.sign(service, authority, faucet);
    await waitConfirmed(connection, await connection.sendRawTransaction(tx.serialize()));
  });
}

/** The `bazaar_rpc_provider_*` gauges of the service, by provider label. */
async function providerGauges(metricsUrl: string): Promise<Record<string, { up: number; selected: number }>> {
  const text = await (await fetch(metricsUrl, { signal: AbortSignal.timeout(15_000) })).text();
  const out: Record<string, { up: number; selected: number }> = {};
  for (const m of text.matchAll(/^bazaar_rpc_provider_(up|selected)\{provider="([^"]+)"\} (\d+)/gm)) {
    out[m[2]!] ??= { up: -1, selected: -1 };
    out[m[2]!]![m[1] as 'up' | 'selected'] = Number(m[3]);
  }
  return out;
}

/** The epoch ms of the first log line of `file` matching `re` written at or after `since`, or null. */
function logTime(file: string, re: RegExp, since: number): number | null {
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!re.test(line)) continue;
    try {
      const t = (JSON.parse(line) as { time?: number }).time;
      if (typeof t === 'number' && t >= since) return t;
    } catch {
      // not a log line
    }
  }
  return null;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'bazaar-rpc-failover-'));
  chmodSync(work, 0o755);
  cleanups.push(() => {
    if (allOk()) rmSync(work, { recursive: true, force: true });
    else console.log(`[rpc-failover] logs kept in ${work}`);
  });
  const dataDir = join(work, 'data');
  mkdirSync(dataDir);

  log('localnet (one, bootstrapped) and two providers in front of it');
  const localnet: Localnet = await startLocalnet({ escrowUpgradeAuthority: adminPublicKeyFor(dataDir) });
  cleanups.push(() => localnet.stop());
  await bootstrapLocalnet({ rpcUrl: localnet.rpcUrl, dataDir });
  const connection = new Connection(localnet.rpcUrl, 'confirmed');
  const preferred: FaultProvider = await startFaultProvider('preferred', localnet);
  const second: FaultProvider = await startFaultProvider('second', localnet);
  cleanups.push(() => preferred.stop());
  cleanups.push(() => second.stop());
  const label = (p: FaultProvider) => new URL(p.rpcUrl).host;

  const [port, metricsPort] = [await freePort(), await freePort()];
  const base = `http://127.0.0.1:${port}`;
  const logFile = join(work, 'server.log');
  const out = createWriteStream(logFile);
  const env = {
    DATA_DIR: dataDir,
    SOLANA_RPC_URLS: `${preferred.rpcUrl},${second.rpcUrl}`,
    SOLANA_WS_URLS: `${preferred.wsUrl},${second.wsUrl}`,
    JWT_SECRET: randomBytes(32).toString('hex'),
    PUBLIC_BASE_URL: base,
    SIWS_DOMAINS: `127.0.0.1:${port}`,
    HOST: '127.0.0.1',
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    LOG_LEVEL: 'info',
    AUTH_RATE_LIMIT_PER_MINUTE: '100000',
    ORDER_WATCHER_INTERVAL_MS: '500',
    ORDER_MAX_UNPAID_PER_IP: String(N * 2),
    // a listing sells once: N listings per fault, from one client address
    LISTING_CREATE_DAILY_LIMIT: String(N * 3),
    LISTING_CREATE_DAILY_LIMIT_PER_IP: String(N * 3),
  };
  const child: ChildProcess = spawn('npm', ['run', '-s', 'start:server'], { cwd: REPO, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  // the whole group, even when npm itself is gone: the server under it may still run (it did, orphaned)
  cleanups.push(() => stopProcessGroup(child.pid));
  await eventually(() => fetch(`${base}/readyz`).then((r) => r.ok, () => false), { what: 'service ready', timeoutMs: 120_000, intervalMs: 250 });
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  // the first health checks run while the service is still busy starting: wait for them to settle
  const g0 = await eventually(
    async () => {
      const g = await providerGauges(metricsUrl);
      return g[label(preferred)]?.selected === 1 && g[label(preferred)]?.up === 1 && g[label(second)]?.up === 1 ? g : null;
    },
    { what: 'both providers healthy, the preferred one selected', timeoutMs: 30_000, intervalMs: 250 },
  ).catch(() => providerGauges(metricsUrl));
  const banner = /"msg":"Solana RPC providers \(preference order\)"/.test(readFileSync(logFile, 'utf8'));
  check(
    'the service starts on two providers, the preferred one selected (gauges, start-up log)',
    g0[label(preferred)]?.selected === 1 && g0[label(second)]?.selected === 0 && g0[label(preferred)]?.up === 1 && banner,
    JSON.stringify(g0),
  );

  // what clients saw: every API response's status, per phase
  let statuses: Record<string, number> = {};
  const countingFetch: typeof fetch = async (input, init) => {
    try {
      const r = await fetch(input, init);
      // an error status is counted with its problem type (chain-unavailable, service-unavailable, ...)
      const type = r.status >= 400 ? ((await r.clone().json().catch(() => null)) as { type?: string } | null)?.type?.split('/').pop() : undefined;
      const key = type ? `${r.status} ${type}` : String(r.status);
      statuses[key] = (statuses[key] ?? 0) + 1;
      return r;
    } catch (err) {
      const key = `network error (${String((err as { cause?: { code?: string } })?.cause?.code ?? (err as Error)?.name)})`;
      statuses[key] = (statuses[key] ?? 0) + 1;
      throw err;
    }
  };
  const client = () => createBazaarClient({ baseUrl: base, fetch: countingFetch });

  log(`${SELLERS} sellers, ${N * FAULTS.length} listings, ${N * FAULTS.length} funded buyers`);
  const sellers = await Promise.all(
    Array.from({ length: SELLERS }, async () => {
      const kp = Keypair.generate();
      const c = client();
      await loginWithWallet(c, keypairSigner(kp.secretKey));
      return { kp, c };
    }),
  );
  // a listing is sold once: N per phase
  const listings = await pool(
    Array.from({ length: N * FAULTS.length }, (_, i) => i),
    8,
    async (i) => {
      const seller = sellers[i % SELLERS]!;
      const r = await seller.c.listings.createListing({
        body: { title: `RPC failover service ${i}`, description: `Listing ${i} of the RPC failover test.`, price: 5, currency: 'USDC', category: 'design', duration: 5 },
      });
      if (r.status !== 201) throw new Error(`createListing ${r.status}: ${JSON.stringify(r.body)}`);
      return { id: r.body.listing_id, seller };
    },
  );
  const buyers = Array.from({ length: N * FAULTS.length }, () => Keypair.generate());
  await fundWallets(connection, dataDir, buyers.map((b) => b.publicKey), 10_000_000n);
  const usdc = new PublicKey(readChainFile(dataDir)!.usdcMint);
  const sellerBalance = async (kp: Keypair) => {
    const ata = getAssociatedTokenAddressSync(usdc, kp.publicKey, true, TOKEN_PROGRAM_ID);
    return BigInt((await connection.getTokenAccountBalance(ata, 'confirmed').catch(() => null))?.value.amount ?? '0');
  };

  for (const [phase, fault] of FAULTS.entries()) {
    statuses = {};
    const before = await Promise.all(sellers.map((s) => sellerBalance(s.kp)));
    log(`phase "${fault}": ${N} concurrent lifecycles; the preferred provider fails (${fault}) one second in`);
    const lifecycle = async (i: number) => {
      const kp = buyers[phase * N + i]!;
      const buyer: BazaarClient = client();
      // a 503 chain-unavailable / service-unavailable (Retry-After) while the pool fails over is retried
      // with the same Idempotency-Key, as any client may; every status is counted
      await retrying(async () => {
        await loginWithWallet(buyer, keypairSigner(kp.secretKey));
        return { status: 200 };
      });
      const key = newIdempotencyKey();
      const ordered = await retrying(() => buyer.orders.createOrder({ headers: { 'idempotency-key': key }, body: { listing_id: listings[phase * N + i]!.id } }));
      if (ordered.status !== 201 || !ordered.body.payment) throw new Error(`createOrder ${ordered.status}: ${JSON.stringify(ordered.body)}`);
      const orderId = ordered.body.order_id;
      const tx = Transaction.from(Buffer.from(ordered.body.payment.transaction, 'base64'));
      tx.partialSign(kp);
      const sig = await connection.sendRawTransaction(tx.serialize());
      await waitConfirmed(connection, sig);
      await eventually(
        async () => {
          const o = await buyer.orders.getOrder({ params: { order_id: orderId } });
          return o.status === 200 && o.body.status === 'in_progress';
        },
        { what: `order ${orderId} seen funded (in_progress)`, timeoutMs: 60_000, intervalMs: 250 },
      );
      const delivered = await retrying(() => listings[phase * N + i]!.seller.c.orders.deliverOrder({ params: { order_id: orderId } }));
      if (delivered.status !== 200 || delivered.body.status !== 'delivered') throw new Error(`deliver ${delivered.status}: ${JSON.stringify(delivered.body)}`);
      const confirmed = await retrying(() => buyer.orders.confirmOrder({ params: { order_id: orderId } }));
      if (confirmed.status !== 200 || confirmed.body.status !== 'completed') throw new Error(`confirm ${confirmed.status}: ${JSON.stringify(confirmed.body)}`);
      return { orderId, escrow: confirmed.body.escrow_account_address, seller: listings[phase * N + i]!.seller, buyer };
    };
    const sendsBefore = [preferred.calls.sendTransaction ?? 0, second.calls.sendTransaction ?? 0];
    const tPhase = Date.now();
    const running = Promise.allSettled(Array.from({ length: N }, (_, i) => lifecycle(i)));
    await sleep(1_000);
    const slotAtFault = await connection.getSlot('confirmed');
    const faultAt = Date.now();
    await preferred.fault(fault);
    // time to resume: the first /readyz whose chain check answers a slot newer than the fault's
    let resumedMs = -1;
    const probe = (async () => {
      while (Date.now() - faultAt < 60_000) {
        const r = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(5_000) }).then((x) => x.json() as Promise<{ checks?: { chain?: { ok: boolean; slot?: number } } }>, () => null);
        const c = r?.checks?.chain;
        if (c?.ok && (c.slot ?? 0) > Math.max(slotAtFault, preferred.frozenSlot() ?? 0)) {
          resumedMs = Date.now() - faultAt;
          return;
        }
        await sleep(100);
      }
    })();
    const settled = await running;
    await probe;
    const done = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const errors = settled.flatMap((s) => (s.status === 'rejected' ? [String((s.reason as Error)?.message ?? s.reason)] : []));
    const lifeSeconds = ((Date.now() - tPhase) / 1000).toFixed(1);
    const gFault = await providerGauges(metricsUrl);
    const switchedAt = logTime(logFile, /"msg":"RPC provider switched"/, faultAt);
    const movedAt = logTime(logFile, /"msg":"program subscription live"/, faultAt);
    const clientsSaw = JSON.stringify(statuses);

    // no stuck order: every order of the phase reads completed
    const reads = await pool(done, 8, async (d) => (await d.buyer.orders.getOrder({ params: { order_id: d.orderId } })).body as { status?: string });
    check(
      `${fault}: ${N} concurrent lifecycles completed while the preferred provider failed; no stuck order`,
      done.length === N && reads.every((o) => o.status === 'completed'),
      `${done.length}/${N} in ${lifeSeconds} s; clients saw ${clientsSaw}${errors.length ? `; first error: ${errors[0]}` : ''}`,
    );
    // no double payout
    const onChain = await pool(done, 8, async (d) => (await connection.getSignaturesForAddress(new PublicKey(d.escrow), { limit: 20 }, 'confirmed')).length);
    const after = await Promise.all(sellers.map((s) => sellerBalance(s.kp)));
    const expected = sellers.map((s) => done.filter((d) => d.seller === s).length);
    const grew = after.map((a, k) => a - before[k]!);
    // each seller got the price less the platform fee per completed order: the same amount each time, never twice
    const perOrder = grew.map((g, k) => (expected[k] ? g / BigInt(expected[k]!) : 0n));
    const onePayout = perOrder.every((p, k) => !expected[k] || (p > 0n && p <= PRICE_BASE_UNITS && p * BigInt(expected[k]!) === grew[k]! && p === perOrder.find((x) => x > 0n)));
    check(
      `${fault}: no double payout (three transactions per escrow on chain; each seller paid once per order)`,
      done.length === N && onChain.every((n) => n === 3) && onePayout,
      `transactions per escrow: ${[...new Set(onChain)].join('/')}; seller payouts per order (base units): ${[...new Set(perOrder.filter((p) => p > 0n).map(String))].join('/')}`,
    );
    check(
      `${fault}: the pool took the preferred provider out and selected the second`,
      gFault[label(preferred)]?.up === 0 && gFault[label(second)]?.selected === 1,
      `gauges ${JSON.stringify(gFault)}; from the fault: switch ${switchedAt ? `${switchedAt - faultAt} ms` : 'not logged'}, payment subscription live again ${movedAt ? `${movedAt - faultAt} ms` : 'not logged'}, first fresh /readyz ${resumedMs} ms`,
    );
    // the fault ends: the preferred provider comes back after its good health checks
    const upAt = Date.now();
    await preferred.up();
    let backMs = -1;
    await eventually(async () => (await providerGauges(metricsUrl))[label(preferred)]?.selected === 1, { what: 'the preferred provider selected again', timeoutMs: 30_000, intervalMs: 100 })
      .then(() => (backMs = Date.now() - upAt))
      .catch(() => undefined);
    check(`${fault}: the preferred provider is selected again once it recovers`, backMs >= 0, `after ${backMs} ms`);
    console.log(`[rpc-failover] ${fault}: resume ${resumedMs} ms (switch ${switchedAt ? switchedAt - faultAt : '?'} ms, subscription ${movedAt ? movedAt - faultAt : '?'} ms), back ${backMs} ms; clients saw ${clientsSaw}; service sendTransaction calls: preferred ${(preferred.calls.sendTransaction ?? 0) - sendsBefore[0]!}, second ${(second.calls.sendTransaction ?? 0) - sendsBefore[1]!}`);
  }
}

run(main);
