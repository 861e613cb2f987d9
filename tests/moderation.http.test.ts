/**
 * Moderation (issue 25 part 2) over HTTP: the real app with the in-memory FakeChain (listing tokens) and
 * the orders module's FakeEscrow (orders are created, funded and released in the simulated program).
 * Reports (one open per reporter and target, not oneself, bounded per day), the moderators' queue (grouped
 * by target, oldest first, cursor pages, dismiss), takedowns (out of search and public reads, not orderable
 * by any path, open orders still settle, one appeal, restore) and account standing (no login, no listing or
 * ordering at once, reads and payouts go on). Adversarial: strangers, sellers and reporters at every
 * moderator route, repeats, a report storm against a competitor. PGlite, and PostgreSQL when
 * TEST_DATABASE_URL is set.
 */
import { Keypair } from '@solana/web3.js';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Event, Listing, type Order } from '@bazaar/contract';
import { createTestApp, loginAs, signSiws } from './helpers/app.js';
import { FakeChain } from './helpers/fake-chain.js';
import { API, createListing, expectProblem, insertOrder, setListingStatus, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';
import { dbBackends } from './helpers/shared-db.js';
import { FakeEscrow } from './orders.fakes.js';
import { setRoles } from './helpers/roles.js';

let t: TestApp;
const escrow = new FakeEscrow();
let keys = 0;
/** runs before the orders repository holds a listing for a new order (a takedown racing the order), when set */
let beforeCreateHeld: (() => Promise<void>) | null = null;

/** THE one place a test user becomes a moderator: the `moderator` role only (issue 25 roles). */
async function makeModerator(u: TestUser): Promise<TestUser> {
  await setRoles(t.ctx.db, { id: u.userId }, ['moderator']);
  return u;
}

const post = (who: TestUser, path: string, body: object = {}) =>
  request(t.app).post(`${API}${path}`).set(who.headers).set('Idempotency-Key', `mod-${++keys}`).send(body);
const get = (who: TestUser | null, path: string) => (who ? request(t.app).get(`${API}${path}`).set(who.headers) : request(t.app).get(`${API}${path}`));
const eventsOf = async (who: TestUser, query: string) =>
  ((await get(who, `/events?${query}`).expect(200)).body.data as Event[]).map((e) => Event.parse(e));

/** A listing of `seller` taken down by `moderator` with `reason`. */
async function takenDown(seller: TestUser, moderator: TestUser, reason = 'Counterfeit goods') {
  const l = await createListing(t.app, seller);
  const r = await post(moderator, `/moderation/listings/${l.listing_id}/takedown`, { reason });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return l.listing_id as string;
}

/** An order of `buyer` for a new listing of `seller`, funded in the fake escrow (in_progress). */
async function fundedOrder(seller: TestUser, buyer: TestUser): Promise<{ orderId: string; listingId: string }> {
  const l = await createListing(t.app, seller);
  await setListingStatus(t.ctx.db, l.listing_id, 'reserved');
  const id = await insertOrder(t.ctx.db, { listingId: l.listing_id, buyerId: buyer.userId, sellerId: seller.userId, status: 'in_progress' });
  await t.ctx.db.$executeRaw`UPDATE orders SET funded_at = now() WHERE id = ${id}::uuid`;
  const o = (await get(buyer, `/orders/${id}`).expect(200)).body as Order;
  escrow.fund({
    orderId: id,
    buyer: buyer.wallet,
    seller: seller.wallet,
    mint: o.payment_mint,
    amount: BigInt(o.amount_base_units),
    deliveryDeadline: Date.parse(o.delivery_deadline) / 1000,
    reviewWindow: o.review_window_seconds,
    expiresAt: escrow.now + 900,
  });
  return { orderId: id, listingId: l.listing_id };
}

/** Deliver (seller) then confirm (buyer): the escrow releases to the seller. */
async function settle(seller: TestUser, buyer: TestUser, orderId: string) {
  const d = await post(seller, `/orders/${orderId}/deliver`);
  expect(d.status, JSON.stringify(d.body)).toBe(200);
  const c = await post(buyer, `/orders/${orderId}/confirm`);
  expect(c.status, JSON.stringify(c.body)).toBe(200);
  expect(c.body.status).toBe('completed');
  return c.body as Order;
}

describe.each(dbBackends)('moderation over HTTP on $name', ({ postgres }) => {
  let seller: TestUser;
  let buyer: TestUser;
  let reporter: TestUser;
  let moderator: TestUser;

  beforeAll(async () => {
    escrow.now = Math.floor(Date.now() / 1000);
    escrow.feeBpsValue = 100; // the fee snapshot of the orders insertOrder writes
    const chain = Object.assign(new FakeChain(), { escrow: {} });
    t = await createTestApp({
      chain: chain as never,
      postgres,
      orders: {
        ports: {
          escrow: () => escrow,
          repo: (built) =>
            Object.assign(Object.create(built) as typeof built, {
              createHeld: async (...args: Parameters<typeof built.createHeld>) => {
                const hook = beforeCreateHeld;
                beforeCreateHeld = null;
                await hook?.();
                return built.createHeld(...args);
              },
            }),
        },
      },
    });
    [seller, buyer, reporter] = await Promise.all([user(t), user(t), user(t)]);
    moderator = await makeModerator(await user(t));
  });

  afterAll(async () => {
    await t?.close();
  });

  describe('reports', () => {
    it('any signed-in user reports a listing or a user with a reason from the list; a repeat while open is 409 report-exists; oneself and one\'s own listing are refused', async () => {
      const l = await createListing(t.app, seller);
      const r = await post(reporter, '/reports', { target_type: 'listing', listing_id: l.listing_id, reason: 'scam', text: 'Asks to pay outside the escrow' });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      expect(r.body).toMatchObject({ target_type: 'listing', target_id: l.listing_id, target_wallet: seller.wallet, reason: 'scam', status: 'open' });
      const again = await post(reporter, '/reports', { target_type: 'listing', listing_id: l.listing_id, reason: 'spam' });
      expectProblem(again, 409, 'report-exists');
      expect(again.body.report_id).toBe(r.body.report_id);

      const u = await post(reporter, '/reports', { target_type: 'user', wallet: seller.wallet, reason: 'harassment' });
      expect(u.status, JSON.stringify(u.body)).toBe(201);
      expect(u.body).toMatchObject({ target_type: 'user', target_id: seller.userId, text: '' });

      expectProblem(await post(seller, '/reports', { target_type: 'listing', listing_id: l.listing_id, reason: 'spam' }), 403, 'forbidden');
      expectProblem(await post(seller, '/reports', { target_type: 'user', wallet: seller.wallet, reason: 'spam' }), 403, 'forbidden');
      expectProblem(await post(reporter, '/reports', { target_type: 'user', wallet: Keypair.generate().publicKey.toBase58(), reason: 'spam' }), 404, 'not-found');
      expectProblem(await post(reporter, '/reports', { target_type: 'listing', listing_id: l.listing_id, reason: 'because' }), 400, 'validation-error');
      expectProblem(await post(reporter, '/reports', { target_type: 'listing', listing_id: l.listing_id, reason: 'other', text: 'x\u202E' }), 400, 'validation-error');
      expectProblem(await request(t.app).post(`${API}/reports`).send({ target_type: 'user', wallet: seller.wallet, reason: 'spam' }), 401, 'unauthorized');
    });

    it('a reporter files at most 20 reports in 24 hours, then 429 rate-limited with Retry-After', async () => {
      const busy = await user(t);
      const sellers = await Promise.all(Array.from({ length: 21 }, () => user(t)));
      for (const s of sellers.slice(0, 20)) {
        const r = await post(busy, '/reports', { target_type: 'user', wallet: s.wallet, reason: 'spam' });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
      }
      const over = await post(busy, '/reports', { target_type: 'user', wallet: sellers[20]!.wallet, reason: 'spam' });
      expectProblem(over, 429, 'rate-limited');
      expect(Number(over.headers['retry-after'])).toBeGreaterThan(86_000);
    });
  });

  describe('the moderators\' queue', () => {
    it('groups open reports by target, oldest first, with counts per target and reason; cursor pages; dismiss with a reason empties the target', async () => {
      const others = await Promise.all([user(t), user(t), user(t)]);
      const a = await createListing(t.app, seller);
      const b = await createListing(t.app, seller);
      // a is reported first (oldest), by three users; b once
      for (const [i, who] of others.entries()) {
        expect((await post(who, '/reports', { target_type: 'listing', listing_id: a.listing_id, reason: i === 2 ? 'spam' : 'scam' })).status).toBe(201);
      }
      expect((await post(others[0]!, '/reports', { target_type: 'listing', listing_id: b.listing_id, reason: 'prohibited' })).status).toBe(201);

      const all: Array<Record<string, any>> = [];
      let cursor: string | null = null;
      do {
        const page: request.Response = await get(moderator, `/moderation/reports?target_type=listing&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
        expect(page.status, JSON.stringify(page.body)).toBe(200);
        all.push(...page.body.data);
        cursor = page.body.next_cursor;
      } while (cursor);
      const ga = all.find((g) => g.target_id === a.listing_id)!;
      const gb = all.find((g) => g.target_id === b.listing_id)!;
      expect(ga).toMatchObject({ target_type: 'listing', target_wallet: seller.wallet, listing_title: a.title, report_count: 3, reasons: { scam: 2, spam: 1 }, taken_down: false });
      expect(ga.reports.map((r: { reporter_wallet: string }) => r.reporter_wallet)).toEqual(others.map((o) => o.wallet));
      expect(gb).toMatchObject({ report_count: 1, reasons: { prohibited: 1 } });
      // oldest first across pages
      const times = all.map((g) => Date.parse(g.oldest_report_at));
      expect([...times].sort((x, y) => x - y)).toEqual(times);
      expect(all.indexOf(ga)).toBeLessThan(all.indexOf(gb));

      const d = await post(moderator, `/moderation/reports/listing/${a.listing_id}/dismiss`, { reason: 'Checked: a legitimate service' });
      expect(d.status, JSON.stringify(d.body)).toBe(200);
      expect(d.body).toEqual({ dismissed: 3 });
      // the dismissal is an operator action without an event: one audit entry, the moderator as its actor
      const dismissed = await t.ctx.db.auditLogEntry.findMany({ where: { action: 'reports.dismissed', resourceId: a.listing_id } });
      expect(dismissed).toMatchObject([{ actorType: 'user', actorId: moderator.userId, resourceType: 'listing', before: { open_reports: 3 } }]);
      const after = (await get(moderator, '/moderation/reports?target_type=listing&limit=100').expect(200)).body.data;
      expect(after.map((g: { target_id: string }) => g.target_id)).not.toContain(a.listing_id);
      expectProblem(await post(moderator, `/moderation/reports/listing/${a.listing_id}/dismiss`, { reason: 'again' }), 404, 'not-found');
      // once dismissed, the same reporter may report again
      expect((await post(others[0]!, '/reports', { target_type: 'listing', listing_id: a.listing_id, reason: 'spam' })).status).toBe(201);
      expectProblem(await post(moderator, `/moderation/reports/listing/${b.listing_id}/dismiss`, {}), 400, 'validation-error');
    });

    it('every moderator route refuses a user who is not a moderator (403) and a caller without a credential (401)', async () => {
      const l = await createListing(t.app, seller);
      const routes: Array<[string, string, object]> = [
        ['get', '/moderation/reports', {}],
        ['post', `/moderation/reports/listing/${l.listing_id}/dismiss`, { reason: 'r' }],
        ['post', `/moderation/listings/${l.listing_id}/takedown`, { reason: 'r' }],
        ['post', `/moderation/listings/${l.listing_id}/restore`, { reason: 'r' }],
        ['post', `/moderation/users/${buyer.wallet}/suspend`, { reason: 'r' }],
        ['post', `/moderation/users/${buyer.wallet}/ban`, { reason: 'r' }],
        ['post', `/moderation/users/${buyer.wallet}/reinstate`, { reason: 'r' }],
      ];
      for (const [method, path, body] of routes) {
        for (const who of [seller, reporter]) {
          const r = method === 'get' ? await get(who, path) : await post(who, path, body);
          expectProblem(r, 403, 'forbidden');
        }
        const anon = method === 'get' ? await get(null, path) : await request(t.app).post(`${API}${path}`).send(body);
        expect(anon.status).toBe(401);
      }
      // nothing happened to the listing
      expect((await get(buyer, `/listings/${l.listing_id}`)).status).toBe(200);
    });

    it('a takedown needs a moderator, not a count of reports: a report storm by competitors leaves the listing up', async () => {
      const l = await createListing(t.app, seller);
      const competitors = await Promise.all(Array.from({ length: 8 }, () => user(t)));
      for (const c of competitors) expect((await post(c, '/reports', { target_type: 'listing', listing_id: l.listing_id, reason: 'scam' })).status).toBe(201);
      const still = await get(buyer, `/listings/${l.listing_id}`);
      expect(still.status).toBe(200);
      expect(still.body.taken_down).toBeNull();
      const search = (await get(buyer, `/marketplace/search?q=${encodeURIComponent('Logo design')}&limit=100`).expect(200)).body.data;
      expect(search.map((x: { listing_id: string }) => x.listing_id)).toContain(l.listing_id);
    });
  });

  describe('takedowns', () => {
    it('a taken-down listing leaves search and public reads (404 for others), is shown to its seller with the reason, and its open reports become actioned', async () => {
      const l = await createListing(t.app, seller);
      const active = async () => (await get(buyer, `/users/${seller.wallet}`).expect(200)).body.stats.active_listings_count as number;
      const activeBefore = await active();
      expect((await post(reporter, '/reports', { target_type: 'listing', listing_id: l.listing_id, reason: 'intellectual_property' })).status).toBe(201);
      const r = await post(moderator, `/moderation/listings/${l.listing_id}/takedown`, { reason: 'Uses a registered trademark' });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(Listing.parse(r.body).taken_down).toMatchObject({ reason: 'Uses a registered trademark', appealed_at: null, appeal: null });
      expectProblem(await post(moderator, `/moderation/listings/${l.listing_id}/takedown`, { reason: 'again' }), 409, 'invalid-state-transition');
      // the takedown is audited (listing.taken_down), the moderator as its actor
      const audited = await t.ctx.db.auditLogEntry.findMany({ where: { action: 'listing.taken_down', resourceId: l.listing_id } });
      expect(audited).toMatchObject([{ actorType: 'user', actorId: moderator.userId }]);

      expectProblem(await get(buyer, `/listings/${l.listing_id}`), 404, 'not-found');
      expectProblem(await get(null, `/listings/${l.listing_id}/token-metadata.json`), 404, 'not-found');
      expectProblem(await get(buyer, `/listings/${l.listing_id}/similar`), 404, 'not-found');
      expect(await active()).toBe(activeBefore - 1);
      const mine = await get(seller, `/listings/${l.listing_id}`);
      expect(mine.status).toBe(200);
      expect(mine.body.taken_down.reason).toBe('Uses a registered trademark');
      expect((await get(moderator, `/listings/${l.listing_id}`)).status).toBe(200);

      const ids = (b: { data: Array<{ listing_id: string }> }) => b.data.map((x) => x.listing_id);
      expect(ids((await get(buyer, `/marketplace/search?q=${encodeURIComponent('Logo design')}&limit=100`).expect(200)).body)).not.toContain(l.listing_id);
      expect(ids((await get(buyer, '/marketplace/listings?limit=100').expect(200)).body)).not.toContain(l.listing_id);
      expect(ids((await get(buyer, `/listings?seller_wallet=${seller.wallet}&limit=100`).expect(200)).body)).not.toContain(l.listing_id);
      expect(ids((await get(buyer, `/listings?seller_wallet=${seller.wallet}&status=available&limit=100`).expect(200)).body)).not.toContain(l.listing_id);
      // the seller's own list shows it
      expect(ids((await get(seller, `/listings?seller_wallet=${seller.wallet}&limit=100`).expect(200)).body)).toContain(l.listing_id);
      // reporting it is 404 for others now; its report was actioned (out of the queue)
      const queue = (await get(moderator, '/moderation/reports?limit=100').expect(200)).body.data;
      expect(queue.map((g: { target_id: string }) => g.target_id)).not.toContain(l.listing_id);
      const status = await t.ctx.db.$queryRaw<Array<{ status: string }>>`SELECT status FROM reports WHERE target_id = ${l.listing_id}::uuid`;
      expect(status.map((s) => s.status)).toEqual(['actioned']);
    });

    it('a taken-down listing cannot be ordered: POST /orders (also for a package) and an offer sent or accepted answer 409 listing-taken-down', async () => {
      const l = await createListing(t.app, seller);
      // an offer sent before the takedown
      const conv = await post(buyer, `/listings/${l.listing_id}/conversations`, { body: 'Custom job?' });
      expect(conv.status, JSON.stringify(conv.body)).toBe(201);
      const cid = conv.body.conversation.conversation_id as string;
      const offerBody = { title: 'Custom logo', description: 'One logo.', currency: 'USDC', price: 30, delivery_days: 3, revisions: 0 };
      const offer = await post(seller, `/conversations/${cid}/offers`, offerBody);
      expect(offer.status, JSON.stringify(offer.body)).toBe(201);

      expect((await post(moderator, `/moderation/listings/${l.listing_id}/takedown`, { reason: 'Scam reports confirmed' })).status).toBe(200);
      expectProblem(await post(buyer, '/orders', { listing_id: l.listing_id }), 409, 'listing-taken-down');
      const pkg = await createListing(t.app, seller, {
        price: undefined,
        duration: undefined,
        packages: [{ key: 'basic', name: 'Basic', price: 10, delivery_days: 2, revisions: 0, description: 'Basic' }],
      });
      expect((await post(moderator, `/moderation/listings/${pkg.listing_id}/takedown`, { reason: 'Same seller, same scam' })).status).toBe(200);
      expectProblem(await post(buyer, '/orders', { listing_id: pkg.listing_id, package: 'basic' }), 409, 'listing-taken-down');
      expectProblem(await post(buyer, `/offers/${offer.body.offer_id}/accept`), 409, 'listing-taken-down');
      expectProblem(await post(seller, `/conversations/${cid}/offers`, offerBody), 409, 'listing-taken-down');
      const n = await t.ctx.db.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM orders WHERE listing_id IN (${l.listing_id}::uuid, ${pkg.listing_id}::uuid)`;
      expect(Number(n[0]!.n)).toBe(0);

      // restored: orderable again, listing.restored to the seller
      const restored = await post(moderator, `/moderation/listings/${l.listing_id}/restore`, { reason: 'Appeal accepted' });
      expect(restored.status, JSON.stringify(restored.body)).toBe(200);
      expect(restored.body.taken_down).toBeNull();
      expect((await get(buyer, `/listings/${l.listing_id}`)).status).toBe(200);
      const ordered = await post(buyer, '/orders', { listing_id: l.listing_id });
      expect(ordered.status, JSON.stringify(ordered.body)).toBe(201);
      expectProblem(await post(moderator, `/moderation/listings/${l.listing_id}/restore`, { reason: 'again' }), 409, 'invalid-state-transition');
    });

    it('a takedown committed while an order is being created (after its checks, before its hold) refuses the hold under the listing\'s row lock: 409, no order', async () => {
      const l = await createListing(t.app, seller);
      beforeCreateHeld = async () => {
        expect((await post(moderator, `/moderation/listings/${l.listing_id}/takedown`, { reason: 'Raced' })).status).toBe(200);
      };
      expectProblem(await post(buyer, '/orders', { listing_id: l.listing_id }), 409, 'listing-taken-down');
      expect(beforeCreateHeld).toBeNull();
      const n = await t.ctx.db.$queryRaw<Array<{ n: number }>>`SELECT count(*)::int AS n FROM orders WHERE listing_id = ${l.listing_id}::uuid`;
      expect(Number(n[0]!.n)).toBe(0);
    });

    it('an order funded before the takedown still settles: the seller delivers, the buyer confirms, the escrow is released to the seller', async () => {
      const { orderId, listingId } = await fundedOrder(seller, buyer);
      expect((await post(moderator, `/moderation/listings/${listingId}/takedown`, { reason: 'Prohibited service' })).status).toBe(200);
      const before = escrow.balances.get(seller.wallet) ?? 0n;
      const done = await settle(seller, buyer, orderId);
      expect(done.status).toBe('completed');
      expect(escrow.sent.some((s) => s.ix === 'release' && s.orderId === orderId)).toBe(true);
      expect((escrow.balances.get(seller.wallet) ?? 0n) - before).toBe(25_245_000n); // 25.5 USDC less the 1 % fee
      // the buyer still reads her order
      expect((await get(buyer, `/orders/${orderId}`)).status).toBe(200);
    });

    it('the seller is told why (listing.taken_down, to the seller only) and appeals once: a second appeal is 409 already-appealed; others cannot appeal', async () => {
      const id = await takenDown(seller, moderator, 'Misleading description');
      const evs = await eventsOf(seller, `resource_type=listing&resource_id=${id}`);
      expect(evs[0]).toMatchObject({ type: 'listing.taken_down', data: { reason: 'Misleading description' } });
      expect((evs[0]!.data as Listing).taken_down?.reason).toBe('Misleading description');
      expect(await eventsOf(buyer, `resource_id=${id}`)).toEqual([]);

      expectProblem(await post(buyer, `/listings/${id}/appeal`, { text: 'Not mine but still' }), 404, 'not-found');
      expectProblem(await post(moderator, `/listings/${id}/appeal`, { text: 'Operator' }), 403, 'forbidden');
      const a = await post(seller, `/listings/${id}/appeal`, { text: 'The description is accurate: see the portfolio.' });
      expect(a.status, JSON.stringify(a.body)).toBe(200);
      expect(a.body.taken_down).toMatchObject({ appeal: 'The description is accurate: see the portfolio.' });
      expect(a.body.taken_down.appealed_at).toEqual(expect.any(String));
      const twice = await post(seller, `/listings/${id}/appeal`, { text: 'Again' });
      expectProblem(twice, 409, 'already-appealed');
      expect((await eventsOf(seller, `resource_id=${id}`)).map((e) => e.type).slice(0, 2)).toEqual(['listing.appealed', 'listing.taken_down']);
      // moderators see the appeal
      expect((await eventsOf(moderator, `type=listing.appealed&resource_id=${id}`)).length).toBe(1);

      const r = await post(moderator, `/moderation/listings/${id}/restore`, { reason: 'Appeal accepted' });
      expect(r.status).toBe(200);
      const restored = (await eventsOf(seller, `resource_id=${id}`))[0]!;
      expect(restored).toMatchObject({ type: 'listing.restored', data: { reason: 'Appeal accepted', taken_down: null } });
      // not taken down: nothing to appeal
      expectProblem(await post(seller, `/listings/${id}/appeal`, { text: 'Again' }), 409, 'invalid-state-transition');
    });
  });

  describe('suspensions and bans', () => {
    it('a suspended user cannot log in (403 account-suspended with until); her session is refused at once for listing, ordering and reporting; she still reads; user.suspended reaches her only', async () => {
      const kp = Keypair.generate();
      const s = await loginAs(t, kp);
      const suspendedUser: TestUser = { userId: s.userId, wallet: s.wallet, headers: s.headers };
      const own = await createListing(t.app, suspendedUser);
      const other = await createListing(t.app, seller);
      const until = new Date(Date.now() + 7 * 86_400_000).toISOString();
      const r = await post(moderator, `/moderation/users/${suspendedUser.wallet}/suspend`, { reason: 'Off-platform payment requests', until });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ wallet: suspendedUser.wallet, status: 'suspended', until, reason: 'Off-platform payment requests' });

      const login = await request(t.app).post(`${API}/auth/request_login`).send({ address: suspendedUser.wallet }).expect(200);
      const v = await request(t.app).post(`${API}/auth/verify_login`).send(signSiws(kp, login.body.sign_in_input));
      expectProblem(v, 403, 'account-suspended');
      expect(v.body).toMatchObject({ account_status: 'suspended', until });

      // the session from before is refused at once for what lists or orders
      expectProblem(await request(t.app).post(`${API}/listings`).set(suspendedUser.headers).send({ title: 'New logo work', description: 'd', price: 5, currency: 'USDC', category: 'design', duration: 2 }), 403, 'account-suspended');
      expectProblem(await request(t.app).patch(`${API}/listings/${own.listing_id}`).set(suspendedUser.headers).send({ title: 'Renamed logo work' }), 403, 'account-suspended');
      expectProblem(await post(suspendedUser, '/orders', { listing_id: other.listing_id }), 403, 'account-suspended');
      expectProblem(await post(suspendedUser, '/reports', { target_type: 'user', wallet: seller.wallet, reason: 'spam' }), 403, 'account-suspended');
      // and with an API key of hers too
      const { createApiKey } = await import('./helpers/app.js');
      const key = await createApiKey(t, { userId: suspendedUser.userId });
      expectProblem(await request(t.app).post(`${API}/orders`).set('x-api-key', key.key).set('Idempotency-Key', `mod-${++keys}`).send({ listing_id: other.listing_id }), 403, 'account-suspended');
      // reads go on
      expect((await get(suspendedUser, '/orders')).status).toBe(200);
      expect((await get(suspendedUser, `/listings/${own.listing_id}`)).status).toBe(200);
      const evs = await eventsOf(suspendedUser, 'resource_type=user');
      expect(evs[0]).toMatchObject({ type: 'user.suspended', resource_id: suspendedUser.userId, data: { status: 'suspended', reason: 'Off-platform payment requests' } });
      expect(await eventsOf(buyer, `resource_id=${suspendedUser.userId}`)).toEqual([]);

      // reinstated: she logs in and lists again
      const back = await post(moderator, `/moderation/users/${suspendedUser.wallet}/reinstate`, { reason: 'Suspension served' });
      expect(back.status, JSON.stringify(back.body)).toBe(200);
      expect(back.body).toMatchObject({ status: 'active', until: null, reason: 'Suspension served' });
      await loginAs(t, kp);
      expect((await createListing(t.app, suspendedUser)).listing_id).toEqual(expect.any(String));
      expect((await eventsOf(suspendedUser, 'resource_type=user'))[0]!.type).toBe('user.reinstated');
      expectProblem(await post(moderator, `/moderation/users/${suspendedUser.wallet}/reinstate`, { reason: 'again' }), 409, 'invalid-state-transition');
    });

    it('a suspended seller\'s open order still settles and she is paid: the buyer confirms, the escrow releases to her; her listings take no new order', async () => {
      const s = await user(t);
      const { orderId } = await fundedOrder(s, buyer);
      const other = await createListing(t.app, s);
      expect((await post(moderator, `/moderation/users/${s.wallet}/suspend`, { reason: 'Under review' })).status).toBe(200);
      // her listings take no new order meanwhile
      expectProblem(await post(buyer, '/orders', { listing_id: other.listing_id }), 409, 'listing-unavailable');
      const before = escrow.balances.get(s.wallet) ?? 0n;
      const done = await settle(s, buyer, orderId);
      expect(done.status).toBe('completed');
      expect((escrow.balances.get(s.wallet) ?? 0n) - before).toBe(25_245_000n);
      // she reads her order and its events
      expect((await get(s, `/orders/${orderId}`)).body.status).toBe('completed');
    });

    it('user.* events need profile:read on a personal access token: events:read alone sees none of them', async () => {
      const u = await user(t);
      const token = async (scopes: string[]) => {
        const r = await request(t.app).post(`${API}/user/tokens`).set(u.headers).send({ name: scopes.join(' '), scopes });
        expect(r.status, JSON.stringify(r.body)).toBe(201);
        return { userId: u.userId, wallet: u.wallet, headers: { authorization: `Bearer ${r.body.token}` } };
      };
      const [eventsOnly, withProfile] = [await token(['events:read']), await token(['events:read', 'profile:read'])];
      expect((await post(moderator, `/moderation/users/${u.wallet}/suspend`, { reason: 'Token scopes' })).status).toBe(200);
      expect(await eventsOf(eventsOnly, 'resource_type=user')).toEqual([]);
      expect((await eventsOf(withProfile, 'resource_type=user')).map((e) => e.type)).toEqual(['user.suspended']);
    });

    it('a ban is indefinite (until null; user.banned); a suspension ends by itself at until; moderators cannot act on themselves; until must be in the future', async () => {
      const kp = Keypair.generate();
      const s = await loginAs(t, kp);
      const u: TestUser = { userId: s.userId, wallet: s.wallet, headers: s.headers };
      const b = await post(moderator, `/moderation/users/${u.wallet}/ban`, { reason: 'Repeated fraud' });
      expect(b.status, JSON.stringify(b.body)).toBe(200);
      expect(b.body).toMatchObject({ status: 'banned', until: null });
      const login = await request(t.app).post(`${API}/auth/request_login`).send({ address: u.wallet }).expect(200);
      const v = await request(t.app).post(`${API}/auth/verify_login`).send(signSiws(kp, login.body.sign_in_input));
      expectProblem(v, 403, 'account-suspended');
      expect(v.body).toMatchObject({ account_status: 'banned', until: null });
      expect((await eventsOf(u, 'resource_type=user'))[0]!.type).toBe('user.banned');

      // a suspension whose end passed reads active without any job
      await t.ctx.db.$executeRaw`UPDATE users SET restriction = 'suspended', restricted_until = now() - interval '1 second' WHERE id = ${u.userId}::uuid`;
      await loginAs(t, kp);

      expectProblem(await post(moderator, `/moderation/users/${moderator.wallet}/suspend`, { reason: 'self' }), 403, 'forbidden');
      expectProblem(await post(moderator, `/moderation/users/${u.wallet}/suspend`, { reason: 'late', until: new Date(Date.now() - 60_000).toISOString() }), 400, 'validation-error', ['body.until']);
      expectProblem(await post(moderator, `/moderation/users/${Keypair.generate().publicKey.toBase58()}/ban`, { reason: 'nobody' }), 404, 'not-found');
    });
  });
});
