/**
 * Orders storage over the real schema (PGlite; also PostgreSQL when TEST_DATABASE_URL is set):
 * PrismaOrdersRepo guards, the service over it (two service instances = two processes sharing one
 * database: the DB guard alone keeps one release), and the Prisma Idempotency-Key store.
 */
import { randomUUID } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../server/src/db/client.js';
import { TEST_DATABASE_URL, freshPGlite, freshPostgres } from './helpers/db.js';
import { PrismaOrdersRepo } from '../server/src/modules/orders/orders.repo.js';
import { OrdersService } from '../server/src/modules/orders/orders.service.js';
import { PrismaIdempotencyStore } from '../server/src/modules/idempotency/idempotency.repo.js';
import { FakeEscrow, FakeListings, testOrdersSettings, user } from './orders.fakes.js';
import { crashingEscrow } from './helpers/crash-ports.js';
import type { EscrowPort } from '../server/src/modules/orders/orders.types.js';

const USDC = { code: 'USDC', mint: Keypair.generate().publicKey.toBase58(), decimals: 6 };

/** a migrated throw-away database and how to dispose of it */
const targets: Array<[string, () => Promise<{ db: Db; drop: () => Promise<void> }>]> = [
  ['pglite', async () => ({ db: await createDb({ pglite: await freshPGlite() }), drop: async () => undefined })],
];
if (TEST_DATABASE_URL) {
  targets.push([
    'postgres',
    async () => {
      const pg = await freshPostgres();
      return { db: await createDb({ databaseUrl: pg.url }), drop: pg.drop };
    },
  ]);
}

describe.each(targets)('orders storage on %s', (_name, open) => {
  let db: Db;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await open());
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  async function world() {
    const p = db.prisma;
    const mk = async () => {
      const wallet = Keypair.generate().publicKey.toBase58();
      const u = await p.user.create({ data: { wallet } });
      return user(u.id, wallet);
    };
    const [buyer, seller] = await Promise.all([mk(), mk()]);
    const listings = new FakeListings();
    /** a listing of the seller, in the database and in the listings port */
    const newListing = async () => {
      const id = randomUUID();
      await p.listing.create({
        data: { id, sellerId: seller.userId!, title: 'Logo', description: 'A logo', priceBaseUnits: '25000000', currency: 'USDC', category: 'design', durationDays: 3 },
      });
      listings.add({ id, sellerId: seller.userId!, sellerWallet: seller.wallet! });
      return id;
    };
    const listingId = await newListing();
    const repo = new PrismaOrdersRepo(p);
    const escrow = new FakeEscrow();
    const mkService = (port: EscrowPort = escrow) =>
      new OrdersService({ repo, escrow: port, listings, currency: () => USDC, settings: testOrdersSettings({ reviewWindowSeconds: 3600, inflightWaitMs: 3_000 }) });
    // the first instance's escrow port has a switch that crashes right after a send landed; a restarted one does not
    const crash = crashingEscrow();
    return { repo, escrow, crash, listings, buyer, seller, listingId, newListing, mk, service: mkService(crash.wrap(escrow)), mkService };
  }

  it('round-trips an order (u64 amount, wallets, deadline) and lists it by role with keyset pages', async () => {
    const w = await world();
    const { order } = await w.service.create(w.buyer, { listingId: w.listingId });
    const back = (await w.repo.get(order.id))!;
    expect(back).toMatchObject({ amount: 25_000_000n, buyerWallet: w.buyer.wallet, sellerWallet: w.seller.wallet, status: 'awaiting_payment', feeBps: 250 });
    expect(back.deliveryDeadline).toBe(order.deliveryDeadline);
    // the fund terms' expiry (chain clock) survives storage: later fund transactions repeat it
    expect(back.fundExpiresAt).toBe(w.escrow.now + 900);
    expect(back.fundExpiresAt).toBe(order.fundExpiresAt);
    expect(w.service.fundTerms(back).expiresAt).toBe(order.fundExpiresAt);
    await w.service.create(w.buyer, { listingId: await w.newListing() });
    await w.service.create(w.buyer, { listingId: await w.newListing() });
    const p1 = await w.service.list(w.buyer, { limit: 2, role: 'buyer' });
    const p2 = await w.service.list(w.buyer, { limit: 2, role: 'buyer', cursor: p1.nextCursor });
    expect([...p1.data, ...p2.data].map((o) => o.id)).toHaveLength(3);
    expect(p2.nextCursor).toBeNull();
    expect((await w.service.list(w.seller, { role: 'seller', status: 'awaiting_payment' })).data).toHaveLength(3);
  });

  it('stores no escrow_state (issue 22 item 4): it is derived from status where read', async () => {
    const cols = await db.prisma.$queryRaw<Array<{ column_name: string }>>`
      SELECT column_name FROM information_schema.columns WHERE table_name = 'orders'`;
    expect(cols.map((c) => c.column_name)).toContain('status');
    expect(cols.map((c) => c.column_name)).not.toContain('escrow_state');
  });

  it('beginIntent refuses a second open intent and a stale status; confirmIntent is conditional', async () => {
    const w = await world();
    const { order } = await w.service.create(w.buyer, { listingId: w.listingId });
    expect(await w.repo.updateIf(order.id, 'awaiting_payment', { status: 'in_progress', fundedAt: new Date() })).toBe(true);
    expect(await w.repo.updateIf(order.id, 'awaiting_payment', { status: 'expired' })).toBe(false);
    expect(await w.repo.beginIntent(order.id, 'awaiting_payment', 'mark_delivered', null)).toBeNull();
    const i = (await w.repo.beginIntent(order.id, 'in_progress', 'mark_delivered', { by: 'seller' }))!;
    expect(i).toMatchObject({ status: 'pending', action: 'mark_delivered', params: { by: 'seller' } });
    expect(await w.repo.beginIntent(order.id, 'in_progress', 'open_dispute', null)).toBeNull();
    expect(await w.repo.markIntentSent(i.id, 'sig-' + randomUUID(), { blockhash: 'bh', lastValidBlockHeight: 1234 })).toBe(true);
    // only a pending intent becomes sent (a settled one must never be sent by a late signer)
    expect(await w.repo.markIntentSent(i.id, 'sig-' + randomUUID())).toBe(false);
    expect((await w.repo.listOpenIntents(100)).find((x) => x.id === i.id)).toMatchObject({ blockhash: 'bh', lastValidBlockHeight: 1234 });
    expect(await w.repo.confirmIntent(i.id, null, 42, order.id, 'in_progress', { status: 'delivered' })).toBe(true);
    expect((await w.repo.get(order.id))!.status).toBe('delivered');
    expect((await w.repo.listIntents(order.id))[0]).toMatchObject({ status: 'confirmed', slot: 42 });
    expect(await w.repo.openIntentFor(order.id)).toBeNull();
  });

  it('createHeld: 20 buyers racing for one listing -> one order; the per-buyer cap; the same idempotency key twice -> one order', async () => {
    const w = await world();
    const buyers = await Promise.all(Array.from({ length: 20 }, () => w.mk()));
    const res = await Promise.allSettled(buyers.map((b) => w.service.create(b, { listingId: w.listingId })));
    expect(res.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(res.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.slug)).toEqual(Array(19).fill('listing-unavailable'));
    expect(await db.prisma.order.count({ where: { listingId: w.listingId } })).toBe(1);

    const key = randomUUID();
    const l = await w.newListing();
    const same = await Promise.all([0, 1].map(() => w.service.create(w.buyer, { listingId: l, idempotencyKey: key })));
    expect(same[0]!.order.id).toBe(same[1]!.order.id);
    expect((await w.repo.findByIdempotencyKey(w.buyer.userId!, key))!.id).toBe(same[0]!.order.id);
    await w.service.create(w.buyer, { listingId: await w.newListing() });
    await w.service.create(w.buyer, { listingId: await w.newListing() });
    const capped = await w.service.create(w.buyer, { listingId: await w.newListing() }).catch((e) => e);
    expect(capped).toMatchObject({ slug: 'too-many-unpaid-orders' });
  });

  it('payout and attention round-trip; discardUnpaid drops only an untouched unpaid order', async () => {
    const w = await world();
    const { order } = await w.service.create(w.buyer, { listingId: w.listingId });
    const payout = { buyer: 18446744073709551615n, seller: 0n, treasury: 0n, buyerTokenAccount: 'ata', verified: true };
    expect(await w.repo.updateIf(order.id, 'awaiting_payment', { status: 'refunded', payout })).toBe(true);
    expect((await w.repo.get(order.id))!.payout).toEqual(payout);
    // a closed order with a fund transaction that may still land is listed for the re-funded escrow check
    const until = new Date(Date.now() + 60_000);
    await w.repo.noteFundIssued(order.id, until);
    await w.repo.noteFundIssued(order.id, new Date(Date.now() - 60_000)); // never moves back
    expect((await w.repo.listClosedFundableSince(new Date(until.getTime() - 1), 100)).map((o) => o.id)).toContain(order.id);
    expect((await w.repo.listClosedFundableSince(new Date(until.getTime() + 1), 100)).map((o) => o.id)).not.toContain(order.id);
    const at = new Date();
    expect(await w.repo.flagAttention(order.id, { reason: 'escrow-vanished', detail: 'vault empty', at })).toBe(true);
    expect(await w.repo.flagAttention(order.id, { reason: 'escrow-vanished', detail: 'again', at })).toBe(false);
    expect((await w.repo.get(order.id))!.attention).toEqual({ reason: 'escrow-vanished', detail: 'vault empty', at });
    await w.repo.clearAttention(order.id);
    expect((await w.repo.get(order.id))!.attention).toBeNull();
    expect(await w.repo.discardUnpaid(order.id)).toBe(false); // not awaiting_payment
    const fresh = await w.service.create(w.buyer, { listingId: await w.newListing() });
    expect(await w.repo.discardUnpaid(fresh.order.id)).toBe(true);
    expect(await w.repo.get(fresh.order.id)).toBeNull();
  });

  it('two service instances (two processes) confirming concurrently: one release, everyone ends completed', async () => {
    const w = await world();
    const { order } = await w.service.create(w.buyer, { listingId: w.listingId });
    w.escrow.fund(w.service.fundTerms(order));
    await w.service.checkPayment((await w.repo.get(order.id))!);
    await w.service.deliver(w.seller, order.id);
    // the first release stays in flight until the calls of both instances are under way
    const release = w.escrow.hold();
    const other = w.mkService();
    const calls = Array.from({ length: 20 }, (_, i) => (i % 2 ? other : w.service).confirm(w.buyer, order.id));
    await w.escrow.held(1);
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r)); // the others reach their lock / the DB guard
    release();
    const res = await Promise.allSettled(calls);
    const ok = res.filter((r) => r.status === 'fulfilled').length;
    expect(ok).toBe(20);
    expect(w.escrow.count('release', order.id)).toBe(1);
    expect((await w.repo.get(order.id))!.status).toBe('completed');
    expect((await w.repo.listIntents(order.id)).filter((i) => i.action === 'release')).toHaveLength(1);
  });

  it('crash between send and DB write, healed by the reconciler of a fresh instance', async () => {
    const w = await world();
    const { order } = await w.service.create(w.buyer, { listingId: w.listingId });
    w.escrow.fund(w.service.fundTerms(order));
    await w.service.checkPayment((await w.repo.get(order.id))!);
    await w.service.deliver(w.seller, order.id);
    w.crash.afterSend = () => {
      throw new Error('simulated crash');
    };
    await expect(w.service.confirm(w.buyer, order.id)).rejects.toThrow('simulated crash');
    const restarted = w.mkService();
    await restarted.reconciler.runOnce();
    const after = (await w.repo.get(order.id))!;
    expect(after.status).toBe('completed');
    const rel = (await w.repo.listIntents(order.id)).filter((i) => i.action === 'release');
    expect(rel).toHaveLength(1);
    expect(rel[0]).toMatchObject({ status: 'confirmed', signature: after.lastSignature });
    expect(w.escrow.count('release')).toBe(1);
  });

  it('Idempotency-Key store: the primary key arbitrates first use; complete, get, expiry purge', async () => {
    const store = new PrismaIdempotencyStore(db.prisma);
    const scope = `user:${randomUUID()}`;
    const now = new Date();
    const rec = { scope, key: 'k1', route: 'POST /api/v1/orders', fingerprint: 'abc', state: 'running' as const, responseStatus: null, responseBody: null, responseHeaders: null, createdAt: now, expiresAt: new Date(now.getTime() + 1000) };
    const both = await Promise.all([store.tryInsert(rec), store.tryInsert(rec)]);
    expect(both.sort()).toEqual([false, true]);
    await store.complete(scope, 'k1', 201, '{"ok":true}', { 'content-type': 'application/json' });
    expect(await store.get(scope, 'k1')).toMatchObject({ state: 'done', responseStatus: 201, responseBody: '{"ok":true}', fingerprint: 'abc' });
    expect(await store.purgeExpired(new Date(now.getTime() + 2000))).toBeGreaterThanOrEqual(1);
    expect(await store.get(scope, 'k1')).toBeNull();
  });
});
