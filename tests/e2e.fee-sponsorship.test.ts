/**
 * Fee sponsorship on the localnet (issue 26 item 5): a dedicated sponsor key pays the network fee and the
 * escrow rent of a signed-in buyer's wallet order, so a wallet holding USDC and exactly 0 SOL buys a listing
 * end to end; the rent comes back to the sponsor when the escrow closes (its loss is the fund fee); attackers
 * who open and abandon orders, or fund orders and let them be refunded, stay within the sponsor's per-account,
 * per-IP and daily limits with clear refusals; a tampered sponsored transaction is refused by the service's
 * comparison before anything is sent.
 */
import { randomUUID } from 'node:crypto';
import { Keypair, LAMPORTS_PER_SOL, PublicKey, SystemProgram, Transaction } from '@solana/web3.js';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BootstrappedChain } from './helpers/localnet';
import { sharedBootstrappedChain } from './helpers/shared-chain';
import { API, createTestApp, loginAs, type TestApp } from './helpers/app';
import { dbBackends } from './helpers/shared-db';
import { statementsDuring } from './helpers/sql-count';
import { createChain, chainOptionsFromDataDir, type ChainClient } from '../server/src/chain/index';
import { ensureSol, mintTestUsdc } from '../server/scripts/bootstrap-localnet';
import type { FeeSponsorshipSettings } from '../server/src/config';

let env: BootstrappedChain;
const apps: TestApp[] = [];
const USDC = (n: number) => BigInt(Math.round(n * 1_000_000));
/** a sponsored fund transaction's fee: three signatures (sponsor, platform, buyer) at 5,000 lamports */
const FUND_FEE = 15_000;

beforeAll(async () => {
  env = await sharedBootstrappedChain('fee-sponsorship');
}, 180_000);

afterAll(async () => {
  for (const t of apps) await t.close();
  await env?.stop();
});

/** An app whose chain client holds a fresh sponsor key with `sol` SOL, and the sponsorship settings given. */
async function sponsoredApp(settings: Partial<FeeSponsorshipSettings> = {}, sol = 2, { postgres = false, ...extra }: { actionsEnabled?: boolean; postgres?: boolean } = {}) {
  const sponsor = Keypair.generate();
  await ensureSol(env.chain.connection, sponsor.publicKey, BigInt(sol * LAMPORTS_PER_SOL), sol * LAMPORTS_PER_SOL);
  const chain: ChainClient = createChain({ ...chainOptionsFromDataDir(env.dataDir, env.localnet.rpcUrl)!, sponsorKeypair: sponsor });
  const feeSponsorship: FeeSponsorshipSettings = { enabled: true, keypairPath: '/unused', defaultKeypair: false, dailyLamports: 1_000_000_000, perUser: 5, perIp: 20, ...settings };
  const t = await createTestApp({ chain, postgres, config: { currencies: env.boot.currencies, feeSponsorship, ...extra }, orders: { maxUnpaidOrdersPerBuyer: 10, maxUnpaidOrdersPerIp: 50 } });
  apps.push(t);
  return { t, chain, sponsor: sponsor.publicKey };
}

const lamports = (k: PublicKey) => env.chain.connection.getBalance(k, 'confirmed').then(BigInt);

/** A wallet holding `usdc` test USDC and exactly 0 SOL (the mint authority pays its token account). */
async function usdcOnlyWallet(usdc: number) {
  const kp = Keypair.generate();
  await mintTestUsdc(env.dataDir, env.localnet.rpcUrl, kp.publicKey.toBase58(), USDC(usdc));
  expect(await lamports(kp.publicKey)).toBe(0n);
  return kp;
}

async function seller(t: TestApp) {
  const kp = Keypair.generate();
  await ensureSol(env.chain.connection, kp.publicKey, BigInt(LAMPORTS_PER_SOL), LAMPORTS_PER_SOL);
  return loginAs(t, kp);
}

async function listing(t: TestApp, s: Awaited<ReturnType<typeof seller>>, price: number): Promise<string> {
  const r = await request(t.app)
    .post(`${API}/listings`)
    .set(s.headers)
    .send({ title: `Sponsored ${randomUUID().slice(0, 8)}`, description: 'Bought with USDC only.', price, currency: 'USDC', category: 'design', duration: 3 });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return r.body.listing_id;
}

function createOrder(t: TestApp, b: { headers: Record<string, string> }, listingId: string) {
  return request(t.app).post(`${API}/orders`).set(b.headers).set('Idempotency-Key', randomUUID()).send({ listing_id: listingId });
}

/** statements that read an orders row / write the orders table (Prisma's quoted names or plain SQL) */
const readsOrderRow = (sql: string) => /^\s*SELECT\b[\s\S]*\bFROM\s+("public"\.)?"?orders"?(\s|$)/i.test(sql);
const writesOrders = (sql: string) => /^\s*UPDATE\s+("public"\.)?"?orders"?\s/i.test(sql);

function submit(t: TestApp, b: { headers: Record<string, string> }, orderId: string, tx: Transaction) {
  return request(t.app).post(`${API}/orders/${orderId}/transaction`).set(b.headers).send({ signed_transaction: tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('base64') });
}

describe('fee sponsorship on the localnet', () => {
  it('a wallet with USDC and 0 SOL buys a listing end to end; the sponsor gets its rent back and is out the fund fee only', async () => {
    const { t, sponsor } = await sponsoredApp();
    const s = await seller(t);
    const buyerKp = await usdcOnlyWallet(30);
    const b = await loginAs(t, buyerKp);
    const id = await listing(t, s, 20);
    const before = await lamports(sponsor);

    const created = await createOrder(t, b, id);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.payment).toMatchObject({ fee_payer: sponsor.toBase58(), sponsored: true });
    const tx = Transaction.from(Buffer.from(created.body.payment.transaction, 'base64'));
    expect(tx.feePayer?.toBase58()).toBe(sponsor.toBase58());
    tx.partialSign(buyerKp);
    const paid = await submit(t, b, created.body.order_id, tx);
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body).toMatchObject({ status: 'in_progress', escrow_state: 'funded' });
    const escrow = await t.ctx.chain!.escrow!.fetchOrder(created.body.order_id);
    expect(escrow?.rentPayer).toBe(sponsor.toBase58());
    const rent = before - FUND_FEE_BIG - (await lamports(sponsor));
    expect(rent).toBeGreaterThan(0n); // the order account and the vault

    // a fresh payment for a funded order is refused; deliver and confirm need no SOL from the buyer
    const delivered = await request(t.app).post(`${API}/orders/${created.body.order_id}/deliver`).set(s.headers).send({});
    expect(delivered.status, JSON.stringify(delivered.body)).toBe(200);
    const done = await request(t.app).post(`${API}/orders/${created.body.order_id}/confirm`).set(b.headers).send({});
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({ status: 'completed', escrow_state: 'released' });
    expect(await t.ctx.chain!.escrow!.fetchOrder(created.body.order_id)).toBeNull();
    expect(await lamports(sponsor)).toBe(before - FUND_FEE_BIG); // the rent came back
    expect(await lamports(buyerKp.publicKey)).toBe(0n);

    // /metrics: the sponsor's balance and what it committed today (fee + rent of this order)
    const text = await t.services.metrics.scrape();
    expect(text).toContain(`bazaar_fee_sponsor_balance_lamports{sponsor="${sponsor.toBase58()}"} ${before - FUND_FEE_BIG}`);
    expect(text).toContain(`bazaar_fee_sponsorship_committed_lamports{budget="1000000000"} ${FUND_FEE_BIG + rent}`);
  }, 180_000);

  it('an attacker opening and abandoning orders in a loop costs the sponsor nothing and is refused past the per-account and per-IP limits', async () => {
    const { t, sponsor } = await sponsoredApp({ perUser: 2, perIp: 3 });
    const s = await seller(t);
    const listings = await Promise.all(Array.from({ length: 6 }, () => listing(t, s, 1)));
    const before = await lamports(sponsor);
    const [a, b] = [await usdcOnlyWallet(10), await usdcOnlyWallet(10)];
    const [la, lb] = [await loginAs(t, a), await loginAs(t, b)];
    const outcomes: string[] = [];
    for (const [who, l] of [[la, listings[0]], [la, listings[1]], [la, listings[2]], [lb, listings[3]], [lb, listings[4]]] as const) {
      const r = await createOrder(t, who, l!);
      outcomes.push(r.status === 201 ? `201:${r.body.payment.sponsored}` : `${r.status}:${r.body.type.split('/').pop()}:${r.body.scope}`);
      if (r.status !== 201) {
        expect(r.headers['retry-after']).toBeDefined();
        expect(r.body).toMatchObject({ resets_at: expect.any(String), required_lamports: expect.any(Number), wallet_lamports: 0 });
      }
    }
    // A: 2 sponsored, the third refused (account); B: 1 more sponsored (3 for the IP), then refused (ip)
    expect(outcomes).toEqual(['201:true', '201:true', '429:sponsorship-limit:account', '201:true', '429:sponsorship-limit:ip']);
    // nothing was signed by the buyers: the sponsor lost nothing; the budget counted what it committed
    expect(await lamports(sponsor)).toBe(before);
    const state = await t.services.budget.sponsorshipState();
    expect(state.transactions).toBe(3);

    // a buyer holding SOL is not refused: he pays the fee and rent himself
    const rich = Keypair.generate();
    await ensureSol(env.chain.connection, rich.publicKey, BigInt(LAMPORTS_PER_SOL), LAMPORTS_PER_SOL);
    await mintTestUsdc(env.dataDir, env.localnet.rpcUrl, rich.publicKey.toBase58(), USDC(5));
    const r = await createOrder(t, await loginAs(t, rich), listings[5]!);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    expect(r.body.payment).toMatchObject({ fee_payer: rich.publicKey.toBase58(), sponsored: false });
    expect(Transaction.from(Buffer.from(r.body.payment.transaction, 'base64')).feePayer?.toBase58()).toBe(rich.publicKey.toBase58());
  }, 180_000);

  it('an attacker funding orders and having them refunded costs the sponsor the fund fees only, within its daily budget', async () => {
    // the budget fits two orders' fee + rent (about 4.8 M lamports each): the third is refused
    const { t, sponsor } = await sponsoredApp({ dailyLamports: 10_000_000 });
    const s = await seller(t);
    const listings = await Promise.all(Array.from({ length: 3 }, () => listing(t, s, 1)));
    const attacker = await usdcOnlyWallet(10);
    const la = await loginAs(t, attacker);
    const before = await lamports(sponsor);
    for (const l of listings.slice(0, 2)) {
      const created = await createOrder(t, la, l);
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.payment.sponsored).toBe(true);
      const tx = Transaction.from(Buffer.from(created.body.payment.transaction, 'base64'));
      tx.partialSign(attacker);
      expect((await submit(t, la, created.body.order_id, tx)).status).toBe(200);
      // the seller refunds (the attacker's orders never get delivered): the escrow closes
      const refunded = await request(t.app).post(`${API}/orders/${created.body.order_id}/refund`).set(s.headers).send({});
      expect(refunded.status, JSON.stringify(refunded.body)).toBe(200);
    }
    const third = await createOrder(t, la, listings[2]!);
    expect(third.status, JSON.stringify(third.body)).toBe(503);
    expect(third.body).toMatchObject({ reason: 'daily_budget', budget_lamports: 10_000_000, resets_at: expect.any(String) });
    expect(third.headers['retry-after']).toBeDefined();
    const loss = before - (await lamports(sponsor));
    expect(loss).toBe(2n * FUND_FEE_BIG); // the rent of both escrows came back at the refund
    expect(loss).toBeLessThanOrEqual(10_000_000n);
    expect(await lamports(attacker.publicKey)).toBe(0n);
  }, 180_000);

  it('a tampered sponsored transaction (an extra instruction, another fee payer) is refused before anything is sent', async () => {
    const { t, sponsor } = await sponsoredApp();
    const s = await seller(t);
    const buyerKp = await usdcOnlyWallet(10);
    const b = await loginAs(t, buyerKp);
    const created = await createOrder(t, b, await listing(t, s, 1));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const before = await lamports(sponsor);
    const issued = () => Transaction.from(Buffer.from(created.body.payment.transaction, 'base64'));

    // an extra instruction: the sponsor (fee payer, already a signer) pays the attacker
    const extra = issued();
    extra.add(SystemProgram.transfer({ fromPubkey: sponsor, toPubkey: buyerKp.publicKey, lamports: 1_000_000 }));
    extra.partialSign(buyerKp);
    const r1 = await submit(t, b, created.body.order_id, extra);
    expect(r1.status).toBe(400);
    expect(r1.body.errors[0]).toMatchObject({ path: 'body.signed_transaction', code: 'fund_transaction_mismatch', message: 'instruction count differs' });

    // the same instructions with the buyer as fee payer (a wallet that rewrites the fee payer)
    const swapped = new Transaction({ feePayer: buyerKp.publicKey, blockhash: issued().recentBlockhash!, lastValidBlockHeight: 0 }).add(...issued().instructions);
    swapped.partialSign(buyerKp);
    const r2 = await submit(t, b, created.body.order_id, swapped);
    expect(r2.status).toBe(400);
    expect(r2.body.errors[0].message).toMatch(/^fee payer /);

    // the Solana Pay POST (a wallet, no session) re-issues the same sponsored shape (while the issued transaction can
    // still land: those very bytes, charging nothing more; see the next test)
    const committed = (await t.services.budget.sponsorshipState()).spent_lamports;
    const sp = await request(t.app).post(`${API}/orders/${created.body.order_id}/solana-pay`).send({ account: buyerKp.publicKey.toBase58() });
    expect(sp.status, JSON.stringify(sp.body)).toBe(200);
    const viaPay = Transaction.from(Buffer.from(sp.body.transaction, 'base64'));
    expect(viaPay.feePayer?.toBase58()).toBe(sponsor.toBase58());
    expect(viaPay.signatures.filter((x) => x.signature !== null).map((x) => x.publicKey.toBase58()).sort()).toEqual([sponsor.toBase58(), t.ctx.chain!.escrow!.service.publicKey.toBase58()].sort());
    expect((await t.services.budget.sponsorshipState()).spent_lamports).toBe(committed);

    // nothing was sent: the order still awaits payment, no escrow, the sponsor's balance unchanged
    expect(await t.ctx.chain!.escrow!.fetchOrder(created.body.order_id)).toBeNull();
    expect(await lamports(sponsor)).toBe(before);
    const order = await request(t.app).get(`${API}/orders/${created.body.order_id}`).set(b.headers);
    expect(order.body.status).toBe('awaiting_payment');
  }, 180_000);
});

describe.each(dbBackends)('anonymous re-issues of a sponsored fund transaction (issue 26 audit), on $name', ({ postgres }) => {
  it('the Solana Pay POST hands out the same transaction while it can land and charges the sponsor\'s day once per transaction minted, not per request', async () => {
    const { t, sponsor } = await sponsoredApp({}, 2, { postgres });
    const s = await seller(t);
    const buyerKp = await usdcOnlyWallet(10);
    const b = await loginAs(t, buyerKp);
    const created = await createOrder(t, b, await listing(t, s, 1));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const orderId: string = created.body.order_id;
    const spent = async () => (await t.services.budget.sponsorshipState()).spent_lamports;
    const committed = await spent();
    // anyone who knows the order id and its buyer wallet (no session), many times: the issued bytes, nothing charged
    // (before: 15,000 lamports per request, so a loop could exhaust FEE_SPONSORSHIP_DAILY_LAMPORTS for everyone)
    const solanaPay = () => request(t.app).post(`${API}/orders/${orderId}/solana-pay`).send({ account: buyerKp.publicKey.toBase58() });
    for (let i = 0; i < 5; i++) {
      const sp = await solanaPay();
      expect(sp.status, JSON.stringify(sp.body)).toBe(200);
      expect(sp.body.transaction).toBe(created.body.payment.transaction);
      expect(sp.body.feePayer).toBe(sponsor.toBase58());
    }
    // issue 28 (no read the previous statement returned, one write per state change): a re-issue reads the order row
    // once and writes nothing (before: the row, then its two sponsored-transaction columns again)
    const reissue = await statementsDuring(t.db, solanaPay);
    expect(reissue.result.body.transaction).toBe(created.body.payment.transaction);
    expect(reissue.sql.filter(readsOrderRow), reissue.sql.join('\n')).toHaveLength(1);
    expect(reissue.sql.filter(writesOrders), reissue.sql.join('\n')).toHaveLength(0);
    // the signed-in buyer's payment refresh too
    const refreshed = await request(t.app).post(`${API}/orders/${orderId}/payment`).set(b.headers).send({});
    expect(refreshed.status, JSON.stringify(refreshed.body)).toBe(200);
    expect(refreshed.body.transaction).toBe(created.body.payment.transaction);
    expect(await spent()).toBe(committed);

    // once the issued transaction can no longer land (its validity is over, or too short to sign and send), ONE new
    // transaction is minted and its fee charged; the requests after it hand that one out again
    await t.ctx.db.order.update({ where: { id: orderId }, data: { sponsoredFundTxUntil: new Date(Date.now() + 5_000) } });
    const minted = await statementsDuring(t.db, solanaPay);
    const fresh = minted.result;
    expect(fresh.status, JSON.stringify(fresh.body)).toBe(200);
    // the issued-until and the kept transaction in ONE update of the row (before: two)
    expect(minted.sql.filter(writesOrders), minted.sql.join('\n')).toHaveLength(1);
    expect(await spent()).toBe(committed + FUND_FEE);
    for (let i = 0; i < 3; i++) expect((await solanaPay()).body.transaction).toBe(fresh.body.transaction);
    expect(await spent()).toBe(committed + FUND_FEE);

    // and the transaction handed out is the one that lands: the buyer (0 SOL) signs it, the sponsor pays
    const tx = Transaction.from(Buffer.from(fresh.body.transaction, 'base64'));
    tx.partialSign(buyerKp);
    const paid = await submit(t, b, orderId, tx);
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.status).toBe('in_progress');
  }, 180_000);
});

describe('fee sponsorship and Solana Actions', () => {
  it('a blink buy (a wallet that named itself, no SIWS) is never sponsored, even with sponsorship on: the wallet pays the fee', async () => {
    const { t, sponsor } = await sponsoredApp({}, 2, { actionsEnabled: true });
    const s = await seller(t);
    const id = await listing(t, s, 1);
    const buyerKp = await usdcOnlyWallet(10);
    await ensureSol(env.chain.connection, buyerKp.publicKey, BigInt(LAMPORTS_PER_SOL), LAMPORTS_PER_SOL);
    const committed = (await t.services.budget.sponsorshipState()).spent_lamports;
    const r = await request(t.app).post(`/api/actions/listings/${id}`).send({ account: buyerKp.publicKey.toBase58() });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const tx = Transaction.from(Buffer.from(r.body.transaction, 'base64'));
    expect(tx.feePayer?.toBase58()).toBe(buyerKp.publicKey.toBase58());
    expect(tx.signatures.map((x) => x.publicKey.toBase58())).not.toContain(sponsor.toBase58());
    // nothing charged to the sponsor's day
    expect((await t.services.budget.sponsorshipState()).spent_lamports).toBe(committed);
    // the same wallet signed in gets a sponsored order
    const b = await loginAs(t, buyerKp);
    const created = await createOrder(t, b, await listing(t, s, 1));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.payment).toMatchObject({ sponsored: true, fee_payer: sponsor.toBase58() });
  }, 180_000);
});

const FUND_FEE_BIG = BigInt(FUND_FEE);
