/**
 * Payment detection by subscription (issue 14): the payment watcher holds one programSubscribe on
 * the escrow program over the localnet's PubSub websocket, and a buyer's own fund transaction makes
 * the order in_progress without waiting for a poll. The websocket runs through a TCP proxy the test
 * can cut: while it is down the watcher falls back to polling at its normal interval (the payment is
 * still seen), and once it is back the watcher resubscribes on its own (back-off) and notifications
 * drive detection again.
 *
 * The poll is set so that it cannot explain a detection: every 10 minutes while subscribed
 * (ORDER_WATCHER_FALLBACK_INTERVAL_MS), 300 ms only while not.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { Keypair, LAMPORTS_PER_SOL, Transaction } from '@solana/web3.js';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureSol, mintTestUsdc } from '../server/scripts/bootstrap-localnet.js';
import { createChain } from '../server/src/chain/index.js';
import { chainOptionsFromDataDir } from '../server/src/chain/keys.js';
import type { PaymentWatcher } from '../server/src/modules/orders/payment-watcher.js';
import { startBootstrappedChain, type BootstrappedChain } from './helpers/localnet.js';
import { API, createTestApp, loginAs, type TestApp } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';

/** A TCP proxy to the localnet's websocket port that can be cut (every connection reset, new ones refused). */
async function startTcpProxy(targetPort: number) {
  const sockets = new Set<net.Socket>();
  let down = false;
  let accepted = 0;
  const server = net.createServer((client) => {
    if (down) return client.destroy();
    accepted += 1;
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const cut = () => {
    down = true;
    for (const s of sockets) s.destroy();
  };
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get accepted() {
      return accepted;
    },
    down: cut,
    up() {
      down = false;
    },
    stop() {
      cut();
      return new Promise<void>((r) => server.close(() => r()));
    },
  };
}

let env: BootstrappedChain;
let t: TestApp;
let proxy: Awaited<ReturnType<typeof startTcpProxy>>;
let watcher: PaymentWatcher;
let seller: Awaited<ReturnType<typeof loginAs>>;

/** A fresh buyer orders a fresh listing and pays it from her own wallet; returns the order id once the fund transaction is confirmed. */
async function payFromWallet(i: number): Promise<{ orderId: string; status: () => Promise<string> }> {
  const kp = Keypair.generate();
  await ensureSol(env.chain.connection, kp.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL);
  await mintTestUsdc(env.dataDir, env.localnet.rpcUrl, kp.publicKey.toBase58(), 5_000_000n);
  const buyer = await loginAs(t, kp);
  const l = await request(t.app).post(`${API}/listings`).set(seller.headers).send({ title: `Subscribed ${i}`, description: 'x', price: 1, currency: 'USDC', category: 'design', duration: 3 });
  expect(l.status, JSON.stringify(l.body)).toBe(201);
  const o = await request(t.app).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', randomUUID()).send({ listing_id: l.body.listing_id });
  expect(o.status, JSON.stringify(o.body)).toBe(201);
  const tx = Transaction.from(Buffer.from(o.body.payment.transaction, 'base64'));
  tx.partialSign(kp);
  const sig = await env.chain.connection.sendRawTransaction(tx.serialize());
  await env.chain.connection.confirmTransaction(sig, 'confirmed');
  const orderId: string = o.body.order_id;
  return { orderId, status: async () => (await request(t.app).get(`${API}/orders/${orderId}`).set(buyer.headers)).body.status };
}

beforeAll(async () => {
  env = await startBootstrappedChain('payment-subscription');
  proxy = await startTcpProxy(Number(new URL(env.localnet.wsUrl).port));
  const chain = createChain({ ...chainOptionsFromDataDir(env.dataDir, env.localnet.rpcUrl)!, wsUrl: proxy.url });
  t = await createTestApp({
    chain,
    config: { currencies: env.boot.currencies },
    orders: {
      watcherIntervalMs: 300,
      watcherFallbackIntervalMs: 600_000,
      reconcileIntervalMs: 0,
      watch: { backoff: { initialMs: 50, maxMs: 300 }, heartbeatMs: 1_000 },
    },
  });
  watcher = t.services.orders!.watcher;
  const sellerKp = Keypair.generate();
  await ensureSol(env.chain.connection, sellerKp.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL);
  seller = await loginAs(t, sellerKp);
  await t.services.start();
}, 180_000);

afterAll(async () => {
  await t?.close();
  await proxy?.stop();
  await env?.stop();
});

describe('payment watcher subscription', () => {
  it('sees a payment through its programSubscribe, with the poll 10 minutes away', async () => {
    await eventually(() => watcher.subscription === 'subscribed', { what: 'the subscription', timeoutMs: 10_000 });
    const paid = await payFromWallet(1);
    await eventually(async () => (await paid.status()) === 'in_progress', { what: 'in_progress', timeoutMs: 10_000 });
    expect(watcher.subscription).toBe('subscribed');
  });

  it('socket cut: the poll still sees a payment; socket back: resubscribed, and notifications drive detection again', async () => {
    await eventually(() => watcher.subscription === 'subscribed', { what: 'the subscription', timeoutMs: 10_000 });
    const connections = proxy.accepted;
    proxy.down();
    await eventually(() => watcher.subscription !== 'subscribed', { what: 'the subscription to go down', timeoutMs: 5_000 });
    const whileDown = await payFromWallet(2);
    await eventually(async () => (await whileDown.status()) === 'in_progress', { what: 'in_progress by the fallback poll', timeoutMs: 15_000 });
    expect(watcher.subscription).not.toBe('subscribed');

    proxy.up();
    await eventually(() => watcher.subscription === 'subscribed', { what: 'the subscription to come back', timeoutMs: 10_000 });
    expect(proxy.accepted).toBeGreaterThan(connections);
    const afterReturn = await payFromWallet(3);
    await eventually(async () => (await afterReturn.status()) === 'in_progress', { what: 'in_progress after resubscription', timeoutMs: 10_000 });
  });

  it('stop() closes the subscription; start() opens it again (what a leader lease does)', async () => {
    await watcher.stop();
    expect(watcher.subscription).toBe('stopped');
    watcher.start(300);
    await eventually(() => watcher.subscription === 'subscribed', { what: 'the subscription after restart', timeoutMs: 10_000 });
  });
});
