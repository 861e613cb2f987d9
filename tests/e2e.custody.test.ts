/**
 * Custody end to end: the real app (PGlite; PostgreSQL too when TEST_DATABASE_URL is set) with
 * CUSTODY_ENABLED on, over one localnet. Money is checked on chain (token balances of deposit
 * addresses, the hot wallet and destinations) and in the ledger after every test: the invariant
 * (postings sum to zero per mint, entries balanced, cached = derived, no user balance below zero)
 * and solvency (the hot wallet's USDC on chain equals the ledger's hot_wallet account).
 *
 * Limits in this suite: minimum deposit 0.5 USDC, minimum withdrawal 1 USDC, withdrawal fee 0.1 USDC.
 * The custody worker's timer is off: tests run its passes (`worker.runOnce()`) and wait for
 * background withdrawals (`service.idle()`).
 */
import { randomUUID } from 'node:crypto';
import {
  type AddressLookupTableAccount,
  AddressLookupTableProgram,
  Keypair,
  LAMPORTS_PER_SOL,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
  TransactionMessage,
  VersionedTransaction,
} from '@solana/web3.js';
import {
  ACCOUNT_SIZE,
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeAccount3Instruction,
  getMinimumBalanceForRentExemptAccount,
  createTransferCheckedInstruction,
  getAccount,
  getAssociatedTokenAddressSync,
} from '@solana/spl-token';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectConfirmedSignature, expectSignatureShape } from './helpers/signatures';
import { type Localnet, type BootstrappedChain } from './helpers/localnet';
import { sharedBootstrappedChain } from './helpers/shared-chain';
import { API, createApiKey, createTestApp, loginAs, type TestApp } from './helpers/app';
import { crashingCustodyRepo } from './helpers/crash-ports.js';
import { TEST_DATABASE_URL } from './helpers/db';
import { createApp } from '../server/src/app';
import { createChain, type ChainClient } from '../server/src/chain/index';
import { sendAndConfirm } from '../server/src/chain/tx';
import { systemAccount } from '../server/src/modules/custody/custody.ledger';
import type { CustodyModule } from '../server/src/modules/custody/index';
import { ensureSol, mintTestUsdc, type BootstrapResult } from '../server/scripts/bootstrap-localnet';
import { party as newParty, USDC, type Party } from './helpers/parties';

const SEED = 'd4'.repeat(32);
const custodyConfig = {
  custodyEnabled: true,
  custodySeed: SEED,
  custodyMinDeposit: { USDC: '0.5' },
  custodyMinWithdrawal: { USDC: '1' },
  custodyWithdrawalFee: { USDC: '0.1' },
};


let localnet: Localnet;
let dataDir: string;
let boot: BootstrapResult;
let chain: ChainClient;
let env: BootstrappedChain;
let t: TestApp;
let custody: CustodyModule;
let funder: Keypair;
const t0 = Date.now();

const party = (app: TestApp = t) => newParty(app, env, { sol: 2 });

const ata = (owner: string) => getAssociatedTokenAddressSync(new PublicKey(boot.usdcMint), new PublicKey(owner), true, TOKEN_PROGRAM_ID);

async function usdc(owner: string, c: ChainClient = chain): Promise<bigint> {
  return getAccount(c.connection, ata(owner), 'confirmed', TOKEN_PROGRAM_ID).then((a) => a.amount, () => 0n);
}

/** An outside wallet sends `amount` test USDC to `owner`'s associated token account. */
async function sendUsdc(owner: string, amount: bigint, from: Keypair = funder): Promise<string> {
  const mint = new PublicKey(boot.usdcMint);
  const to = ata(owner);
  const tx = new Transaction().add(
    createAssociatedTokenAccountIdempotentInstruction(from.publicKey, to, new PublicKey(owner), mint, TOKEN_PROGRAM_ID),
    createTransferCheckedInstruction(ata(from.publicKey.toBase58()), mint, to, from.publicKey, amount, 6, [], TOKEN_PROGRAM_ID),
  );
  return (await sendAndConfirm(chain.connection, tx, [from])).signature;
}

/**
 * A destination wallet with its (empty) USDC associated token account, created at the funder's expense: the
 * service pays no destination's rent (docs/threat-model.md#who-pays-for-what-on-chain), so a wallet without one is refused.
 */
async function walletWithAccount(): Promise<string> {
  const owner = Keypair.generate().publicKey.toBase58();
  await sendUsdc(owner, 0n);
  return owner;
}

const post = (who: Party, path: string, body?: object, app: TestApp = t) =>
  request(app.app).post(`${API}${path}`).set(who.headers).send(body ?? {});
const get = (who: Party, path: string, app: TestApp = t) => request(app.app).get(`${API}${path}`).set(who.headers);

const withdraw = (who: Party, body: object, key: string = randomUUID(), app: TestApp = t) =>
  request(app.app).post(`${API}/wallet/withdraw`).set(who.headers).set('Idempotency-Key', key).send(body);

async function custodial(who: Party, app: TestApp = t) {
  const res = await get(who, '/wallet/balances', app);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const line = res.body.balances.find((b: { source: string; currency: string }) => b.source === 'custodial' && b.currency === 'USDC');
  return { available: BigInt(line.amount_base_units), held: BigInt(line.held_base_units), escrow: BigInt(line.in_escrow_base_units) };
}

/** Deposit `amount` from the outside and let the worker credit and sweep it. Returns the deposit address. */
async function credit(who: Party, amount: bigint, app: TestApp = t, mod: CustodyModule = custody): Promise<string> {
  const dep = await post(who, '/wallet/deposit', { currency: 'USDC' }, app);
  expect(dep.status, JSON.stringify(dep.body)).toBe(200);
  await sendUsdc(dep.body.address, amount);
  const pass = await mod.worker.runOnce();
  expect(pass.credited).toHaveLength(1);
  return dep.body.address;
}

/** The ledger invariant and solvency: the hot wallet's USDC on chain is exactly what the books say. */
async function expectBooksBalanced(mod: CustodyModule = custody, c: ChainClient = chain) {
  const report = await mod.ledgerInvariant();
  expect(report.problems).toEqual([]);
  for (const sum of Object.values(report.sumByMint)) expect(sum).toBe(0n);
  expect(await usdc(c.service.publicKey.toBase58(), c)).toBe(await mod.ledger.balance(systemAccount(boot.usdcMint, 'hot_wallet')));
}

async function listing(seller: Party, price: number, app: TestApp = t): Promise<string> {
  const res = await post(seller, '/listings', {
    title: 'Illustration for a book cover',
    description: 'One cover illustration, two revisions.',
    price,
    currency: 'USDC',
    category: 'design',
    duration: 3,
  }, app);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.listing_id;
}

const orderCustodially = (buyer: Party, listingId: string) =>
  request(t.app)
    .post(`${API}/orders`)
    .set(buyer.headers)
    .set('Idempotency-Key', randomUUID())
    .send({ listing_id: listingId, payment_source: 'custodial' });

const crash = crashingCustodyRepo();

beforeAll(async () => {
  env = await sharedBootstrappedChain('custody-e2e');
  ({ localnet, dataDir, boot, chain } = env);
  // the custody repository with a crash switch around a transfer's send (off unless a test sets it)
  t = await createTestApp({ chain, config: { currencies: boot.currencies, ...custodyConfig }, orders: { reviewWindowSeconds: 60 }, custody: { ports: { repo: crash.wrap } } });
  custody = t.services.custody!;
  funder = Keypair.generate();
  await ensureSol(chain.connection, funder.publicKey, BigInt(LAMPORTS_PER_SOL), 5 * LAMPORTS_PER_SOL);
  await mintTestUsdc(dataDir, localnet.rpcUrl, funder.publicKey.toBase58(), USDC(100_000));
  console.info(`[timing] localnet + bootstrap + app: ${Date.now() - t0} ms`);
});

afterAll(async () => {
  await t?.close();
  await env?.stop();
  console.info(`[timing] e2e.custody total: ${Date.now() - t0} ms`);
});

describe('deposits', () => {
  it('deposit -> credited once and swept to the hot wallet; replays and a restart credit nothing more', async () => {
    const [alice, bob] = await Promise.all([party(), party()]);
    const dep = await post(alice, '/wallet/deposit', { currency: 'USDC' });
    expect(dep.status, JSON.stringify(dep.body)).toBe(200);
    expect(dep.body).toMatchObject({
      currency: 'USDC',
      mint: boot.usdcMint,
      token_account: ata(dep.body.address).toBase58(),
      commitment: 'finalized',
      confirmations_required: 32,
      accepted: [{ currency: 'USDC', mint: boot.usdcMint, minimum_base_units: '500000', minimum: 0.5, decimals: 6 }],
    });
    expect(dep.body.instructions).toMatch(/0\.5 USDC/);
    expect(dep.body.solana_pay_url).toBe(`solana:${dep.body.address}?spl-token=${boot.usdcMint}&label=Bazaar%20deposit`);
    // one address per user: stable for alice, another one for bob, derived from the seed
    expect((await post(alice, '/wallet/deposit', {})).body.address).toBe(dep.body.address);
    const bobs = (await post(bob, '/wallet/deposit', {})).body;
    expect(bobs.address).not.toBe(dep.body.address);
    expect(bobs.accepted.map((a: { currency: string }) => a.currency)).toEqual(['USDC', 'SOL']);
    const row = await custody.repo.getAddress(alice.userId);
    expect(custody.keys.address(row!.index)).toBe(dep.body.address);

    const hotBefore = await usdc(chain.service.publicKey.toBase58());
    const sig = await sendUsdc(dep.body.address, USDC(12.5));
    const pass = await custody.worker.runOnce();
    expect(pass.credited).toEqual([`${sig}:${ata(dep.body.address).toBase58()}`]);
    expect(pass.sweeps).toHaveLength(1);
    expect(await custodial(alice)).toEqual({ available: USDC(12.5), held: 0n, escrow: 0n });
    expect(await usdc(dep.body.address)).toBe(0n);
    expect((await usdc(chain.service.publicKey.toBase58())) - hotBefore).toBe(USDC(12.5));
    const listed = await get(alice, '/wallet/deposits');
    expect(listed.body.data).toEqual([
      expect.objectContaining({ signature: sig, amount_base_units: '12500000', amount: 12.5, status: 'credited', currency: 'USDC' }),
    ]);

    // replay: the next pass, a lost scan cursor, and a new service instance on the same database
    expect((await custody.worker.runOnce()).credited).toEqual([]);
    await t.ctx.db.custodyScanCursor.deleteMany({});
    const restarted = createApp({ ...t.ctx });
    const again = await restarted.services.custody!.worker.runOnce();
    expect(again.credited).toEqual([]);
    expect(again.sweeps).toEqual([]);
    await restarted.services.stop();
    expect(await custodial(alice)).toEqual({ available: USDC(12.5), held: 0n, escrow: 0n });
    expect(await t.ctx.db.custodyDeposit.count({ where: { signature: sig } })).toBe(1);

    // below the minimum: recorded, not credited, not swept
    const small = await sendUsdc(dep.body.address, USDC(0.2));
    expect((await custody.worker.runOnce()).belowMinimum).toEqual([`${small}:${ata(dep.body.address).toBase58()}`]);
    expect(await custodial(alice)).toEqual({ available: USDC(12.5), held: 0n, escrow: 0n });
    expect((await get(alice, '/wallet/deposits')).body.data[0]).toMatchObject({ signature: small, status: 'below_minimum' });
    expect(await usdc(dep.body.address)).toBe(USDC(0.2));
    await expectBooksBalanced();
  });
});

describe('withdrawals', () => {
  it('withdraw -> arrives on chain at the destination (its own token account); the fee stays with the service', async () => {
    const me = await party();
    await credit(me, USDC(10));
    const dest = await walletWithAccount(); // its own (empty) token account: the service never pays its rent
    const res = await withdraw(me, { currency: 'USDC', amount: 2.5, destination: dest });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({
      status: 'pending',
      currency: 'USDC',
      mint: boot.usdcMint,
      amount: 2.5,
      amount_base_units: '2500000',
      fee_base_units: '100000',
      total_debited_base_units: '2600000',
      destination: dest,
      destination_token_account: ata(dest).toBase58(),
      signature: null,
    });
    await custody.service.idle();
    const done = await get(me, `/wallet/withdrawals/${res.body.withdrawal_id}`);
    expect(done.body).toMatchObject({ status: 'confirmed', failure_reason: null });
    await expectConfirmedSignature(chain.connection, done.body.signature, 'the withdrawal signature');
    expect(done.body.confirmed_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(Date.parse(done.body.confirmed_at)).toBeGreaterThanOrEqual(Date.parse(done.body.created_at));
    expect(await usdc(dest)).toBe(USDC(2.5));
    expect(await custodial(me)).toEqual({ available: USDC(7.4), held: 0n, escrow: 0n });

    // amount in base units works the same
    const exact = await withdraw(me, { currency: 'USDC', amount_base_units: '1000000', destination: dest });
    expect(exact.status, JSON.stringify(exact.body)).toBe(202);
    await custody.service.idle();
    expect(await usdc(dest)).toBe(USDC(3.5));
    expect(await custodial(me)).toEqual({ available: USDC(6.3), held: 0n, escrow: 0n });
    const list = await get(me, '/wallet/withdrawals?limit=1');
    expect(list.body.data).toHaveLength(1);
    expect(list.body.data[0].withdrawal_id).toBe(exact.body.withdrawal_id);
    const page2 = await get(me, `/wallet/withdrawals?limit=1&cursor=${list.body.next_cursor}`);
    expect(page2.body.data[0].withdrawal_id).toBe(res.body.withdrawal_id);
    // another user's withdrawal is not visible
    const stranger = await party();
    expect((await get(stranger, `/wallet/withdrawals/${res.body.withdrawal_id}`)).status).toBe(404);
    // events (issue 11): the credited deposit and the withdrawal's two steps, to the owner only
    const evs = (await get(me, `/events?resource_id=${res.body.withdrawal_id}`)).body.data.reverse();
    expect(evs.map((e: { type: string }) => e.type)).toEqual(['withdrawal.created', 'withdrawal.confirmed']);
    expect(evs[1]).toMatchObject({ sequence: 2, data: done.body });
    expect((await get(me, '/events?type=deposit.credited')).body.data).toHaveLength(1);
    expect((await get(stranger, `/events?resource_id=${res.body.withdrawal_id}`)).body.data).toEqual([]);
    await expectBooksBalanced();
  });

  it('refuses: insufficient funds (409), bad addresses, amounts below the minimum or malformed (400); nothing is held', async () => {
    const me = await party();
    const depositAddress = await credit(me, USDC(3));
    const dest = await walletWithAccount();
    const expectField = async (body: object, path: string, code?: string) => {
      const res = await withdraw(me, body);
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      expect(res.body.type).toBe('https://bazaar.dev/problems/validation-error');
      expect(res.body.errors[0].path).toBe(path);
      if (code) expect(res.body.errors[0].code).toBe(code);
    };
    const poor = await withdraw(me, { currency: 'USDC', amount: 2.95, destination: dest }); // 2.95 + 0.1 > 3
    expect(poor.status).toBe(409);
    expect(poor.body).toMatchObject({
      type: 'https://bazaar.dev/problems/insufficient-funds',
      required_base_units: '3050000',
      available_base_units: '3000000',
    });
    await expectField({ currency: 'USDC', amount: 1, destination: 'not-a-key' }, 'body.destination');
    await expectField({ currency: 'USDC', amount: 1, destination: ata(dest).toBase58().slice(0, 30) }, 'body.destination');
    await sendUsdc(me.wallet, 1n); // the caller's own token account exists now
    await expectField({ currency: 'USDC', amount: 1, destination: ata(me.wallet).toBase58() }, 'body.destination', 'token_account');
    await expectField({ currency: 'USDC', amount: 1, destination: boot.usdcMint }, 'body.destination', 'token_account');
    await expectField({ currency: 'USDC', amount: 1, destination: depositAddress }, 'body.destination', 'custodial_address');
    await expectField({ currency: 'USDC', amount: 1, destination: chain.service.publicKey.toBase58() }, 'body.destination', 'custodial_address');
    await expectField({ currency: 'USDC', amount: 1, destination: TOKEN_PROGRAM_ID.toBase58() }, 'body.destination', 'program_account');
    // a wallet without a USDC token account: the service would pay its rent, which the owner can take back
    await expectField({ currency: 'USDC', amount: 1, destination: Keypair.generate().publicKey.toBase58() }, 'body.destination', 'token_account_missing');
    await expectField({ currency: 'USDC', amount: 0.5, destination: dest }, 'body.amount', 'below_minimum');
    await expectField({ currency: 'USDC', amount: 1.0000001, destination: dest }, 'body.amount', 'too_many_decimals');
    await expectField({ currency: 'USDC', destination: dest }, 'body.amount', 'invalid_union');
    await expectField({ currency: 'USDC', amount: 1, amount_base_units: '1000000', destination: dest }, 'body.amount', 'invalid_union');
    await expectField({ currency: 'EUR', amount: 1, destination: dest }, 'body.currency', 'unsupported_currency');
    expect(await custodial(me)).toEqual({ available: USDC(3), held: 0n, escrow: 0n });
    expect((await get(me, '/wallet/withdrawals')).body.data).toEqual([]);
    await expectBooksBalanced();
  });

  it('Idempotency-Key: a replay returns the same 202 body and sends one transaction; another body is 422; no key is 400', async () => {
    const me = await party();
    await credit(me, USDC(5));
    const dest = await walletWithAccount();
    const key = randomUUID();
    const body = { currency: 'USDC', amount: 1.5, destination: dest };
    const first = await withdraw(me, body, key);
    expect(first.status).toBe(202);
    const replay = await withdraw(me, body, key);
    expect(replay.status).toBe(202);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    await custody.service.idle();
    expect((await withdraw(me, body, key)).body).toEqual(first.body); // still the stored answer
    const other = await withdraw(me, { ...body, amount: 2 }, key);
    expect(other.status).toBe(422);
    expect(other.body.type).toBe('https://bazaar.dev/problems/idempotency-key-reused');
    const none = await request(t.app).post(`${API}/wallet/withdraw`).set(me.headers).send(body);
    expect(none.status).toBe(400);
    expect(none.body.type).toBe('https://bazaar.dev/problems/idempotency-key-missing');
    expect((await get(me, '/wallet/withdrawals')).body.data).toHaveLength(1);
    expect(await usdc(dest)).toBe(USDC(1.5));
    expect(await custodial(me)).toEqual({ available: USDC(3.4), held: 0n, escrow: 0n });
    await expectBooksBalanced();
  });

  it('20 concurrent withdrawals racing for one balance: 9 held and sent, 11 refused, never below zero, exact sums', async () => {
    const me = await party();
    await credit(me, USDC(10));
    const dest = await walletWithAccount();
    const res = await Promise.all(Array.from({ length: 20 }, () => withdraw(me, { currency: 'USDC', amount: 1, destination: dest })));
    const statuses = res.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(9); // 9 x 1.1 = 9.9 <= 10 < 11
    expect(statuses.filter((s) => s === 409)).toHaveLength(11);
    expect((await custodial(me)).available).toBe(USDC(0.1));
    await custody.service.idle();
    expect(await custodial(me)).toEqual({ available: USDC(0.1), held: 0n, escrow: 0n });
    const all = (await get(me, '/wallet/withdrawals?limit=100')).body.data;
    expect(all.map((w: { status: string }) => w.status)).toEqual(Array(9).fill('confirmed'));
    expect(new Set(all.map((w: { signature: string }) => w.signature)).size).toBe(9);
    expect(await usdc(dest)).toBe(USDC(9));
    await expectBooksBalanced();
  });

  it('crash between send and settle: the transfer lands, the process dies; a new instance settles it exactly once', async () => {
    const me = await party();
    await credit(me, USDC(4));
    const dest = await walletWithAccount();
    let landed = '';
    crash.afterSend = (_t, tx) => {
      landed = tx.signature;
      throw new Error('simulated crash');
    };
    let id: string;
    try {
      const res = await withdraw(me, { currency: 'USDC', amount: 2, destination: dest });
      expect(res.status).toBe(202);
      id = res.body.withdrawal_id;
      await custody.service.idle();
    } finally {
      crash.afterSend = undefined;
    }
    // on chain the money moved; the books still hold it
    await expectConfirmedSignature(chain.connection, landed, 'the landed withdrawal');
    expect(await usdc(dest)).toBe(USDC(2));
    expect((await get(me, `/wallet/withdrawals/${id}`)).body).toMatchObject({ status: 'submitted', signature: landed });
    expect(await custodial(me)).toEqual({ available: USDC(1.9), held: USDC(2.1), escrow: 0n });

    const b = createApp({ ...t.ctx });
    try {
      const pass = await b.services.custody!.worker.runOnce();
      expect(pass.reconciled[id]).toBe('confirmed');
      await b.services.custody!.worker.runOnce();
      await custody.worker.runOnce(); // the old instance, back again: nothing left to do
    } finally {
      await b.services.stop();
    }
    expect((await get(me, `/wallet/withdrawals/${id}`)).body).toMatchObject({ status: 'confirmed', signature: landed });
    expect(await t.ctx.db.custodyJournalEntry.count({ where: { ref: `transfer:${id}:settle` } })).toBe(1);
    expect(await custodial(me)).toEqual({ available: USDC(1.9), held: 0n, escrow: 0n });
    expect(await usdc(dest)).toBe(USDC(2));
    await expectBooksBalanced();
  });

  it('a transaction signed and recorded but never sent expires: the reconciler fails it and releases the hold', async () => {
    const me = await party();
    await credit(me, USDC(5));
    const dest = await walletWithAccount();
    crash.beforeSend = () => {
      throw new Error('simulated crash before the first send');
    };
    let id: string;
    try {
      const res = await withdraw(me, { currency: 'USDC', amount: 3, destination: dest });
      expect(res.status).toBe(202);
      id = res.body.withdrawal_id;
      await custody.service.idle();
    } finally {
      crash.beforeSend = undefined;
    }
    const signed = (await get(me, `/wallet/withdrawals/${id}`)).body;
    expect(signed).toMatchObject({ status: 'submitted' });
    expectSignatureShape(signed.signature, 'the signed (unsent) withdrawal');
    expect(await custodial(me)).toEqual({ available: USDC(1.9), held: USDC(3.1), escrow: 0n });
    // its blockhash is still valid: the outcome is unknown, nothing is released yet
    expect((await custody.worker.runOnce()).reconciled[id]).toBe('submitted');
    // move the block height past the blockhash's last valid height
    const lastValid = (await custody.repo.getTransfer(id))!.lastValidBlockHeight!;
    // (on the localnet a 1 s clock warp adds 2 blocks, and time a block per 400 ms; a blockhash lives 150 blocks)
    for (let i = 0; i < 400 && (await chain.connection.getBlockHeight('confirmed')) <= lastValid; i++) await localnet.advanceClock(1);
    expect(await chain.connection.getBlockHeight('confirmed')).toBeGreaterThan(lastValid);
    expect((await custody.worker.runOnce()).reconciled[id]).toBe('failed');
    const failed = (await get(me, `/wallet/withdrawals/${id}`)).body;
    expect(failed).toMatchObject({ status: 'failed', signature: signed.signature });
    expect(failed.failure_reason).toMatch(/expired/);
    expect(await custodial(me)).toEqual({ available: USDC(5), held: 0n, escrow: 0n });
    expect(await usdc(dest)).toBe(0n);
    await expectBooksBalanced();
  });

  it('a transaction the chain rejects fails at once and releases the hold (hot wallet drained out of band)', async () => {
    const me = await party();
    await credit(me, USDC(6));
    const hot = chain.service.publicKey.toBase58();
    const parking = Keypair.generate();
    const parked = await usdc(hot);
    // an operator mistake: the hot wallet's tokens moved away behind the ledger's back
    const mint = new PublicKey(boot.usdcMint);
    await sendAndConfirm(
      chain.connection,
      new Transaction().add(
        createAssociatedTokenAccountIdempotentInstruction(chain.service.publicKey, ata(parking.publicKey.toBase58()), parking.publicKey, mint),
        createTransferCheckedInstruction(ata(hot), mint, ata(parking.publicKey.toBase58()), chain.service.publicKey, parked, 6),
      ),
      [chain.service],
    );
    try {
      const res = await withdraw(me, { currency: 'USDC', amount: 2, destination: await walletWithAccount() });
      expect(res.status).toBe(202);
      await custody.service.idle();
      const w = (await get(me, `/wallet/withdrawals/${res.body.withdrawal_id}`)).body;
      expect(w.status).toBe('failed');
      expect(w.failure_reason).toMatch(/InsufficientFunds|rejected/);
      expect(await custodial(me)).toEqual({ available: USDC(6), held: 0n, escrow: 0n });
      const evs = (await get(me, `/events?resource_id=${res.body.withdrawal_id}`)).body.data.reverse();
      expect(evs.map((e: { type: string }) => e.type)).toEqual(['withdrawal.created', 'withdrawal.failed']);
    } finally {
      await sendAndConfirm(
        chain.connection,
        new Transaction().add(createTransferCheckedInstruction(ata(parking.publicKey.toBase58()), mint, ata(hot), parking.publicKey, parked, 6)),
        [chain.service, parking],
      );
    }
    await expectBooksBalanced();
  });
});

describe('custodial order payment', () => {
  it('pays an order from the balance (the service funds the escrow), deliver -> confirm; the seller is paid on chain', async () => {
    const [buyer, seller] = await Promise.all([party(), party()]);
    const depositAddress = await credit(buyer, USDC(30));
    const l = await listing(seller, 20);
    const res = await orderCustodially(buyer, l);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      status: 'in_progress',
      escrow_state: 'funded',
      payment_source: 'custodial',
      payment: null,
      buyer_wallet: depositAddress,
      amount_base_units: '20000000',
    });
    expect(res.body.allowed_actions).not.toContain('pay');
    expect(res.body.transactions.map((x: { action: string }) => x.action)).toEqual(['fund']);
    const id = res.body.order_id;
    expect(await chain.escrow.fetchOrder(id)).toMatchObject({ state: 'funded', buyer: depositAddress, amount: USDC(20) });
    expect(await custodial(buyer)).toEqual({ available: USDC(10), held: 0n, escrow: USDC(20) });
    await expectBooksBalanced();

    expect((await post(seller, `/orders/${id}/deliver`)).status).toBe(200);
    const done = await post(buyer, `/orders/${id}/confirm`);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.status).toBe('completed');
    expect(await usdc(seller.wallet)).toBe(USDC(20) - USDC(0.5));
    expect(await custodial(buyer)).toEqual({ available: USDC(10), held: 0n, escrow: 0n });
    expect((await custody.repo.transferForOrder(id))!.closedAt).toBeInstanceOf(Date);
    // the rent of the escrow accounts came back to the deposit key, not counted as a deposit
    expect((await custody.worker.runOnce()).credited).toEqual([]);
    await expectBooksBalanced();

    // more than the balance: 409, no order left behind
    const pricey = await listing(seller, 50);
    const poor = await orderCustodially(buyer, pricey);
    expect(poor.status).toBe(409);
    expect(poor.body.type).toBe('https://bazaar.dev/problems/insufficient-funds');
    const mine = (await get(buyer, '/orders?role=buyer')).body.data;
    expect(mine.map((o: { order_id: string }) => o.order_id)).toEqual([id]);
    expect(await custodial(buyer)).toEqual({ available: USDC(10), held: 0n, escrow: 0n });
  });

  it('a refund returns the amount to the custodial balance; the tokens are swept, never credited as a deposit', async () => {
    const [buyer, seller] = await Promise.all([party(), party()]);
    const depositAddress = await credit(buyer, USDC(15));
    const res = await orderCustodially(buyer, await listing(seller, 12));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(await custodial(buyer)).toEqual({ available: USDC(3), held: 0n, escrow: USDC(12) });
    const refunded = await post(seller, `/orders/${res.body.order_id}/refund`);
    expect(refunded.status, JSON.stringify(refunded.body)).toBe(200);
    expect(refunded.body.status).toBe('refunded');
    expect(await custodial(buyer)).toEqual({ available: USDC(15), held: 0n, escrow: 0n });
    expect(await usdc(depositAddress)).toBe(USDC(12));
    const pass = await custody.worker.runOnce();
    expect(pass.credited).toEqual([]);
    expect(pass.sweeps).toHaveLength(1);
    expect(await usdc(depositAddress)).toBe(0n);
    expect((await get(buyer, '/wallet/deposits')).body.data).toHaveLength(1); // only the real deposit
    expect(await custodial(buyer)).toEqual({ available: USDC(15), held: 0n, escrow: 0n });
    await expectBooksBalanced();
  });

  it('a dispute split 25/75: the buyer\'s quarter comes back to the custodial balance', async () => {
    const [buyer, seller] = await Promise.all([party(), party()]);
    await credit(buyer, USDC(8));
    const admin = { kp: Keypair.generate(), wallet: '', userId: '', headers: { 'x-api-key': (await createApiKey(t, { isAdmin: true })).key } };
    const res = await orderCustodially(buyer, await listing(seller, 8));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.order_id;
    expect((await post(buyer, `/orders/${id}/dispute`, { reason: 'Nothing was delivered so far' })).status).toBe(200);
    const r = await post(admin, `/orders/${id}/resolve`, { buyer_bps: 2500 });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(await custodial(buyer)).toEqual({ available: USDC(2), held: 0n, escrow: 0n });
    expect(await usdc(seller.wallet)).toBe(USDC(6) - USDC(0.15));
    await custody.worker.runOnce();
    await expectBooksBalanced();
  });
});

describe('custodial order payment, outcome attribution', () => {
  it('a bundled [refund(C), claim(A)]: A is recorded completed (the seller was paid), C refunded; nothing credited that did not arrive', async () => {
    const [buyer, seller] = await Promise.all([party(), party()]);
    await credit(buyer, USDC(10));
    await mintTestUsdc(dataDir, localnet.rpcUrl, buyer.wallet, USDC(5));
    // A: her custodial order, delivered (review window 60 s in this suite)
    const a = await orderCustodially(buyer, await listing(seller, 10));
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    const A = a.body.order_id as string;
    expect((await post(seller, `/orders/${A}/deliver`)).status).toBe(200);
    // C: her own wallet order, paid from her wallet, never delivered (delivery deadline 3 days)
    const c = await request(t.app).post(`${API}/orders`).set(buyer.headers).set('Idempotency-Key', randomUUID()).send({ listing_id: await listing(seller, 5) });
    expect(c.status, JSON.stringify(c.body)).toBe(201);
    const C = c.body.order_id as string;
    const fund = Transaction.from(Buffer.from(c.body.payment.transaction, 'base64'));
    fund.partialSign(buyer.kp);
    const paid = await post(buyer, `/orders/${C}/transaction`, { signed_transaction: fund.serialize().toString('base64') });
    expect(paid.body.status, JSON.stringify(paid.body)).toBe('in_progress');
    expect(await custodial(buyer)).toEqual({ available: 0n, held: 0n, escrow: USDC(10) });
    const sellerBefore = await usdc(seller.wallet);

    // C's delivery deadline and A's auto-release time have both passed: she may refund C herself, anyone may claim A
    await localnet.advanceClock(3 * 86_400 + 5);
    const treasury = (await chain.escrow.fetchConfig())!.treasury;
    const mint = new PublicKey(boot.usdcMint);
    const bundle = new Transaction().add(
      // the payees' token accounts must exist (she pays for them)
      ...[seller.wallet, treasury].map((owner) => createAssociatedTokenAccountIdempotentInstruction(buyer.kp.publicKey, ata(owner), new PublicKey(owner), mint)),
      await chain.escrow.instructionFor('refund', C, { signer: buyer.kp.publicKey }),
      await chain.escrow.instructionFor('claim', A, { signer: buyer.kp.publicKey }),
    );
    await sendAndConfirm(chain.connection, bundle, [buyer.kp]);
    expect(await chain.escrow.fetchOrder(A)).toBeNull();
    expect(await chain.escrow.fetchOrder(C)).toBeNull();

    // the service learns both outcomes from the chain: the drift pass, the crank, the custody worker
    const orders = t.services.orders!;
    await orders.reconciler.runOnce();
    await orders.watcher.runOnce();
    await orders.autoRelease.runOnce();
    await custody.worker.runOnce();
    const readA = (await get(buyer, `/orders/${A}`)).body;
    expect(readA).toMatchObject({
      status: 'completed',
      escrow_state: 'released',
      payout: { buyer_base_units: '0', seller_base_units: String(USDC(9.75)), treasury_base_units: String(USDC(0.25)), verified: true },
    });
    const readC = (await get(buyer, `/orders/${C}`)).body;
    expect(readC).toMatchObject({
      status: 'refunded',
      payout: { buyer_base_units: String(USDC(5)), seller_base_units: '0', treasury_base_units: '0', verified: true },
    });
    // the bundle's signature is each order's closing transaction; nothing was sent by the service
    expect(readA.transactions.map((x: { action: string }) => x.action)).toEqual(['fund', 'mark_delivered', 'claim']);
    expect(readC.transactions.map((x: { action: string }) => x.action)).toEqual(['fund', 'refund']);
    // on chain: the seller got A's price minus the fee, she got C back in her wallet
    expect((await usdc(seller.wallet)) - sellerBefore).toBe(USDC(9.75));
    expect(await usdc(buyer.wallet)).toBe(USDC(5));
    // the books: A's 10 USDC went to the seller, nothing comes back to her custodial balance
    expect(await custodial(buyer)).toEqual({ available: 0n, held: 0n, escrow: 0n });
    const close = await t.ctx.db.custodyJournalEntry.findUnique({ where: { ref: `order:${A}:close` } });
    expect(close?.memo).toMatchObject({ buyer_share: '0' });
    await expectBooksBalanced();
  });
});

/** The test-only program of programs/tests/cpi-caller (the test localnets load it): forwards its instruction by CPI. */
const CPI_CALLER = new PublicKey('CpiCa11erTest111111111111111111111111111111');

/** `ix` made by the CPI caller: its program becomes the first account of the caller's instruction. */
function viaCpiCaller(ix: TransactionInstruction): TransactionInstruction {
  return new TransactionInstruction({
    programId: CPI_CALLER,
    keys: [{ pubkey: ix.programId, isSigner: false, isWritable: false }, ...ix.keys],
    data: ix.data,
  });
}

/** A lookup table of `who` holding `addresses`, created and extended through the address-lookup-table program. */
async function lookupTable(who: Keypair, addresses: PublicKey[]): Promise<AddressLookupTableAccount> {
  const [create, table] = AddressLookupTableProgram.createLookupTable({
    authority: who.publicKey,
    payer: who.publicKey,
    recentSlot: await chain.connection.getSlot('finalized'),
  });
  const extend = AddressLookupTableProgram.extendLookupTable({ lookupTable: table, authority: who.publicKey, payer: who.publicKey, addresses });
  await sendAndConfirm(chain.connection, new Transaction().add(create, extend), [who]);
  const account = (await chain.connection.getAddressLookupTable(table, { commitment: 'confirmed' })).value;
  expect(account?.state.addresses.map((a) => a.toBase58())).toEqual(addresses.map((a) => a.toBase58()));
  return account!;
}

/** The service learns what the chain did to its orders: the drift pass, the watcher, the custody worker (twice: book, then sweep). */
async function catchUp() {
  const orders = t.services.orders!;
  await orders.reconciler.runOnce();
  await orders.watcher.runOnce();
  const passes = [await custody.worker.runOnce(), await custody.worker.runOnce()];
  return { credited: passes.flatMap((p) => p.credited) };
}

describe('custodial refunds the service did not send', () => {
  it('a seller refunds through her own program by CPI, the escrow id in a lookup table (v0): the buyer is credited once, withdrawable stays X', async () => {
    // the attack of issue 20 item 1: buyer and seller are the same person, X paid, 2X withdrawable before the fix
    const [buyer, seller] = await Promise.all([party(), party()]);
    const depositAddress = await credit(buyer, USDC(10));
    const res = await orderCustodially(buyer, await listing(seller, 10));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.order_id as string;
    expect(await custodial(buyer)).toEqual({ available: 0n, held: 0n, escrow: USDC(10) });

    const refund = await chain.escrow.instructionFor('refund', id, { signer: seller.kp.publicKey });
    const caller = viaCpiCaller(refund);
    // every account but the signer (and the caller's own program id) from a lookup table: the escrow id too
    const table = await lookupTable(seller.kp, caller.keys.filter((k) => !k.isSigner).map((k) => k.pubkey));
    const message = new TransactionMessage({
      payerKey: seller.kp.publicKey,
      recentBlockhash: (await chain.connection.getLatestBlockhash('confirmed')).blockhash,
      instructions: [caller],
    }).compileToV0Message([table]);
    const escrowId = chain.escrow.programId.toBase58();
    expect(message.staticAccountKeys.map((k) => k.toBase58())).not.toContain(escrowId);
    expect(message.addressTableLookups).toHaveLength(1);
    const tx = new VersionedTransaction(message);
    tx.sign([seller.kp]);
    const signature = await chain.connection.sendRawTransaction(tx.serialize());
    await chain.connection.confirmTransaction(signature, 'confirmed');
    expect(await chain.escrow.fetchOrder(id)).toBeNull();
    expect(await usdc(depositAddress)).toBe(USDC(10));
    // the node reports the escrow as loaded from the table and the refund as a CPI
    const recorded = await chain.connection.getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
    expect(recorded?.meta?.loadedAddresses?.readonly.map((k) => k.toBase58())).toContain(escrowId);

    const { credited } = await catchUp();
    expect((await get(buyer, `/orders/${id}`)).body).toMatchObject({
      status: 'refunded',
      payout: { buyer_base_units: String(USDC(10)), verified: true },
    });
    expect((await custody.repo.transferForOrder(id))!.closedAt).toBeInstanceOf(Date); // booked through the order
    expect(credited).toEqual([]); // the escrow payout is not a deposit
    expect(await custodial(buyer)).toEqual({ available: USDC(10), held: 0n, escrow: 0n });
    expect((await get(buyer, '/wallet/deposits')).body.data).toHaveLength(1); // only the real deposit
    expect(await usdc(depositAddress)).toBe(0n); // swept once
    // X is withdrawable (9.9 + the 0.1 fee), not a unit more
    const out = await walletWithAccount();
    const tooMuch = await withdraw(buyer, { currency: 'USDC', amount: 10, destination: out });
    expect(tooMuch.status, JSON.stringify(tooMuch.body)).toBe(409);
    expect(tooMuch.body.type).toBe('https://bazaar.dev/problems/insufficient-funds');
    const all = await withdraw(buyer, { currency: 'USDC', amount: 9.9, destination: out });
    expect(all.status, JSON.stringify(all.body)).toBe(202);
    await custody.service.idle();
    expect(await custodial(buyer)).toEqual({ available: 0n, held: 0n, escrow: 0n });
    await expectBooksBalanced();
  });

  it('a seller refunds into a token account of the deposit key that is not its associated one: credited to the buyer and swept', async () => {
    const [buyer, seller] = await Promise.all([party(), party()]);
    const depositAddress = await credit(buyer, USDC(6));
    const res = await orderCustodially(buyer, await listing(seller, 6));
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const id = res.body.order_id as string;

    // the seller makes a token account owned by the deposit key (anyone may) and refunds into it
    const mint = new PublicKey(boot.usdcMint);
    const other = Keypair.generate();
    const rent = await getMinimumBalanceForRentExemptAccount(chain.connection);
    const refund = await chain.escrow.instructionFor('refund', id, { signer: seller.kp.publicKey });
    const buyerAccount = refund.keys.findIndex((k) => k.pubkey.equals(ata(depositAddress)));
    expect(buyerAccount).toBeGreaterThan(0);
    refund.keys[buyerAccount] = { ...refund.keys[buyerAccount], pubkey: other.publicKey };
    await sendAndConfirm(
      chain.connection,
      new Transaction().add(
        SystemProgram.createAccount({ fromPubkey: seller.kp.publicKey, newAccountPubkey: other.publicKey, lamports: rent, space: ACCOUNT_SIZE, programId: TOKEN_PROGRAM_ID }),
        createInitializeAccount3Instruction(other.publicKey, mint, new PublicKey(depositAddress), TOKEN_PROGRAM_ID),
        refund,
      ),
      [seller.kp, other],
    );
    expect((await getAccount(chain.connection, other.publicKey, 'confirmed')).amount).toBe(USDC(6));

    const { credited } = await catchUp();
    expect((await get(buyer, `/orders/${id}`)).body).toMatchObject({ status: 'refunded', payout: { buyer_base_units: String(USDC(6)) } });
    expect((await custody.repo.transferForOrder(id))!.closedAt).toBeInstanceOf(Date); // booked through the order
    expect(credited).toEqual([]);
    expect(await custodial(buyer)).toEqual({ available: USDC(6), held: 0n, escrow: 0n });
    // the sweep collected it from that account: the hot wallet holds it (solvency below)
    expect((await getAccount(chain.connection, other.publicKey, 'confirmed')).amount).toBe(0n);
    await expectBooksBalanced();
  });
});

describe('custodial order payment, crash', () => {
  it('the process dies after the escrow is funded, before the books: a new instance books it once and the order goes in_progress', async () => {
    const [buyer, seller] = await Promise.all([party(), party()]);
    const depositAddress = await credit(buyer, USDC(9));
    const l = await listing(seller, 7);
    crash.afterSend = (tr) => {
      if (tr.kind === 'order_fund') throw new Error('simulated crash');
    };
    let res;
    try {
      res = await orderCustodially(buyer, l);
    } finally {
      crash.afterSend = undefined;
    }
    expect(res.status).toBe(500);
    const [order] = (await get(buyer, '/orders?role=buyer')).body.data;
    expect(order).toMatchObject({ status: 'awaiting_payment', payment_source: 'custodial', buyer_wallet: depositAddress });
    expect(await chain.escrow.fetchOrder(order.order_id)).toMatchObject({ state: 'funded', buyer: depositAddress, amount: USDC(7) });
    expect(await custodial(buyer)).toEqual({ available: USDC(2), held: 0n, escrow: USDC(7) });

    const transfer = (await custody.repo.transferForOrder(order.order_id))!;
    expect(transfer.status).toBe('submitted');
    const b = createApp({ ...t.ctx });
    try {
      expect((await b.services.custody!.worker.runOnce()).reconciled[transfer.id]).toBe('confirmed');
      expect((await b.services.orders!.watcher.runOnce()).funded).toEqual([order.order_id]);
      await b.services.custody!.worker.runOnce();
    } finally {
      await b.services.stop();
    }
    expect((await get(buyer, `/orders/${order.order_id}`)).body).toMatchObject({ status: 'in_progress', escrow_state: 'funded' });
    expect(await t.ctx.db.custodyJournalEntry.count({ where: { ref: `transfer:${transfer.id}:settle` } })).toBe(1);
    expect(await custodial(buyer)).toEqual({ available: USDC(2), held: 0n, escrow: USDC(7) });
    await expectBooksBalanced();
  });
});

describe('custody disabled (the default)', () => {
  it('every custodial route and payment_source custodial answer 404 custody-disabled; balances show chain lines only', async () => {
    const off = await createTestApp({ chain, config: { currencies: boot.currencies } });
    try {
      const me = await party(off);
      const problem = 'https://bazaar.dev/problems/custody-disabled';
      // anonymous callers and bad credentials learn nothing about the setting: 401 first
      const routes: Array<['get' | 'post', string]> = [
        ['post', '/wallet/deposit'],
        ['get', '/wallet/deposits'],
        ['post', '/wallet/withdraw'],
        ['get', '/wallet/withdrawals'],
        ['get', `/wallet/withdrawals/${randomUUID()}`],
      ];
      for (const [method, path] of routes) {
        const anon = await request(off.app)[method](`${API}${path}`).send(method === 'post' ? {} : undefined);
        expect([path, anon.status, anon.body.type]).toEqual([path, 401, 'https://bazaar.dev/problems/unauthorized']);
        const bad = await request(off.app)[method](`${API}${path}`).set('authorization', 'Bearer not-a-token');
        expect([path, bad.status]).toEqual([path, 401]);
      }
      expect((await post(me, '/wallet/deposit', {}, off)).body.type).toBe(problem);
      const w = await request(off.app).post(`${API}/wallet/withdraw`).set(me.headers).send({ currency: 'USDC', amount: 1, destination: me.wallet });
      expect(w.status).toBe(404); // before asking for an Idempotency-Key
      expect(w.body.type).toBe(problem);
      for (const path of ['/wallet/withdrawals', `/wallet/withdrawals/${randomUUID()}`, '/wallet/deposits']) {
        const res = await get(me, path, off);
        expect(res.status).toBe(404);
        expect(res.body.type).toBe(problem);
      }
      const seller = await party(off);
      const l = await listing(seller, 1, off);
      const o = await request(off.app)
        .post(`${API}/orders`)
        .set(me.headers)
        .set('Idempotency-Key', randomUUID())
        .send({ listing_id: l, payment_source: 'custodial' });
      expect(o.status).toBe(404);
      expect(o.body.type).toBe(problem);
      const bal = await get(me, '/wallet/balances', off);
      expect(bal.body.balances.every((b: { source: string }) => b.source === 'chain')).toBe(true);
      expect(off.services.custody).toBeNull();
    } finally {
      await off.close();
    }
  });
});

describe.skipIf(!TEST_DATABASE_URL)('on PostgreSQL', () => {
  it('deposit credit, 20 concurrent withdrawals racing for one balance, ledger invariant (own hot wallet)', async () => {
    // a separate service key, so this app's hot wallet is its own
    const service = Keypair.generate();
    await ensureSol(chain.connection, service.publicKey, BigInt(LAMPORTS_PER_SOL), 5 * LAMPORTS_PER_SOL);
    const pgChain = createChain({ rpcUrl: localnet.rpcUrl, serviceKeypair: service, programId: boot.programId, currencies: boot.currencies });
    const pgApp = await createTestApp({ chain: pgChain, postgres: true, config: { currencies: boot.currencies, ...custodyConfig, custodySeed: 'e5'.repeat(32) } });
    const mod = pgApp.services.custody!;
    try {
      const me = await party(pgApp);
      await credit(me, USDC(10), pgApp, mod);
      await mod.worker.runOnce();
      const dest = await walletWithAccount();
      const res = await Promise.all(Array.from({ length: 20 }, () => withdraw(me, { currency: 'USDC', amount: 1, destination: dest }, randomUUID(), pgApp)));
      expect(res.filter((r) => r.status === 202)).toHaveLength(9);
      expect(res.filter((r) => r.status === 409)).toHaveLength(11);
      await mod.service.idle();
      expect(await custodial(me, pgApp)).toEqual({ available: USDC(0.1), held: 0n, escrow: 0n });
      expect(await usdc(dest)).toBe(USDC(9));
      await expectBooksBalanced(mod, pgChain);
    } finally {
      await pgApp.close();
    }
  });
});

describe('integrity at the end of the suite', () => {
  it('every order matches its escrow account on chain (zero mismatches)', async () => {
    const orders = t.services.orders!;
    await orders.watcher.runOnce();
    await orders.autoRelease.runOnce();
    await orders.reconciler.runOnce();
    const report = await orders.checkIntegrity();
    console.info(`[integrity] ${report.checked} orders checked, ${report.mismatches.length} mismatches`);
    expect(report.checked).toBeGreaterThan(0);
    expect(report.mismatches).toEqual([]);
  });
});
