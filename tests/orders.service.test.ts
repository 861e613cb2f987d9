/**
 * Orders service rules against in-memory fakes (no database, no chain): state table, roles,
 * idempotent repeats, per-order serialization, crash recovery by the reconciler, timers.
 * The same stories run over HTTP against the real localnet in tests/e2e.orders.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { Keypair, Transaction } from '@solana/web3.js';
import { parseURL, type TransactionRequestURL } from '@solana/pay';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import { AutoReleaseCrank, PaymentWatcher } from '../server/src/modules/orders/payment-watcher.js';
import { MemoryOrdersRepo } from './helpers/memory-orders-repo.js';
import { OrdersService } from '../server/src/modules/orders/orders.service.js';
import type { OrdersServiceSettings } from '../server/src/modules/orders/orders.settings.js';
import { crashingEscrow } from './helpers/crash-ports.js';
import { DomainError } from '../server/src/errors.js';
import { checkEscrowIntegrity } from '../server/src/modules/orders/orders.integrity.js';
import { FakeEscrow, FakeListings, testOrdersSettings, user } from './orders.fakes.js';
import { listingTransitions, orderTransitions, type OrderTransition } from '@bazaar/contract';
import type { OrderRecord, OrderWatchHandlers } from '../server/src/modules/orders/orders.types.js';
import type { SubscriptionState } from '../server/src/chain/pubsub.js';

const USDC = { code: 'USDC', mint: Keypair.generate().publicKey.toBase58(), decimals: 6 };

function setup(opts: { now?: () => Date; config?: Partial<OrdersServiceSettings>; tokenProgram?: string } = {}) {
  const repo = new MemoryOrdersRepo();
  const escrow = new FakeEscrow();
  const listings = new FakeListings();
  // the escrow port the service uses: the fake, with a switch that crashes right after a send landed
  const crash = crashingEscrow();
  const service = new OrdersService({
    repo,
    escrow: crash.wrap(escrow),
    listings,
    currency: (c) => (c === 'USDC' ? { ...USDC, ...(opts.tokenProgram ? { tokenProgram: opts.tokenProgram } : {}) } : undefined),
    settings: testOrdersSettings({ reviewWindowSeconds: 3600, paymentTtlSeconds: 900, paymentGraceSeconds: 60, inflightWaitMs: 300, ...opts.config }),
    now: opts.now,
  });
  const buyerKp = Keypair.generate();
  const sellerKp = Keypair.generate();
  const buyer = user(randomUUID(), buyerKp.publicKey.toBase58());
  const seller = user(randomUUID(), sellerKp.publicKey.toBase58());
  const admin = user(randomUUID(), Keypair.generate().publicKey.toBase58(), { isAdmin: true });
  const stranger = user(randomUUID(), Keypair.generate().publicKey.toBase58());
  const listing = listings.add({ id: randomUUID(), sellerId: seller.userId!, sellerWallet: seller.wallet! });
  const watcher = new PaymentWatcher({ service, repo });
  const crank = new AutoReleaseCrank({ service });
  /** another listing of the same seller (a listing holds one open order at a time) */
  const another = () => listings.add({ id: randomUUID(), sellerId: seller.userId!, sellerWallet: seller.wallet! });
  return { repo, escrow, crash, listings, service, buyer, seller, admin, stranger, listing, buyerKp, watcher, crank, another };
}

type Ctx = ReturnType<typeof setup>;

async function funded(ctx: Ctx) {
  const { order } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
  ctx.escrow.fund(ctx.service.fundTerms(order));
  await ctx.watcher.runOnce();
  return (await ctx.repo.get(order.id))!;
}

async function delivered(ctx: Ctx) {
  const o = await funded(ctx);
  return ctx.service.deliver(ctx.seller, o.id);
}

const slug = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { slug?: string; type?: string }) => e.slug ?? e.type,
  );

describe('orders service', () => {
  let ctx: Ctx;
  beforeEach(() => {
    ctx = setup();
  });

  it('creates an awaiting_payment order with a partially signed fund transaction and a Solana Pay link', async () => {
    const { order, payment } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
    expect(order.status).toBe('awaiting_payment');
    expect(order.amount).toBe(25_000_000n);
    expect(order.feeBps).toBe(250);
    expect(order.deliveryDeadline).toBe(ctx.escrow.now + 3 * 86_400);
    const tx = Transaction.from(Buffer.from(payment.transaction, 'base64'));
    expect(tx.feePayer?.toBase58()).toBe(ctx.buyer.wallet);
    // the platform co-signed the message the buyer will sign (ed25519 over the serialized message)
    const platformSig = tx.signatures.find((s) => s.publicKey.equals(ctx.escrow.platform.publicKey))?.signature;
    expect(platformSig).toHaveLength(64);
    expect(nacl.sign.detached.verify(tx.serializeMessage(), platformSig!, ctx.escrow.platform.publicKey.toBytes())).toBe(true);
    // changed on purpose (issue 10): the Solana Pay spec wants a link without query parameters unencoded
    expect(payment.solana_pay_url).toBe(`solana:http://127.0.0.1:3000/api/v1/orders/${order.id}/solana-pay`);
  });

  it('binds the fund terms to the chain clock + payment window, the same in every fund transaction of the order', async () => {
    const terms = (b64: string) => JSON.parse(Buffer.from(Transaction.from(Buffer.from(b64, 'base64')).instructions[0].data).toString());
    const { order, payment } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
    expect(order.fundExpiresAt).toBe(ctx.escrow.now + 900);
    expect(terms(payment.transaction).expiresAt).toBe(order.fundExpiresAt);
    // a later Solana Pay POST hands out the same terms (a submitted transaction is compared byte for byte)
    ctx.escrow.advance(120);
    const again = await ctx.service.solanaPayTransaction(order.id, ctx.buyer.wallet!);
    expect(terms(again.transaction).expiresAt).toBe(order.fundExpiresAt);
    // once the chain clock passed them, the program (here its fake) refuses them
    ctx.escrow.advance(900);
    const signed = Transaction.from(Buffer.from(again.transaction, 'base64'));
    signed.partialSign(ctx.buyerKp);
    await expect(ctx.escrow.submitSignedTransaction(signed.serialize().toString('base64'))).rejects.toMatchObject({
      extensions: expect.objectContaining({ program_error: 'FundTermsExpired' }),
    });
  });

  it('refuses own listing, unavailable listings and foreign buyer_wallet on a user token', async () => {
    expect(await slug(ctx.service.create(ctx.seller, { listingId: ctx.listing.id }))).toBe('own-listing');
    const other = Keypair.generate().publicKey.toBase58();
    expect(await slug(ctx.service.create(ctx.buyer, { listingId: ctx.listing.id, buyerWallet: other }))).toBe('forbidden');
    const viaKey = await ctx.service.create({ ...ctx.buyer, kind: 'api_key' }, { listingId: ctx.listing.id, buyerWallet: other });
    expect(viaKey.order.buyerWallet).toBe(other);
    expect(await slug(ctx.service.create({ ...ctx.buyer, kind: 'api_key' }, { listingId: ctx.listing.id, buyerWallet: ctx.seller.wallet! }))).toBe('own-listing');
    ctx.listings.rows.get(ctx.listing.id)!.status = 'sold';
    expect(await slug(ctx.service.create(ctx.buyer, { listingId: ctx.listing.id }))).toBe('listing-unavailable');
    expect(await slug(ctx.service.create(ctx.buyer, { listingId: randomUUID() }))).toBe('not-found');
  });

  it('the buyer signs and submits the fund transaction: in_progress, listing reserved; a tampered one is refused', async () => {
    const { order, payment } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
    const other = await ctx.service.create(ctx.buyer, { listingId: ctx.another().id });
    // another order's transaction is not this order's fund transaction
    const wrong = Transaction.from(Buffer.from(other.payment.transaction, 'base64'));
    wrong.partialSign(ctx.buyerKp);
    expect(await slug(ctx.service.submitTransaction(ctx.buyer, order.id, wrong.serialize().toString('base64')))).toBe('validation-error');
    // unsigned by the buyer
    expect(await slug(ctx.service.submitTransaction(ctx.buyer, order.id, payment.transaction))).toBe('validation-error');
    expect(await slug(ctx.service.submitTransaction(ctx.seller, order.id, payment.transaction))).toBe('forbidden');

    const tx = Transaction.from(Buffer.from(payment.transaction, 'base64'));
    tx.partialSign(ctx.buyerKp);
    const after = await ctx.service.submitTransaction(ctx.buyer, order.id, tx.serialize().toString('base64'));
    expect(after.status).toBe('in_progress');
    expect(after.fundSignature).toBe(bs58.encode(tx.signature!)); // the buyer-signed transaction's id
    expect(ctx.listings.rows.get(ctx.listing.id)!.status).toBe('reserved');
    expect((await ctx.repo.listIntents(order.id)).map((i) => i.action)).toEqual(['fund']);
    // repeat: same answer, nothing sent
    const again = await ctx.service.submitTransaction(ctx.buyer, order.id, tx.serialize().toString('base64'));
    expect(again.status).toBe('in_progress');
    expect(ctx.escrow.count('fund')).toBe(1);
  });

  it('Solana Pay: label for anyone, transaction only for the buyer account', async () => {
    const { order } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
    expect(await ctx.service.solanaPayLabel(order.id)).toEqual({ label: 'Bazaar', icon: expect.any(String) });
    expect(await slug(ctx.service.solanaPayTransaction(order.id, ctx.seller.wallet!))).toBe('forbidden');
    const r = await ctx.service.solanaPayTransaction(order.id, ctx.buyer.wallet!);
    expect(Transaction.from(Buffer.from(r.transaction, 'base64')).feePayer?.toBase58()).toBe(ctx.buyer.wallet);
    expect(r.message).toContain('25 USDC');
  });

  it('Solana Pay 1.2: the answer names the mint\'s token program (Token-2022 or legacy) and the fee payer only when sponsored', async () => {
    const TOKEN_2022 = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
    const LEGACY = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
    const { order } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
    // no port lookup (fakes) and a currency without a configured program: the draft's default, legacy
    const plain = await ctx.service.solanaPayTransaction(order.id, ctx.buyer.wallet!);
    expect(plain.tokenProgram).toBe(LEGACY);
    expect(plain).not.toHaveProperty('feePayer');
    // the escrow says the payment mint is a Token-2022 mint
    const asked: string[] = [];
    Object.assign(ctx.escrow, { tokenProgramOf: async (mint: string) => (asked.push(mint), TOKEN_2022) });
    const t22 = await ctx.service.solanaPayTransaction(order.id, ctx.buyer.wallet!);
    expect(t22.tokenProgram).toBe(TOKEN_2022);
    expect(asked).toEqual([order.mint]);
    // a sponsored fund transaction (issue 26 item 5): its fee payer is the sponsor, which the answer reports
    const sponsor = Keypair.generate().publicKey;
    const build = ctx.escrow.buildFundTransaction.bind(ctx.escrow);
    Object.assign(ctx.escrow, {
      buildFundTransaction: async (terms: Parameters<typeof build>[0]) => {
        const built = await build(terms);
        const tx = Transaction.from(Buffer.from(built.transaction, 'base64'));
        tx.feePayer = sponsor;
        return { ...built, transaction: tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('base64') };
      },
    });
    const sponsored = await ctx.service.solanaPayTransaction(order.id, ctx.buyer.wallet!);
    expect(sponsored.feePayer).toBe(sponsor.toBase58());
    expect(Transaction.from(Buffer.from(sponsored.transaction, 'base64')).feePayer?.equals(sponsor)).toBe(true);
  });

  it('Solana Pay 1.2: a Token-2022 currency adds `token-program` to the link (legacy: none); @solana/pay still reads the link', async () => {
    const TOKEN_2022 = 'TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb';
    const endpoint = (id: string) => `http://127.0.0.1:3000/api/v1/orders/${id}/solana-pay`;
    const legacy = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
    expect(legacy.payment.solana_pay_url).toBe(`solana:${endpoint(legacy.order.id)}`);
    // wallets (and @solana/pay's parseURL) take https links only
    const t22 = setup({ tokenProgram: TOKEN_2022, config: { publicBaseUrl: 'https://bazaar.test' } });
    const { order, payment } = await t22.service.create(t22.buyer, { listingId: t22.listing.id });
    const https = `https://bazaar.test/api/v1/orders/${order.id}/solana-pay`;
    expect(payment.solana_pay_url).toBe(`solana:${https}?token-program=${TOKEN_2022}`);
    const parsed = parseURL(payment.solana_pay_url) as TransactionRequestURL;
    expect(parsed.link.href).toBe(https);
    expect(new URL(payment.solana_pay_url).searchParams.get('token-program')).toBe(TOKEN_2022);
    // the POST answer names it too (from the configured currency when the port has no lookup)
    expect((await t22.service.solanaPayTransaction(order.id, t22.buyer.wallet!)).tokenProgram).toBe(TOKEN_2022);
    expect((await t22.service.refreshPayment(t22.buyer, order.id)).payment.solana_pay_url).toBe(payment.solana_pay_url);
  });

  it('watcher: funding detected -> in_progress; unpaid past expiry -> expired', async () => {
    let now = Date.now();
    ctx = setup({ now: () => new Date(now) });
    const a = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
    const otherListing = ctx.another();
    const b = await ctx.service.create(ctx.buyer, { listingId: otherListing.id });
    ctx.escrow.fund(ctx.service.fundTerms(a.order));
    expect(await ctx.watcher.runOnce()).toMatchObject({ funded: [a.order.id], expired: [] });
    now += (900 + 61) * 1000;
    expect(await ctx.watcher.runOnce()).toMatchObject({ funded: [], expired: [b.order.id] });
    expect((await ctx.repo.get(b.order.id))!.status).toBe('expired');
    expect(ctx.listings.rows.get(ctx.listing.id)!.status).toBe('reserved');
    // the expired order never reserved its listing: nothing to free, and its hold is over
    expect(ctx.listings.rows.get(otherListing.id)!.status).toBe('available');
    expect((await ctx.service.create(ctx.stranger, { listingId: otherListing.id })).order.status).toBe('awaiting_payment');
  });

  it('the listing is held from creation: one open order per listing (409 for the next buyer until it expires), at most 3 unpaid orders per buyer', async () => {
    let now = Date.now();
    ctx = setup({ now: () => new Date(now) });
    const first = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
    const refused = await ctx.service.create(ctx.stranger, { listingId: ctx.listing.id }).catch((e) => e);
    expect(refused).toMatchObject({ slug: 'listing-unavailable', extensions: { listing_status: 'reserved', held_until: expect.any(String) } });
    expect(new Date(refused.extensions.held_until).getTime()).toBe(first.order.paymentExpiresAt.getTime() + 60_000);
    // the same buyer cannot stack orders on it either
    expect(await slug(ctx.service.create(ctx.buyer, { listingId: ctx.listing.id }))).toBe('listing-unavailable');
    // a buyer holds at most 3 unpaid orders at once
    await ctx.service.create(ctx.buyer, { listingId: ctx.another().id });
    await ctx.service.create(ctx.buyer, { listingId: ctx.another().id });
    const fourth = await ctx.service.create(ctx.buyer, { listingId: ctx.another().id }).catch((e) => e);
    expect(fourth).toMatchObject({ slug: 'too-many-unpaid-orders', extensions: { unpaid_orders: 3, limit: 3 } });
    // the hold ends when the order expires unpaid: the next buyer gets it
    now += (900 + 61) * 1000;
    expect((await ctx.watcher.runOnce()).expired).toContain(first.order.id);
    expect((await ctx.service.create(ctx.stranger, { listingId: ctx.listing.id })).order.status).toBe('awaiting_payment');
    expect(ctx.escrow.count('refund')).toBe(0);
  });

  it('50 concurrent orders on one listing: one created, 49 refused before anything is paid', async () => {
    const buyers = Array.from({ length: 50 }, () => user(randomUUID(), Keypair.generate().publicKey.toBase58()));
    const res = await Promise.allSettled(buyers.map((b) => ctx.service.create(b, { listingId: ctx.listing.id })));
    expect(res.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const refused = res.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason.slug);
    expect(refused).toEqual(Array(49).fill('listing-unavailable'));
    expect(ctx.repo.orders.size).toBe(1);
  });

  it('a retry with the same Idempotency-Key finds the order its first attempt created, with a fresh fund transaction', async () => {
    const key = randomUUID();
    const first = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id, idempotencyKey: key });
    const again = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id, idempotencyKey: key });
    expect(again.order.id).toBe(first.order.id);
    expect(again.payment).toMatchObject({ transaction: expect.any(String), solana_pay_url: first.payment.solana_pay_url });
    expect(ctx.repo.orders.size).toBe(1);
    // another buyer's key of the same value is another order (keys are per buyer)
    expect(await slug(ctx.service.create(ctx.stranger, { listingId: ctx.listing.id, idempotencyKey: key }))).toBe('listing-unavailable');
    // once paid, the retry returns the order without a fund transaction
    ctx.escrow.fund(ctx.service.fundTerms(first.order));
    await ctx.watcher.runOnce();
    const paid = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id, idempotencyKey: key });
    expect(paid).toMatchObject({ order: { id: first.order.id, status: 'in_progress' }, payment: null });
  });

  it('fund transactions are issued only while the order awaits payment (Solana Pay, refresh)', async () => {
    const { order } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
    const refreshed = await ctx.service.refreshPayment(ctx.buyer, order.id);
    expect(refreshed.payment.expires_at.getTime()).toBeLessThanOrEqual(order.paymentExpiresAt.getTime());
    expect(await slug(ctx.service.refreshPayment(ctx.seller, order.id))).toBe('forbidden');
    expect(await slug(ctx.service.refreshPayment(ctx.stranger, order.id))).toBe('not-found');
    ctx.escrow.fund(ctx.service.fundTerms(order));
    await ctx.watcher.runOnce();
    const issued = ctx.escrow.issued;
    expect(await slug(ctx.service.refreshPayment(ctx.buyer, order.id))).toBe('invalid-state-transition');
    expect(await slug(ctx.service.solanaPayTransaction(order.id, ctx.buyer.wallet!))).toBe('invalid-state-transition');
    expect(ctx.escrow.issued).toBe(issued);
  });

  it('a closed order funded again with a still-valid fund transaction: the watcher refunds the escrow, the order stays closed', async () => {
    const o = await funded(ctx);
    await ctx.service.refund(ctx.seller, o.id);
    expect(ctx.escrow.balances.get(ctx.buyer.wallet!)).toBe(25_000_000n);
    // the buyer replays a fund transaction she was issued earlier (its blockhash still valid)
    ctx.escrow.fund(ctx.service.fundTerms(o));
    expect((await ctx.watcher.runOnce()).strayRefunds).toEqual([o.id]);
    expect(await ctx.escrow.fetchOrder(o.id)).toBeNull();
    expect(ctx.escrow.balances.get(ctx.buyer.wallet!)).toBe(50_000_000n);
    expect((await ctx.repo.get(o.id))!.status).toBe('refunded');
    expect((await ctx.repo.listIntents(o.id)).map((i) => `${i.action}:${i.status}`)).toEqual(['refund:confirmed', 'refund:confirmed']);
    expect((await ctx.watcher.runOnce()).strayRefunds).toEqual([]);
  });

  it('a stray refund whose confirmation was lost (it landed): the next pass confirms and reports it, nothing is sent twice', async () => {
    const o = await funded(ctx);
    await ctx.service.refund(ctx.seller, o.id);
    ctx.escrow.fund(ctx.service.fundTerms(o));
    ctx.escrow.loseConfirmations = true;
    expect((await ctx.watcher.runOnce()).strayRefunds).toEqual([]);
    ctx.escrow.loseConfirmations = false;
    expect(await ctx.escrow.fetchOrder(o.id)).toBeNull(); // it landed: the escrow is gone already
    expect((await ctx.repo.listIntents(o.id)).map((i) => `${i.action}:${i.status}`)).toEqual(['refund:confirmed', 'refund:sent']);
    expect((await ctx.watcher.runOnce()).strayRefunds).toEqual([o.id]);
    expect((await ctx.repo.listIntents(o.id)).map((i) => `${i.action}:${i.status}`)).toEqual(['refund:confirmed', 'refund:confirmed']);
    expect(ctx.escrow.count('refund', o.id)).toBe(2);
    expect(ctx.escrow.balances.get(ctx.buyer.wallet!)).toBe(50_000_000n);
    expect((await ctx.repo.get(o.id))!.status).toBe('refunded');
    expect((await ctx.watcher.runOnce()).strayRefunds).toEqual([]);
  });

  it('targeted pass (subscription): a notified unpaid order is checked with the notified account, a closed one funded again is refunded, unknown ids are ignored', async () => {
    const { order } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
    ctx.escrow.fund(ctx.service.fundTerms(order));
    const notified = (await ctx.escrow.fetchOrder(order.id))!;
    ctx.watcher.noteOrder(randomUUID(), null); // another service's order on the same program
    ctx.watcher.noteOrder(order.id, notified);
    expect(await ctx.watcher.runTargeted()).toEqual({ funded: [order.id], expired: [], strayRefunds: [] });
    expect((await ctx.repo.get(order.id))!.status).toBe('in_progress');
    expect(await ctx.watcher.runTargeted()).toEqual({ funded: [], expired: [], strayRefunds: [] }); // drained

    await ctx.service.refund(ctx.seller, order.id);
    ctx.escrow.fund(ctx.service.fundTerms(order)); // a fund transaction issued earlier lands late
    ctx.watcher.noteOrder(order.id, await ctx.escrow.fetchOrder(order.id));
    expect((await ctx.watcher.runTargeted()).strayRefunds).toEqual([order.id]);
    expect(await ctx.escrow.fetchOrder(order.id)).toBeNull();
  });

  it('subscription lifecycle: notifications run a pass at once; live -> full pass every fallback interval, down -> every interval; stop() closes it', async () => {
    vi.useFakeTimers();
    try {
      let handlers: OrderWatchHandlers | null = null;
      const watch = { state: 'connecting' as SubscriptionState, start: vi.fn(), stop: vi.fn(async () => undefined) };
      const watcher = new PaymentWatcher({
        service: ctx.service,
        repo: ctx.repo,
        escrow: { watchOrders: (h) => ((handlers = h), watch) },
        fallbackIntervalMs: 10_000,
      });
      const full = vi.spyOn(watcher, 'runOnce');
      watcher.start(1_000);
      expect(watch.start).toHaveBeenCalledTimes(1);
      await vi.advanceTimersByTimeAsync(3_000);
      expect(full).toHaveBeenCalledTimes(3); // not live yet: every interval
      handlers!.onSubscribed!();
      await vi.advanceTimersByTimeAsync(0);
      expect(full).toHaveBeenCalledTimes(4); // the catch-up pass
      await vi.advanceTimersByTimeAsync(9_000);
      expect(full).toHaveBeenCalledTimes(4);
      await vi.advanceTimersByTimeAsync(1_000);
      expect(full).toHaveBeenCalledTimes(5); // every fallback interval while live

      const { order } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
      ctx.escrow.fund(ctx.service.fundTerms(order));
      handlers!.onOrder(order.id, 1, await ctx.escrow.fetchOrder(order.id));
      await vi.advanceTimersByTimeAsync(0);
      expect((await ctx.repo.get(order.id))!.status).toBe('in_progress'); // no timer needed
      expect(full).toHaveBeenCalledTimes(5);

      handlers!.onDown!('socket closed');
      await vi.advanceTimersByTimeAsync(0);
      expect(full).toHaveBeenCalledTimes(6);
      await vi.advanceTimersByTimeAsync(2_000);
      expect(full).toHaveBeenCalledTimes(8); // back to every interval

      await watcher.stop();
      expect(watch.stop).toHaveBeenCalledTimes(1);
      await vi.advanceTimersByTimeAsync(30_000);
      expect(full).toHaveBeenCalledTimes(8);
    } finally {
      vi.useRealTimers();
    }
  });

  it('every closed order whose fund transaction may still land is checked, however many there are (pages of the batch size)', async () => {
    const a = await funded(ctx);
    await ctx.service.refund(ctx.seller, a.id);
    const { order: b } = await ctx.service.create(ctx.buyer, { listingId: ctx.another().id });
    ctx.escrow.fund(ctx.service.fundTerms(b));
    await ctx.watcher.runOnce();
    await ctx.service.refund(ctx.seller, b.id);
    // the closed order that comes second in the repository's order is funded again
    const second = [a, (await ctx.repo.get(b.id))!].sort((x, y) => (x.id < y.id ? -1 : 1))[1]!;
    ctx.escrow.fund(ctx.service.fundTerms(second));
    const oneAtATime = new PaymentWatcher({ service: ctx.service, repo: ctx.repo, batchSize: 1 });
    expect((await oneAtATime.runOnce()).strayRefunds).toEqual([second.id]);
    expect(await ctx.escrow.fetchOrder(second.id)).toBeNull();
  });

  it('a funded order whose listing was taken meanwhile is refunded automatically', async () => {
    const a = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
    ctx.listings.rows.get(ctx.listing.id)!.status = 'reserved'; // e.g. reserved by an operator meanwhile
    ctx.escrow.fund(ctx.service.fundTerms(a.order));
    await ctx.watcher.runOnce();
    expect((await ctx.repo.get(a.order.id))!.status).toBe('refunded');
    expect(ctx.escrow.balances.get(ctx.buyer.wallet!)).toBe(25_000_000n);
    expect(ctx.listings.rows.get(ctx.listing.id)!.status).toBe('reserved');
  });

  it('happy path: deliver then confirm releases once; seller paid price - fee; listing sold', async () => {
    const o = await delivered(ctx);
    expect(o.status).toBe('delivered');
    expect(o.autoReleaseAt!.getTime()).toBe((ctx.escrow.now + 3600) * 1000);
    const done = await ctx.service.confirm(ctx.buyer, o.id);
    expect(done.status).toBe('completed');
    expect(ctx.escrow.balances.get(ctx.seller.wallet!)).toBe(25_000_000n - 625_000n);
    expect(ctx.listings.rows.get(ctx.listing.id)!.status).toBe('sold');
    const intents = await ctx.repo.listIntents(o.id);
    expect(intents.map((i) => [i.action, i.status])).toEqual([
      ['mark_delivered', 'confirmed'],
      ['release', 'confirmed'],
    ]);
  });

  it('forbidden callers get 403, strangers 404, illegal transitions 409', async () => {
    const o = await funded(ctx);
    expect(await slug(ctx.service.deliver(ctx.buyer, o.id))).toBe('forbidden');
    expect(await slug(ctx.service.deliver(ctx.stranger, o.id))).toBe('not-found');
    expect(await slug(ctx.service.get(ctx.stranger, o.id))).toBe('not-found');
    expect(await slug(ctx.service.deliver(ctx.admin, o.id))).toBe('forbidden');
    expect(await slug(ctx.service.confirm(ctx.seller, o.id))).toBe('forbidden');
    expect(await slug(ctx.service.resolve(ctx.buyer, o.id, 5000))).toBe('forbidden');
    expect(await slug(ctx.service.resolve(ctx.admin, o.id, 5000))).toBe('invalid-state-transition');
    expect(await slug(ctx.service.refund(ctx.buyer, o.id))).toBe('forbidden'); // deadline not passed
    await ctx.service.deliver(ctx.seller, o.id);
    expect(await slug(ctx.service.refund(ctx.buyer, o.id))).toBe('forbidden'); // delivered on time: not the buyer's alone
    await ctx.service.confirm(ctx.buyer, o.id);
    expect(await slug(ctx.service.dispute(ctx.buyer, o.id, 'this is too late now'))).toBe('invalid-state-transition');
    expect(await slug(ctx.service.deliver(ctx.seller, o.id))).toBe('invalid-state-transition');
    expect(await slug(ctx.service.refund(ctx.seller, o.id))).toBe('invalid-state-transition');
    expect(ctx.escrow.sent.map((s) => s.ix)).toEqual(['mark_delivered', 'release']);
  });

  it('early release (issue 22 item 4): the buyer may confirm before delivery; release pays the seller as after one', async () => {
    const o = await funded(ctx);
    expect((await ctx.service.presentOne(ctx.buyer, o)).allowed_actions).toContain('confirm');
    expect((await ctx.service.presentOne(ctx.seller, o)).allowed_actions).not.toContain('confirm');
    expect(await slug(ctx.service.confirm(ctx.seller, o.id))).toBe('forbidden');
    const done = await ctx.service.confirm(ctx.buyer, o.id);
    expect(done).toMatchObject({ status: 'completed', deliveredAt: null });
    expect(ctx.escrow.sent.map((s) => s.ix)).toEqual(['release']);
    expect(ctx.escrow.balances.get(ctx.seller.wallet!)).toBe(25_000_000n - 625_000n);
    expect(ctx.listings.rows.get(ctx.listing.id)!.status).toBe(listingTransitions.find((l) => l.event === 'order_completed')!.to);
  });

  it('repeats are harmless: a confirmed action returns the current order and sends nothing', async () => {
    const o = await delivered(ctx);
    expect((await ctx.service.deliver(ctx.seller, o.id)).status).toBe('delivered');
    await ctx.service.confirm(ctx.buyer, o.id);
    expect((await ctx.service.confirm(ctx.buyer, o.id)).status).toBe('completed');
    expect(ctx.escrow.count('mark_delivered')).toBe(1);
    expect(ctx.escrow.count('release')).toBe(1);
  });

  it('20 concurrent confirms: exactly one release transaction', async () => {
    const o = await delivered(ctx);
    // the first release stays in flight until all 20 calls are under way (they queue behind it)
    const release = ctx.escrow.hold();
    const pending = Promise.allSettled(Array.from({ length: 20 }, () => ctx.service.confirm(ctx.buyer, o.id)));
    await ctx.escrow.held(1);
    await new Promise((r) => setImmediate(r)); // the other 19 calls run up to the per-order lock
    release();
    const results = await pending;
    expect(results.every((r) => r.status === 'fulfilled' && r.value.status === 'completed')).toBe(true);
    expect(ctx.escrow.count('release', o.id)).toBe(1);
  });

  it('dispute then admin resolve with a split', async () => {
    const o = await delivered(ctx);
    const d = await ctx.service.dispute(ctx.buyer, o.id, 'The logo is not what we agreed');
    expect(d).toMatchObject({ status: 'disputed', disputeReason: 'The logo is not what we agreed', disputedBy: 'buyer' });
    expect(await slug(ctx.service.confirm(ctx.buyer, o.id))).toBe('invalid-state-transition');
    const r = await ctx.service.resolve(ctx.admin, o.id, 4000);
    expect(r).toMatchObject({ status: 'resolved', buyerBps: 4000 });
    expect(ctx.escrow.balances.get(ctx.buyer.wallet!)).toBe(10_000_000n);
    expect(ctx.escrow.balances.get(ctx.seller.wallet!)).toBe(15_000_000n - 375_000n);
    expect(ctx.listings.rows.get(ctx.listing.id)!.status).toBe('sold');
  });

  it('auto-release: the crank claims once the review window passed (chain clock)', async () => {
    const o = await delivered(ctx);
    expect((await ctx.crank.runOnce()).claimed).toEqual([]);
    ctx.escrow.advance(3601);
    expect((await ctx.crank.runOnce()).claimed).toEqual([o.id]);
    expect((await ctx.repo.get(o.id))!.status).toBe('completed');
    expect(ctx.escrow.count('claim')).toBe(1);
    // disputing after the window is refused
    const ctx2 = setup();
    const o2 = await delivered(ctx2);
    ctx2.escrow.advance(3601);
    expect(await slug(ctx2.service.dispute(ctx2.buyer, o2.id, 'too late for this one'))).toBe('invalid-state-transition');
  });

  it('the buyer reclaims after a missed delivery deadline; the listing is available again', async () => {
    const o = await funded(ctx);
    ctx.escrow.advance(3 * 86_400 + 1);
    const r = await ctx.service.refund(ctx.buyer, o.id);
    expect(r.status).toBe('refunded');
    expect(ctx.escrow.balances.get(ctx.buyer.wallet!)).toBe(25_000_000n);
    expect(ctx.listings.rows.get(ctx.listing.id)!.status).toBe('available');
  });

  it('crash after send, before the DB write: the reconciler converges to completed without a second release', async () => {
    const o = await delivered(ctx);
    ctx.crash.afterSend = () => {
      throw new Error('simulated crash');
    };
    await expect(ctx.service.confirm(ctx.buyer, o.id)).rejects.toThrow('simulated crash');
    ctx.crash.afterSend = undefined;
    expect((await ctx.repo.get(o.id))!.status).toBe('delivered');
    const open = await ctx.repo.openIntentFor(o.id);
    expect(open).toMatchObject({ action: 'release', status: 'sent' });
    const out = await ctx.service.reconciler.runOnce();
    expect(Object.values(out)).toEqual(['confirmed']);
    const after = (await ctx.repo.get(o.id))!;
    expect(after.status).toBe('completed');
    expect(after.lastSignature).toBe(open!.signature);
    expect(ctx.listings.rows.get(ctx.listing.id)!.status).toBe('sold');
    expect((await ctx.service.confirm(ctx.buyer, o.id)).status).toBe('completed');
    expect(ctx.escrow.count('release')).toBe(1);
  });

  it('a crash is also healed inline by the next call on that order', async () => {
    const o = await delivered(ctx);
    ctx.crash.afterSend = () => {
      throw new Error('simulated crash');
    };
    await expect(ctx.service.confirm(ctx.buyer, o.id)).rejects.toThrow();
    ctx.crash.afterSend = undefined;
    expect((await ctx.service.confirm(ctx.buyer, o.id)).status).toBe('completed');
    expect(ctx.escrow.count('release')).toBe(1);
  });

  it('RPC outage before signing: the unsent intent is settled at once, the retry goes through (no 2-minute wait)', async () => {
    // behaviour changed on purpose (issue 9 item 2): an intent with no signature never reached the chain
    const o = await delivered(ctx);
    ctx.escrow.unavailable = true;
    expect(await slug(ctx.service.confirm(ctx.buyer, o.id))).toBe('chain-unavailable');
    ctx.escrow.unavailable = false;
    // nothing was signed: settled at once, nothing left open to wait for
    expect(await ctx.repo.openIntentFor(o.id)).toBeNull();
    expect((await ctx.service.confirm(ctx.buyer, o.id)).status).toBe('completed');
    expect((await ctx.repo.listIntents(o.id)).map((i) => `${i.action}:${i.status}`)).toEqual([
      'mark_delivered:confirmed',
      'release:failed',
      'release:confirmed',
    ]);
    expect(ctx.escrow.count('release')).toBe(1);
  });

  it('a signed transaction lost on the way: 409 while its blockhash can still land, settled the moment it expired', async () => {
    const o = await delivered(ctx);
    ctx.escrow.dropSends = true;
    expect(await slug(ctx.service.confirm(ctx.buyer, o.id))).toBe('chain-unavailable');
    ctx.escrow.dropSends = false;
    const open = (await ctx.repo.openIntentFor(o.id))!;
    expect(open).toMatchObject({ status: 'sent', lastValidBlockHeight: ctx.escrow.height + 150 });
    // it may still land: never sent twice
    expect(await slug(ctx.service.confirm(ctx.buyer, o.id))).toBe('conflict');
    expect(await ctx.service.reconciler.runOnce()).toEqual({ [open.id]: 'open' });
    // one block past its last valid height it can never land: the retry goes through at once
    ctx.escrow.advanceBlocks(151);
    expect((await ctx.service.confirm(ctx.buyer, o.id)).status).toBe('completed');
    expect((await ctx.repo.listIntents(o.id)).find((i) => i.id === open.id)).toMatchObject({ status: 'failed', error: expect.stringMatching(/expired/) });
    expect(ctx.escrow.count('release')).toBe(1);
  });

  it('an unsent intent of another process is settled, and that process then sends nothing', async () => {
    const o = await delivered(ctx);
    // process B recorded its intent and is about to sign when process A's reconciler settles it
    const intent = (await ctx.repo.beginIntent(o.id, 'delivered', 'release', null))!;
    expect(await ctx.service.reconciler.runOnce()).toEqual({ [intent.id]: 'failed' });
    expect(await ctx.repo.markIntentSent(intent.id, 'late-signature')).toBe(false);
    expect((await ctx.service.confirm(ctx.buyer, o.id)).status).toBe('completed');
    expect(ctx.escrow.count('release')).toBe(1);
  });

  it('a rejected transaction marks the intent failed and leaves the order as it was; a vanished escrow is flagged once', async () => {
    const o = await funded(ctx);
    ctx.escrow.accounts.delete(o.id); // the chain lost the account (e.g. wrong cluster)
    expect(await slug(ctx.service.deliver(ctx.seller, o.id))).toBe('chain-transaction-failed');
    expect((await ctx.repo.get(o.id))!.status).toBe('in_progress');
    expect((await ctx.repo.listIntents(o.id)).map((i) => i.status)).toEqual(['failed']);
    expect((await ctx.repo.get(o.id))!.attention).toMatchObject({ reason: 'escrow-vanished', detail: expect.stringContaining(o.escrowAddress) });
  });

  it('drift: a party acted on the escrow with its own wallet; the order catches up', async () => {
    const o = await funded(ctx);
    Object.assign(ctx.escrow.accounts.get(o.id)!, { state: 'delivered', deliveredAt: ctx.escrow.now });
    await ctx.service.reconciler.runOnce();
    expect((await ctx.repo.get(o.id))!).toMatchObject({ status: 'delivered', autoReleaseAt: new Date((ctx.escrow.now + 3600) * 1000) });
    // a dispute opened directly: the service's own call fails on chain, then the order catches up (409)
    Object.assign(ctx.escrow.accounts.get(o.id)!, { state: 'disputed', disputedAt: ctx.escrow.now });
    expect(await slug(ctx.service.confirm(ctx.buyer, o.id))).toBe('invalid-state-transition');
    expect((await ctx.repo.get(o.id))!.status).toBe('disputed');
  });

  it('drift: the seller refunded with its own wallet; the reconciler finds the closing refund', async () => {
    const o = await funded(ctx);
    await ctx.escrow.refund(o.id); // not through the service
    await ctx.service.reconciler.runOnce();
    expect((await ctx.repo.get(o.id))!).toMatchObject({ status: 'refunded' });
    expect((await ctx.repo.listIntents(o.id)).map((i) => `${i.action}:${i.status}`)).toEqual(['refund:confirmed']);
    expect(ctx.listings.rows.get(ctx.listing.id)!.status).toBe('available');
  });

  it('crash, then another party closed the escrow: our intent is superseded, the order takes the real outcome', async () => {
    const o = await delivered(ctx);
    ctx.escrow.unavailable = true;
    expect(await slug(ctx.service.confirm(ctx.buyer, o.id))).toBe('chain-unavailable'); // our release never left
    ctx.escrow.unavailable = false;
    await ctx.escrow.refund(o.id); // the seller refunds directly meanwhile
    await ctx.service.reconciler.runOnce();
    expect((await ctx.repo.get(o.id))!.status).toBe('refunded');
    expect((await ctx.repo.listIntents(o.id)).map((i) => `${i.action}:${i.status}`)).toEqual([
      'mark_delivered:confirmed',
      'release:failed',
      'refund:confirmed',
    ]);
    expect(ctx.escrow.count('release')).toBe(0);
  });

  it('integrity check: every order against its escrow account; each kind of drift is reported', async () => {
    const check = () => checkEscrowIntegrity({ repo: ctx.repo, escrow: ctx.escrow }, 2);
    const unpaid = await ctx.service.create(ctx.buyer, { listingId: ctx.another().id });
    const active = await delivered(ctx);
    const closedCtx = await ctx.service.create(ctx.buyer, { listingId: ctx.another().id });
    ctx.escrow.fund(ctx.service.fundTerms(closedCtx.order));
    await ctx.watcher.runOnce();
    await ctx.service.refund(ctx.seller, closedCtx.order.id);
    expect(await check()).toEqual({ checked: 3, mismatches: [] });
    // a payment not picked up yet, an account in another state, an escrow for a closed order, vanished
    ctx.escrow.fund(ctx.service.fundTerms(unpaid.order));
    ctx.escrow.fund(ctx.service.fundTerms(closedCtx.order));
    Object.assign(ctx.escrow.accounts.get(active.id)!, { state: 'disputed' });
    const report = await check();
    expect(report.mismatches.map((m) => [m.orderId, m.status, m.found.split(' ').slice(0, 4).join(' ')]).sort()).toEqual(
      [
        [unpaid.order.id, 'awaiting_payment', 'account in state funded'],
        [active.id, 'delivered', 'account in state disputed'],
        [closedCtx.order.id, 'refunded', 'account in state funded'],
      ].sort(),
    );
    ctx.escrow.accounts.delete(active.id);
    expect((await check()).mismatches.find((m) => m.orderId === active.id)).toMatchObject({ expected: 'account in state delivered', found: 'no escrow account' });
  });

  it('lists my orders by role and status with cursor pagination', async () => {
    ctx = setup({ config: { maxUnpaidOrdersPerBuyer: 5 } });
    for (let i = 0; i < 5; i++) await ctx.service.create(ctx.buyer, { listingId: ctx.another().id });
    const p1 = await ctx.service.list(ctx.buyer, { limit: 2 });
    expect(p1.data).toHaveLength(2);
    const p2 = await ctx.service.list(ctx.buyer, { limit: 2, cursor: p1.nextCursor });
    const p3 = await ctx.service.list(ctx.buyer, { limit: 2, cursor: p2.nextCursor });
    expect(p3.nextCursor).toBeNull();
    expect(new Set([...p1.data, ...p2.data, ...p3.data].map((o) => o.id)).size).toBe(5);
    expect((await ctx.service.list(ctx.seller, { role: 'seller' })).data).toHaveLength(5);
    expect((await ctx.service.list(ctx.seller, { role: 'buyer' })).data).toHaveLength(0);
    expect((await ctx.service.list(ctx.stranger, {})).data).toHaveLength(0);
    expect(await slug(ctx.service.list(ctx.buyer, { limit: 2, cursor: p1.nextCursor, status: 'expired' }))).toBe('validation-error');
  });
});

describe('the lifecycle table, row by row (contract orderTransitions): service and allowed_actions agree with it', () => {
  const rows = orderTransitions as readonly OrderTransition[];
  const actors = ['buyer', 'seller', 'admin'] as const;
  type Actor = (typeof actors)[number];
  // the rows a party takes through an order route on an existing escrow (pay is signed by the buyer's wallet: tested above;
  // fund of a scheduled milestone creates no escrow action: tests/orders.milestones.test.ts)
  const routed = rows.filter((t) => t.from && t.route && t.action !== 'pay' && t.action !== 'fund');

  /**
   * an order of a fresh context in `status`, reached along the table's own rows; `late`: the seller
   * missed delivery_deadline (the chain clock is past it before the delivery or dispute)
   */
  async function inStatus(ctx: Ctx, status: OrderTransition['from'], late = false): Promise<OrderRecord> {
    const o = await funded(ctx);
    if (late) ctx.escrow.now = o.deliveryDeadline + 1;
    if (status === 'delivered') return ctx.service.deliver(ctx.seller, o.id);
    if (status === 'disputed') return ctx.service.dispute(ctx.buyer, o.id, 'not what we agreed on');
    expect(o.status).toBe(status);
    return o;
  }
  function take(ctx: Ctx, role: Actor, action: OrderTransition['action'], id: string): Promise<OrderRecord> {
    const p = ctx[role];
    switch (action) {
      case 'deliver':
        return ctx.service.deliver(p, id);
      case 'confirm':
        return ctx.service.confirm(p, id);
      case 'dispute':
        return ctx.service.dispute(p, id, 'the work is not done');
      case 'refund':
        return ctx.service.refund(p, id);
      case 'resolve':
        return ctx.service.resolve(p, id, 5000);
      case 'request_revision':
        return ctx.service.requestRevision(p, id, 'the logo must be blue');
      case 'propose_extension':
        return ctx.repo.get(id).then((o) => ctx.service.proposeExtension(p, id, o!.deliveryDeadline + 86_400, 'the font licence is late'));
      case 'accept_extension':
        return ctx.repo.get(id).then((o) => ctx.service.acceptExtension(p, id, o!.extension?.newDeadline ?? o!.deliveryDeadline + 86_400));
      case 'decline_extension':
        return ctx.service.declineExtension(p, id);
      case 'propose_settlement':
        return ctx.service.proposeSettlement(p, id, 2500);
      case 'accept_settlement':
        return ctx.repo.get(id).then((o) => ctx.service.acceptSettlement(p, id, o!.settlement?.buyerBps ?? 2500));
      case 'withdraw_settlement':
        return ctx.service.withdrawSettlement(p, id);
      default:
        throw new Error(`no route for ${action}`);
    }
  }
  /**
   * Meet a row's requirement (the contract's `requires`, issue 24) for `role`: a revision left, the seller's
   * pending extension, the other party's (accept) or the role's own (withdraw; the buyer's for the admin)
   * pending settlement proposal.
   */
  async function meetRequirement(ctx: Ctx, row: OrderTransition, role: Actor, o: OrderRecord): Promise<void> {
    switch (row.requires) {
      case 'revision_left':
        ctx.repo.orders.get(o.id)!.revisionsIncluded = 1;
        return;
      case 'extension_pending':
        await ctx.service.proposeExtension(ctx.seller, o.id, o.deliveryDeadline + 86_400, null);
        return;
      case 'settlement_by_other':
        await ctx.service.proposeSettlement(role === 'seller' ? ctx.buyer : ctx.seller, o.id, 2500);
        return;
      case 'settlement_by_self':
        await ctx.service.proposeSettlement(role === 'seller' ? ctx.seller : ctx.buyer, o.id, 2500);
        return;
    }
  }
  const allowed = async (ctx: Ctx, role: Actor, id: string) => (await ctx.service.presentOne(ctx[role], (await ctx.repo.get(id))!)).allowed_actions;
  /** move the chain clock to the side of the row's timing rule that allows it */
  const meetTiming = (ctx: Ctx, o: OrderRecord, t: OrderTransition['timing'], role: Actor) => {
    if (!t || (t.only && t.only !== role) || t.allowed === 'before') return;
    const at = t.at === 'delivery_deadline' ? o.deliveryDeadline : Math.ceil(o.autoReleaseAt!.getTime() / 1000);
    ctx.escrow.now = at + 1;
  };

  for (const row of routed) {
    for (const role of actors) {
      const may = row.by.includes(role);
      it(`${row.from} -${row.action}-> ${row.to}: the ${role} ${may ? 'may' : 'may not (403)'}`, async () => {
        const ctx = setup();
        const o = await inStatus(ctx, row.from, !!row.timing?.late);
        meetTiming(ctx, o, row.timing, role);
        await meetRequirement(ctx, row, role, o);
        const listingBefore = ctx.listings.rows.get(ctx.listing.id)!.status;
        const sent = ctx.escrow.sent.length;
        expect(await allowed(ctx, role, o.id)).toSatisfy((a: string[]) => a.includes(row.action) === may);
        if (!may) {
          expect(await slug(take(ctx, role, row.action, o.id))).toBe('forbidden');
          expect(ctx.escrow.sent.length).toBe(sent);
          return;
        }
        const after = await take(ctx, role, row.action, o.id);
        expect(after.status).toBe(row.to);
        expect(ctx.escrow.sent.slice(sent).map((s) => s.ix)).toEqual(row.instruction ? [row.instruction] : []);
        const listingAfter = row.listing ? listingTransitions.find((l) => l.event === row.listing)!.to : listingBefore;
        expect(ctx.listings.rows.get(ctx.listing.id)!.status).toBe(listingAfter);
      });
    }
  }

  for (const row of routed.filter((t) => t.timing)) {
    const t = row.timing!;
    const role = (t.only ?? row.by.find((b) => b !== 'system')) as Actor;
    it(`${row.from} -${row.action}-> ${row.to}: the ${role} is refused (${t.refusal}) on the wrong side of ${t.at} on the ${t.clock} clock, and allowed_actions agrees`, async () => {
      const ctx = setup();
      const o = await inStatus(ctx, row.from, !!t.late);
      await meetRequirement(ctx, row, role, o);
      expect(t.clock).toBe('chain'); // the fakes' chain clock runs apart from the service clock
      const at = t.at === 'delivery_deadline' ? o.deliveryDeadline : Math.ceil(o.autoReleaseAt!.getTime() / 1000);
      ctx.escrow.now = t.allowed === 'before' ? at + 1 : at; // 'after' refuses at the instant itself
      expect(await allowed(ctx, role, o.id)).not.toContain(row.action);
      expect(await slug(take(ctx, role, row.action, o.id))).toBe(t.refusal);
      expect((await ctx.repo.get(o.id))!.status).toBe(row.from);
    });
  }

  describe('deadline rule (issue 20 item 11): a seller who missed delivery_deadline cannot lock the buyer out', () => {
    const refundable = async (ctx: Ctx, id: string) => (await allowed(ctx, 'buyer', id)).includes('refund');

    it('a late delivery: the buyer refunds during its review window, not from auto_release_at on', async () => {
      const ctx = setup();
      const o = await inStatus(ctx, 'delivered', true);
      expect(await refundable(ctx, o.id)).toBe(true);
      const autoRelease = Math.ceil(o.autoReleaseAt!.getTime() / 1000);
      ctx.escrow.now = autoRelease;
      expect(await refundable(ctx, o.id)).toBe(false);
      expect(await slug(ctx.service.refund(ctx.buyer, o.id))).toBe('forbidden');
      ctx.escrow.now = autoRelease - 1;
      const sent = ctx.escrow.sent.length;
      expect((await ctx.service.refund(ctx.buyer, o.id)).status).toBe('refunded');
      expect(ctx.escrow.sent.slice(sent).map((x) => x.ix)).toEqual(['refund']);
    });

    it('a dispute the seller opened does not stop the clock: the buyer refunds once the deadline has passed', async () => {
      const ctx = setup();
      const o = await funded(ctx);
      await ctx.service.dispute(ctx.seller, o.id, 'the buyer never sent the brief');
      ctx.escrow.now = o.deliveryDeadline;
      expect(await refundable(ctx, o.id)).toBe(false);
      expect(await slug(ctx.service.refund(ctx.buyer, o.id))).toBe('forbidden');
      ctx.escrow.now = o.deliveryDeadline + 1;
      expect(await refundable(ctx, o.id)).toBe(true);
      expect((await ctx.service.refund(ctx.buyer, o.id)).status).toBe('refunded');
    });

    it('delivered on time: past the deadline the buyer confirms or disputes, she does not refund alone', async () => {
      const ctx = setup();
      const paid = await funded(ctx);
      ctx.escrow.now = paid.deliveryDeadline; // the last second on time
      const o = await ctx.service.deliver(ctx.seller, paid.id);
      ctx.escrow.now = o.deliveryDeadline + 1;
      expect(await allowed(ctx, 'buyer', o.id)).toEqual(['confirm', 'dispute', 'propose_settlement']);
      expect(await slug(ctx.service.refund(ctx.buyer, o.id))).toBe('forbidden');
      await ctx.service.dispute(ctx.buyer, o.id, 'not what we agreed on');
      expect(await refundable(ctx, o.id)).toBe(false);
      expect(await slug(ctx.service.refund(ctx.buyer, o.id))).toBe('forbidden');
    });
  });

  it('allowed_actions reads the chain clock, not the server clock: past auto_release_at on chain the buyer no longer sees dispute', async () => {
    const ctx = setup({ now: () => new Date(1_700_000_000_000) }); // the server clock far behind the chain
    const o = await inStatus(ctx, 'delivered');
    expect(await allowed(ctx, 'buyer', o.id)).toEqual(['confirm', 'dispute', 'propose_settlement']);
    ctx.escrow.advance(3600);
    expect(await allowed(ctx, 'buyer', o.id)).toEqual(['confirm', 'propose_settlement']);
    expect(await slug(ctx.service.dispute(ctx.buyer, o.id, 'the work is not done'))).toBe('invalid-state-transition');
  });
});

describe('holds need a buyer who can pay (the balance rule, on fakes)', () => {
  it('wrapped SOL (the amount paid in lamports): each unpaid order of the wallet adds its fee + rent and its amount', async () => {
    const ctx = setup();
    const feeAndRent = 6_000n;
    ctx.escrow.fundingNeeds = async (t) => ({ lamports: feeAndRent + t.amount, amountInLamports: t.amount, lamportsBalance: 60_000_000n, tokenBalance: null });
    await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
    await ctx.service.create(ctx.buyer, { listingId: ctx.another().id });
    const third = await ctx.service.create(ctx.buyer, { listingId: ctx.another().id }).catch((e) => e);
    // 3 x (25 000 000 + 6 000) > 60 000 000
    expect(third).toMatchObject({
      slug: 'insufficient-funds',
      extensions: { balance: 'sol', wallet: ctx.buyer.wallet, required_base_units: String(3n * (25_000_000n + feeAndRent)), available_base_units: '60000000' },
    });
    expect((await ctx.repo.list({ userId: ctx.buyer.userId!, limit: 10 })).length).toBe(2);
  });

  it('the check runs before anything is held: an RPC outage answers 503 and holds nothing; a held listing is refused without a balance read', async () => {
    const ctx = setup();
    let reads = 0;
    ctx.escrow.fundingNeeds = async () => {
      reads++;
      throw new DomainError('chain-unavailable', 'rpc down');
    };
    expect(await slug(ctx.service.create(ctx.buyer, { listingId: ctx.listing.id }))).toBe('chain-unavailable');
    expect(await ctx.repo.list({ userId: ctx.buyer.userId!, limit: 10 })).toEqual([]);
    ctx.escrow.fundingNeeds = async () => ({ lamports: 1n, amountInLamports: 0n, lamportsBalance: 1n, tokenBalance: 25_000_000n });
    await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
    ctx.listings.rows.get(ctx.listing.id)!.heldUntil = new Date(Date.now() + 60_000);
    reads = 0;
    ctx.escrow.fundingNeeds = async () => {
      reads++;
      return { lamports: 1n, amountInLamports: 0n, lamportsBalance: 0n, tokenBalance: 0n };
    };
    expect(await slug(ctx.service.create(ctx.stranger, { listingId: ctx.listing.id }))).toBe('listing-unavailable');
    expect(reads).toBe(0);
  });

  it('the payment window: full, or the short one when the listing is contested or the network holds half its limit', () => {
    const { service } = setup({ config: { paymentTtlSeconds: 900, contestedPaymentTtlSeconds: 300, maxUnpaidOrdersPerIp: 10 } });
    expect(service.paymentWindowSeconds({ contested: false, networkHolds: 4 })).toBe(900);
    expect(service.paymentWindowSeconds({ contested: false, networkHolds: 5 })).toBe(300);
    expect(service.paymentWindowSeconds({ contested: true, networkHolds: 0 })).toBe(300);
    // never longer than the normal window
    expect(setup({ config: { paymentTtlSeconds: 120, contestedPaymentTtlSeconds: 300 } }).service.paymentWindowSeconds({ contested: true, networkHolds: 0 })).toBe(120);
  });
});
