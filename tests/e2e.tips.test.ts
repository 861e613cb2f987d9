/**
 * Tips end to end (issue 24 item 8): the real app (PGlite) on the shared localnet. A buyer whose order
 * paid its seller tips: she signs the transaction the service returns, the seller's USDC balance rises by
 * exactly the tip, `tip.received` reaches both parties, the seller's profile counts it. Around it, the
 * attacks: tips before the seller was paid, by the seller or a stranger, bad amounts, transactions that
 * pay another amount or account or come from another wallet, memo-only transactions, one signature for two
 * tips, replays; a tip the buyer sends herself is still confirmed; one never sent expires.
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { Keypair, PublicKey, Transaction, TransactionInstruction, sendAndConfirmTransaction } from '@solana/web3.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, createTransferCheckedInstruction, getAssociatedTokenAddressSync, NATIVE_MINT, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import bs58 from 'bs58';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tipMemo, type Tip, type TipWithPayment } from '@bazaar/contract';
import type { BootstrappedChain } from './helpers/localnet';
import { sharedBootstrappedChain } from './helpers/shared-chain';
import { API, createTestApp, type TestApp } from './helpers/app';
import { createTipsChain, createTipsService, tipPaidBy } from '../server/src/modules/tips/index';
import { ordersReadPort } from '../server/src/modules/orders/index';
import { tipOrderOf } from '../server/src/composition';
import { connectSse } from './helpers/sse';
import { fundedOrder as fundedOrderOf, party as newParty, signedBy, usdcBalance as usdcOf, USDC, type Party } from './helpers/parties';

const MEMO = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
const PROBLEM = 'https://bazaar.dev/problems/';

let env: BootstrappedChain;
let t: TestApp;
let server: Server;
let base: string;
const t0 = Date.now();

const party = (usdc = 0) => newParty(t, env, { sol: 2, usdc });
const usdc = (owner: string) => usdcOf(env, owner);
const post = (who: Pick<Party, 'headers'>, path: string, body: object = {}, key?: string) => {
  const r = request(t.app).post(`${API}${path}`).set(who.headers);
  return (key ? r.set('Idempotency-Key', key) : r).send(body);
};
const tipOf = (who: Pick<Party, 'headers'>, orderId: string, amount: number, key: string = randomUUID()) => post(who, `/orders/${orderId}/tips`, { amount }, key);
const tips = () => t.services.tips!;

/** A completed order: funded over HTTP, released by the buyer (the seller got price - fee). */
async function completedOrder(price = 25) {
  const o = await fundedOrderOf(t, env, { price });
  const done = await post(o.buyer, `/orders/${o.id}/confirm`);
  expect(done.status, JSON.stringify(done.body)).toBe(200);
  expect(done.body.status).toBe('completed');
  return o;
}

/** A tip created by `buyer` (201 asserted). */
async function newTip(buyer: Party, orderId: string, amount: number): Promise<TipWithPayment> {
  const res = await tipOf(buyer, orderId, amount);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as TipWithPayment;
}

const mint = () => new PublicKey(env.boot.usdcMint);
const ata = (owner: PublicKey | string) => getAssociatedTokenAddressSync(mint(), new PublicKey(owner), true, TOKEN_PROGRAM_ID);
const memo = (text: string) => new TransactionInstruction({ programId: MEMO, keys: [], data: Buffer.from(text, 'utf8') });
/** A transaction `payer` signs and sends itself (not through the service). */
const sendOwn = (payer: Keypair, ...ixs: TransactionInstruction[]) =>
  sendAndConfirmTransaction(env.chain.connection, new Transaction().add(...ixs), [payer], { commitment: 'confirmed' });
const transfer = (from: Keypair, to: PublicKey, amount: bigint) => createTransferCheckedInstruction(ata(from.publicKey), mint(), to, from.publicKey, amount, 6);
const getTips = async (who: Pick<Party, 'headers'>, orderId: string) => {
  const res = await request(t.app).get(`${API}/orders/${orderId}/tips`).set(who.headers);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data as Tip[];
};
const tipById = async (who: Pick<Party, 'headers'>, orderId: string, id: string) => (await getTips(who, orderId)).find((x) => x.tip_id === id)!;

beforeAll(async () => {
  env = await sharedBootstrappedChain('tips');
  t = await createTestApp({
    chain: env.chain,
    config: { currencies: env.boot.currencies, tips: { maxPercentOfOrder: 50, watcherIntervalMs: 0 } },
    orders: { watcherIntervalMs: 0, reconcileIntervalMs: 0, maxUnpaidOrdersPerIp: 10_000 },
  });
  // the event stream needs a listening server and the events hub
  server = t.app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await t.services.events.start();
  console.info(`[timing] tips setup: ${Date.now() - t0} ms`);
});

afterAll(async () => {
  await t?.services.events.stop();
  await new Promise((r) => server?.close(r));
  await t?.close();
  await env?.stop();
  console.info(`[timing] e2e.tips total: ${Date.now() - t0} ms`);
});

describe('tips on the localnet', () => {
  it('the buyer signs the returned transaction: the seller\'s token balance rises by exactly the tip; tip.received reaches both parties (events, the live stream); seller stats count it', async () => {
    const { buyer, seller, id } = await completedOrder(25);
    const key = randomUUID();
    const res = await tipOf(buyer, id, 2.5, key);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const created = res.body as TipWithPayment;
    expect(created).toMatchObject({
      order_id: id,
      status: 'pending',
      amount: 2.5,
      amount_base_units: '2500000',
      currency: 'USDC',
      buyer_wallet: buyer.wallet,
      seller_wallet: seller.wallet,
      destination_token_account: ata(seller.wallet).toBase58(),
      source_token_account: ata(buyer.wallet).toBase58(),
      signature: null,
    });
    // the same Idempotency-Key: the same tip, not a second one
    const again = await tipOf(buyer, id, 2.5, key);
    expect(again.status).toBe(201);
    expect(again.body.tip_id).toBe(created.tip_id);
    expect(await getTips(buyer, id)).toHaveLength(1);

    // what the wallet is asked to sign: fee payer the buyer; transfer_checked + the memo; the seller's
    // account exists (her payout), so no account is created
    const tx = Transaction.from(Buffer.from(created.payment.transaction, 'base64'));
    expect(tx.feePayer?.toBase58()).toBe(buyer.wallet);
    expect(tx.instructions.map((ix) => ix.programId.toBase58())).toEqual([TOKEN_PROGRAM_ID.toBase58(), MEMO.toBase58()]);
    expect(tx.instructions[1]!.data.toString('utf8')).toBe(tipMemo(created.tip_id));

    const before = await usdc(seller.wallet);
    const buyerBefore = await usdc(buyer.wallet);
    const submit = () => post(buyer, `/orders/${id}/tips/${created.tip_id}/transaction`, { signed_transaction: signedBy(buyer.kp, created.payment.transaction) });
    const stream = await connectSse(`${base}${API}/events/stream?type=tip.received`, seller.headers);
    const paid = await submit();
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body).toMatchObject({ tip_id: created.tip_id, status: 'confirmed', signature: expect.any(String) });
    expect((await usdc(seller.wallet)) - before).toBe(USDC(2.5));
    expect(buyerBefore - (await usdc(buyer.wallet))).toBe(USDC(2.5));

    // replay after confirmation: the tip, nothing sent again
    const replay = await submit();
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({ status: 'confirmed', signature: paid.body.signature });
    expect((await usdc(seller.wallet)) - before).toBe(USDC(2.5));

    // the seller's live stream gets it
    const [live] = await stream.waitFor(1, 10_000);
    stream.close();
    expect(live!.event).toBe('tip.received');
    expect(JSON.parse(live!.data)).toMatchObject({ resource_id: created.tip_id, data: { status: 'confirmed', amount: 2.5 } });
    for (const who of [buyer, seller]) {
      const ev = await request(t.app).get(`${API}/events?type=tip.received`).set(who.headers);
      expect(ev.status).toBe(200);
      expect(ev.body.data).toHaveLength(1);
      expect(ev.body.data[0]).toMatchObject({ type: 'tip.received', resource_type: 'tip', resource_id: created.tip_id, signature: paid.body.signature });
      expect(ev.body.data[0].data).toMatchObject({ status: 'confirmed', amount_base_units: '2500000' });
    }
    const profile = await request(t.app).get(`${API}/users/${seller.wallet}`).set(buyer.headers);
    expect(profile.body.stats.tips_received).toEqual([{ currency: 'USDC', amount_base_units: '2500000', amount: 2.5 }]);
  });

  it('refuses a tip before the order paid its seller (409 tip-not-allowed), by the seller (403) or a stranger (404)', async () => {
    const { buyer, seller, id } = await fundedOrderOf(t, env, { price: 25 });
    const early = await tipOf(buyer, id, 1);
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({ type: `${PROBLEM}tip-not-allowed`, why: 'not_paid_out' });
    expect(await getTips(buyer, id)).toHaveLength(0);

    expect((await post(buyer, `/orders/${id}/confirm`)).status).toBe(200);
    const stranger = await party();
    const bySeller = await tipOf(seller, id, 1);
    expect(bySeller.status).toBe(403);
    expect(bySeller.body.type).toBe(`${PROBLEM}forbidden`);
    const byStranger = await tipOf(stranger, id, 1);
    expect(byStranger.status).toBe(404);
    expect((await request(t.app).get(`${API}/orders/${id}/tips`).set(stranger.headers)).status).toBe(404);
    // and no Idempotency-Key: 400
    const noKey = await post(buyer, `/orders/${id}/tips`, { amount: 1 });
    expect(noKey.status).toBe(400);
    expect(noKey.body.type).toBe(`${PROBLEM}idempotency-key-missing`);
    expect(await getTips(seller, id)).toHaveLength(0);
  });

  it('refuses an amount of 0, more decimals than the currency has, and above TIP_MAX_PERCENT_OF_ORDER; at most 3 pending', async () => {
    const { buyer, id } = await completedOrder(25);
    const zero = await tipOf(buyer, id, 0);
    expect(zero.status).toBe(400);
    expect(zero.body.type).toBe(`${PROBLEM}validation-error`);
    const decimals = await tipOf(buyer, id, 1.0000001);
    expect(decimals.status).toBe(400);
    expect(decimals.body.errors[0]).toMatchObject({ path: 'body.amount', code: 'too_many_decimals' });
    // 50 % of 25 USDC in this suite
    const above = await tipOf(buyer, id, 12.500001);
    expect(above.status).toBe(409);
    expect(above.body).toMatchObject({ type: `${PROBLEM}tip-not-allowed`, why: 'above_maximum', max_amount: '12.5', max_amount_base_units: '12500000' });
    await Promise.all([1, 2, 3].map(() => newTip(buyer, id, 12.5)));
    const fourth = await tipOf(buyer, id, 1);
    expect(fourth.status).toBe(409);
    expect(fourth.body).toMatchObject({ type: `${PROBLEM}tip-not-allowed`, why: 'too_many_pending' });
    expect(await getTips(buyer, id)).toHaveLength(3);
  });

  it('a transaction paying another amount, another account, from another wallet, or a memo alone confirms nothing; a foreign or another tip\'s transaction is not relayed', async () => {
    const { buyer, seller, id } = await completedOrder(25);
    const mallory = await party(50);
    const tip = await newTip(buyer, id, 3);
    const other = await newTip(buyer, id, 3);
    const sellerAta = ata(seller.wallet);
    const before = await usdc(seller.wallet);
    await sendOwn(buyer.kp, transfer(buyer.kp, sellerAta, USDC(3) - 1n), memo(tipMemo(tip.tip_id))); // another amount
    await sendOwn(buyer.kp, transfer(buyer.kp, ata(mallory.wallet), USDC(3)), memo(tipMemo(tip.tip_id))); // another account
    await sendOwn(mallory.kp, transfer(mallory.kp, sellerAta, USDC(3)), memo(tipMemo(tip.tip_id))); // another wallet
    await sendOwn(buyer.kp, memo(tipMemo(tip.tip_id))); // a memo alone
    await tips().watcher.runOnce();
    expect(await tipById(buyer, id, tip.tip_id)).toMatchObject({ status: 'pending', signature: null });
    expect((await usdc(seller.wallet)) - before).toBe(USDC(3) - 1n + USDC(3));

    // the issued transaction signed by someone else than the buyer: not sent
    const forged = Transaction.from(Buffer.from(tip.payment.transaction, 'base64'));
    forged.signatures[0]!.signature = Buffer.from(mallory.kp.secretKey.slice(0, 64));
    const foreign = await post(buyer, `/orders/${id}/tips/${tip.tip_id}/transaction`, { signed_transaction: forged.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('base64') });
    expect(foreign.status).toBe(400);
    expect(foreign.body.errors[0]).toMatchObject({ path: 'body.signed_transaction', code: 'transaction_mismatch' });
    // another tip's transaction submitted for this one: not sent
    const swapped = await post(buyer, `/orders/${id}/tips/${tip.tip_id}/transaction`, { signed_transaction: signedBy(buyer.kp, other.payment.transaction) });
    expect(swapped.status).toBe(400);
    // the seller cannot submit the buyer's transaction
    expect((await post(seller, `/orders/${id}/tips/${tip.tip_id}/transaction`, { signed_transaction: signedBy(buyer.kp, tip.payment.transaction) })).status).toBe(403);
    expect((await usdc(seller.wallet)) - before).toBe(USDC(6) - 1n);
    expect((await getTips(seller, id)).map((x) => x.status)).toEqual(['pending', 'pending']);
  });

  it('one signature confirms one tip: a transaction naming two tips with one transfer pays one of them', async () => {
    const { buyer, seller, id } = await completedOrder(25);
    const a = await newTip(buyer, id, 2);
    const b = await newTip(buyer, id, 2);
    const sig = await sendOwn(buyer.kp, transfer(buyer.kp, ata(seller.wallet), USDC(2)), memo(tipMemo(a.tip_id)), memo(tipMemo(b.tip_id)));
    await tips().watcher.runOnce();
    await tips().watcher.runOnce();
    const list = await getTips(buyer, id);
    expect(list.filter((x) => x.status === 'confirmed')).toHaveLength(1);
    expect(list.filter((x) => x.status === 'confirmed')[0]!.signature).toBe(sig);
    expect(list.filter((x) => x.status === 'pending')).toHaveLength(1);
    // and confirming the other by that very signature is refused by the unique signature
    const pendingOne = list.find((x) => x.status === 'pending')!;
    const record = (await tips().repo.get(pendingOne.tip_id))!;
    expect((await tips().service.confirmBy(record, sig)).paid).toBe(false);
    expect(bs58.decode(sig)).toHaveLength(64);
  });

  it('a tip the buyer sends from her own wallet is confirmed by the background check; one never sent expires', async () => {
    const { buyer, seller, id } = await completedOrder(25);
    const sent = await newTip(buyer, id, 1.5);
    const never = await newTip(buyer, id, 1);
    const raw = Buffer.from(signedBy(buyer.kp, sent.payment.transaction), 'base64');
    const before = await usdc(seller.wallet);
    const sig = await env.chain.connection.sendRawTransaction(raw);
    await env.chain.connection.confirmTransaction(sig, 'confirmed');
    expect((await tips().watcher.runOnce())?.confirmed).toBe(1);
    expect(await tipById(seller, id, sent.tip_id)).toMatchObject({ status: 'confirmed', signature: sig });
    expect((await usdc(seller.wallet)) - before).toBe(USDC(1.5));

    // the other one's blockhash expires unsent: expired, and a late submission is refused
    const lifetime = { blockhash: Transaction.from(Buffer.from(never.payment.transaction, 'base64')).recentBlockhash! };
    const record = (await tips().repo.get(never.tip_id))!;
    for (let i = 0; i < 200 && (await env.chain.connection.getBlockHeight('confirmed')) <= record.lastValidBlockHeight; i++) await env.localnet.advanceClock(5);
    expect(lifetime.blockhash).toBe(record.blockhash);
    // (the pending tips of the other tests expire with it: one app for the suite)
    expect((await tips().watcher.runOnce())?.expired).toBeGreaterThanOrEqual(1);
    expect(await tipById(buyer, id, never.tip_id)).toMatchObject({ status: 'expired', signature: null });
    const late = await post(buyer, `/orders/${id}/tips/${never.tip_id}/transaction`, { signed_transaction: signedBy(buyer.kp, never.payment.transaction) });
    expect(late.status).toBe(409);
    expect(late.body).toMatchObject({ type: `${PROBLEM}tip-not-allowed`, why: 'expired' });
  });

  it('a crash between the chain and the database: the submitted tip landed, its confirmation was not written; the background check records it once', async () => {
    const { buyer, seller, id } = await completedOrder(25);
    const created = await newTip(buyer, id, 0.75);
    const module = tips();
    // the same module's ports, but the database write of the confirmation fails (the process died there)
    const crashing = createTipsService({
      repo: { ...module.repo, confirm: async () => { throw new Error('the database went away'); } },
      chain: createTipsChain({ connection: env.chain.connection, tokenProgramOf: (m) => env.chain.escrow.tokenProgramOf(m) }),
      orders: { get: async (orderId) => ((rows) => (rows.length ? tipOrderOf(rows) : null))(await ordersReadPort(t.db.prisma).rowsOf(orderId)) },
      settings: { maxPercentOfOrder: 50, watcherIntervalMs: 0 },
      now: () => new Date(),
      newId: randomUUID,
    });
    const before = await usdc(seller.wallet);
    const signed = signedBy(buyer.kp, created.payment.transaction);
    const sig = bs58.encode(Transaction.from(Buffer.from(signed, 'base64')).signature!);
    // the submission: sent and confirmed on chain, then the write fails
    await expect(crashing.submit({ userId: buyer.userId, isAdmin: false }, id, created.tip_id, signed)).rejects.toThrow(/database went away/);
    expect((await usdc(seller.wallet)) - before).toBe(USDC(0.75));
    expect(await tipById(buyer, id, created.tip_id)).toMatchObject({ status: 'pending', signature: null });
    // after the restart: the background check confirms it, once; a retried submission returns it, nothing sent
    await module.watcher.runOnce();
    expect(await tipById(buyer, id, created.tip_id)).toMatchObject({ status: 'confirmed', signature: sig });
    const retry = await post(buyer, `/orders/${id}/tips/${created.tip_id}/transaction`, { signed_transaction: signed });
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ status: 'confirmed', signature: sig });
    expect((await usdc(seller.wallet)) - before).toBe(USDC(0.75));
    expect(await t.db.prisma.event.count({ where: { resourceType: 'tip', resourceId: created.tip_id } })).toBe(1);
  });

  it('wrapped SOL: the transaction wraps the tip from the buyer\'s SOL and pays it into the seller\'s wSOL account, created by the buyer', async () => {
    const buyer = await party();
    const seller = Keypair.generate();
    const chainPort = createTipsChain({ connection: env.chain.connection, tokenProgramOf: (m) => env.chain.escrow.tokenProgramOf(m) });
    const tipId = randomUUID();
    const issued = await chainPort.buildTipTransaction({ tipId, buyer: buyer.wallet, seller: seller.publicKey.toBase58(), mint: NATIVE_MINT.toBase58(), decimals: 9, amount: 50_000_000n });
    const tx = Transaction.from(Buffer.from(issued.transaction, 'base64'));
    expect(tx.feePayer?.toBase58()).toBe(buyer.wallet);
    tx.partialSign(buyer.kp);
    const sig = await env.chain.connection.sendRawTransaction(tx.serialize());
    await env.chain.connection.confirmTransaction(sig, 'confirmed');
    const sellerWsol = getAssociatedTokenAddressSync(NATIVE_MINT, seller.publicKey, true, TOKEN_PROGRAM_ID);
    expect(issued.destinationTokenAccount).toBe(sellerWsol.toBase58());
    expect((await env.chain.connection.getTokenAccountBalance(sellerWsol, 'confirmed')).value.amount).toBe('50000000');
    // and the chain's record proves the payment by the one rule
    const fx = (await chainPort.readTransaction(sig))!;
    expect(tipPaidBy(fx, { id: tipId, buyerWallet: buyer.wallet, mint: NATIVE_MINT.toBase58(), amount: 50_000_000n, destinationTokenAccount: sellerWsol.toBase58() })).toEqual({ paid: true });
  });

  it('a seller without a token account of the mint gets it created at the buyer\'s expense, never the service\'s', async () => {
    const { buyer } = await completedOrder(25);
    // a payee wallet that never held the mint: the builder adds the idempotent create, paid by the buyer
    const fresh = Keypair.generate();
    const service = env.chain.service.publicKey;
    const serviceBefore = await env.chain.connection.getBalance(service, 'confirmed');
    const chainPort = createTipsChain({ connection: env.chain.connection, tokenProgramOf: (m) => env.chain.escrow.tokenProgramOf(m) });
    const issued = await chainPort.buildTipTransaction({ tipId: randomUUID(), buyer: buyer.wallet, seller: fresh.publicKey.toBase58(), mint: env.boot.usdcMint, decimals: 6, amount: USDC(1) });
    const tx = Transaction.from(Buffer.from(issued.transaction, 'base64'));
    expect(tx.feePayer?.toBase58()).toBe(buyer.wallet);
    expect(tx.instructions.map((ix) => ix.programId.toBase58())).toEqual([ASSOCIATED_TOKEN_PROGRAM_ID.toBase58(), TOKEN_PROGRAM_ID.toBase58(), MEMO.toBase58()]);
    // CreateIdempotent (1), its funding account the buyer
    expect([...tx.instructions[0]!.data]).toEqual([1]);
    expect(tx.instructions[0]!.keys[0]!.pubkey.toBase58()).toBe(buyer.wallet);
    tx.partialSign(buyer.kp);
    const sig = await env.chain.connection.sendRawTransaction(tx.serialize());
    await env.chain.connection.confirmTransaction(sig, 'confirmed');
    expect(await usdc(fresh.publicKey.toBase58())).toBe(USDC(1));
    expect(await env.chain.connection.getBalance(service, 'confirmed')).toBe(serviceBefore);
  });
});
