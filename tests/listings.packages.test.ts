/**
 * Packages and milestones of listings (issue 24) over HTTP: create and edit rules (adversarial
 * bodies: too many packages, duplicate keys, sums off by one base unit, more decimals than the mint, a
 * price of 0, bidi and control characters), search and sort on the cheapest package (the price column
 * written in the same statement as the packages), and orders that buy a package with their terms frozen
 * at creation (a seller's later edit changes nothing of an open order, down to the escrow's amount).
 * The app runs with the FakeChain (listing tokens) and the orders' FakeEscrow. PGlite always, PostgreSQL
 * too when TEST_DATABASE_URL is set.
 */
import { Keypair, Transaction } from '@solana/web3.js';
import { createApp } from '../server/src/app.js';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, loginAs } from './helpers/app.js';
import { FakeChain } from './helpers/fake-chain.js';
import { TEST_DATABASE_URL } from './helpers/db.js';
import { API, countRows, expectProblem } from './helpers/marketplace-fixtures.js';
import { FakeEscrow } from './orders.fakes.js';

interface Party {
  kp: Keypair;
  wallet: string;
  userId: string;
  headers: Record<string, string>;
}

const engines = [{ name: 'PGlite', postgres: false }, ...(TEST_DATABASE_URL ? [{ name: 'PostgreSQL', postgres: true }] : [])];

const pkg = (key: string, price: number, over: Record<string, unknown> = {}) => ({
  key,
  name: `${key[0]!.toUpperCase()}${key.slice(1)} logo`,
  price,
  delivery_days: 3,
  revisions: 1,
  description: `The ${key} package`,
  ...over,
});

/** three packages; standard has two milestones (10 + 20.5 USDC, 2 + 3 days) */
const threePackages = () => [
  pkg('premium', 60, { delivery_days: 7, revisions: 5 }),
  pkg('basic', 10, { delivery_days: 2, revisions: 0 }),
  pkg('standard', 30.5, {
    delivery_days: 5,
    revisions: 2,
    milestones: [
      { title: 'Sketches', amount: 10, delivery_days: 2 },
      { title: 'Final files', amount: 20.5, delivery_days: 3 },
    ],
  }),
];

const body = (over: Record<string, unknown> = {}) => ({
  title: 'Logo design in packages',
  description: 'Logos in three sizes of service.',
  currency: 'USDC',
  category: 'design',
  packages: threePackages(),
  ...over,
});

/** a body without packages (today's shape) */
const plain = (over: Record<string, unknown> = {}) => ({
  title: 'Logo design, one price',
  description: 'A logo.',
  price: 25,
  currency: 'USDC',
  category: 'design',
  duration: 3,
  ...over,
});

describe.each(engines)('listing packages on $name', ({ postgres }) => {
  let t: Awaited<ReturnType<typeof createTestApp>>;
  let chain: FakeChain;
  let escrow: FakeEscrow;
  let seller: Party;
  let buyer: Party;

  const party = async (): Promise<Party> => {
    const kp = Keypair.generate();
    const s = await loginAs(t, kp);
    return { kp, wallet: s.wallet, userId: s.userId, headers: s.headers };
  };
  const create = async (b: object, who = seller) => request(t.app).post(`${API}/listings`).set(who.headers).send(b);
  const created = async (b: object) => {
    const res = await create(b);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as Record<string, any>;
  };
  const patch = (id: string, b: object) => request(t.app).patch(`${API}/listings/${id}`).set(seller.headers).send(b);
  let n = 0;
  const order = (b: object, who = buyer) =>
    request(t.app)
      .post(`${API}/orders`)
      .set(who.headers)
      .set('Idempotency-Key', `pk-${Date.now()}-${n++}`)
      .send(b);

  beforeAll(async () => {
    chain = new FakeChain();
    escrow = new FakeEscrow();
    // the orders module is built when the chain has an escrow client; its port is the FakeEscrow
    Object.assign(chain, { escrow: {} });
    t = await createTestApp({ chain: chain as never, postgres, orders: { ports: { escrow: () => escrow } } });
    seller = await party();
    buyer = await party();
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  describe('POST /listings', () => {
    it('stores up to 3 packages in key order; the listing price and duration are the cheapest package\'s', async () => {
      const l = await created(body());
      expect(l.packages.map((p: { key: string }) => p.key)).toEqual(['basic', 'standard', 'premium']);
      expect(l).toMatchObject({ price: 10, price_base_units: '10000000', duration: 2, milestones: null });
      expect(l.packages[1]).toEqual({
        key: 'standard',
        name: 'Standard logo',
        price: 30.5,
        price_base_units: '30500000',
        delivery_days: 5,
        revisions: 2,
        description: 'The standard package',
        milestones: [
          { title: 'Sketches', amount: 10, amount_base_units: '10000000', delivery_days: 2 },
          { title: 'Final files', amount: 20.5, amount_base_units: '20500000', delivery_days: 3 },
        ],
      });
      expect(l.packages[0].milestones).toBeNull();
      const again = await request(t.app).get(`${API}/listings/${l.listing_id}`).set(buyer.headers);
      expect(again.body.packages).toEqual(l.packages);
      // a listing without packages reads as before, with empty packages
      const p = await created(plain());
      expect(p).toMatchObject({ price: 25, duration: 3, packages: [], milestones: null });
    });

    it('listing-level milestones of a listing without packages: exact base units, summing to the price', async () => {
      const l = await created(
        plain({
          price: 0.3,
          duration: 4,
          milestones: [
            { title: 'Half', amount: 0.1, delivery_days: 1 },
            { title: 'Rest', amount: 0.2, delivery_days: 3 },
          ],
        }),
      );
      expect(l.milestones).toEqual([
        { title: 'Half', amount: 0.1, amount_base_units: '100000', delivery_days: 1 },
        { title: 'Rest', amount: 0.2, amount_base_units: '200000', delivery_days: 3 },
      ]);
    });

    const four = [...threePackages(), pkg('basic', 12)];
    const twoMilestones = (a: number, b: number) => [
      { title: 'One', amount: a, delivery_days: 1 },
      { title: 'Two', amount: b, delivery_days: 2 },
    ];
    it.each<[string, Record<string, unknown>, string[], string?]>([
      ['four packages', body({ packages: four }), ['body.packages']],
      ['duplicate package keys', body({ packages: [pkg('basic', 10), pkg('basic', 12)] }), ['body.packages.1.key'], 'duplicate_package_key'],
      [
        'package milestones one base unit short of the price',
        body({ packages: [pkg('basic', 10, { milestones: twoMilestones(4, 5.999999) })] }),
        ['body.packages.0.milestones'],
        'milestones_sum_mismatch',
      ],
      [
        'listing milestones one base unit over the price',
        plain({ price: 10, milestones: [{ title: 'One', amount: 4, delivery_days: 1 }, { title: 'Two', amount: 6.000001, delivery_days: 2 }] }),
        ['body.milestones'],
        'milestones_sum_mismatch',
      ],
      [
        'a milestone amount with more decimals than the mint (7 for USDC)',
        body({ packages: [pkg('basic', 10, { milestones: twoMilestones(4, 5.9999999) })] }),
        ['body.packages.0.milestones.1.amount'],
        'too_many_decimals',
      ],
      ['a package price of 0', body({ packages: [pkg('basic', 0)] }), ['body.packages.0.price']],
      ['a milestone amount of 0', body({ packages: [pkg('basic', 10, { milestones: twoMilestones(10, 0) })] }), ['body.packages.0.milestones.1.amount']],
      [
        'eleven milestones',
        body({ packages: [pkg('basic', 11, { delivery_days: 11, milestones: Array.from({ length: 11 }, (_, i) => ({ title: `M${i}`, amount: 1, delivery_days: 1 })) })] }),
        ['body.packages.0.milestones'],
      ],
      ['21 revisions', body({ packages: [pkg('basic', 10, { revisions: 21 })] }), ['body.packages.0.revisions']],
      [
        'milestone delivery days that do not add up to the package\'s',
        body({ packages: [pkg('basic', 10, { delivery_days: 4, milestones: twoMilestones(4, 6) })] }),
        ['body.packages.0.milestones'],
        'milestones_days_mismatch',
      ],
      ['a price next to packages', body({ price: 10 }), ['body.price'], 'follows_packages'],
      ['listing milestones next to packages', body({ milestones: twoMilestones(4, 6) }), ['body.milestones'], 'not_with_packages'],
      ['neither a price nor packages', plain({ price: undefined, duration: undefined }), ['body.price', 'body.duration'], 'required'],
      ['a bidi override in a package name', body({ packages: [pkg('basic', 10, { name: 'Logo \u202Egpj.exe' })] }), ['body.packages.0.name'], 'invalid_text_bidi'],
      [
        'a control character in a milestone title',
        body({ packages: [pkg('basic', 10, { milestones: [{ title: 'Bell\u0007', amount: 10, delivery_days: 3 }] })] }),
        ['body.packages.0.milestones.0.title'],
      ],
      ['an unknown package key', body({ packages: [pkg('gold', 10)] }), ['body.packages.0.key']],
      ['an empty package list', body({ packages: [] }), ['body.packages']],
    ])('400 validation-error for %s; nothing written, nothing minted', async (_name, b, paths, code) => {
      const rows = await countRows(t.ctx.db, 'listings');
      const tokens = chain.tokens.size;
      const res = await create(b);
      expectProblem(res, 400, 'validation-error', paths);
      if (code) expect(res.body.errors.map((e: { code: string }) => e.code)).toContain(code);
      expect(await countRows(t.ctx.db, 'listings')).toBe(rows);
      expect(chain.tokens.size).toBe(tokens);
    });
  });

  it('a crash between the mint and the insert: the recovery pass stores the listing with its packages and exact amounts', async () => {
    const crashing = createApp({
      ...t.ctx,
      listings: {
        recoveryIntervalMs: 0,
        hooks: {
          afterMint: () => {
            throw new Error('simulated crash');
          },
        },
      },
    });
    const title = `Packages minted before a crash ${postgres ? 'pg' : 'lite'}`;
    const res = await request(crashing).post(`${API}/listings`).set(seller.headers).send(body({ title }));
    expectProblem(res, 500, 'internal-error');
    await crashing.services.stop();
    const none = await request(t.app).get(`${API}/listings?seller_wallet=${seller.wallet}&limit=100`).set(seller.headers);
    expect(none.body.data.some((l: { title: string }) => l.title === title)).toBe(false);
    // the intent's draft carries the packages: the recovery pass (start-up of a restarted process) stores them
    await t.services.listings.recovery.runOnce();
    const after = await request(t.app).get(`${API}/listings?seller_wallet=${seller.wallet}&limit=100`).set(seller.headers);
    const l = after.body.data.find((x: { title: string }) => x.title === title);
    expect(l).toMatchObject({ price_base_units: '10000000', duration: 2 });
    expect(l.packages.map((p: { price_base_units: string }) => p.price_base_units)).toEqual(['10000000', '30500000', '60000000']);
    expect(l.packages[1].milestones.map((m: { amount_base_units: string }) => m.amount_base_units)).toEqual(['10000000', '20500000']);
  });

  describe('PATCH /listings/{id}', () => {
    it('replaces the packages; the price and duration follow the cheapest package in the same write', async () => {
      const l = await created(body());
      const res = await patch(l.listing_id, { packages: [pkg('standard', 45, { delivery_days: 6 }), pkg('premium', 40, { delivery_days: 9 })] });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body).toMatchObject({ price: 40, price_base_units: '40000000', duration: 9 });
      expect(res.body.packages.map((p: { key: string }) => p.key)).toEqual(['standard', 'premium']);
      const row = await t.ctx.db.$queryRaw<Array<{ price: string; days: number }>>`
        SELECT price_base_units::text AS price, duration_days AS days FROM listings WHERE id = ${l.listing_id}::uuid`;
      expect(row[0]).toEqual({ price: '40000000', days: 9 });
    });

    it('refuses a price or duration while the listing has packages, and milestones that no longer sum to a new price', async () => {
      const l = await created(body());
      expectProblem(await patch(l.listing_id, { price: 5 }), 400, 'validation-error', ['body.price']);
      expectProblem(await patch(l.listing_id, { duration: 9 }), 400, 'validation-error', ['body.duration']);
      expectProblem(await patch(l.listing_id, { milestones: [{ title: 'All', amount: 10, delivery_days: 2 }] }), 400, 'validation-error', ['body.milestones']);
      expectProblem(await patch(l.listing_id, { packages: [pkg('basic', 10), pkg('basic', 11)] }), 400, 'validation-error', ['body.packages.1.key']);
      const m = await created(plain({ price: 10, milestones: [{ title: 'A', amount: 4, delivery_days: 1 }, { title: 'B', amount: 6, delivery_days: 2 }] }));
      expectProblem(await patch(m.listing_id, { price: 12 }), 400, 'validation-error', ['body.milestones']);
      // packages cannot join listing-level milestones unless those are removed in the same edit
      expectProblem(await patch(m.listing_id, { packages: [pkg('basic', 10)] }), 400, 'validation-error', ['body.milestones']);
      const ok = await patch(m.listing_id, { price: 12, milestones: [{ title: 'A', amount: 6, delivery_days: 1 }, { title: 'B', amount: 6, delivery_days: 2 }] });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      expect(ok.body).toMatchObject({ price: 12, milestones: [{ amount_base_units: '6000000' }, { amount_base_units: '6000000' }] });
      const moved = await patch(m.listing_id, { packages: [pkg('basic', 10)], milestones: null });
      expect(moved.status, JSON.stringify(moved.body)).toBe(200);
      expect(moved.body).toMatchObject({ price: 10, milestones: null, packages: [{ key: 'basic' }] });
      // removing the packages keeps the price and duration they set; the listing is sold at that price again
      const removed = await patch(l.listing_id, { packages: null });
      expect(removed.status, JSON.stringify(removed.body)).toBe(200);
      expect(removed.body).toMatchObject({ price: 10, duration: 2, packages: [] });
    });
  });

  describe('search and sort on the cheapest package', () => {
    it('min_price / max_price and price sorts use the cheapest package, and follow an edit of the packages', async () => {
      const tag = `quokkaline${postgres ? 'pg' : 'lite'}`;
      const a = await created(body({ title: `${tag} packages A`, packages: [pkg('basic', 10), pkg('standard', 30), pkg('premium', 60)] }));
      const b = await created(plain({ title: `${tag} plain B`, price: 20 }));
      const c = await created(body({ title: `${tag} packages C`, packages: [pkg('standard', 80), pkg('premium', 40)] }));
      const search = async (q: Record<string, string | number>) => {
        const qs = new URLSearchParams(Object.entries({ query: tag, currency: 'USDC', ...q }).map(([k, v]) => [k, String(v)] as [string, string])).toString();
        const res = await request(t.app).get(`${API}/marketplace/search?${qs}`).set(buyer.headers);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return (res.body.data as Array<{ listing_id: string }>).map((l) => l.listing_id);
      };
      expect(await search({ min_price: 35 })).toEqual([c.listing_id]); // A's packages reach 60, but its cheapest is 10
      expect(await search({ max_price: 15 })).toEqual([a.listing_id]);
      expect(await search({ sort: 'price_asc' })).toEqual([a.listing_id, b.listing_id, c.listing_id]);
      expect(await search({ sort: 'price_desc' })).toEqual([c.listing_id, b.listing_id, a.listing_id]);
      // across currencies (UI price merge) too
      const all = await request(t.app).get(`${API}/marketplace/search?query=${tag}&sort=price_asc`).set(buyer.headers);
      expect(all.body.data.map((l: { listing_id: string }) => l.listing_id)).toEqual([a.listing_id, b.listing_id, c.listing_id]);
      // A's cheapest package becomes 50: search reads the new cheapest price at once
      expect((await patch(a.listing_id, { packages: [pkg('basic', 50), pkg('premium', 90)] })).status).toBe(200);
      expect(await search({ sort: 'price_asc' })).toEqual([b.listing_id, c.listing_id, a.listing_id]);
      expect(await search({ max_price: 15 })).toEqual([]);
      expect(await search({ min_price: 45, max_price: 55 })).toEqual([a.listing_id]);
    });
  });

  describe('POST /orders with a package', () => {
    const decodeAmount = (payment: { transaction: string }) => {
      const tx = Transaction.from(Buffer.from(payment.transaction, 'base64'));
      return (JSON.parse(Buffer.from(tx.instructions[0]!.data).toString()) as { amount: string }).amount;
    };

    it('the order is the chosen package: its price as the amount, its name, revisions and delivery days', async () => {
      const l = await created(body());
      const res = await order({ listing_id: l.listing_id, package: 'premium' });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body).toMatchObject({
        amount: 60,
        amount_base_units: '60000000',
        package: { key: 'premium', name: 'Premium logo', revisions: 5, delivery_days: 7 },
      });
      expect(decodeAmount(res.body.payment)).toBe('60000000');
      // the delivery deadline counts the package's days (7), not the listing's (the cheapest's, 2)
      const days = (Date.parse(res.body.delivery_deadline) - escrow.now * 1000) / 86_400_000;
      expect(days).toBe(7);
      // a listing without packages: package null, amount = price (unchanged behaviour)
      const p = await created(plain({ price: 25 }));
      const o = await order({ listing_id: p.listing_id });
      expect(o.status, JSON.stringify(o.body)).toBe(201);
      expect(o.body).toMatchObject({ amount: 25, package: null });
    });

    it('400 validation-error naming the allowed keys: no package, a package the listing lacks, a package for a listing without packages; nothing held', async () => {
      const l = await created(body({ packages: [pkg('basic', 10), pkg('standard', 20)] }));
      const rows = await countRows(t.ctx.db, 'orders');
      const missing = await order({ listing_id: l.listing_id });
      expectProblem(missing, 400, 'validation-error', ['body.package']);
      expect(missing.body.allowed_packages).toEqual(['basic', 'standard']);
      expect(missing.body.errors[0].message).toMatch(/basic, standard/);
      const unknown = await order({ listing_id: l.listing_id, package: 'premium' });
      expectProblem(unknown, 400, 'validation-error', ['body.package']);
      expect(unknown.body.errors[0]).toMatchObject({ code: 'unknown_package', message: 'must be one of basic, standard' });
      expectProblem(await order({ listing_id: l.listing_id, package: 'gold' }), 400, 'validation-error', ['body.package']);
      const p = await created(plain());
      const none = await order({ listing_id: p.listing_id, package: 'basic' });
      expectProblem(none, 400, 'validation-error', ['body.package']);
      expect(none.body.errors[0].code).toBe('no_packages');
      expect(await countRows(t.ctx.db, 'orders')).toBe(rows);
      const read = await request(t.app).get(`${API}/listings/${l.listing_id}`).set(buyer.headers);
      expect(read.body).toMatchObject({ status: 'available', held_until: null });
    });

    it('a seller editing the packages while an order is open changes nothing of that order: amount, package and the escrow funded stay as bought', async () => {
      const l = await created(body());
      const res = await order({ listing_id: l.listing_id, package: 'standard' });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      const orderId = res.body.order_id as string;
      // the unpaid order holds the listing, whose stored status stays available: the seller may edit it
      const edit = await patch(l.listing_id, {
        packages: [pkg('standard', 99, { name: 'Standard, dearer', revisions: 0, delivery_days: 20 }), pkg('basic', 1)],
      });
      expect(edit.status, JSON.stringify(edit.body)).toBe(200);
      expect(edit.body.packages.find((p: { key: string }) => p.key === 'standard')).toMatchObject({ price: 99, revisions: 0 });
      const frozen = { amount: 30.5, amount_base_units: '30500000', package: { key: 'standard', name: 'Standard logo', revisions: 2, delivery_days: 5 } };
      const got = await request(t.app).get(`${API}/orders/${orderId}`).set(buyer.headers);
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      expect(got.body).toMatchObject(frozen);
      // the package's two milestones are frozen too: one escrow each (issue 24), 10 + 20.5 USDC
      expect(got.body.milestones.map((m: { amount_base_units: string }) => m.amount_base_units)).toEqual(['10000000', '20500000']);
      // a fresh fund transaction is for the frozen first milestone, and funding it escrows exactly that
      const fresh = await request(t.app).post(`${API}/orders/${orderId}/payment`).set(buyer.headers);
      expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
      expect(decodeAmount(fresh.body)).toBe('10000000');
      const tx = Transaction.from(Buffer.from(fresh.body.transaction, 'base64'));
      tx.partialSign(buyer.kp);
      const paid = await request(t.app)
        .post(`${API}/orders/${orderId}/transaction`)
        .set(buyer.headers)
        .send({ signed_transaction: tx.serialize().toString('base64') });
      expect(paid.status, JSON.stringify(paid.body)).toBe(200);
      expect(paid.body).toMatchObject({ ...frozen, status: 'in_progress' });
      expect(escrow.accounts.get(orderId)?.amount).toBe(10_000_000n);
      // the order as the seller reads it: the same frozen terms
      const sellerView = await request(t.app).get(`${API}/orders/${orderId}`).set(seller.headers);
      expect(sellerView.body).toMatchObject(frozen);
    });
  });
});
