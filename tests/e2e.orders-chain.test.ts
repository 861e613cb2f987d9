/**
 * The orders service against the real escrow program on the worker's shared localnet (in-memory order
 * storage and listings, so this suite needs no database): every money movement is checked on chain.
 * Alice buys, Bob sells; the service is the platform authority and the arbiter.
 *
 * What only this suite covers: a wallet paying by itself (Solana Pay) found by the watcher, SOL
 * listings, drift read back from the chain, RPC faults through a proxy, a vanished escrow. The
 * lifecycle end to end (pay -> deliver -> confirm with the fee, 20 concurrent confirms, crash after
 * send, auto-release, refund after the deadline) runs once, over HTTP and the database, in
 * e2e.orders-http.test.ts; the rules below that in orders.service / orders.repo and the program's
 * own tests (programs/escrow/tests).
 */
import { randomUUID } from 'node:crypto';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction } from '@solana/web3.js';
import { TOKEN_PROGRAM_ID, getAccount, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import bs58 from 'bs58';
import { eventually } from './helpers/eventually';
import { expectConfirmedSignature } from './helpers/signatures';
import { signedBy, usdcBalance as usdcOf, USDC } from './helpers/parties';
import { type Localnet, type BootstrappedChain } from './helpers/localnet';
import { sharedBootstrappedChain } from './helpers/shared-chain';
import { EscrowClient, type ChainClient } from '../server/src/chain/index';
import type { Idl } from '@coral-xyz/anchor';
import escrowIdl from '@bazaar/escrow-idl';
import { ensureSol, mintTestUsdc, type BootstrapResult } from '../server/scripts/bootstrap-localnet';
import { AutoReleaseCrank, PaymentWatcher } from '../server/src/modules/orders/payment-watcher';
import { MemoryOrdersRepo } from './helpers/memory-orders-repo.js';
import { OrdersService } from '../server/src/modules/orders/orders.service';
import { escrowPort } from '../server/src/modules/orders/orders.escrow';
import { checkEscrowIntegrity } from '../server/src/modules/orders/orders.integrity';
import { createChain } from '../server/src/chain/index';
import { FakeListings, testOrdersSettings, user } from './orders.fakes';
import { startRpcProxy, type RpcProxy } from './helpers/rpc-proxy';

const REVIEW_WINDOW = 120;

let localnet: Localnet;
let dataDir: string;
let boot: BootstrapResult;
let chain: ChainClient;
let env: BootstrappedChain;
let repo: MemoryOrdersRepo;
let listings: FakeListings;
let service: OrdersService;
let watcher: PaymentWatcher;
const t0 = Date.now();

const usdcBalance = (owner: string) => usdcOf(env, owner);

/** A funded buyer (SOL for fees + 100 USDC) and a seller with a listing of `price` USDC. */
async function parties(price = 25, durationDays = 3) {
  const buyerKp = Keypair.generate();
  const sellerKp = Keypair.generate();
  await Promise.all([
    ensureSol(chain.connection, buyerKp.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL),
    mintTestUsdc(dataDir, localnet.rpcUrl, buyerKp.publicKey.toBase58(), USDC(100)),
  ]);
  const buyer = user(randomUUID(), buyerKp.publicKey.toBase58());
  const seller = user(randomUUID(), sellerKp.publicKey.toBase58());
  const listing = listings.add({ id: randomUUID(), sellerId: seller.userId!, sellerWallet: seller.wallet!, priceBaseUnits: USDC(price), durationDays });
  return { buyerKp, buyer, seller, listing };
}

/** Create the order, sign the returned transaction as the buyer's wallet would, submit it. */
async function fundedOrder(p: Awaited<ReturnType<typeof parties>>) {
  const { order, payment } = await service.create(p.buyer, { listingId: p.listing.id });
  return service.submitTransaction(p.buyer, order.id, signedBy(p.buyerKp, payment.transaction));
}

beforeAll(async () => {
  env = await sharedBootstrappedChain('orders-e2e');
  ({ localnet, dataDir, boot, chain } = env);
  repo = new MemoryOrdersRepo();
  listings = new FakeListings();
  service = new OrdersService({
    repo,
    listings,
    escrow: escrowPort(chain.escrow),
    currency: (code) => boot.currencies.find((c) => c.code === code),
    settings: testOrdersSettings({ reviewWindowSeconds: REVIEW_WINDOW }),
  });
  watcher = new PaymentWatcher({ service, repo });
  console.info(`[timing] localnet + bootstrap: ${Date.now() - t0} ms`);
});

afterAll(async () => {
  await env?.stop();
  console.info(`[timing] e2e.orders-chain total: ${Date.now() - t0} ms`);
});

describe('orders on the real escrow program', () => {
  it('Solana Pay: the wallet fetches the transaction, signs and sends it itself; the watcher detects the payment', async () => {
    const p = await parties(10);
    const { order } = await service.create(p.buyer, { listingId: p.listing.id });
    await expect(service.solanaPayTransaction(order.id, p.seller.wallet!)).rejects.toMatchObject({ slug: 'forbidden' });
    const { transaction } = await service.solanaPayTransaction(order.id, p.buyer.wallet!);
    const tx = Transaction.from(Buffer.from(transaction, 'base64'));
    tx.partialSign(p.buyerKp);
    const sig = await chain.connection.sendRawTransaction(tx.serialize());
    await expectConfirmedSignature(chain.connection, sig, "the wallet's fund transaction");
    expect(sig).toBe(bs58.encode(tx.signature!));
    await eventually(() => chain.escrow.fetchOrder(order.id), { what: `the escrow account of order ${order.id}`, timeoutMs: 10_000, intervalMs: 100 });
    const pass = await watcher.runOnce();
    expect(pass.funded).toContain(order.id);
    expect((await repo.get(order.id))!).toMatchObject({ status: 'in_progress', fundSignature: sig });
    expect((await repo.listIntents(order.id)).map((i) => `${i.action}:${i.signature}`)).toEqual([`fund:${sig}`]);
  });

  it('dispute resolved 40/60 by the admin: buyer gets 40%, seller 60% minus the fee', async () => {
    const p = await parties(20);
    const admin = user(randomUUID(), Keypair.generate().publicKey.toBase58(), { isAdmin: true });
    const o = await fundedOrder(p);
    await service.deliver(p.seller, o.id);
    const d = await service.dispute(p.buyer, o.id, 'Half of the work is missing');
    expect(d.status).toBe('disputed');
    expect((await chain.escrow.fetchOrder(o.id))!.state).toBe('disputed');
    await expect(service.resolve(p.buyer, o.id, 4000)).rejects.toMatchObject({ slug: 'forbidden' });
    const r = await service.resolve(admin, o.id, 4000);
    expect(r).toMatchObject({ status: 'resolved', buyerBps: 4000 });
    expect(await usdcBalance(p.buyer.wallet!)).toBe(USDC(80) + USDC(8));
    expect(await usdcBalance(p.seller.wallet!)).toBe(USDC(12) - USDC(0.3));
  });

  it('SOL listings: the buyer pays native SOL (wrapped inside the fund transaction); the seller gets wSOL minus the fee', async () => {
    const p = await parties(1);
    const sol = boot.currencies.find((c) => c.code === 'SOL')!;
    Object.assign(listings.rows.get(p.listing.id)!, { currency: 'SOL', priceBaseUnits: 500_000_000n });
    const o = await fundedOrder(p);
    expect(o).toMatchObject({ status: 'in_progress', mint: sol.mint, amount: 500_000_000n });
    await service.deliver(p.seller, o.id);
    await service.confirm(p.buyer, o.id);
    const ata = getAssociatedTokenAddressSync(new PublicKey(sol.mint), new PublicKey(p.seller.wallet!), true, TOKEN_PROGRAM_ID);
    const got = await getAccount(chain.connection, ata, 'confirmed', TOKEN_PROGRAM_ID);
    expect(got.amount).toBe(500_000_000n - 12_500_000n);
  });

  it('drift: the seller refunds with its own wallet; the reconciler reads the closing refund from the chain', async () => {
    const p = await parties(9);
    const sellerKp = Keypair.generate();
    // re-point the listing to a seller whose key we hold, so it can sign on chain
    const seller = user(p.seller.userId!, sellerKp.publicKey.toBase58());
    Object.assign(listings.rows.get(p.listing.id)!, { sellerWallet: seller.wallet });
    await ensureSol(chain.connection, sellerKp.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL);
    const o = await fundedOrder({ ...p, seller });
    const sellerClient = new EscrowClient({
      connection: chain.connection,
      idl: escrowIdl as unknown as Idl,
      programId: boot.programId,
      service: sellerKp,
      currencies: boot.currencies,
    });
    const direct = await sellerClient.refund(o.id);
    await service.reconciler.runOnce();
    const after = (await repo.get(o.id))!;
    expect(after).toMatchObject({ status: 'refunded', lastSignature: direct.signature });
    expect(await usdcBalance(p.buyer.wallet!)).toBe(USDC(100));
    expect(listings.rows.get(p.listing.id)!.status).toBe('available');
  });

});

/** A second service instance (same storage) whose chain client goes through a fault-injecting proxy. */
async function proxiedService(): Promise<{ proxy: RpcProxy; svc: OrdersService }> {
  const proxy = await startRpcProxy(localnet.rpcUrl);
  const viaProxy = createChain({
    rpcUrl: proxy.url,
    serviceKeypair: chain.service,
    programId: boot.programId,
    currencies: boot.currencies,
    rpcTimeoutMs: 1_000,
    confirm: { timeoutMs: 2_000 },
  });
  const svc = new OrdersService({
    repo,
    listings,
    escrow: escrowPort(viaProxy.escrow),
    currency: (code) => boot.currencies.find((c) => c.code === code),
    settings: testOrdersSettings({ reviewWindowSeconds: REVIEW_WINDOW, inflightWaitMs: 300 }),
  });
  return { proxy, svc };
}

/** Retry `fn` every `everyMs` until it resolves; returns its value, the time taken and the attempts. */
async function retryUntilOk<T>(fn: () => Promise<T>, everyMs = 100, max = 300): Promise<{ value: T; ms: number; tries: number }> {
  const started = Date.now();
  for (let tries = 1; ; tries++) {
    try {
      return { value: await fn(), ms: Date.now() - started, tries };
    } catch (err) {
      if (tries >= max) throw err;
      await new Promise((r) => setTimeout(r, everyMs));
    }
  }
}

describe('faults: RPC outages, lost transactions, vanished escrows', () => {
  it('RPC outage during confirm: 503, nothing signed; the retry goes through as soon as the RPC is back', async () => {
    const p = await parties(2);
    const o = await fundedOrder(p);
    await service.deliver(p.seller, o.id);
    const { proxy, svc } = await proxiedService();
    try {
      proxy.down();
      await expect(svc.confirm(p.buyer, o.id)).rejects.toMatchObject({ slug: 'chain-unavailable' });
      // nothing was signed: no intent is left open to wait for
      expect(await repo.openIntentFor(o.id)).toBeNull();
      // the outage lasts three more failed retries (not a span of wall time), then the RPC is back
      const failedRetries = 3;
      let failures = 0;
      let upAt = 0;
      const r = await retryUntilOk(async () => {
        try {
          return await svc.confirm(p.buyer, o.id);
        } catch (err) {
          if (++failures === failedRetries) (proxy.up(), (upAt = Date.now()));
          throw err;
        }
      }, 0);
      console.info(`[recovery] RPC down for ${failedRetries} retries: confirm succeeded ${Date.now() - upAt} ms after it came back (${r.tries} tries)`);
      expect(r.tries).toBe(failedRetries + 1); // the first retry after the RPC is back goes through
      expect(r.value.status).toBe('completed');
      const releases = (await repo.listIntents(o.id)).filter((i) => i.action === 'release');
      expect(releases.filter((i) => i.signature).map((i) => i.status)).toEqual(['confirmed']);
      expect(releases.filter((i) => !i.signature).every((i) => i.status === 'failed' && /^not sent/.test(i.error!))).toBe(true);
      expect(await usdcBalance(p.seller.wallet!)).toBe(USDC(2) - USDC(0.05));
    } finally {
      await proxy.stop();
    }
  });

  it('a signed release that never reached the chain (sendTransaction lost): 409 while it could land, then the retry goes through; paid once', async () => {
    const p = await parties(3);
    const o = await fundedOrder(p);
    await service.deliver(p.seller, o.id);
    const { proxy, svc } = await proxiedService();
    try {
      proxy.fault('sendTransaction', 'blackhole');
      await expect(svc.confirm(p.buyer, o.id)).rejects.toMatchObject({ slug: 'chain-unavailable' });
      proxy.clear();
      const open = (await repo.openIntentFor(o.id))!;
      expect(open).toMatchObject({ action: 'release', status: 'sent', signature: expect.any(String), lastValidBlockHeight: expect.any(Number) });
      // it may still land: never signed twice
      await expect(svc.confirm(p.buyer, o.id)).rejects.toMatchObject({ slug: 'conflict' });
      // the chain moves past the blockhash's last valid block height: it can never land
      while ((await chain.connection.getBlockHeight('confirmed')) <= open.lastValidBlockHeight!) await localnet.advanceClock(1);
      const r = await retryUntilOk(() => svc.confirm(p.buyer, o.id));
      console.info(`[recovery] lost transaction, blockhash expired: confirm succeeded after ${r.ms} ms (${r.tries} tries)`);
      expect(r.value.status).toBe('completed');
      expect((await repo.listIntents(o.id)).find((i) => i.id === open.id)).toMatchObject({ status: 'failed' });
      expect(await chain.connection.getSignatureStatus(open.signature!, { searchTransactionHistory: true })).toMatchObject({ value: null });
      expect(await usdcBalance(p.seller.wallet!)).toBe(USDC(3) - USDC(0.075));
    } finally {
      await proxy.stop();
    }
  });

  it('a release whose reply was lost (it landed): the reconciler reads it back by signature; no second release', async () => {
    const p = await parties(4);
    const o = await fundedOrder(p);
    await service.deliver(p.seller, o.id);
    const { proxy, svc } = await proxiedService();
    try {
      proxy.fault('sendTransaction', 'lose-reply');
      proxy.fault('getSignatureStatuses', 'error');
      await expect(svc.confirm(p.buyer, o.id)).rejects.toMatchObject({ slug: 'chain-unavailable' });
      proxy.clear();
      expect(await chain.escrow.fetchOrder(o.id)).toBeNull(); // it landed
      const r = await retryUntilOk(() => svc.confirm(p.buyer, o.id));
      expect(r.value).toMatchObject({ status: 'completed', payout: { seller: USDC(4) - USDC(0.1), treasury: USDC(0.1), buyer: 0n, verified: true } });
      expect((await repo.listIntents(o.id)).filter((i) => i.action === 'release').map((i) => i.status)).toEqual(['confirmed']);
      expect(await usdcBalance(p.seller.wallet!)).toBe(USDC(4) - USDC(0.1));
    } finally {
      await proxy.stop();
    }
  });

  it('an escrow account that vanished with no closing transaction (a node that lost it): flagged once for an operator, with the vault balance', async () => {
    const p = await parties(5);
    const o = await fundedOrder(p);
    // the node loses the order account (as a localnet restarted from an old snapshot would)
    const res = await fetch(localnet.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'localnet_setAccount', params: [o.escrowAddress, { lamports: 0, data: '', owner: '11111111111111111111111111111111', executable: false }] }),
    });
    expect(((await res.json()) as { error?: unknown }).error).toBeUndefined();
    expect(await chain.escrow.fetchOrder(o.id)).toBeNull();
    const logs: string[] = [];
    (service.reconciler as unknown as { log: { error: (o: unknown, m: string) => void } }).log.error = (_o, m) => logs.push(m);
    await service.reconciler.runOnce();
    await service.reconciler.runOnce();
    const after = (await repo.get(o.id))!;
    expect(after.status).toBe('in_progress');
    expect(after.attention).toMatchObject({ reason: 'escrow-vanished', detail: expect.stringContaining(`holds ${USDC(5)} base units`) });
    expect(logs.filter((m) => m.includes('escrow vanished'))).toHaveLength(1);
    // an operator settles it by hand; the integrity check shows it meanwhile
    const report = await checkEscrowIntegrity({ repo, escrow: escrowPort(chain.escrow) });
    expect(report.mismatches.map((m) => m.orderId)).toEqual([o.id]);
    await repo.updateIf(o.id, 'in_progress', { status: 'refunded', attention: null });
  });
});

describe('integrity at the end of the suite', () => {
  it('every order matches its escrow account on chain (zero mismatches)', async () => {
    await watcher.runOnce();
    await new AutoReleaseCrank({ service }).runOnce();
    await service.reconciler.runOnce();
    const report = await checkEscrowIntegrity({ repo, escrow: escrowPort(chain.escrow) });
    console.info(`[integrity] ${report.checked} orders checked, ${report.mismatches.length} mismatches`);
    expect(report.checked).toBeGreaterThan(0);
    expect(report.mismatches).toEqual([]);
  });
});
