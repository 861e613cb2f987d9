/**
 * Solana Actions for listings on the real chain (issue 26 item 1), driven by a real blink client library,
 * `@dialectlabs/blinks-core` (its framework-free core runs in Node: `unfurlUrlToBlinkApiUrl` reads
 * /actions.json, `BlinkInstance.fetch` GETs the card and reads the X-Action-Version / X-Blockchain-Ids
 * metadata, `isSupported` applies its version and chain rules, a button's `post(account)` runs the POST,
 * `chain(next, { account, signature })` follows `links.next`; only its React components are not used).
 * The wallet is a test keypair: it signs the returned transaction and sends it to the localnet itself, as
 * a wallet does. Then the escrow is funded and the buyer, signing in with SIWS, sees the order.
 *
 * Adversarial: another wallet on the chained callback, the unpaid-orders limit per wallet, the holds limit per
 * client network, the seller's own listing, a taken-down listing, a reserved one, a bad package; the payment watcher sees a payment whose
 * callback never came.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import bs58 from 'bs58';
import type { Server } from 'node:http';
import { Keypair, Transaction, sendAndConfirmRawTransaction } from '@solana/web3.js';
import { BlinkInstance, setProxyUrl, unfurlUrlToBlinkApiUrl, type ActionAdapter, type TransactionResponse } from '@dialectlabs/blinks-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BootstrappedChain } from './helpers/localnet.js';
import { sharedBootstrappedChain } from './helpers/shared-chain.js';
import { API, createTestApp, loginAs, type TestApp } from './helpers/app.js';
import { listing, party, usdcBalance, type Party } from './helpers/parties.js';
import { setRoles } from './helpers/roles.js';

let env: BootstrappedChain;
let t: TestApp;
let server: Server;
let origin: string;
let chainId: string;
const WALLET_ORIGIN = 'https://wallet.example';

beforeAll(async () => {
  // blinks-core routes remote URLs (icons) through Dialect's proxy by default; a test has no network: direct
  setProxyUrl('');
  env = await sharedBootstrappedChain('actions-listings');
  t = await createTestApp({
    chain: env.chain,
    config: { currencies: env.boot.currencies, publicBaseUrl: 'https://bazaar.test', actionsEnabled: true, actionsRateLimitPerMinute: 10_000 },
    orders: { maxUnpaidOrdersPerBuyer: 2 },
  });
  server = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  chainId = `solana:${(await env.chain.connection.getGenesisHash()).slice(0, 32)}`;
}, 180_000);

afterAll(async () => {
  await new Promise((r) => server?.close(r));
  await t?.close();
  await env?.stop();
});

/** A blink client's wallet adapter over a test keypair: signs and sends to the localnet, confirms. */
function adapterFor(kp: Keypair): ActionAdapter {
  return {
    metadata: { supportedBlockchainIds: [chainId] },
    connect: async () => kp.publicKey.toBase58(),
    signTransaction: async (tx) => {
      const signed = Transaction.from(Buffer.from(tx, 'base64'));
      signed.partialSign(kp);
      const signature = await sendAndConfirmRawTransaction(env.chain.connection, signed.serialize(), { commitment: 'confirmed' });
      return { signature };
    },
    confirmTransaction: async () => {},
    signMessage: async () => ({ error: 'not used' }),
  } as ActionAdapter;
}

/** The wallet signs the action's transaction and sends it itself; the signature. */
async function signAndSend(kp: Keypair, response: { transaction: string }): Promise<string> {
  const r = await adapterFor(kp).signTransaction(response.transaction, {} as never);
  if (!('signature' in r)) throw new Error(r.error);
  return r.signature;
}

const actionPost = (path: string, account: string) => request(t.app).post(path).set('Origin', WALLET_ORIGIN).send({ account });

describe('a blink client buys a listing end to end (@dialectlabs/blinks-core)', () => {
  it('unfurls the shared page via /actions.json, renders the card and its metadata, POSTs, signs, sends, chains: escrow funded, the order visible to the buyer after SIWS', async () => {
    const [seller, buyer] = await Promise.all([party(t, env), party(t, env, { usdc: 50 })]);
    const l = await listing(t, seller, { title: 'Brand kit as a blink', price: 12, duration: 4 });

    // the page people share: /app/listings/<id>, mapped by /actions.json to the action endpoint
    const page = `${origin}/app/listings/${l.listing_id}`;
    const apiUrl = await unfurlUrlToBlinkApiUrl(page);
    expect(apiUrl).toBe(`${origin}/api/actions/listings/${l.listing_id}`);

    const blink = await BlinkInstance.fetch(apiUrl!);
    expect(blink.metadata).toEqual({ version: '2.4', blockchainIds: [chainId] });
    expect(await blink.isSupported(adapterFor(buyer.kp))).toEqual({ isSupported: true });
    expect(blink.title).toBe('Brand kit as a blink');
    expect(blink.icon).toBe('https://bazaar.test/icon.svg');
    expect(blink.description).toContain('12 USDC');
    expect(blink.description).toContain('delivery within 4 days');
    expect(blink.description).toContain('Seller: no reviews yet.');
    expect(blink.disabled).toBe(false);
    expect(blink.actions.map((a) => a.label)).toEqual(['Buy for 12 USDC']);

    const before = await usdcBalance(env, buyer.wallet);
    const response = (await blink.actions[0]!.post(buyer.wallet)) as TransactionResponse;
    expect(response.type).toBe('transaction');
    expect(response.message).toMatch(/^Pay 12 USDC into escrow for "Brand kit as a blink"/);
    expect(response.links?.next.type).toBe('post');
    const signature = await signAndSend(buyer.kp, response);

    const next = await blink.chain(response.links!.next, { account: buyer.wallet, signature });
    expect(next?.type).toBe('completed');
    expect(next?.title).toBe('Payment in escrow');
    const orderId = new URL((response.links!.next as { href: string }).href, origin).searchParams.get('order_id')!;
    expect(next?.description).toContain(`https://bazaar.test/app/#/orders/${orderId}`);
    expect(before - (await usdcBalance(env, buyer.wallet))).toBe(12_000_000n);

    // the buyer signs in (SIWS) with the same wallet and finds the order, funded
    const session = await loginAs(t, buyer.kp);
    const order = await request(t.app).get(`${API}/orders/${orderId}`).set(session.headers);
    expect(order.status, JSON.stringify(order.body)).toBe(200);
    expect(order.body).toMatchObject({ status: 'in_progress', escrow_state: 'funded', buyer_wallet: buyer.wallet, listing_id: l.listing_id });
    expect(order.body.transactions).toContainEqual(expect.objectContaining({ action: 'fund', signature }));

    // the listing is reserved now: the card is disabled with the reason
    const card = await BlinkInstance.fetch(apiUrl!);
    expect(card.disabled).toBe(true);
    expect(card.error).toMatch(/^Reserved/);
  }, 180_000);

  it('the payment watcher sees a blink payment whose chained callback never came', async () => {
    const [seller, buyer] = await Promise.all([party(t, env), party(t, env, { usdc: 20 })]);
    const l = await listing(t, seller, { price: 3 });
    const res = await actionPost(`/api/actions/listings/${l.listing_id}`, buyer.wallet);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    await signAndSend(buyer.kp, res.body);
    const orderId = new URL(res.body.links.next.href, origin).searchParams.get('order_id')!;
    // no callback: the watcher's pass finds the funded escrow
    expect((await t.services.orders!.repo.get(orderId))!.status).toBe('awaiting_payment');
    await t.services.orders!.watcher.runOnce();
    expect((await t.services.orders!.repo.get(orderId))!.status).toBe('in_progress');
  }, 120_000);
});

describe('what a blink POST may not do', () => {
  let seller: Party;
  let buyer: Party;
  beforeAll(async () => {
    [seller, buyer] = await Promise.all([party(t, env), party(t, env, { usdc: 100 })]);
  }, 60_000);

  it('resumes the wallet\'s own unpaid order instead of creating another; the unpaid-orders limit per wallet applies', async () => {
    const [a, b, c] = await Promise.all([1, 2, 3].map((i) => listing(t, seller, { price: 2, title: `Limit ${i}` })));
    const first = await actionPost(`/api/actions/listings/${a.listing_id}`, buyer.wallet);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const again = await actionPost(`/api/actions/listings/${a.listing_id}`, buyer.wallet);
    expect(again.status).toBe(200);
    expect(again.body.links.next.href).toBe(first.body.links.next.href); // the same order
    expect((await actionPost(`/api/actions/listings/${b.listing_id}`, buyer.wallet)).status).toBe(200);
    const third = await actionPost(`/api/actions/listings/${c.listing_id}`, buyer.wallet);
    expect(third.status).toBe(409);
    expect(third.body).toEqual({ message: expect.stringMatching(/unpaid/i) });
    expect(third.headers['access-control-allow-origin']).toBe('*');
  }, 60_000);

  it('another wallet cannot follow (nor learn about) the order on the chained callback', async () => {
    const l = await listing(t, seller, { price: 1 });
    const other = await party(t, env, { usdc: 5 });
    const res = await actionPost(`/api/actions/listings/${l.listing_id}`, other.wallet);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const next = await request(t.app).post(res.body.links.next.href).send({ account: Keypair.generate().publicKey.toBase58(), signature: bs58.encode(randomBytes(64)) });
    expect(next.status).toBe(403);
    expect(next.body).toEqual({ message: 'Only the wallet that pays this order can follow it here.' });
  }, 60_000);

  it('the seller cannot buy her own listing; a bad account or package is a 400 { message }', async () => {
    const l = await listing(t, seller, { price: 1 });
    const own = await actionPost(`/api/actions/listings/${l.listing_id}`, seller.wallet);
    expect(own.status).toBe(409);
    expect(own.body).toEqual({ message: 'This is your own listing: a seller cannot buy it.' });
    const bad = await actionPost(`/api/actions/listings/${l.listing_id}`, 'not-a-wallet');
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body)).toEqual(['message']);
    const pkg = await request(t.app).post(`/api/actions/listings/${l.listing_id}?package=premium`).send({ account: buyer.wallet });
    expect(pkg.status).toBe(400);
    expect(pkg.body).toEqual({ message: 'This listing has no packages.' });
  }, 60_000);

  it('a taken-down listing answers a disabled card with the reason and refuses the buy', async () => {
    const l = await listing(t, seller, { price: 1 });
    const moderator = await party(t, env, { sol: 0 });
    await setRoles(t.db.prisma, { id: moderator.userId }, ['moderator']);
    const down = await request(t.app).post(`${API}/moderation/listings/${l.listing_id}/takedown`).set(moderator.headers).send({ reason: 'counterfeit goods' });
    expect(down.status, JSON.stringify(down.body)).toBe(200);
    const card = await request(t.app).get(`/api/actions/listings/${l.listing_id}`);
    expect(card.status).toBe(200);
    expect(card.body).toMatchObject({ disabled: true, error: { message: expect.stringMatching(/taken down/) } });
    expect(JSON.stringify(card.body)).not.toContain('counterfeit'); // the moderator's reason is the seller's to read
    const buy = await actionPost(`/api/actions/listings/${l.listing_id}`, buyer.wallet);
    expect(buy.status).toBe(409);
    expect(buy.body.message).toMatch(/taken down/);
  }, 60_000);
});

describe('the per-network holds limit applies to blink buys (ORDER_MAX_UNPAID_PER_IP)', () => {
  it('a second wallet from the same network holding the limit gets 429 { message } with Retry-After', async () => {
    const t2 = await createTestApp({
      chain: env.chain,
      config: { currencies: env.boot.currencies, publicBaseUrl: 'https://bazaar.test', actionsEnabled: true, actionsRateLimitPerMinute: 10_000 },
      orders: { maxUnpaidOrdersPerIp: 1 },
    });
    try {
      const [seller, first, second] = await Promise.all([party(t2, env), party(t2, env, { usdc: 5 }), party(t2, env, { usdc: 5 })]);
      const [a, b] = await Promise.all([listing(t2, seller, { price: 1, title: 'Holds A' }), listing(t2, seller, { price: 1, title: 'Holds B' })]);
      const ok = await request(t2.app).post(`/api/actions/listings/${a.listing_id}`).send({ account: first.wallet });
      expect(ok.status, JSON.stringify(ok.body)).toBe(200);
      const held = await request(t2.app).post(`/api/actions/listings/${b.listing_id}`).send({ account: second.wallet });
      expect(held.status).toBe(429);
      expect(Object.keys(held.body)).toEqual(['message']);
      expect(Number(held.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await t2.close();
    }
  }, 120_000);
});
