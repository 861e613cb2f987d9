/**
 * Crash safety of the listings' chain-then-database steps (issue 9, item 8): the HTTP app over a
 * real database (PGlite) and the FakeChain, with failures injected at named steps:
 *  - a database write refused after the chain step (a trigger in the database: no code seam);
 *  - a crash between the chain step and the database write (a hook that throws; the crashed instance
 *    is abandoned and a new one is started on the same database and chain = a restart);
 *  - chain faults after signing (answer lost, transaction lost, rejected, RPC outage).
 * After each, the state converges: every token on the chain belongs to exactly one listing row and
 * its on-chain name is the name of that row's title; no token without a row, nothing minted twice.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type BazaarApp } from '../server/src/app.js';
import { tokenName, type ListingsHooks } from '../server/src/modules/listings/index.js';
import { createTestApp } from './helpers/app.js';
import { TEST_DATABASE_URL } from './helpers/db.js';
import { failWrites } from './helpers/db-faults.js';
import { FakeChain } from './helpers/fake-chain.js';
import {
  API,
  countRows,
  createListing,
  expectProblem,
  listingBody,
  setListingStatus,
  user,
  type TestApp,
  type TestUser,
} from './helpers/marketplace-fixtures.js';

/** the database suites run on PGlite, and on PostgreSQL too when TEST_DATABASE_URL is set */
const targets: Array<[string, boolean]> = [['pglite', false], ...(TEST_DATABASE_URL ? [['postgres', true] as [string, boolean]] : [])];

describe.each(targets)('listing chain steps on %s', (_name, postgres) => {
  let t: TestApp;
  let app: TestApp['app'];
  let db: TestApp['ctx']['db'];
  let chain: FakeChain;
  let alice: TestUser;
  const instances: BazaarApp[] = [];

  beforeAll(async () => {
    chain = new FakeChain();
    t = await createTestApp({ chain, postgres });
    ({ app } = t);
    db = t.ctx.db;
    alice = await user(t);
  });

  afterAll(async () => {
    for (const b of instances) await b.services.stop();
    await t?.close();
  });

  /** Another service instance on the same database and chain (not started: no recovery pass ran). */
  function instance(hooks?: ListingsHooks): BazaarApp {
    const b = createApp({ ...t.ctx, listings: { recoveryIntervalMs: 0, hooks } });
    instances.push(b);
    return b;
  }

  /** A restarted process: a new instance, started (its start-up recovery pass has run). */
  async function restart(): Promise<BazaarApp> {
    // the processes started before are gone (else one of them would hold the leader lease and run the recovery)
    for (const old of instances) await old.services.stop();
    const b = instance();
    await b.services.start();
    return b;
  }

  const crash = () => {
    throw new Error('simulated crash');
  };

  /** Every token on the chain has exactly one listing row, named after its title; every row has its token. */
  async function expectConverged() {
    const rows = await db.$queryRaw<Array<{ id: string; title: string; mint: string }>>`
      SELECT id::text AS id, title, token_mint_address AS mint FROM listings`;
    const byMint = new Map(rows.map((r) => [r.mint, r]));
    expect(byMint.size, 'one row per token').toBe(rows.length);
    for (const token of chain.tokens.values()) {
      const row = byMint.get(token.mint);
      expect(row, `orphaned token ${token.mint} (${token.name})`).toBeDefined();
      expect(token.name, `on-chain name of listing ${row!.id}`).toBe(tokenName(row!.title));
    }
    for (const r of rows) expect(chain.tokens.has(r.mint), `listing ${r.id} without its token`).toBe(true);
  }

  const post = (a: unknown, body: Record<string, unknown>) => request(a as BazaarApp).post(`${API}/listings`).set(alice.headers).send(body);
  const tokenNamed = (name: string) => [...chain.tokens.values()].filter((x) => x.name === name);

  describe('POST /listings: the mint is recorded before it is sent, the row written once the token exists', () => {
    it('a database write refused after the mint: 503 with the listing id, nothing shown; a restart stores the listing with its token', async () => {
      const title = 'Minted, database refused';
      const restore = await failWrites(db, 'listings', 'INSERT');
      let res: request.Response;
      try {
        res = await post(app, listingBody({ title }));
      } finally {
        await restore();
      }
      expectProblem(res, 503, 'service-unavailable');
      expect(res.headers['retry-after']).toBe('5');
      const id = res.body.listing_id as string;
      const mint = FakeChain.mintOf(id);
      expect(res.body.token_mint_address).toBe(mint);
      expect(chain.tokens.get(mint)?.name).toBe(title);

      // not a listing yet: no read shows it
      expectProblem(await request(app).get(`${API}/listings/${id}`).set(alice.headers), 404, 'not-found');
      expectProblem(await request(app).get(`${API}/listings/${id}/token-metadata.json`), 404, 'not-found');
      const mine = await request(app).get(`${API}/listings?seller_wallet=${alice.wallet}`).set(alice.headers);
      expect(mine.body.data.map((l: { listing_id: string }) => l.listing_id)).not.toContain(id);
      const found = await request(app).get(`${API}/marketplace/search?query=refused`).set(alice.headers);
      expect(found.status).toBe(200);
      expect(found.body.data.map((l: { listing_id: string }) => l.listing_id)).not.toContain(id);

      const b = await restart();
      const got = await request(b).get(`${API}/listings/${id}`).set(alice.headers);
      expect(got.status, JSON.stringify(got.body)).toBe(200);
      expect(got.body).toMatchObject({
        status: 'available',
        title,
        token_mint_address: mint,
        mint_transaction: { signature: chain.tokens.get(mint)!.signature, slot: chain.tokens.get(mint)!.slot },
      });
      await expectConverged();
    });

    it('a crash between the mint and the insert: the restarted service stores the listing once, with the one token', async () => {
      const title = 'Minted right before a crash';
      const res = await post(instance({ afterMint: crash }), listingBody({ title }));
      expectProblem(res, 500, 'internal-error');
      const [token] = tokenNamed(title);
      expect(token).toBeDefined();
      const rows = () => db.$queryRaw<Array<{ id: string }>>`SELECT id::text AS id FROM listings WHERE token_mint_address = ${token.mint}`;
      expect(await rows()).toHaveLength(0);

      const tokens = chain.tokens.size;
      await restart();
      expect(await rows()).toHaveLength(1);
      expect(chain.tokens.size).toBe(tokens); // recovery finishes, it never mints
      expect(tokenNamed(title)).toHaveLength(1);
      await expectConverged();
    });

    it('a timeout whose mint landed is read back in the same request: 201, one token', async () => {
      const tokens = chain.tokens.size;
      chain.failNextSend('timeout');
      const res = await post(app, listingBody({ title: 'Minted, answer timed out' }));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.token_mint_address).toBe(FakeChain.mintOf(res.body.listing_id));
      expect(chain.tokens.size).toBe(tokens + 1);
      await expectConverged();
    });

    it('an RPC outage right after the mint was sent: 503 with the listing id, also on a repeat; once the RPC is back the repeat returns that listing', async () => {
      const body = listingBody({ title: 'Minted during an RPC outage' });
      const tokens = chain.tokens.size;
      chain.failNextSend('outage');
      let first: request.Response;
      let again: request.Response;
      try {
        first = await post(app, body);
        again = await post(app, body);
      } finally {
        chain.down = false;
      }
      expectProblem(first, 503, 'chain-unavailable');
      const id = first.body.listing_id as string;
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(first.body.token_mint_address).toBe(FakeChain.mintOf(id));
      expectProblem(again, 503, 'chain-unavailable');
      expect(again.body.listing_id).toBe(id);
      expectProblem(await request(app).get(`${API}/listings/${id}`).set(alice.headers), 404, 'not-found');

      const third = await post(app, body);
      expect(third.status, JSON.stringify(third.body)).toBe(201);
      expect(third.body.listing_id).toBe(id);
      expect(chain.tokens.size).toBe(tokens + 1);
      await expectConverged();
    });

    it('a mint that never landed: the repeat waits while it may land, then mints at the same address once its blockhash expired', async () => {
      const body = listingBody({ title: 'Mint lost on the way' });
      const tokens = chain.tokens.size;
      chain.failNextSend('lost');
      const first = await post(app, body);
      expectProblem(first, 503, 'chain-unavailable');
      const id = first.body.listing_id as string;
      expectProblem(await post(app, body), 503, 'chain-unavailable'); // still in flight: nothing sent again
      expect(chain.tokens.size).toBe(tokens);

      chain.advanceBlocks();
      const res = await post(app, body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.listing_id).toBe(id);
      expect(res.body.token_mint_address).toBe(FakeChain.mintOf(id));
      expect(chain.tokens.size).toBe(tokens + 1);
      await expectConverged();
    });

    it('an abandoned mint that never landed is retired by the recovery pass: no token, no listing; the same request later starts afresh', async () => {
      const body = listingBody({ title: 'Mint lost and abandoned' });
      const tokens = chain.tokens.size;
      chain.failNextSend('lost');
      const first = await post(app, body);
      expectProblem(first, 503, 'chain-unavailable');
      const id = first.body.listing_id as string;

      const recovery = t.services.listings.recovery;
      expect(Object.values(await recovery.runOnce())).toEqual(['open']); // may still land
      chain.advanceBlocks();
      expect(Object.values(await recovery.runOnce())).toEqual(['failed']);
      expect(await recovery.runOnce()).toEqual({});
      expectProblem(await request(app).get(`${API}/listings/${id}`).set(alice.headers), 404, 'not-found');
      expect(chain.tokens.size).toBe(tokens);

      const res = await post(app, body);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.listing_id).not.toBe(id);
      await expectConverged();
    });

    it('a rejected mint: 502, nothing stored, nothing left open', async () => {
      const rows = await countRows(db, 'listings');
      const tokens = chain.tokens.size;
      chain.failNextSend('rejected');
      expectProblem(await post(app, listingBody({ title: 'Mint rejected' })), 502, 'chain-transaction-failed');
      expect(await countRows(db, 'listings')).toBe(rows);
      expect(chain.tokens.size).toBe(tokens);
      expect(await t.services.listings.recovery.runOnce()).toEqual({});
    });

    it('a refused intent record sends nothing (the intent comes before the send)', async () => {
      const tokens = chain.tokens.size;
      const restore = await failWrites(db, 'chain_intents', 'INSERT');
      try {
        const res = await post(app, listingBody({ title: 'Intent refused' }));
        expect(res.status).toBeGreaterThanOrEqual(500);
      } finally {
        await restore();
      }
      expect(chain.tokens.size).toBe(tokens);
    });
  });

  describe('PATCH /listings/{id}: the on-chain name follows the stored title', () => {
    const patch = (a: unknown, id: string, body: Record<string, unknown>) =>
      request(a as BazaarApp).patch(`${API}/listings/${id}`).set(alice.headers).send(body);
    const titleOf = async (id: string) => (await request(app).get(`${API}/listings/${id}`).set(alice.headers)).body.title as string;

    it('a database write refused after the token rename: 503, the title unchanged and the on-chain name put back', async () => {
      const l = await createListing(app, alice, { title: 'Before the refused rename' });
      const restore = await failWrites(db, 'listings', 'UPDATE');
      let res: request.Response;
      try {
        res = await patch(app, l.listing_id, { title: 'After the refused rename' });
      } finally {
        await restore();
      }
      expectProblem(res, 503, 'service-unavailable');
      expect(await titleOf(l.listing_id)).toBe('Before the refused rename');
      expect(chain.tokens.get(l.token_mint_address)!.name).toBe('Before the refused rename');
      await expectConverged();
    });

    it('a crash between the token rename and the title write: the restarted service puts the on-chain name back', async () => {
      const l = await createListing(app, alice, { title: 'Named before a crash' });
      expectProblem(await patch(instance({ afterTokenUpdate: crash }), l.listing_id, { title: 'Renamed right before a crash' }), 500, 'internal-error');
      expect(chain.tokens.get(l.token_mint_address)!.name).toBe('Renamed right before a crash'); // diverged until recovery
      await restart();
      expect(await titleOf(l.listing_id)).toBe('Named before a crash');
      expect(chain.tokens.get(l.token_mint_address)!.name).toBe('Named before a crash');
      await expectConverged();
      // and the seller's repeat goes through
      expect((await patch(app, l.listing_id, { title: 'Renamed after the restart' })).status).toBe(200);
      expect(chain.tokens.get(l.token_mint_address)!.name).toBe('Renamed after the restart');
      await expectConverged();
    });

    it('a rename whose answer was lost (it landed): 503 and no change; the recovery pass puts the name back, the repeat applies it', async () => {
      const l = await createListing(app, alice, { title: 'Named before a timeout' });
      chain.failNextSend('timeout');
      expectProblem(await patch(app, l.listing_id, { title: 'Renamed into a timeout' }), 503, 'chain-unavailable');
      expect(await titleOf(l.listing_id)).toBe('Named before a timeout');
      expect(Object.values(await t.services.listings.recovery.runOnce())).toEqual(['confirmed']);
      expect(chain.tokens.get(l.token_mint_address)!.name).toBe('Named before a timeout');
      await expectConverged();
      expect((await patch(app, l.listing_id, { title: 'Renamed into a timeout' })).status).toBe(200);
      expect(chain.tokens.get(l.token_mint_address)!.name).toBe('Renamed into a timeout');
      await expectConverged();
    });

    it('a rename still in flight is left alone until it can no longer land', async () => {
      const l = await createListing(app, alice, { title: 'Named before a lost rename' });
      chain.failNextSend('lost');
      expectProblem(await patch(app, l.listing_id, { title: 'Rename lost on the way' }), 503, 'chain-unavailable');
      const recovery = t.services.listings.recovery;
      const updatesBefore = chain.calls.filter((c) => c.method === 'updateListingToken').length;
      expect(Object.values(await recovery.runOnce())).toEqual(['open']);
      expect(chain.calls.filter((c) => c.method === 'updateListingToken').length).toBe(updatesBefore);
      chain.advanceBlocks();
      expect(Object.values(await recovery.runOnce())).toEqual(['confirmed']);
      expect(await recovery.runOnce()).toEqual({});
      await expectConverged();
    });

    it('the recovery pass settling a rename before its title is written: the request answers 503, nothing diverges', async () => {
      const l = await createListing(app, alice, { title: 'Named before a race' });
      const other = await restart();
      const racing = instance({ afterTokenUpdate: async () => void (await other.services.listings.recovery.runOnce()) });
      const res = await patch(racing, l.listing_id, { title: 'Renamed during a recovery pass' });
      expectProblem(res, 503, 'chain-unavailable');
      expect(await titleOf(l.listing_id)).toBe('Named before a race');
      expect(chain.tokens.get(l.token_mint_address)!.name).toBe('Named before a race');
      expect(await t.services.listings.recovery.runOnce()).toEqual({});
      await expectConverged();
    });

    it('a title stored while the recovery pass puts the name back: it re-applies the new title instead of confirming a stale name', async () => {
      const l = await createListing(app, alice, { title: 'Named before two writers' });
      const repo = t.services.listings.repo;
      // a request renamed the token and recorded its intent, then stalled before storing the title
      let intent = '';
      await chain.updateListingToken(l.token_mint_address, { name: 'Stored during recovery' }, {
        onSigned: async (a) => void (intent = (await repo.recordRename(l.listing_id, 'Stored during recovery', a)).id),
      });
      // the recovery pass puts the name back; while its update is in flight the stalled request stores its title and dies
      chain.duringNextSend(async () => {
        expect(await repo.applyRename(intent, l.listing_id, ['available', 'unlisted'], { title: 'Stored during recovery' })).not.toBeNull();
      });
      expect(Object.values(await t.services.listings.recovery.runOnce())).toEqual(['confirmed']);
      expect(await titleOf(l.listing_id)).toBe('Stored during recovery');
      expect(chain.tokens.get(l.token_mint_address)!.name).toBe('Stored during recovery');
      await expectConverged();
    });

    it('concurrent renames and recovery passes: the on-chain name ends as the stored title, nothing left open', async () => {
      const l = await createListing(app, alice, { title: 'Before concurrent renames' });
      const recovery = t.services.listings.recovery;
      const titles = Array.from({ length: 8 }, (_, i) => `Concurrent rename number ${i}`);
      const results = await Promise.all([
        ...titles.map((title) => patch(app, l.listing_id, { title })),
        recovery.runOnce(),
        instance().services.listings.recovery.runOnce(),
      ]);
      for (const r of results.slice(0, titles.length) as request.Response[]) expect([200, 503], JSON.stringify(r.body)).toContain(r.status);
      await recovery.runOnce();
      expect(await recovery.runOnce()).toEqual({});
      expect(titles).toContain(await titleOf(l.listing_id));
      await expectConverged();
    });

    it('a listing reserved while its token was being renamed: 409 and the on-chain name put back', async () => {
      const l = await createListing(app, alice, { title: 'Named before a reservation' });
      const reserving = instance({ afterTokenUpdate: () => setListingStatus(db, l.listing_id, 'reserved') });
      expectProblem(await patch(reserving, l.listing_id, { title: 'Renamed while reserved' }), 409, 'invalid-state-transition');
      expect(chain.tokens.get(l.token_mint_address)!.name).toBe('Named before a reservation');
      expect(await t.services.listings.recovery.runOnce()).toEqual({});
      await expectConverged();
    });
  });
});
