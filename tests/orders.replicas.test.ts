/**
 * Two replicas of the orders service on ONE database (each with its own database client and its own
 * in-process KeyedMutex, so only the database guard stands between them), one chain (FakeEscrow):
 * PGlite always, PostgreSQL too when TEST_DATABASE_URL is set (separate pools: real concurrency).
 *
 * - the leader's auto-release crank on replica A races the buyers' confirms on replica B: each order
 *   gets exactly one terminal transaction (release or claim) and ends completed;
 * - a paused ex-leader's payment watcher and the new leader's watcher detect the same payments at
 *   once: each order is funded once (one order.funded event, one status change).
 */
import { randomUUID } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../server/src/db/client.js';
import { PrismaOrdersRepo } from '../server/src/modules/orders/orders.repo.js';
import { OrdersService } from '../server/src/modules/orders/orders.service.js';
import { PaymentWatcher } from '../server/src/modules/orders/payment-watcher.js';
import { freshPGlite, freshPostgres } from './helpers/db.js';
import { dbBackends } from './helpers/shared-db.js';
import { FakeEscrow, FakeListings, testOrdersSettings, user } from './orders.fakes.js';

const USDC = { code: 'USDC', mint: Keypair.generate().publicKey.toBase58(), decimals: 6 };
const N = 8;

describe.each(dbBackends)('orders on two replicas sharing $name', ({ postgres }) => {
  const dbs: Db[] = [];
  let drop: () => Promise<void> = async () => undefined;
  let open: () => Promise<Db>;

  beforeAll(async () => {
    if (postgres) {
      const pg = await freshPostgres();
      drop = pg.drop;
      open = () => createDb({ databaseUrl: pg.url });
    } else {
      const pglite = await freshPGlite();
      drop = () => pglite.close();
      open = () => createDb({ pglite });
    }
  });
  afterAll(async () => {
    for (const db of dbs) await db.close();
    await drop();
  });

  /** two replicas (own client, repo, service) over one database and one chain */
  async function world() {
    const [dbA, dbB] = [await open(), await open()];
    dbs.push(dbA, dbB);
    const p = dbA.prisma;
    const mk = async () => {
      const wallet = Keypair.generate().publicKey.toBase58();
      const u = await p.user.create({ data: { wallet } });
      return user(u.id, wallet);
    };
    const seller = await mk();
    const escrow = new FakeEscrow();
    const listings = new FakeListings();
    const replica = (db: Db) => {
      const repo = new PrismaOrdersRepo(db.prisma);
      const service = new OrdersService({ repo, escrow, listings, currency: () => USDC, settings: testOrdersSettings({ reviewWindowSeconds: 3600, inflightWaitMs: 5_000 }) });
      return { repo, service, watcher: new PaymentWatcher({ service, repo }) };
    };
    const a = replica(dbA);
    const b = replica(dbB);
    /** an order of a fresh buyer on a fresh listing of the seller, created through replica A */
    const order = async () => {
      const buyer = await mk();
      const id = randomUUID();
      await p.listing.create({
        data: { id, sellerId: seller.userId!, title: 'Logo', description: 'A logo', priceBaseUnits: '25000000', currency: 'USDC', category: 'design', durationDays: 3 },
      });
      listings.add({ id, sellerId: seller.userId!, sellerWallet: seller.wallet! });
      const { order } = await a.service.create(buyer, { listingId: id });
      return { buyer, order };
    };
    return { a, b, escrow, seller, order, prisma: p };
  }

  it('the crank on replica A and the buyers confirming on replica B: one terminal transaction per order, all completed', async () => {
    const w = await world();
    const orders = [];
    for (let i = 0; i < N; i++) {
      const o = await w.order();
      w.escrow.fund(w.a.service.fundTerms(o.order));
      await w.a.service.checkPayment((await w.a.repo.get(o.order.id))!);
      await w.b.service.deliver(w.seller, o.order.id);
      orders.push(o);
    }
    w.escrow.advance(3601); // the review window is over: the crank may claim, the buyer may still confirm
    // signed transactions wait at the gate until two are in flight at once (the crank's and a buyer's race)
    const release = w.escrow.hold();
    const settled = Promise.allSettled([
      w.a.service.claimDue(50),
      w.a.service.claimDue(50), // a second pass of a paused ex-leader
      ...orders.map((o) => w.b.service.confirm(o.buyer, o.order.id)),
    ]);
    await w.escrow.held(2);
    release();
    const results = await settled;
    // a confirm may lose to the claim: it then returns the completed order or a 409 while the claim is in flight
    for (const r of results.slice(2)) {
      if (r.status === 'rejected') expect((r.reason as { slug?: string }).slug).toMatch(/conflict|invalid-state-transition/);
    }
    for (const o of orders) {
      const terminal = w.escrow.count('release', o.order.id) + w.escrow.count('claim', o.order.id);
      expect(terminal, `order ${o.order.id}`).toBe(1);
      expect((await w.a.repo.get(o.order.id))!.status).toBe('completed');
      const intents = (await w.a.repo.listIntents(o.order.id)).filter((i) => i.action === 'release' || i.action === 'claim');
      expect(intents.filter((i) => i.status !== 'failed')).toHaveLength(1);
    }
  });

  it('two payment watchers (a paused ex-leader and the new leader) on the same payments: each order funded once', async () => {
    const w = await world();
    const orders = [];
    for (let i = 0; i < N; i++) {
      const o = await w.order();
      w.escrow.fund(w.a.service.fundTerms(o.order));
      orders.push(o);
    }
    const [pa, pb] = await Promise.all([w.a.watcher.runOnce(), w.b.watcher.runOnce()]);
    // each pass reports every order it saw funded (whichever replica moved it)
    expect(new Set([...pa.funded, ...pb.funded])).toEqual(new Set(orders.map((o) => o.order.id)));
    for (const o of orders) {
      expect((await w.a.repo.get(o.order.id))!.status).toBe('in_progress');
      const funded = await w.prisma.event.count({ where: { type: 'order.funded', resourceId: o.order.id } });
      expect(funded, `order.funded events of ${o.order.id}`).toBe(1);
    }
  });
});
