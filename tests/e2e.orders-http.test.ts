/**
 * Orders end to end over HTTP: the real app (PGlite) with the real chain (one shared localnet).
 * Alice (buyer) and Bob (seller) log in with their wallets; Bob lists a service (the listing NFT is
 * minted on chain); Alice orders it, signs the returned transaction with web3.js and submits it;
 * the seller's USDC balance on chain is the proof that money moved exactly once.
 */
import { randomUUID } from 'node:crypto';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction } from '@solana/web3.js';
import { TOKEN_PROGRAM_ID, getAccount, getAssociatedTokenAddressSync } from '@solana/spl-token';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Order } from '@bazaar/contract';
import { type Localnet, type BootstrappedChain } from './helpers/localnet';
import { sharedBootstrappedChain } from './helpers/shared-chain';
import { createApiKey, createTestApp, loginAs } from './helpers/app';
import { type ChainClient } from '../server/src/chain/index';
import { createApp } from '../server/src/app';
import { ensureSol, mintTestUsdc, type BootstrapResult } from '../server/scripts/bootstrap-localnet';

const API = '/api/v1';
const USDC = (n: number) => BigInt(Math.round(n * 1e6));

type TestApp = Awaited<ReturnType<typeof createTestApp>>;
interface Party {
  kp: Keypair;
  wallet: string;
  headers: Record<string, string>;
}

let localnet: Localnet;
let dataDir: string;
let boot: BootstrapResult;
let chain: ChainClient;
let env: BootstrappedChain;
let t: TestApp;
let admin: Party;
/** the service's wall clock (payment expiry) runs ahead of real time by this much */
let clockOffsetMs = 0;
const t0 = Date.now();

function headersOf(session: unknown): Record<string, string> {
  const s = session as Record<string, unknown>;
  const token = (s.token ?? s.access_token ?? s.accessToken) as string | undefined;
  return (s.headers as Record<string, string> | undefined) ?? { authorization: `Bearer ${token}` };
}

async function party(usdc = 0): Promise<Party> {
  const kp = Keypair.generate();
  await ensureSol(chain.connection, kp.publicKey, BigInt(LAMPORTS_PER_SOL), 2 * LAMPORTS_PER_SOL);
  if (usdc) await mintTestUsdc(dataDir, localnet.rpcUrl, kp.publicKey.toBase58(), USDC(usdc));
  return { kp, wallet: kp.publicKey.toBase58(), headers: headersOf(await loginAs(t, kp)) };
}

async function usdcBalance(owner: string): Promise<bigint> {
  const ata = getAssociatedTokenAddressSync(new PublicKey(boot.usdcMint), new PublicKey(owner), true, TOKEN_PROGRAM_ID);
  return getAccount(chain.connection, ata, 'confirmed', TOKEN_PROGRAM_ID).then((a) => a.amount, () => 0n);
}

const listingMints = new Map<string, string>();

async function listing(seller: Party, price = 25, duration = 3): Promise<string> {
  const res = await request(t.app)
    .post(`${API}/listings`)
    .set(seller.headers)
    .send({ title: 'Logo design in three days', description: 'A clean, modern logo.', price, currency: 'USDC', category: 'design', duration });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  listingMints.set(res.body.listing_id, res.body.token_mint_address);
  return res.body.listing_id;
}

async function order(buyer: Party, listingId: string, key = randomUUID()) {
  const res = await request(t.app).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', key).send({ listing_id: listingId });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function pay(buyer: Party, created: { order_id: string; payment: { transaction: string } }) {
  const tx = Transaction.from(Buffer.from(created.payment.transaction, 'base64'));
  tx.partialSign(buyer.kp);
  const res = await request(t.app)
    .post(`${API}/orders/${created.order_id}/transaction`)
    .set(buyer.headers)
    .send({ signed_transaction: tx.serialize().toString('base64') });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

const post = (who: Party, path: string, body?: object) => request(t.app).post(`${API}${path}`).set(who.headers).send(body ?? {});

async function fundedOrder(price = 25, duration = 3) {
  const [buyer, seller] = await Promise.all([party(100), party()]);
  const listingId = await listing(seller, price, duration);
  const created = await order(buyer, listingId);
  const paid = await pay(buyer, created);
  return { buyer, seller, listingId, id: created.order_id as string, created, paid };
}

beforeAll(async () => {
  env = await sharedBootstrappedChain('orders-http');
  ({ localnet, dataDir, boot, chain } = env);
  t = await createTestApp({
    chain,
    now: () => new Date(Date.now() + clockOffsetMs),
    config: { currencies: boot.currencies },
    // every buyer of this suite calls from 127.0.0.1: the per-network hold limit is not what it tests
    // (tests/e2e.order-holds.test.ts does)
    orders: { reviewWindowSeconds: 60, watcherIntervalMs: 0, reconcileIntervalMs: 0, maxUnpaidOrdersPerIp: 10_000 },
  });
  const key = await createApiKey(t, { name: 'arbiter', isAdmin: true });
  admin = { kp: Keypair.generate(), wallet: '', headers: { 'x-api-key': key.key } };
  console.info(`[timing] localnet + bootstrap + app: ${Date.now() - t0} ms`);
});

afterAll(async () => {
  await t?.close();
  await env?.stop();
  console.info(`[timing] e2e.orders-http total: ${Date.now() - t0} ms`);
});

describe('orders over HTTP on the real chain', () => {
  it('happy path: create (201, payment tx), pay, deliver, confirm; the seller gets price - fee on chain', async () => {
    const [buyer, seller] = await Promise.all([party(100), party()]);
    const treasuryBefore = await usdcBalance(boot.treasury);
    const listingId = await listing(seller, 25);
    const created = await order(buyer, listingId);
    expect(created).toMatchObject({
      status: 'awaiting_payment',
      escrow_state: 'none',
      listing_id: listingId,
      buyer_wallet: buyer.wallet,
      seller_wallet: seller.wallet,
      currency: 'USDC',
      amount: 25,
      amount_base_units: '25000000',
      fee_bps: 250,
      fee_base_units: '625000',
      seller_receives_base_units: '24375000',
      payment_mint: boot.usdcMint,
      token_mint_address: listingMints.get(listingId),
      allowed_actions: ['pay'],
    });
    expect(created.escrow_account_address).toBe(chain.escrow.addresses(created.order_id, boot.usdcMint).escrow);
    // changed on purpose (issue 10): unencoded, as the Solana Pay spec wants a link without query parameters
    expect(created.payment.solana_pay_url).toBe(`solana:http://bazaar.test/api/v1/orders/${created.order_id}/solana-pay`);
    const tx = Transaction.from(Buffer.from(created.payment.transaction, 'base64'));
    expect(tx.feePayer?.toBase58()).toBe(buyer.wallet);

    // a tampered transaction (another order's) is refused before anything is sent
    const other = await order(buyer, await listing(seller, 25));
    const wrong = Transaction.from(Buffer.from(other.payment.transaction, 'base64'));
    wrong.partialSign(buyer.kp);
    const refused = await request(t.app)
      .post(`${API}/orders/${created.order_id}/transaction`)
      .set(buyer.headers)
      .send({ signed_transaction: wrong.serialize().toString('base64') });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].path).toBe('body.signed_transaction');

    const signed = Transaction.from(Buffer.from(created.payment.transaction, 'base64'));
    signed.partialSign(buyer.kp);
    const submit = () =>
      request(t.app).post(`${API}/orders/${created.order_id}/transaction`).set(buyer.headers).send({ signed_transaction: signed.serialize().toString('base64') });
    const paid = (await submit()).body;
    expect(paid).toMatchObject({ status: 'in_progress', escrow_state: 'funded' });
    const repeat = await submit();
    expect(repeat.status).toBe(200);
    expect(repeat.body.transactions).toHaveLength(1);
    expect(paid.transactions.map((x: { action: string }) => x.action)).toEqual(['fund']);
    expect((await request(t.app).get(`${API}/listings/${listingId}`).set(buyer.headers)).body.status).toBe('reserved');

    const delivered = await post(seller, `/orders/${created.order_id}/deliver`);
    expect(delivered.status, JSON.stringify(delivered.body)).toBe(200);
    expect(delivered.body).toMatchObject({ status: 'delivered', escrow_state: 'delivered', review_window_seconds: 60 });
    expect(Date.parse(delivered.body.auto_release_at) - Date.parse(delivered.body.delivered_at)).toBe(60_000);

    const done = await post(buyer, `/orders/${created.order_id}/confirm`);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({ status: 'completed', escrow_state: 'released' });
    expect(done.body.transactions.map((x: { action: string; status: string }) => `${x.action}:${x.status}`)).toEqual([
      'fund:confirmed',
      'mark_delivered:confirmed',
      'release:confirmed',
    ]);
    expect(await usdcBalance(seller.wallet)).toBe(USDC(25) - USDC(0.625));
    expect((await usdcBalance(boot.treasury)) - treasuryBefore).toBe(USDC(0.625));
    expect(await usdcBalance(buyer.wallet)).toBe(USDC(75));
    expect(await chain.escrow.fetchOrder(created.order_id)).toBeNull();
    expect((await request(t.app).get(`${API}/listings/${listingId}`).set(buyer.headers)).body.status).toBe('sold');

    const read = await request(t.app).get(`${API}/orders/${created.order_id}`).set(seller.headers);
    expect(read.status).toBe(200);
    expect(read.body.status).toBe('completed');
  });

  it('Idempotency-Key: same key replays the 201, a different body is 422, no key is 400', async () => {
    const [buyer, seller] = await Promise.all([party(20), party()]);
    const a = await listing(seller, 5);
    const b = await listing(seller, 6);
    const key = randomUUID();
    const first = await order(buyer, a, key);
    const again = await request(t.app).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', key).send({ listing_id: a });
    expect(again.status).toBe(201);
    expect(again.body.order_id).toBe(first.order_id);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const other = await request(t.app).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', key).send({ listing_id: b });
    expect(other.status).toBe(422);
    expect(other.body.type).toBe('https://bazaar.dev/problems/idempotency-key-reused');
    const none = await request(t.app).post(`${API}/orders`).set(buyer.headers).send({ listing_id: a });
    expect(none.status).toBe(400);
    expect(none.body.type).toBe('https://bazaar.dev/problems/idempotency-key-missing');
    const mine = await request(t.app).get(`${API}/orders?role=buyer`).set(buyer.headers);
    expect(mine.body.data.map((o: { order_id: string }) => o.order_id)).toEqual([first.order_id]);
  });

  it('refuses own listing (409), a foreign buyer_wallet on a user token (403); strangers get 404', async () => {
    const [buyer, seller, stranger] = await Promise.all([party(20), party(), party()]);
    const l = await listing(seller, 5);
    const own = await request(t.app).post(`${API}/orders`).set(seller.headers).set('Idempotency-Key', randomUUID()).send({ listing_id: l });
    expect(own.status).toBe(409);
    expect(own.body.type).toMatch(/own-listing$/);
    const foreign = await request(t.app)
      .post(`${API}/orders`)
      .set(buyer.headers)
      .set('Idempotency-Key', randomUUID())
      .send({ listing_id: l, buyer_wallet: stranger.wallet });
    expect(foreign.status).toBe(403);
    const created = await order(buyer, l);
    expect((await request(t.app).get(`${API}/orders/${created.order_id}`).set(stranger.headers)).status).toBe(404);
    expect((await post(stranger, `/orders/${created.order_id}/confirm`)).status).toBe(404);
  });

  it('an API key acting for a user may name the paying buyer_wallet; that wallet signs', async () => {
    const [integrator, payer, seller] = await Promise.all([party(), party(50), party()]);
    const l = await listing(seller, 2);
    const key = await createApiKey(t, { name: 'shop', userId: (await loginAs(t, integrator.kp)).userId });
    const res = await request(t.app)
      .post(`${API}/orders`)
      .set('x-api-key', key.key)
      .set('Idempotency-Key', randomUUID())
      .send({ listing_id: l, buyer_wallet: payer.wallet });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.buyer_wallet).toBe(payer.wallet);
    const paid = await pay({ ...payer, headers: { 'x-api-key': key.key } }, res.body);
    expect(paid.status).toBe('in_progress');
    expect((await chain.escrow.fetchOrder(res.body.order_id))!.buyer).toBe(payer.wallet);
  });

  it('forbidden callers (403) and illegal transitions (409)', async () => {
    const o = await fundedOrder(3);
    expect((await post(o.buyer, `/orders/${o.id}/deliver`)).status).toBe(403);
    expect((await post(o.seller, `/orders/${o.id}/confirm`)).status).toBe(403);
    expect((await post(o.buyer, `/orders/${o.id}/resolve`, { buyer_bps: 5000 })).status).toBe(403);
    expect((await post(o.buyer, `/orders/${o.id}/refund`)).status).toBe(403);
    const early = await post(o.buyer, `/orders/${o.id}/confirm`);
    expect(early.status).toBe(409);
    expect(early.body.type).toMatch(/invalid-state-transition$/);
    expect((await post(o.seller, `/orders/${o.id}/deliver`)).status).toBe(200);
    expect((await post(o.seller, `/orders/${o.id}/deliver`)).status).toBe(200); // repeat: harmless
    expect((await post(o.buyer, `/orders/${o.id}/confirm`)).status).toBe(200);
    const late = await post(o.buyer, `/orders/${o.id}/dispute`, { reason: 'Changed my mind after all' });
    expect(late.status).toBe(409);
    const again = await request(t.app).get(`${API}/orders/${o.id}`).set(o.buyer.headers);
    expect(again.body.transactions.filter((x: { action: string }) => x.action === 'mark_delivered')).toHaveLength(1);
  });

  it('dispute resolved with a 50/50 split by an admin', async () => {
    const o = await fundedOrder(10);
    const d = await post(o.seller, `/orders/${o.id}/dispute`, { reason: 'The buyer stopped answering' });
    expect(d.status, JSON.stringify(d.body)).toBe(200);
    expect(d.body).toMatchObject({ status: 'disputed', dispute_reason: 'The buyer stopped answering' });
    const r = await post(admin, `/orders/${o.id}/resolve`, { buyer_bps: 5000 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ status: 'resolved', resolution: { buyer_bps: 5000 } });
    expect(await usdcBalance(o.buyer.wallet)).toBe(USDC(95));
    expect(await usdcBalance(o.seller.wallet)).toBe(USDC(5) - USDC(0.125));
  });

  it('20 concurrent confirms over HTTP: all 200, exactly one release transaction', async () => {
    const o = await fundedOrder(2);
    expect((await post(o.seller, `/orders/${o.id}/deliver`)).status).toBe(200);
    const res = await Promise.all(Array.from({ length: 20 }, () => post(o.buyer, `/orders/${o.id}/confirm`)));
    expect(res.map((r) => r.status)).toEqual(Array(20).fill(200));
    const read = await request(t.app).get(`${API}/orders/${o.id}`).set(o.buyer.headers);
    expect(read.body.transactions.filter((x: { action: string }) => x.action === 'release')).toHaveLength(1);
    expect(await usdcBalance(o.seller.wallet)).toBe(USDC(2) - USDC(0.05));
  });

  it('auto-release: after the review window the crank claims; the seller is paid without the buyer', async () => {
    const o = await fundedOrder(4);
    expect((await post(o.seller, `/orders/${o.id}/deliver`)).status).toBe(200);
    const orders = t.services.orders!;
    expect((await orders.autoRelease.runOnce()).claimed).not.toContain(o.id);
    await localnet.advanceClock(65);
    expect((await orders.autoRelease.runOnce()).claimed).toContain(o.id);
    const read = await request(t.app).get(`${API}/orders/${o.id}`).set(o.seller.headers);
    expect(read.body).toMatchObject({ status: 'completed', escrow_state: 'released' });
    expect(read.body.transactions.map((x: { action: string }) => x.action)).toEqual(['fund', 'mark_delivered', 'claim']);
    expect(await usdcBalance(o.seller.wallet)).toBe(USDC(4) - USDC(0.1));
  });

  it('missed delivery deadline: the buyer refunds (403 before the deadline), the listing is available again', async () => {
    const o = await fundedOrder(6, 1);
    const early = await post(o.buyer, `/orders/${o.id}/refund`);
    expect(early.status).toBe(403);
    await localnet.advanceClock(86_400 + 5);
    const r = await post(o.buyer, `/orders/${o.id}/refund`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({ status: 'refunded', escrow_state: 'refunded' });
    expect(await usdcBalance(o.buyer.wallet)).toBe(USDC(100));
    expect((await request(t.app).get(`${API}/listings/${o.listingId}`).set(o.buyer.headers)).body.status).toBe('available');
  });

  it('crash after the release is sent, before the DB write: the reconciler converges; no second release', async () => {
    const o = await fundedOrder(3);
    expect((await post(o.seller, `/orders/${o.id}/deliver`)).status).toBe(200);
    const orders = t.services.orders!;
    let sent = '';
    orders.service.hooks.afterSend = ({ tx }) => {
      sent = tx.signature;
      throw new Error('simulated crash');
    };
    const crashed = await post(o.buyer, `/orders/${o.id}/confirm`);
    orders.service.hooks.afterSend = undefined;
    expect(crashed.status).toBe(500);
    expect((await request(t.app).get(`${API}/orders/${o.id}`).set(o.buyer.headers)).body.status).toBe('delivered');
    expect(await chain.escrow.fetchOrder(o.id)).toBeNull(); // the money moved
    await orders.reconciler.runOnce();
    const read = await request(t.app).get(`${API}/orders/${o.id}`).set(o.buyer.headers);
    expect(read.body.status).toBe('completed');
    const releases = read.body.transactions.filter((x: { action: string }) => x.action === 'release');
    expect(releases).toEqual([expect.objectContaining({ signature: sent, status: 'confirmed' })]);
    expect((await post(o.buyer, `/orders/${o.id}/confirm`)).status).toBe(200);
    expect(await usdcBalance(o.seller.wallet)).toBe(USDC(3) - USDC(0.075));
  });

  it('GET /orders: mine only, role and status filters, cursor pages', async () => {
    const [buyer, seller] = await Promise.all([party(20), party()]);
    // one open order per listing (the listing is held for it): three listings
    for (let i = 0; i < 3; i++) await order(buyer, await listing(seller, 1));
    const p1 = await request(t.app).get(`${API}/orders?limit=2`).set(buyer.headers);
    expect(p1.status).toBe(200);
    expect(p1.body.data).toHaveLength(2);
    const p2 = await request(t.app).get(`${API}/orders?limit=2&cursor=${p1.body.next_cursor}`).set(buyer.headers);
    expect(p2.body.data).toHaveLength(1);
    expect(p2.body.next_cursor).toBeNull();
    expect((await request(t.app).get(`${API}/orders?role=seller&status=awaiting_payment`).set(seller.headers)).body.data).toHaveLength(3);
    expect((await request(t.app).get(`${API}/orders?role=buyer`).set(seller.headers)).body.data).toHaveLength(0);
    // every row says what was bought, from and by whom, and what happens next (issue 23 item 1)
    await request(t.app).patch(`${API}/user/me`).set(seller.headers).send({ display_name: 'Sal the designer' }).expect(200);
    const rows = (await request(t.app).get(`${API}/orders?role=seller`).set(seller.headers)).body.data as Order[];
    for (const row of rows) {
      expect(row.listing).toMatchObject({ title: 'Logo design in three days', category_slug: 'design', category_name: 'Design' });
      expect(row.seller).toEqual({ wallet: seller.wallet, display_name: 'Sal the designer', rating: { average: null, review_count: 0 } });
      expect(row.buyer).toMatchObject({ wallet: buyer.wallet, display_name: null });
      expect(row.next_step).toEqual({ actor: 'buyer', kind: 'pay', due_at: row.payment_expires_at, after_due: 'hold_lapses' });
      expect(row.review).toBeNull();
    }
    const one = await request(t.app).get(`${API}/orders/${rows[0]!.order_id}`).set(buyer.headers);
    expect(Order.parse(one.body)).toEqual(one.body);
    expect(one.body.seller.display_name).toBe('Sal the designer');
  });

  it('unpaid past payment_expires_at: the watcher expires the order; paying is refused afterwards', async () => {
    const [buyer, seller] = await Promise.all([party(20), party()]);
    const l = await listing(seller, 1);
    const created = await order(buyer, l);
    expect(new Date(created.payment_expires_at).getTime() - new Date(created.created_at).getTime()).toBe(900_000);
    clockOffsetMs += (900 + 121) * 1000;
    try {
      expect((await t.services.orders!.watcher.runOnce()).expired).toContain(created.order_id);
    } finally {
      clockOffsetMs -= (900 + 121) * 1000;
    }
    const read = await request(t.app).get(`${API}/orders/${created.order_id}`).set(buyer.headers);
    expect(read.body).toMatchObject({ status: 'expired', escrow_state: 'none', allowed_actions: [] });
    const pay = await request(t.app).post(`${API}/orders/${created.order_id}/solana-pay`).send({ account: buyer.wallet });
    expect(pay.status).toBe(409);
    expect((await request(t.app).get(`${API}/listings/${l}`).set(buyer.headers)).body.status).toBe('available');
  });

  it.skipIf(!process.env.TEST_DATABASE_URL)('on PostgreSQL too: 20 concurrent confirms, one release (row lock + intent guard)', async () => {
    const main = t;
    t = await createTestApp({ chain, postgres: true, config: { currencies: boot.currencies }, orders: { reviewWindowSeconds: 60 } });
    try {
      const o = await fundedOrder(2);
      expect((await post(o.seller, `/orders/${o.id}/deliver`)).status).toBe(200);
      const res = await Promise.all(Array.from({ length: 20 }, () => post(o.buyer, `/orders/${o.id}/confirm`)));
      expect(res.map((r) => r.status)).toEqual(Array(20).fill(200));
      const read = await request(t.app).get(`${API}/orders/${o.id}`).set(o.buyer.headers);
      expect(read.body.transactions.filter((x: { action: string }) => x.action === 'release')).toHaveLength(1);
      expect(await usdcBalance(o.seller.wallet)).toBe(USDC(2) - USDC(0.05));
    } finally {
      await t.close();
      t = main;
    }
  });

  it('a crash during POST /orders at each named step: the key is retryable after its lease, the retry returns the order that was created', async () => {
    const leaseMs = 60_000; // never lapses on the wall clock during the test: the test moves the service clock past it
    for (const step of ['order-inserted', 'payment-ready'] as const) {
      const [buyer, seller] = await Promise.all([party(10), party()]);
      const l = await listing(seller, 3);
      const key = randomUUID();
      // process A dies at `step`: its handler never returns, its timers (lease renewals) stop
      const a = createApp({ ...t.ctx, orders: { ...t.ctx.orders, idempotencyLeaseMs: leaseMs } });
      a.services.orders!.service.hooks.createStep = (s) => (s === step ? new Promise<void>(() => undefined) : undefined);
      const dying = request(a).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', key).send({ listing_id: l }).timeout(4_000).then(
        () => 'answered',
        () => 'no answer',
      );
      for (let i = 0; i < 100 && !(await t.ctx.db.order.count({ where: { listingId: l } })); i++) await new Promise((r) => setTimeout(r, 20));
      await a.services.stop();
      // process B, same database: 409 (Retry-After) while the dead request's lease runs, then the order it created
      const b = createApp({ ...t.ctx, orders: { ...t.ctx.orders, idempotencyLeaseMs: leaseMs } });
      const inUse = await request(b).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', key).send({ listing_id: l });
      expect(inUse.status, JSON.stringify(inUse.body)).toBe(409);
      expect(inUse.body.type).toBe('https://bazaar.dev/problems/idempotency-key-in-use');
      expect(Number(inUse.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      // the lease lapses on the service clock (no renewal: A is dead), without waiting for it
      clockOffsetMs += leaseMs + 1;
      let res;
      try {
        res = await request(b).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', key).send({ listing_id: l });
      } finally {
        clockOffsetMs -= leaseMs + 1;
      }
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const rows = await t.ctx.db.order.findMany({ where: { listingId: l } });
      expect(rows.map((r) => r.id)).toEqual([res.body.order_id]);
      expect(res.body).toMatchObject({ status: 'awaiting_payment', payment: { transaction: expect.any(String) } });
      // the retried answer is the key's answer from now on
      const replay = await request(b).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', key).send({ listing_id: l });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.order_id).toBe(res.body.order_id);
      // and the order is payable with the transaction the retry returned
      expect((await pay(buyer, res.body)).status).toBe('in_progress');
      await b.services.stop();
      expect(await dying).toBe('no answer');
    }
  });

  it('a crash that answers 500 (a throw at order-inserted) frees the key at once; the retry returns the same order', async () => {
    const [buyer, seller] = await Promise.all([party(20), party()]);
    const l = await listing(seller, 3);
    const key = randomUUID();
    const orders = t.services.orders!;
    orders.service.hooks.createStep = (s) => {
      if (s === 'order-inserted') throw new Error('simulated crash');
    };
    const crashed = await request(t.app).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', key).send({ listing_id: l });
    orders.service.hooks.createStep = undefined;
    expect(crashed.status).toBe(500);
    const retry = await request(t.app).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', key).send({ listing_id: l });
    expect(retry.status, JSON.stringify(retry.body)).toBe(201);
    expect(await t.ctx.db.order.count({ where: { listingId: l } })).toBe(1);
    expect(retry.body.payment.transaction).toEqual(expect.any(String));
  });

  it('50 buyers order one listing at once: one order, 49 get 409 before paying anything, no refund transaction', async () => {
    const seller = await party();
    const l = await listing(seller, 1);
    const t1 = Date.now();
    // each can pay (a hold needs a buyer wallet whose balances cover the order)
    const buyers = await Promise.all(Array.from({ length: 50 }, () => party(1)));
    console.info(`[timing] 50 funded logins: ${Date.now() - t1} ms`);
    const t2 = Date.now();
    const res = await Promise.all(
      buyers.map((b) => request(t.app).post(`${API}/orders`).set(b.headers).set('Idempotency-Key', randomUUID()).send({ listing_id: l })),
    );
    console.info(`[timing] 50 concurrent POST /orders on one listing: ${Date.now() - t2} ms`);
    const created = res.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    const refused = res.filter((r) => r.status === 409);
    expect(refused).toHaveLength(49);
    expect(new Set(refused.map((r) => r.body.type))).toEqual(new Set(['https://bazaar.dev/problems/listing-unavailable']));
    expect(refused[0]!.body.held_until).toEqual(expect.any(String));
    // only the winner got a fund transaction; nobody else can pay, so nothing is ever refunded
    expect(await t.ctx.db.order.count({ where: { listingId: l } })).toBe(1);
    expect(await t.ctx.db.chainIntent.count({ where: { order: { listingId: l } } })).toBe(0);
  });

  it('payment.expires_at holds: the transaction still lands at that time; POST /orders/{id}/payment hands out a fresh one', async () => {
    const [buyer, seller, stranger] = await Promise.all([party(10), party(), party()]);
    const early = await order(buyer, await listing(seller, 2));
    const issuedAt = Date.now();
    const expiresAt = new Date(early.payment.expires_at).getTime();
    expect(expiresAt).toBeGreaterThan(issuedAt);
    expect(expiresAt).toBeLessThanOrEqual(new Date(early.payment_expires_at).getTime());
    // the chain moves on to the promised moment (blocks at 400 ms): the transaction still lands
    await localnet.advanceClock(Math.ceil((expiresAt - issuedAt) / 1000));
    expect((await pay(buyer, early)).status).toBe('in_progress');

    const created = await order(buyer, await listing(seller, 2));
    expect((await post(seller, `/orders/${created.order_id}/payment`)).status).toBe(403);
    expect((await post(stranger, `/orders/${created.order_id}/payment`)).status).toBe(404);
    const fresh = await post(buyer, `/orders/${created.order_id}/payment`);
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
    expect(fresh.body).toMatchObject({ order_id: created.order_id, payment_expires_at: created.payment_expires_at, solana_pay_url: created.payment.solana_pay_url });
    expect(new Date(fresh.body.expires_at).getTime()).toBeGreaterThan(Date.now());
    const paid = await pay(buyer, { order_id: created.order_id, payment: fresh.body });
    expect(paid.status).toBe('in_progress');
    // once paid, no more fund transactions
    const none = await post(buyer, `/orders/${created.order_id}/payment`);
    expect(none.status).toBe(409);
    expect(none.body.type).toBe('https://bazaar.dev/problems/invalid-state-transition');
  });

  /**
   * A refunded order whose escrow is funded again: a second fund transaction (a wallet asked the Solana Pay
   * endpoint too, on another blockhash; on the same one it would be the very same transaction) lands after
   * the seller's refund. `beforeRefund` runs right before that refund.
   */
  async function refundedThenFundedAgain(beforeRefund?: () => void) {
    const [buyer, seller] = await Promise.all([party(20), party()]);
    const created = await order(buyer, await listing(seller, 5));
    const blockhashOf = (b64: string) => Transaction.from(Buffer.from(b64, 'base64')).recentBlockhash;
    let spare = await request(t.app).post(`${API}/orders/${created.order_id}/solana-pay`).send({ account: buyer.wallet });
    for (let i = 0; i < 5 && blockhashOf(spare.body.transaction) === blockhashOf(created.payment.transaction); i++) {
      await localnet.advanceClock(1);
      spare = await request(t.app).post(`${API}/orders/${created.order_id}/solana-pay`).send({ account: buyer.wallet });
    }
    expect(spare.status).toBe(200);
    expect(blockhashOf(spare.body.transaction)).not.toBe(blockhashOf(created.payment.transaction));
    await pay(buyer, created);
    beforeRefund?.();
    expect((await post(seller, `/orders/${created.order_id}/refund`)).status).toBe(200);
    expect(await usdcBalance(buyer.wallet)).toBe(USDC(20));
    // the spare one is still valid: the buyer's wallet sends it, the escrow exists again
    const tx = Transaction.from(Buffer.from(spare.body.transaction, 'base64'));
    tx.partialSign(buyer.kp);
    await chain.escrow.submitSignedTransaction(tx.serialize().toString('base64'));
    expect(await chain.escrow.fetchOrder(created.order_id)).toMatchObject({ state: 'funded' });
    expect(await usdcBalance(buyer.wallet)).toBe(USDC(15));
    // no more fund transactions for it
    expect((await request(t.app).post(`${API}/orders/${created.order_id}/solana-pay`).send({ account: buyer.wallet })).status).toBe(409);
    return { buyer, orderId: created.order_id as string };
  }

  /** The order's escrow is gone, the buyer whole, the order refunded with both refunds among its transactions. */
  async function expectStrayRefunded(buyer: Party, orderId: string) {
    expect(await chain.escrow.fetchOrder(orderId)).toBeNull();
    expect(await usdcBalance(buyer.wallet)).toBe(USDC(20));
    const read = (await request(t.app).get(`${API}/orders/${orderId}`).set(buyer.headers)).body;
    expect(read).toMatchObject({ status: 'refunded', escrow_state: 'refunded' });
    expect(read.transactions.map((x: { action: string }) => x.action)).toEqual(['fund', 'refund', 'refund']);
    expect(new Set(read.transactions.map((x: { signature: string }) => x.signature)).size).toBe(3);
  }

  it('a closed order funded again with an earlier fund transaction: the watcher refunds that escrow, the order stays refunded', async () => {
    const { buyer, orderId } = await refundedThenFundedAgain();
    // watcher passes until the stray escrow is refunded (the condition, not a number of passes): a pass whose
    // refund attempt did not settle (an RPC failure on a loaded machine) leaves it in flight, and its outcome
    // is final once its blockhash expired, so the chain is moved past that instead of waiting for it
    const refunded: string[] = [];
    for (let pass = 1; !refunded.includes(orderId); pass++) {
      refunded.push(...(await t.services.orders!.watcher.runOnce()).strayRefunds);
      if (refunded.includes(orderId)) break;
      expect(pass, `watcher pass ${pass} left the stray escrow unrefunded`).toBeLessThan(10); // a safety net, not the criterion
      const open = await t.ctx.db.chainIntent.findFirst({ where: { orderId, status: { in: ['pending', 'sent'] } } });
      if (open?.lastValidBlockHeight != null) {
        while ((await chain.connection.getBlockHeight('confirmed')) <= Number(open.lastValidBlockHeight)) await localnet.advanceClock(1);
      }
    }
    expect(refunded).toEqual([orderId]);
    await expectStrayRefunded(buyer, orderId);
  });

  it('the stray refund built on the blockhash of the order\'s own refund (same slot, or a lagging RPC node) is signed on a newer one: the first watcher pass refunds', async () => {
    // the RPC node answers the blockhash it gave the seller's refund once more, to the watcher's refund: the
    // same instruction on the same blockhash is the same transaction (same signature), so it must not be sent as such
    const connection = chain.connection;
    const latest = connection.getLatestBlockhash.bind(connection);
    let refundBlockhash: Awaited<ReturnType<typeof latest>> | null = null;
    let replays = 0;
    let recording = false;
    connection.getLatestBlockhash = async (...a: Parameters<typeof latest>) => {
      if (recording && !refundBlockhash) return (refundBlockhash = await latest(...a));
      if (refundBlockhash && replays++ === 0) return refundBlockhash;
      return latest(...a);
    };
    try {
      const { buyer, orderId } = await refundedThenFundedAgain(() => (recording = true));
      expect(refundBlockhash).not.toBeNull();
      expect((await t.services.orders!.watcher.runOnce()).strayRefunds).toEqual([orderId]);
      expect(replays).toBeGreaterThan(1); // the replayed blockhash was answered, and a newer one asked for
      await expectStrayRefunded(buyer, orderId);
    } finally {
      connection.getLatestBlockhash = latest;
    }
  });

  it('Solana Pay: GET label (public), POST only for the buyer account', async () => {
    const [buyer, seller] = await Promise.all([party(20), party()]);
    const created = await order(buyer, await listing(seller, 1));
    const label = await request(t.app).get(`${API}/orders/${created.order_id}/solana-pay`);
    expect(label.status).toBe(200);
    expect(label.body).toEqual({ label: expect.any(String), icon: expect.stringMatching(/^https?:/) });
    expect((await request(t.app).post(`${API}/orders/${created.order_id}/solana-pay`).send({ account: seller.wallet })).status).toBe(403);
    const ok = await request(t.app).post(`${API}/orders/${created.order_id}/solana-pay`).send({ account: buyer.wallet });
    expect(ok.status).toBe(200);
    expect(Transaction.from(Buffer.from(ok.body.transaction, 'base64')).feePayer?.toBase58()).toBe(buyer.wallet);
  });
});

describe('integrity at the end of the suite', () => {
  it('every order matches its escrow account on chain (zero mismatches)', async () => {
    const orders = t.services.orders!;
    await orders.watcher.runOnce();
    await orders.autoRelease.runOnce();
    await orders.reconciler.runOnce();
    const report = await orders.checkIntegrity();
    console.info(`[integrity] ${report.checked} orders checked, ${report.mismatches.length} mismatches`);
    expect(report.checked).toBeGreaterThan(0);
    expect(report.mismatches).toEqual([]);
  });
});
