/**
 * Insufficient funds (issue 23 item 3), on fakes: a buyer wallet that cannot pay gets 409
 * insufficient-funds with `needed` and `available` per asset (base units and UI amounts with the
 * currency's decimals and symbol), at order creation, before a fresh fund transaction is issued, before
 * a signed one is sent, and when the cluster refuses the transaction for the payer's lack of funds
 * (AccountNotFound: a wallet that never held SOL) instead of 502 chain-transaction-failed.
 * The same over HTTP on the localnet: tests/e2e.order-holds.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { Keypair, Transaction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { FundsAmount } from '@bazaar/contract';
import { DomainError } from '../server/src/errors.js';
import { OrdersService } from '../server/src/modules/orders/orders.service.js';
import { checkWalletFunds } from '../server/src/modules/orders/wallet-funds.js';
import type { FundingNeeds } from '../server/src/modules/orders/orders.types.js';
import { MemoryOrdersRepo } from './helpers/memory-orders-repo.js';
import { FakeEscrow, FakeListings, testOrdersSettings, user } from './orders.fakes.js';

const USDC = { code: 'USDC', mint: Keypair.generate().publicKey.toBase58(), decimals: 6 };
/** 0.005 SOL of network fee and rent; 1 SOL held */
const rich: FundingNeeds = { lamports: 5_000_000n, amountInLamports: 0n, lamportsBalance: 1_000_000_000n, tokenBalance: 100_000_000n };

function setup() {
  const repo = new MemoryOrdersRepo();
  const escrow = new FakeEscrow();
  const listings = new FakeListings();
  const service = new OrdersService({ repo, escrow, listings, currency: (c) => (c === 'USDC' ? USDC : undefined), settings: testOrdersSettings({ inflightWaitMs: 300 }) });
  const buyerKp = Keypair.generate();
  const buyer = user(randomUUID(), buyerKp.publicKey.toBase58());
  const seller = user(randomUUID(), Keypair.generate().publicKey.toBase58());
  // 16.91 USDC
  const listing = listings.add({ id: randomUUID(), sellerId: seller.userId!, sellerWallet: seller.wallet!, priceBaseUnits: 16_910_000n });
  let needs: FundingNeeds = rich;
  escrow.fundingNeeds = async () => needs;
  const setNeeds = (n: Partial<FundingNeeds>) => (needs = { ...rich, ...n });
  const signed = (b64: string) => {
    const tx = Transaction.from(Buffer.from(b64, 'base64'));
    tx.partialSign(buyerKp);
    return tx.serialize().toString('base64');
  };
  return { repo, escrow, service, buyer, seller, listing, setNeeds, signed };
}

const failure = (p: Promise<unknown>) => p.then(() => null, (e: unknown) => e as DomainError);

describe('insufficient funds: what is needed and what the wallet holds, per asset', () => {
  it('at creation: "needs 16.91 USDC and 0.005 SOL, holds 2 USDC": needed/available in base units and UI amounts', async () => {
    const ctx = setup();
    ctx.setNeeds({ tokenBalance: 2_000_000n });
    const e = await failure(ctx.service.create(ctx.buyer, { listingId: ctx.listing.id }));
    expect(e).toMatchObject({ slug: 'insufficient-funds', status: 409 });
    const token = { asset: 'token', currency: 'USDC', mint: USDC.mint, decimals: 6 };
    const sol = { asset: 'sol', currency: 'SOL', mint: null, decimals: 9 };
    expect(e!.extensions).toMatchObject({
      balance: 'token',
      wallet: ctx.buyer.wallet,
      required_base_units: '16910000',
      available_base_units: '2000000',
      needed: [
        { ...token, base_units: '16910000', amount: '16.91' },
        { ...sol, base_units: '5000000', amount: '0.005' },
      ],
      available: [
        { ...token, base_units: '2000000', amount: '2' },
        { ...sol, base_units: '1000000000', amount: '1' },
      ],
    });
    for (const a of [...(e!.extensions.needed as unknown[]), ...(e!.extensions.available as unknown[])]) expect(FundsAmount.parse(a)).toEqual(a);
    expect(e!.detail).toContain('16.91 USDC');
    expect(e!.detail).not.toMatch(/e-\d/);
    expect(await ctx.repo.list({ userId: ctx.buyer.userId!, limit: 10 })).toEqual([]);
  });

  it('SOL short for fees: balance sol, the UI amount never in exponent notation', () => {
    const check = checkWalletFunds({ mint: USDC.mint, amount: 100n }, { ...rich, lamportsBalance: 100n }, USDC);
    expect(check.short).toBe('sol');
    expect(check.available[1]).toMatchObject({ asset: 'sol', base_units: '100', amount: '0.0000001' });
  });

  it('before a fresh fund transaction and before a signed one is sent: a wallet emptied since creation gets 409, nothing is sent', async () => {
    const ctx = setup();
    const { order, payment } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
    ctx.setNeeds({ tokenBalance: 0n });
    const refreshed = await failure(ctx.service.refreshPayment(ctx.buyer, order.id));
    expect(refreshed).toMatchObject({ slug: 'insufficient-funds', extensions: { balance: 'token', available_base_units: '0' } });
    const submitted = await failure(ctx.service.submitTransaction(ctx.buyer, order.id, ctx.signed(payment.transaction)));
    expect(submitted).toMatchObject({ slug: 'insufficient-funds', extensions: { needed: [{ asset: 'token', amount: '16.91' }, { asset: 'sol' }] } });
    expect(ctx.escrow.sent).toEqual([]);
    expect((await ctx.repo.get(order.id))!.status).toBe('awaiting_payment');
    // funded again: the same transaction goes through
    ctx.setNeeds({});
    expect((await ctx.service.submitTransaction(ctx.buyer, order.id, ctx.signed(payment.transaction))).status).toBe('in_progress');
  });

  it('a fund transaction the cluster refuses for lack of funds (AccountNotFound) is 409 insufficient-funds, not 502; other failures stay 502', async () => {
    const ctx = setup();
    const { order, payment } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
    // the balances read fine, then the wallet is emptied before the transaction is simulated
    ctx.escrow.submitSignedTransaction = async () => {
      ctx.setNeeds({ lamportsBalance: 0n });
      throw new DomainError('chain-transaction-failed', 'Chain transaction failed: fund rejected (AccountNotFound)', { program_error: 'AccountNotFound' });
    };
    const e = await failure(ctx.service.submitTransaction(ctx.buyer, order.id, ctx.signed(payment.transaction)));
    expect(e).toMatchObject({ slug: 'insufficient-funds', status: 409, extensions: { balance: 'sol', available_base_units: '0' } });
    expect(e!.detail).toMatch(/AccountNotFound/);
    ctx.setNeeds({});
    ctx.escrow.submitSignedTransaction = async () => {
      throw new DomainError('chain-transaction-failed', 'rejected (InvalidState)', { program_error: 'InvalidState' });
    };
    expect(await failure(ctx.service.submitTransaction(ctx.buyer, order.id, ctx.signed(payment.transaction)))).toMatchObject({ slug: 'chain-transaction-failed' });
  });

  it('a balance is disclosed only to the order\'s buyer: the seller gets 403, a stranger 404, the public Solana Pay route nothing, and none of them causes a balance read', async () => {
    const ctx = setup();
    const { order } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id });
    let reads = 0;
    ctx.escrow.fundingNeeds = async () => {
      reads++;
      return { ...rich, tokenBalance: 0n };
    };
    const stranger = user(randomUUID(), Keypair.generate().publicKey.toBase58());
    expect(await failure(ctx.service.refreshPayment(ctx.seller, order.id))).toMatchObject({ slug: 'forbidden' });
    expect(await failure(ctx.service.refreshPayment(stranger, order.id))).toMatchObject({ slug: 'not-found' });
    expect(await failure(ctx.service.submitTransaction(stranger, order.id, 'AAAA'))).toMatchObject({ slug: 'not-found' });
    // a wallet asking for the transaction gets it (it simulates the payment itself); no balances in the answer
    const pay = await ctx.service.solanaPayTransaction(order.id, ctx.buyer.wallet!);
    expect(Object.keys(pay).sort()).toEqual(['message', 'tokenProgram', 'transaction']);
    expect(reads).toBe(0);
    expect(await failure(ctx.service.refreshPayment(ctx.buyer, order.id))).toMatchObject({ slug: 'insufficient-funds' });
    expect(reads).toBe(1);
  });
});
