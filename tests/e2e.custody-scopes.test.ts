/**
 * Scopes that spend money (issue 20, item 2), end to end: the real app with CUSTODY_ENABLED over a
 * localnet. A third-party app holds a personal access token of the victim with every scope but the money
 * scopes (payments:write, wallet:write) and tries each money path: pay its own listing from the victim's
 * custodial balance, confirm (release the escrow to its seller account), refund a seller's order, withdraw.
 * Each answers 403 insufficient-scope naming the money scope, and the money stays where it was (custodial
 * balance, escrow on chain, the seller's token account). The same requests succeed with a token that holds
 * the money scope, and an order paid from the victim's wallet (the wallet signs) works with orders:write.
 */
import { randomUUID } from 'node:crypto';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction } from '@solana/web3.js';
import {
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAccount,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MONEY_SCOPES, OPERATOR_SCOPES, TOKEN_SCOPES, type TokenScope } from '@bazaar/contract';
import { type Localnet, type BootstrappedChain } from './helpers/localnet';
import { sharedBootstrappedChain } from './helpers/shared-chain';
import { API, createTestApp, loginAs, type TestApp } from './helpers/app';
import { type ChainClient } from '../server/src/chain/index';
import { sendAndConfirm } from '../server/src/chain/tx';
import type { CustodyModule } from '../server/src/modules/custody/index';
import { ensureSol, mintTestUsdc, type BootstrapResult } from '../server/scripts/bootstrap-localnet';
import { party as newParty, usdcBalance, USDC, type Party } from './helpers/parties';

/** Every scope but the money scopes: what an app that may "manage your orders" holds. */
// every scope a user without an operator role may hold (issue 25's operator scopes need their role), but the money ones
const NO_MONEY = (Object.keys(TOKEN_SCOPES) as TokenScope[]).filter((s) => !(MONEY_SCOPES as readonly string[]).includes(s) && !(s in OPERATOR_SCOPES));


let localnet: Localnet;
let dataDir: string;
let boot: BootstrapResult;
let chain: ChainClient;
let env: BootstrappedChain;
let t: TestApp;
let custody: CustodyModule;
let funder: Keypair;

const party = () => newParty(t, env, { sol: 2 });

/** A personal access token of `who` with `scopes`, as request headers. */
async function tokenOf(who: Party, scopes: readonly string[]): Promise<Record<string, string>> {
  const res = await request(t.app).post(`${API}/user/tokens`).set(who.headers).send({ name: 'third-party app', scopes });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { authorization: `Bearer ${res.body.token}` };
}

const ata = (owner: string) => getAssociatedTokenAddressSync(new PublicKey(boot.usdcMint), new PublicKey(owner), true, TOKEN_PROGRAM_ID);
const usdc = (owner: string) => usdcBalance(env, owner);

async function sendUsdc(owner: string, amount: bigint): Promise<void> {
  const mint = new PublicKey(boot.usdcMint);
  const tx = new Transaction().add(
    createAssociatedTokenAccountIdempotentInstruction(funder.publicKey, ata(owner), new PublicKey(owner), mint, TOKEN_PROGRAM_ID),
    createTransferCheckedInstruction(ata(funder.publicKey.toBase58()), mint, ata(owner), funder.publicKey, amount, 6, [], TOKEN_PROGRAM_ID),
  );
  await sendAndConfirm(chain.connection, tx, [funder]);
}

const post = (headers: Record<string, string>, path: string, body: object = {}) =>
  request(t.app).post(`${API}${path}`).set(headers).set('Idempotency-Key', randomUUID()).send(body);
const get = (headers: Record<string, string>, path: string) => request(t.app).get(`${API}${path}`).set(headers);

async function custodial(who: Party) {
  const res = await get(who.headers, '/wallet/balances');
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const line = res.body.balances.find((b: { source: string; currency: string }) => b.source === 'custodial' && b.currency === 'USDC');
  return { available: BigInt(line.amount_base_units), escrow: BigInt(line.in_escrow_base_units) };
}

/** Deposit `amount` to `who`'s deposit address and let the custody worker credit it. */
async function credit(who: Party, amount: bigint): Promise<void> {
  const dep = await post(who.headers, '/wallet/deposit', { currency: 'USDC' });
  expect(dep.status, JSON.stringify(dep.body)).toBe(200);
  await sendUsdc(dep.body.address, amount);
  expect((await custody.worker.runOnce()).credited).toHaveLength(1);
}

async function listing(seller: Party, price: number): Promise<string> {
  const res = await post(seller.headers, '/listings', {
    title: 'Translation of a short story',
    description: 'Two thousand words, English to French.',
    price,
    currency: 'USDC',
    category: 'writing',
    duration: 3,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.listing_id;
}

function expectMoneyScopeRefused(res: request.Response, scope: string, capability: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(403);
  expect(res.body).toMatchObject({ type: 'https://bazaar.dev/problems/insufficient-scope', required_scope: scope, capability });
}

beforeAll(async () => {
  env = await sharedBootstrappedChain('custody-scopes');
  ({ localnet, dataDir, boot, chain } = env);
  t = await createTestApp({
    chain,
    // a seed of its own: a suite sharing this worker's localnet with the same seed (e2e.custody's PostgreSQL
    // app uses 'e5') would derive the same deposit addresses, whose history this worker would then credit
    config: { currencies: boot.currencies, custodyEnabled: true, custodySeed: 'c7'.repeat(32), custodyMinDeposit: { USDC: '0.5' } },
  });
  custody = t.services.custody!;
  funder = Keypair.generate();
  await ensureSol(chain.connection, funder.publicKey, BigInt(LAMPORTS_PER_SOL), 5 * LAMPORTS_PER_SOL);
  await mintTestUsdc(dataDir, localnet.rpcUrl, funder.publicKey.toBase58(), USDC(1_000));
});

afterAll(async () => {
  await t?.close();
  await env?.stop();
});

describe('a token without a money scope cannot move the user\'s money', () => {
  it('custodial payment and escrow release: the attack (buy the attacker\'s listing with the victim\'s balance, confirm) is refused', async () => {
    const [victim, attacker] = await Promise.all([party(), party()]);
    await credit(victim, USDC(30));
    const app = await tokenOf(victim, NO_MONEY);
    const attackersListing = await listing(attacker, 20);

    // 1. pay the attacker's listing from the victim's custodial balance
    const order = await post(app, '/orders', { listing_id: attackersListing, payment_source: 'custodial' });
    expectMoneyScopeRefused(order, 'payments:write', 'custodial-payment');
    expect(await custodial(victim)).toEqual({ available: USDC(30), escrow: 0n });
    expect((await get(app, '/orders?role=buyer')).body.data).toEqual([]);

    // with payments:write the same request pays (the user granted it)
    const payer = await tokenOf(victim, ['orders:write', 'payments:write']);
    const paid = await post(payer, '/orders', { listing_id: attackersListing, payment_source: 'custodial' });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    expect(paid.body).toMatchObject({ status: 'in_progress', payment_source: 'custodial' });
    const id = paid.body.order_id as string;
    expect(await custodial(victim)).toEqual({ available: USDC(10), escrow: USDC(20) });

    // 2. the attacker "delivers" as seller; the app confirms as the victim: the escrow stays put
    expect((await post(attacker.headers, `/orders/${id}/deliver`)).status).toBe(200);
    const sellerBefore = await usdc(attacker.wallet);
    expectMoneyScopeRefused(await post(app, `/orders/${id}/confirm`), 'payments:write', 'escrow-release');
    expect((await get(victim.headers, `/orders/${id}`)).body).toMatchObject({ status: 'delivered', escrow_state: 'delivered' });
    expect(await chain.escrow.fetchOrder(id)).toMatchObject({ state: 'delivered', amount: USDC(20) });
    expect(await usdc(attacker.wallet)).toBe(sellerBefore);
    expect(await custodial(victim)).toEqual({ available: USDC(10), escrow: USDC(20) });
    // the victim can still dispute (what an early release would have taken away)
    expect((await post(app, `/orders/${id}/dispute`, { reason: 'Nothing was delivered to me.' })).status).toBe(200);
  });

  it('escrow refund: a seller\'s token without payments:write cannot give the payment back; with it, it can', async () => {
    const [buyer, seller] = await Promise.all([party(), party()]);
    await credit(buyer, USDC(15));
    const paid = await post(buyer.headers, '/orders', { listing_id: await listing(seller, 12), payment_source: 'custodial' });
    expect(paid.status, JSON.stringify(paid.body)).toBe(201);
    const id = paid.body.order_id as string;
    const dashboard = await tokenOf(seller, NO_MONEY);
    expectMoneyScopeRefused(await post(dashboard, `/orders/${id}/refund`), 'payments:write', 'escrow-refund');
    expect(await chain.escrow.fetchOrder(id)).toMatchObject({ state: 'funded', amount: USDC(12) });
    expect(await custodial(buyer)).toEqual({ available: USDC(3), escrow: USDC(12) });

    const refunder = await tokenOf(seller, ['orders:write', 'payments:write']);
    const refunded = await post(refunder, `/orders/${id}/refund`);
    expect(refunded.status, JSON.stringify(refunded.body)).toBe(200);
    expect(refunded.body.status).toBe('refunded');
    expect(await custodial(buyer)).toEqual({ available: USDC(15), escrow: 0n });
  });

  it('custody withdrawal: needs wallet:write; nothing is held without it', async () => {
    const me = await party();
    await credit(me, USDC(5));
    const app = await tokenOf(me, NO_MONEY);
    const res = await post(app, '/wallet/withdraw', { currency: 'USDC', amount: '2', destination: Keypair.generate().publicKey.toBase58() });
    expect(res.status, JSON.stringify(res.body)).toBe(403);
    expect(res.body).toMatchObject({ type: 'https://bazaar.dev/problems/insufficient-scope', required_scope: 'wallet:write' });
    expect(await custodial(me)).toEqual({ available: USDC(5), escrow: 0n });
    expect((await get(me.headers, '/wallet/withdrawals')).body.data).toEqual([]);
  });

  it('an order paid from the buyer\'s wallet still works with orders:write: the wallet\'s signature is the consent', async () => {
    const [buyer, seller] = await Promise.all([party(), party()]);
    await sendUsdc(buyer.wallet, USDC(10));
    const app = await tokenOf(buyer, ['orders:read', 'orders:write']);
    const created = await post(app, '/orders', { listing_id: await listing(seller, 4) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ status: 'awaiting_payment', payment_source: 'wallet' });
    const tx = Transaction.from(Buffer.from(created.body.payment.transaction, 'base64'));
    tx.partialSign(buyer.kp);
    const paid = await post(app, `/orders/${created.body.order_id}/transaction`, { signed_transaction: tx.serialize().toString('base64') });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.status).toBe('in_progress');
    expect(await usdc(buyer.wallet)).toBe(USDC(6));
    // releasing it is a money capability like any other escrow release
    expect((await post(seller.headers, `/orders/${created.body.order_id}/deliver`)).status).toBe(200);
    expectMoneyScopeRefused(await post(app, `/orders/${created.body.order_id}/confirm`), 'payments:write', 'escrow-release');
  });
});
