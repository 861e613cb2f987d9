/**
 * The people of the chain suites, written once: a party is a fresh wallet on the test localnet with SOL
 * and test USDC, signed in to an app over the real SIWS round trip; a funded order is a seller's listing
 * ordered and paid on chain by a buyer, over HTTP. Every e2e suite builds its buyers, sellers and
 * orders from these (before, `party()` was written in six suites and `fundedOrder` in two).
 */
import { randomUUID } from 'node:crypto';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, Transaction } from '@solana/web3.js';
import { getAccount, getAssociatedTokenAddressSync, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import request from 'supertest';
import { expect } from 'vitest';
import type { CreateOrderResponse, Listing, Order } from '@bazaar/contract';
import { ensureSol, mintTestUsdc } from '../../server/scripts/bootstrap-localnet';
import { API, loginAs, type TestApp } from './app';
import type { BootstrappedChain } from './localnet';

/** test USDC (6 decimals) in base units */
export const USDC = (n: number): bigint => BigInt(Math.round(n * 1e6));

/** A signed-in wallet: its keypair, base58 address, user id and the request headers of its session. */
export interface Party {
  kp: Keypair;
  wallet: string;
  userId: string;
  headers: Record<string, string>;
}

/** The chain a party lives on: what `sharedBootstrappedChain` / `startBootstrappedChain` return. */
export type PartyChain = Pick<BootstrappedChain, 'chain' | 'dataDir' | 'localnet'>;

export interface PartyOptions {
  /** SOL airdropped to the new wallet (default 1; 0: a wallet that never held any) */
  sol?: number;
  /** test USDC minted to the wallet's associated token account (default none) */
  usdc?: number;
}

/**
 * A fresh wallet with `sol` SOL and `usdc` test USDC on `env`'s localnet, signed in to `app` (SIWS).
 * Throws when the airdrop, the mint or the login fails.
 */
export async function party(app: Pick<TestApp, 'app'>, env: PartyChain, o: PartyOptions = {}): Promise<Party> {
  const kp = Keypair.generate();
  const sol = o.sol ?? 1;
  await Promise.all([
    sol > 0 ? ensureSol(env.chain.connection, kp.publicKey, BigInt(Math.round(sol * LAMPORTS_PER_SOL)), Math.round(sol * LAMPORTS_PER_SOL)) : null,
    o.usdc ? mintTestUsdc(env.dataDir, env.localnet.rpcUrl, kp.publicKey.toBase58(), USDC(o.usdc)) : null,
  ]);
  const s = await loginAs(app, kp);
  return { kp, wallet: s.wallet, userId: s.userId, headers: s.headers };
}

/** The test USDC balance of `owner`'s associated token account, base units (0 when it has none). */
export async function usdcBalance(env: Pick<BootstrappedChain, 'chain' | 'boot'>, owner: string): Promise<bigint> {
  const ata = getAssociatedTokenAddressSync(new PublicKey(env.boot.usdcMint), new PublicKey(owner), true, TOKEN_PROGRAM_ID);
  return getAccount(env.chain.connection, ata, 'confirmed', TOKEN_PROGRAM_ID).then((a) => a.amount, () => 0n);
}

/** `transaction` (base64, as the API returns it) signed by `kp` as the wallet would, base64 again. */
export function signedBy(kp: Keypair, transaction: string): string {
  const tx = Transaction.from(Buffer.from(transaction, 'base64'));
  tx.partialSign(kp);
  return tx.serialize().toString('base64');
}

export interface ListingOptions {
  /** USDC (default 25) */
  price?: number;
  /** delivery days (default 3) */
  duration?: number;
  title?: string;
}

/** POST /listings as `seller` (201 asserted); the listing as the API returns it. */
export async function listing(app: Pick<TestApp, 'app'>, seller: Pick<Party, 'headers'>, o: ListingOptions = {}) {
  const res = await request(app.app)
    .post(`${API}/listings`)
    .set(seller.headers)
    .send({ title: o.title ?? 'Logo design in three days', description: 'A clean, modern logo.', price: o.price ?? 25, currency: 'USDC', category: 'design', duration: o.duration ?? 3 });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as Listing;
}

/** A wallet order as createOrder answers it: with the fund transaction its buyer signs. */
export type WalletOrder = CreateOrderResponse & { payment: NonNullable<CreateOrderResponse['payment']> };

/**
 * POST /orders as `buyer` with a fresh (or the given) Idempotency-Key, paid from the buyer's wallet
 * (201 and a fund transaction asserted); the order with its payment.
 */
export async function order(app: Pick<TestApp, 'app'>, buyer: Pick<Party, 'headers'>, listingId: string, key: string = randomUUID()): Promise<WalletOrder> {
  const res = await request(app.app).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', key).send({ listing_id: listingId });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.payment, 'a wallet order carries its fund transaction').toMatchObject({ transaction: expect.any(String) });
  return res.body as WalletOrder;
}

/** The buyer signs the order's payment transaction and submits it (200 asserted); the order afterwards. */
export async function pay(app: Pick<TestApp, 'app'>, buyer: Pick<Party, 'kp' | 'headers'>, created: { order_id: string; payment: { transaction: string } }) {
  const res = await request(app.app)
    .post(`${API}/orders/${created.order_id}/transaction`)
    .set(buyer.headers)
    .send({ signed_transaction: signedBy(buyer.kp, created.payment.transaction) });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Order;
}

/**
 * A funded order: a new buyer (100 test USDC) orders a new seller's listing and pays it on chain over
 * HTTP. Returns both parties, the listing id, the order id, the creation answer and the payment answer.
 */
export async function fundedOrder(app: Pick<TestApp, 'app'>, env: PartyChain, o: ListingOptions & { buyer?: Party; seller?: Party } = {}) {
  const [buyer, seller] = await Promise.all([o.buyer ?? party(app, env, { usdc: 100 }), o.seller ?? party(app, env)]);
  const listingId = (await listing(app, seller, o)).listing_id;
  const created = await order(app, buyer, listingId);
  const paid = await pay(app, buyer, created);
  return { buyer, seller, listingId, id: created.order_id, created, paid };
}
