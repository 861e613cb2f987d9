/**
 * Listing holds against griefing (issue 21, item 4), over HTTP on the real chain (the shared localnet):
 * a hold is tied to a buyer wallet that can pay (balances read on chain at POST /orders), one client
 * network holds a bounded number of listings, a buyer cannot renew a hold on the same listing forever
 * (cool-down after an unpaid expiry), contested listings and pressed networks get a shorter payment
 * window, and a held listing reads `reserved` with `held_until`.
 *
 * The app trusts one proxy hop (TRUST_PROXY=1), so each test names its client network with
 * X-Forwarded-For; the service clock runs `clockOffsetMs` ahead of the wall clock to reach expiries.
 *
 * Issue 26 audit: a Solana Action's buy (POST /api/actions/listings/{id} `{ account }`) proves nothing about the
 * wallet it names, so a stranger's blink orders in a wallet's name must not fill its owner's unpaid limit or
 * balance headroom, nor put its owner on a cool-down.
 */
import { randomUUID } from 'node:crypto';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction, sendAndConfirmTransaction } from '@solana/web3.js';
import { ACCOUNT_SIZE, createBurnCheckedInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sharedBootstrappedChain } from './helpers/shared-chain';
import type { BootstrappedChain } from './helpers/localnet';
import { createApiKey, createTestApp, loginAs, type TestApp } from './helpers/app';
import { dbBackends } from './helpers/shared-db';
import { party as newParty, USDC, type Party, type PartyOptions } from './helpers/parties';

const API = '/api/v1';
const PROBLEM = 'https://bazaar.dev/problems/';
const TTL = 900;
const CONTESTED_TTL = 300;
/** below the access tokens' hour, so the test's sessions outlive the clock moves */
const COOLDOWN = 1200;
const PER_NETWORK = 2;


let env: BootstrappedChain;
let t: TestApp;
let clockOffsetMs = 0;

/** A logged-in wallet with `sol` SOL (default 1) and `usdc` test USDC on chain. */
const party = (o: PartyOptions = {}) => newParty(t, env, o);

async function listing(seller: Party, price = 1): Promise<string> {
  const res = await request(t.app)
    .post(`${API}/listings`)
    .set(seller.headers)
    .send({ title: 'Copy editing, one article', description: 'Edited within a day.', price, currency: 'USDC', category: 'writing', duration: 2 });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.listing_id;
}

/** POST /orders from client network `ip` (X-Forwarded-For, one trusted hop). */
const order = (buyer: { headers: Record<string, string> }, listingId: string, ip: string) =>
  request(t.app).post(`${API}/orders`).set(buyer.headers).set('X-Forwarded-For', ip).set('Idempotency-Key', randomUUID()).send({ listing_id: listingId });

/** A blink client's buy naming `account` (nobody proves holding it), from client network `ip`. */
const blinkBuy = (listingId: string, account: string, ip: string) =>
  request(t.app).post(`/api/actions/listings/${listingId}`).set('X-Forwarded-For', ip).send({ account });

const getListing = (who: Party, id: string) => request(t.app).get(`${API}/listings/${id}`).set(who.headers);

const windowSeconds = (o: { created_at: string; payment_expires_at: string }) =>
  (new Date(o.payment_expires_at).getTime() - new Date(o.created_at).getTime()) / 1000;

/** Move the service clock past the payment window (+ grace) of `seconds` and let the watcher expire. */
async function expireUnpaid(seconds: number): Promise<string[]> {
  clockOffsetMs += (seconds + 121) * 1000;
  return (await t.services.orders!.watcher.runOnce()).expired;
}

beforeAll(async () => {
  env = await sharedBootstrappedChain('order-holds');
});

afterAll(async () => {
  await env?.stop();
});

describe.each(dbBackends)('on $name', ({ postgres }) => {
  beforeAll(async () => {
    clockOffsetMs = 0;
    t = await createTestApp({
      chain: env.chain,
      postgres,
      now: () => new Date(Date.now() + clockOffsetMs),
      config: { currencies: env.boot.currencies, trustProxy: 1, publicBaseUrl: 'https://bazaar.test', actionsEnabled: true, actionsRateLimitPerMinute: 10_000 },
      orders: {
        watcherIntervalMs: 0,
        reconcileIntervalMs: 0,
        paymentTtlSeconds: TTL,
        contestedPaymentTtlSeconds: CONTESTED_TTL,
        holdCooldownSeconds: COOLDOWN,
        maxUnpaidOrdersPerIp: PER_NETWORK,
      },
    });
  });

  afterAll(async () => {
    await t?.close();
  });

  describe('a hold needs a buyer who can pay (balances read on chain at creation)', () => {
    it('a wallet with 0 SOL cannot hold a listing: 409 insufficient-funds (sol), the amount being fee + rent read from the RPC', async () => {
      const [seller, broke] = await Promise.all([party(), party({ usdc: 10, sol: 0 })]);
      const l = await listing(seller, 2);
      const res = await order(broke, l, '192.0.2.10');
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.body).toMatchObject({ type: `${PROBLEM}insufficient-funds`, balance: 'sol', wallet: broke.wallet, available_base_units: '0' });
      // what the fund transaction takes from the buyer: 2 signatures (buyer, platform authority) + the rent of
      // the order PDA and the vault, as the cluster quotes them
      const c = env.chain.connection;
      const [orderRent, vaultRent] = await Promise.all([
        c.getMinimumBalanceForRentExemption(env.chain.escrow.orderAccountSize()),
        c.getMinimumBalanceForRentExemption(ACCOUNT_SIZE),
      ]);
      const fee = 2 * 5000;
      expect(BigInt(res.body.required_base_units)).toBe(BigInt(fee + orderRent + vaultRent));
      console.info(`[holds] SOL a wallet needs to hold one USDC listing: ${res.body.required_base_units} lamports (fee ${fee} + order rent ${orderRent} + vault rent ${vaultRent})`);
      // nothing is held: the listing reads available and a buyer who can pay gets it
      expect(await t.ctx.db.order.count({ where: { listingId: l } })).toBe(0);
      expect((await getListing(seller, l)).body).toMatchObject({ status: 'available', held_until: null });
      const buyer = await party({ usdc: 5 });
      expect((await order(buyer, l, '192.0.2.10')).status).toBe(201);
    });

    it('a wallet without the price cannot hold (token); its balance must cover its other unpaid orders too', async () => {
      const [seller, noUsdc, buyer] = await Promise.all([party(), party({ usdc: 0 }), party({ usdc: 5 })]);
      const [a, b] = [await listing(seller, 3), await listing(seller, 3)];
      const none = await order(noUsdc, a, '192.0.2.11');
      expect(none.status).toBe(409);
      expect(none.body).toMatchObject({ type: `${PROBLEM}insufficient-funds`, balance: 'token', currency: 'USDC', required_base_units: '3000000', available_base_units: '0' });
      expect((await order(buyer, a, '192.0.2.12')).status).toBe(201);
      // 5 USDC cover one 3 USDC order, not two at once
      const second = await order(buyer, b, '192.0.2.12');
      expect(second.status).toBe(409);
      expect(second.body).toMatchObject({ balance: 'token', required_base_units: '6000000', available_base_units: '5000000' });
    });
  });

  describe('holds per client network', () => {
    it(`one network cannot hold more than ${PER_NETWORK} listings (429 too-many-holds, Retry-After); others and API keys are not affected`, async () => {
      const seller = await party();
      const buyers = await Promise.all(Array.from({ length: 5 }, () => party({ usdc: 5 })));
      const ls: string[] = [];
      for (let i = 0; i < 6; i++) ls.push(await listing(seller));
      const ip = '203.0.113.7';
      const first = await order(buyers[0]!, ls[0]!, ip);
      const second = await order(buyers[1]!, ls[1]!, ip);
      expect([first.status, second.status]).toEqual([201, 201]);
      // a network holding half its limit already gets the shorter payment window
      expect(windowSeconds(first.body)).toBe(TTL);
      expect(windowSeconds(second.body)).toBe(CONTESTED_TTL);
      // fresh wallets from the same network: refused, whatever the wallet
      const third = await order(buyers[2]!, ls[2]!, ip);
      expect(third.status).toBe(429);
      expect(third.body).toMatchObject({ type: `${PROBLEM}too-many-holds`, holds: PER_NETWORK, limit: PER_NETWORK });
      // until the earliest of the network's holds lapses: the second one's (shorter window) + grace
      const retryAfter = Number(third.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(CONTESTED_TTL);
      expect(retryAfter).toBeLessThanOrEqual(CONTESTED_TTL + 121);
      expect((await getListing(seller, ls[2]!)).body.status).toBe('available');
      // another network is not affected
      expect((await order(buyers[2]!, ls[2]!, '198.51.100.20')).status).toBe(201);
      // IPv6: one /64 is one network
      expect((await order(buyers[3]!, ls[3]!, '2001:db8:7:7::1')).status).toBe(201);
      expect((await order(buyers[3]!, ls[4]!, '2001:db8:7:7:abcd::2')).status).toBe(201);
      const v6 = await order(buyers[4]!, ls[5]!, '2001:db8:7:7:ffff::3');
      expect(v6.status).toBe(429);
      // an API key (operator-issued integration) is not counted against its server's network
      const key = await createApiKey(t, { name: 'shop', userId: buyers[4]!.userId });
      const viaKey = await order({ headers: { 'x-api-key': key.key } }, ls[5]!, '2001:db8:7:7:ffff::3');
      expect(viaKey.status, JSON.stringify(viaKey.body)).toBe(201);
    });

    it(`fresh wallets of one network racing for ${PER_NETWORK + 3} listings at once: exactly ${PER_NETWORK} holds`, async () => {
      const seller = await party();
      const buyers = await Promise.all(Array.from({ length: PER_NETWORK + 3 }, () => party({ usdc: 2 })));
      const ls: string[] = [];
      for (let i = 0; i < buyers.length; i++) ls.push(await listing(seller));
      const res = await Promise.all(buyers.map((b, i) => order(b, ls[i]!, '203.0.113.99')));
      expect(res.filter((r) => r.status === 201)).toHaveLength(PER_NETWORK);
      expect(res.filter((r) => r.status === 429).map((r) => r.body.type)).toEqual(Array(3).fill(`${PROBLEM}too-many-holds`));
    });
  });

  describe('insufficient funds over HTTP (issue 23 item 3)', () => {
    it('needed and available per asset: 16.91 USDC and the SOL for fees, in base units and UI amounts', async () => {
      const [seller, short] = await Promise.all([party(), party({ usdc: 2 })]);
      const l = await listing(seller, 16.91);
      const res = await order(short, l, '192.0.2.40');
      expect(res.status, JSON.stringify(res.body)).toBe(409);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      const mint = env.boot.currencies.find((c) => c.code === 'USDC')!.mint;
      expect(res.body).toMatchObject({
        type: `${PROBLEM}insufficient-funds`,
        balance: 'token',
        needed: [
          { asset: 'token', currency: 'USDC', mint, decimals: 6, base_units: '16910000', amount: '16.91' },
          { asset: 'sol', currency: 'SOL', mint: null, decimals: 9 },
        ],
        available: [
          { asset: 'token', currency: 'USDC', mint, decimals: 6, base_units: '2000000', amount: '2' },
          { asset: 'sol', currency: 'SOL', mint: null, decimals: 9, base_units: String(LAMPORTS_PER_SOL), amount: '1' },
        ],
      });
      expect(res.body.detail).toContain('16.91 USDC');
      console.info(`[funds] ${res.body.detail}`);
    });

    it('a wallet emptied after ordering: a fresh payment and the signed transaction answer 409 insufficient-funds, not 502', async () => {
      const [seller, buyer] = await Promise.all([party(), party({ usdc: 3 })]);
      const l = await listing(seller, 2);
      const created = await order(buyer, l, '192.0.2.41');
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      // the buyer burns her USDC (spends it elsewhere) before paying
      const mint = new PublicKey(env.boot.currencies.find((c) => c.code === 'USDC')!.mint);
      const ata = getAssociatedTokenAddressSync(mint, buyer.kp.publicKey);
      await sendAndConfirmTransaction(env.chain.connection, new Transaction().add(createBurnCheckedInstruction(ata, mint, buyer.kp.publicKey, USDC(3), 6)), [buyer.kp]);
      const fresh = await request(t.app).post(`${API}/orders/${created.body.order_id}/payment`).set(buyer.headers);
      expect(fresh.status, JSON.stringify(fresh.body)).toBe(409);
      expect(fresh.body).toMatchObject({
        type: `${PROBLEM}insufficient-funds`,
        needed: [{ asset: 'token', amount: '2' }, { asset: 'sol' }],
        available: [{ asset: 'token', amount: '0' }, { asset: 'sol' }],
      });
      const tx = Transaction.from(Buffer.from(created.body.payment.transaction, 'base64'));
      tx.partialSign(buyer.kp);
      const sent = await request(t.app).post(`${API}/orders/${created.body.order_id}/transaction`).set(buyer.headers).send({ signed_transaction: tx.serialize().toString('base64') });
      expect(sent.status, JSON.stringify(sent.body)).toBe(409);
      expect(sent.body).toMatchObject({ type: `${PROBLEM}insufficient-funds`, balance: 'token', available_base_units: '0' });
      expect((await request(t.app).get(`${API}/orders/${created.body.order_id}`).set(buyer.headers)).body.status).toBe('awaiting_payment');
    });
  });

  describe('the listing shows its hold', () => {
    it('reads reserved with held_until while an unpaid order holds it; filters and search follow; paid: reserved without end; expired: available', async () => {
      const [seller, buyer, other, stranger] = await Promise.all([party(), party({ usdc: 10 }), party({ usdc: 10 }), party()]);
      const held = await listing(seller, 2);
      const toPay = await listing(seller, 2);
      const created = await order(buyer, held, '192.0.2.30');
      expect(created.status).toBe(201);
      const heldUntil = new Date(new Date(created.body.payment_expires_at).getTime() + 120_000).toISOString();
      expect((await getListing(stranger, held)).body).toMatchObject({ status: 'reserved', held_until: heldUntil });
      // a later buyer is told the same
      const later = await order(other, held, '192.0.2.31');
      expect(later.status).toBe(409);
      expect(later.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(later.body).toMatchObject({ type: `${PROBLEM}listing-unavailable`, held_until: heldUntil });
      // held_until is a member for clients to show in the user's zone; the detail says it in words, no raw timestamp
      expect(later.body.detail).toMatch(/in at most \d+ minutes/);
      expect(later.body.detail).not.toMatch(/\d{4}-\d{2}-\d{2}T/);
      // the status filters and search return what the listings read
      const ids = (r: request.Response) => (r.body.data as Array<{ listing_id: string }>).map((x) => x.listing_id);
      const mine = (q: string) => request(t.app).get(`${API}/listings?seller_wallet=${seller.wallet}${q}`).set(stranger.headers);
      expect(ids(await mine('&status=available'))).toEqual([toPay]);
      expect(ids(await mine('&status=reserved'))).toEqual([held]);
      const browse = await request(t.app).get(`${API}/marketplace/listings?status=reserved`).set(stranger.headers);
      expect(ids(browse)).toContain(held);
      // every read of the listing states the same hold
      const inBrowse = (browse.body.data as Array<{ listing_id: string }>).find((x) => x.listing_id === held);
      expect(inBrowse).toMatchObject({ status: 'reserved', held_until: heldUntil });
      expect((await mine('&status=reserved')).body.data[0]).toMatchObject({ status: 'reserved', held_until: heldUntil });
      const search = await request(t.app).get(`${API}/marketplace/search?seller_wallet=${seller.wallet}`).set(stranger.headers);
      expect(ids(search)).toEqual([toPay]);

      // paid: reserved by a funded order, no end time
      const paying = await order(other, toPay, '192.0.2.31');
      const tx = Transaction.from(Buffer.from(paying.body.payment.transaction, 'base64'));
      tx.partialSign(other.kp);
      const paid = await request(t.app).post(`${API}/orders/${paying.body.order_id}/transaction`).set(other.headers).send({ signed_transaction: tx.serialize().toString('base64') });
      expect(paid.status, JSON.stringify(paid.body)).toBe(200);
      expect((await getListing(stranger, toPay)).body).toMatchObject({ status: 'reserved', held_until: null });

      // unpaid past its window: the hold ends, the listing reads available again
      expect(await expireUnpaid(TTL)).toContain(created.body.order_id);
      expect((await getListing(stranger, held)).body).toMatchObject({ status: 'available', held_until: null });
    });
  });

  describe('a hold cannot be renewed forever', () => {
    it('after an unpaid expiry the same buyer (user, wallet or network) waits out the cool-down; others get the contested window', async () => {
      const [seller, buyer, sameNetwork, elsewhere] = await Promise.all([party(), party({ usdc: 5 }), party({ usdc: 5 }), party({ usdc: 5 })]);
      const l = await listing(seller, 1);
      const first = await order(buyer, l, '192.0.2.40');
      expect(first.status).toBe(201);
      expect(windowSeconds(first.body)).toBe(TTL);
      expect(await expireUnpaid(TTL)).toContain(first.body.order_id);

      // the same buyer, from anywhere
      const again = await order(buyer, l, '198.51.100.41');
      expect(again.status).toBe(409);
      expect(again.body.type).toBe(`${PROBLEM}hold-cooldown`);
      const retryAt = new Date(new Date(first.body.payment_expires_at).getTime() + COOLDOWN * 1000).toISOString();
      expect(again.body.retry_at).toBe(retryAt);
      expect(Number(again.headers['retry-after'])).toBeGreaterThan(COOLDOWN - 200);
      // a fresh wallet from the same network
      expect((await order(sameNetwork, l, '192.0.2.40')).body.type).toBe(`${PROBLEM}hold-cooldown`);
      // other buyers may order the contested listing, with the shorter window
      const other = await order(elsewhere, l, '198.51.100.42');
      expect(other.status).toBe(201);
      expect(windowSeconds(other.body)).toBe(CONTESTED_TTL);
      expect(await expireUnpaid(CONTESTED_TTL)).toContain(other.body.order_id);

      // after the cool-down the first buyer may order it again; both lapses are older than the cool-down by
      // then, so the listing is no longer contested: the full window
      clockOffsetMs += COOLDOWN * 1000;
      const later = await order(buyer, l, '192.0.2.40');
      expect(later.status, JSON.stringify(later.body)).toBe(201);
      expect(windowSeconds(later.body)).toBe(TTL);
    });
  });
  describe('a blink POST naming someone else\'s wallet (issue 26 audit: nobody proved holding it)', () => {
    it('a stranger\'s blink orders in a wallet\'s name do not fill its owner\'s signed-in unpaid limit (they have their own)', async () => {
      const [seller, victim] = await Promise.all([party(), party({ usdc: 9 })]);
      const ls = [await listing(seller, 2), await listing(seller, 2), await listing(seller, 2), await listing(seller, 2)];
      // the stranger names the victim's wallet for three listings, from two networks (PER_NETWORK holds each)
      for (const [i, ip] of [[0, '203.0.113.70'], [1, '203.0.113.70'], [2, '203.0.113.71']] as const) {
        const r = await blinkBuy(ls[i]!, victim.wallet, ip);
        expect(r.status, JSON.stringify(r.body)).toBe(200);
      }
      // the action orders have their own limit per wallet (ORDER_MAX_UNPAID_PER_BUYER, 3): a fourth is refused
      const fourth = await blinkBuy(ls[3]!, victim.wallet, '203.0.113.72');
      expect(fourth.status).toBe(409);
      expect(fourth.body).toEqual({ message: expect.stringMatching(/unpaid/i) });
      // the wallet's owner, signed in with SIWS, still orders (before: 409 too-many-unpaid-orders)
      const mine = await order(victim, ls[3]!, '203.0.113.73');
      expect(mine.status, JSON.stringify(mine.body)).toBe(201);
      // and sees the stranger's orders as his own unpaid ones (he may pay or ignore them; they lapse)
      const unpaid = await request(t.app).get(`${API}/orders?role=buyer&status=awaiting_payment`).set(victim.headers);
      expect(unpaid.body.data).toHaveLength(4);
    });

    it('a stranger\'s blink orders in a wallet\'s name do not eat its owner\'s balance headroom', async () => {
      const [seller, victim] = await Promise.all([party(), party({ usdc: 5 })]);
      const ls = [await listing(seller, 2), await listing(seller, 2), await listing(seller, 2)];
      expect((await blinkBuy(ls[0]!, victim.wallet, '203.0.113.74')).status).toBe(200);
      expect((await blinkBuy(ls[1]!, victim.wallet, '203.0.113.74')).status).toBe(200);
      // 5 USDC cover this 2 USDC order; before, the stranger's 4 USDC of action orders were counted too: 409 insufficient-funds
      const mine = await order(victim, ls[2]!, '203.0.113.75');
      expect(mine.status, JSON.stringify(mine.body)).toBe(201);
      // among themselves, action orders of the wallet still need its balance: a third one (6 > 5 USDC) is refused
      const third = await blinkBuy(await listing(seller, 2), victim.wallet, '203.0.113.76');
      expect(third.status).toBe(409);
      expect(third.body.message).toMatch(/USDC/);
    });

    it('a blink POST never resumes (nor re-issues) the order a wallet\'s owner created signed in', async () => {
      const [seller, victim] = await Promise.all([party(), party({ usdc: 5 })]);
      const l = await listing(seller, 1);
      const mine = await order(victim, l, '203.0.113.77');
      expect(mine.status, JSON.stringify(mine.body)).toBe(201);
      // before: 200 with the owner's own order (a fresh fund transaction of it, to whoever asked)
      const blink = await blinkBuy(l, victim.wallet, '203.0.113.78');
      expect(blink.status).toBe(409);
      expect(blink.body).toEqual({ message: expect.stringMatching(/another buyer|reserved|held/i) });
    });

    it('an action order that lapses unpaid cools down the network it came from, never the wallet it named', async () => {
      const [seller, victim, other] = await Promise.all([party(), party({ usdc: 5 }), party({ usdc: 5 })]);
      const l = await listing(seller, 1);
      const strangerIp = '203.0.113.80';
      const held = await blinkBuy(l, victim.wallet, strangerIp);
      expect(held.status, JSON.stringify(held.body)).toBe(200);
      const orderId = new URL(held.body.links.next.href, 'https://x').searchParams.get('order_id')!;
      expect(await expireUnpaid(TTL)).toContain(orderId);
      // the stranger's network waits out the cool-down, signed in or through a blink (holds stay bounded as before)
      const fromThere = await order(other, l, strangerIp);
      expect(fromThere.status).toBe(409);
      expect(fromThere.body.type).toBe(`${PROBLEM}hold-cooldown`);
      const blinkFromThere = await blinkBuy(l, other.wallet, strangerIp);
      expect(blinkFromThere.status).toBe(409);
      expect(Number(blinkFromThere.headers['retry-after'])).toBeGreaterThan(0);
      // the wallet's owner, signed in from his own network, may order it (before: 409 hold-cooldown), with the contested window
      const mine = await order(victim, l, '203.0.113.81');
      expect(mine.status, JSON.stringify(mine.body)).toBe(201);
      expect(windowSeconds(mine.body)).toBe(CONTESTED_TTL);
    });
  });
});
