/**
 * The tips module's two rules, pure: who may tip (modules/tips/eligibility.ts, written to grow with
 * milestones) and what proves a tip was paid (modules/tips/tip-detection.ts over the one transaction
 * parser), on `getTransaction` results compiled without a node (tests/helpers/fake-transaction.ts).
 */
import { randomUUID } from 'node:crypto';
import { Keypair, PublicKey, TransactionInstruction } from '@solana/web3.js';
import { createTransferCheckedInstruction, getAssociatedTokenAddressSync } from '@solana/spl-token';
import { describe, expect, it } from 'vitest';
import { tipMemo } from '@bazaar/contract';
import { parseTransaction } from '../server/src/chain/transaction-effects.js';
import { createTipsService, tipPaidBy, tipRefusal, type TipMilestone, type TipOrder, type TipsChainPort, type TipsRepo } from '../server/src/modules/tips/index.js';
import { DomainError } from '../server/src/errors.js';
import { fakeTable, fakeTransaction } from './helpers/fake-transaction.js';

const key = () => Keypair.generate().publicKey;
const MEMO = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
const memo = (text: string) => new TransactionInstruction({ programId: MEMO, keys: [], data: Buffer.from(text, 'utf8') });

const order = (milestones: TipMilestone[], paymentSource: TipOrder['paymentSource'] = 'wallet'): TipOrder => ({
  id: randomUUID(),
  buyerId: randomUUID(),
  sellerId: randomUUID(),
  buyerWallet: key().toBase58(),
  sellerWallet: key().toBase58(),
  paymentSource,
  currency: 'USDC',
  mint: key().toBase58(),
  decimals: 6,
  amount: 25_000_000n,
  milestones,
});
const unit = (status: string, sellerPayout: bigint | null = null, buyerBps: number | null = null): TipMilestone => ({ status, sellerPayout, buyerBps });

describe('tip eligibility', () => {
  it('a tip follows money that reached the seller: completed, or resolved with a seller share; custodial orders are refused', () => {
    expect(tipRefusal(order([unit('completed', 24_375_000n)]))).toBeNull();
    expect(tipRefusal(order([unit('resolved', 12_000_000n, 5000)]))).toBeNull();
    // payout not read back: the ruling's buyer share decides
    expect(tipRefusal(order([unit('resolved', null, 9_999)]))).toBeNull();
    expect(tipRefusal(order([unit('resolved', 0n, 10_000)]))).toBe('not_paid_out');
    expect(tipRefusal(order([unit('resolved', null, 10_000)]))).toBe('not_paid_out');
    for (const s of ['awaiting_payment', 'in_progress', 'delivered', 'disputed', 'refunded', 'expired']) expect(tipRefusal(order([unit(s)])), s).toBe('not_paid_out');
    expect(tipRefusal(order([unit('completed', 24_375_000n)], 'custodial'))).toBe('custodial');
  });

  it('milestones: any settled milestone with a seller payout opens tips, whatever the others are', () => {
    expect(tipRefusal(order([unit('completed', 1n), unit('in_progress'), unit('scheduled')]))).toBeNull();
    expect(tipRefusal(order([unit('refunded'), unit('resolved', 5n, 9_000)]))).toBeNull();
    expect(tipRefusal(order([unit('refunded'), unit('in_progress'), unit('scheduled')]))).toBe('not_paid_out');
  });
});

describe('the tip use case refuses before building anything', () => {
  // ports that fail when reached: a refusal must come before the chain and the database
  const unreachable = new Proxy({}, { get: () => () => { throw new Error('reached'); } });
  const service = (o: TipOrder) =>
    createTipsService({
      repo: unreachable as TipsRepo,
      chain: unreachable as TipsChainPort,
      orders: { get: async (id) => (id === o.id ? o : null) },
      settings: { maxPercentOfOrder: 100, watcherIntervalMs: 0 },
      now: () => new Date(),
      newId: randomUUID,
    });
  const refusal = async (p: Promise<unknown>) => {
    const err = await p.then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    const d = err as DomainError;
    return { slug: d.slug, ...(d.extensions as object) };
  };

  it('custodial buyers get 409 tip-not-allowed (custodial), with a clear detail; nothing is built', async () => {
    const o = order([unit('completed', 24_375_000n)], 'custodial');
    const buyer = { userId: o.buyerId, isAdmin: false };
    expect(await refusal(service(o).create(buyer, o.id, { amount: 1 }))).toMatchObject({ slug: 'tip-not-allowed', why: 'custodial' });
  });

  it('the seller 403, an admin 403, a stranger 404, an unknown order 404; the amount: decimals and the maximum', async () => {
    const o = order([unit('completed', 24_375_000n)]);
    const s = service(o);
    expect(await refusal(s.create({ userId: o.sellerId, isAdmin: false }, o.id, { amount: 1 }))).toMatchObject({ slug: 'forbidden' });
    expect(await refusal(s.create({ userId: null, isAdmin: true }, o.id, { amount: 1 }))).toMatchObject({ slug: 'forbidden' });
    expect(await refusal(s.create({ userId: randomUUID(), isAdmin: false }, o.id, { amount: 1 }))).toMatchObject({ slug: 'not-found' });
    expect(await refusal(s.create({ userId: o.buyerId, isAdmin: false }, randomUUID(), { amount: 1 }))).toMatchObject({ slug: 'not-found' });
    const buyer = { userId: o.buyerId, isAdmin: false };
    expect(await refusal(s.create(buyer, o.id, { amount: 0.0000001 }))).toMatchObject({ slug: 'validation-error' });
    expect(await refusal(s.create(buyer, o.id, { amount: 0 }))).toMatchObject({ slug: 'validation-error' });
    expect(await refusal(s.create(buyer, o.id, { amount: 25.000001 }))).toMatchObject({ slug: 'tip-not-allowed', why: 'above_maximum', max_amount: '25' });
  });
});

describe('tip detection', () => {
  const [mint, buyer, seller, mallory, payer] = [key(), key(), key(), key(), key()];
  const source = getAssociatedTokenAddressSync(mint, buyer);
  const destination = getAssociatedTokenAddressSync(mint, seller);
  const tip = { id: randomUUID(), buyerWallet: buyer.toBase58(), mint: mint.toBase58(), amount: 2_500_000n, destinationTokenAccount: destination.toBase58() };
  const balances = (rise = tip.amount) => [
    { account: source, mint, owner: buyer, pre: 10_000_000n, post: 10_000_000n - rise },
    { account: destination, mint, owner: seller, pre: 0n, post: rise },
  ];
  const pay = (amount = tip.amount, from = source, authority = buyer, to = destination) => createTransferCheckedInstruction(from, mint, to, authority, amount, 6);

  it('the issued shape pays the tip: the transfer of exactly the amount from the buyer wallet to the seller, with its memo', () => {
    const fx = parseTransaction(fakeTransaction({ payer: buyer, instructions: [{ ix: pay() }, { ix: memo(tipMemo(tip.id)) }], tokenBalances: balances() }));
    expect(tipPaidBy(fx, tip)).toEqual({ paid: true });
  });

  it('a memo alone, another amount, another account, another owner, a failed transaction or unresolved lookups prove nothing', () => {
    const proof = (o: Parameters<typeof fakeTransaction>[0]) => tipPaidBy(parseTransaction(fakeTransaction(o)), tip);
    expect(proof({ payer: buyer, instructions: [{ ix: memo(tipMemo(tip.id)) }] })).toMatchObject({ paid: false });
    expect(proof({ payer: buyer, instructions: [{ ix: pay() }], tokenBalances: balances() })).toMatchObject({ paid: false, why: 'no memo names the tip' });
    expect(proof({ payer: buyer, instructions: [{ ix: pay() }, { ix: memo(tipMemo(randomUUID())) }], tokenBalances: balances() })).toMatchObject({ paid: false });
    expect(proof({ payer: buyer, instructions: [{ ix: pay(tip.amount - 1n) }, { ix: memo(tipMemo(tip.id)) }], tokenBalances: balances(tip.amount - 1n) })).toMatchObject({ paid: false });
    const elsewhere = getAssociatedTokenAddressSync(mint, mallory);
    expect(
      proof({
        payer: buyer,
        instructions: [{ ix: pay(tip.amount, source, buyer, elsewhere) }, { ix: memo(tipMemo(tip.id)) }],
        tokenBalances: [{ account: source, mint, owner: buyer, pre: 10_000_000n, post: 7_500_000n }, { account: elsewhere, mint, owner: mallory, pre: 0n, post: tip.amount }],
      }),
    ).toMatchObject({ paid: false });
    const mallorys = getAssociatedTokenAddressSync(mint, mallory);
    expect(
      proof({
        payer: mallory,
        instructions: [{ ix: pay(tip.amount, mallorys, mallory) }, { ix: memo(tipMemo(tip.id)) }],
        tokenBalances: [{ account: mallorys, mint, owner: mallory, pre: 10_000_000n, post: 7_500_000n }, { account: destination, mint, owner: seller, pre: 0n, post: tip.amount }],
      }),
    ).toMatchObject({ paid: false });
    expect(proof({ payer: buyer, instructions: [{ ix: pay() }, { ix: memo(tipMemo(tip.id)) }], tokenBalances: balances(), failed: true })).toMatchObject({ paid: false, why: 'the transaction failed' });
    // the seller's account did not rise by the amount (e.g. a Token-2022 transfer fee)
    expect(proof({ payer: buyer, instructions: [{ ix: pay() }, { ix: memo(tipMemo(tip.id)) }], tokenBalances: balances(tip.amount - 10n) })).toMatchObject({ paid: false });
    // a v0 message whose lookups the node did not resolve
    const raw = fakeTransaction({ payer, instructions: [{ ix: pay() }, { ix: memo(tipMemo(tip.id)) }], tables: [fakeTable([destination])], tokenBalances: balances() });
    raw.meta!.loadedAddresses = undefined;
    expect(tipPaidBy(parseTransaction(raw), tip)).toMatchObject({ paid: false });
  });
});
