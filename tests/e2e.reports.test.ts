/**
 * Revenue reports against the chain (issue 25 part 6): the real app (PGlite) on the shared localnet. Five
 * orders of two sellers end five ways (a release, an auto-release claimed by the crank, a seller's refund,
 * an arbiter's 50/50 split, a 30/70 settlement by agreement) and a buyer tips; the report's figures must
 * equal what the token balances of the treasury, the sellers and the buyers did on chain meanwhile. A
 * two-milestone order (a release, then a settlement of milestone 2) counts its two escrows once each, though
 * its events repeat the payouts (milestone.* events, then order.* snapshots showing every milestone).
 */
import { randomUUID } from 'node:crypto';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RevenueReport, TipWithPayment } from '@bazaar/contract';
import type { BootstrappedChain } from './helpers/localnet';
import { sharedBootstrappedChain } from './helpers/shared-chain';
import { API, createApiKey, createTestApp, type TestApp } from './helpers/app';
import { fundedOrder as fundedOrderOf, listing as newListing, party as newParty, signedBy, usdcBalance, USDC, type Party } from './helpers/parties';
import type { OrderTermsInput } from '../server/src/modules/orders/orders.types';

/**
 * The operator of this suite: an admin API key. Roles (issue 25 part 1) are built in parallel: at the merge
 * this one helper switches to a user holding the admin role.
 */
async function operator(app: TestApp): Promise<Pick<Party, 'headers'>> {
  const key = await createApiKey(app, { name: 'reports-operator', isAdmin: true });
  return { headers: { 'x-api-key': key.key } };
}

let env: BootstrappedChain;
let t: TestApp;
let admin: Pick<Party, 'headers'>;
const t0 = Date.now();
const from = new Date(t0 - 60_000).toISOString();

const post = async (who: Pick<Party, 'headers'>, path: string, body: object = {}) => {
  const res = await request(t.app).post(`${API}${path}`).set(who.headers).set('Idempotency-Key', randomUUID()).send(body);
  expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(200);
  return res.body;
};
const usdc = (owner: string) => usdcBalance(env, owner);
const reportOf = async (who: Pick<Party, 'headers'>, path: string) => {
  const res = await request(t.app).get(`${API}${path}${path.includes('?') ? '&' : '?'}from=${from}&to=${new Date(Date.now() + 60_000).toISOString()}`).set(who.headers);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body as RevenueReport).totals.find((x) => x.currency === 'USDC')!;
};

beforeAll(async () => {
  env = await sharedBootstrappedChain('reports');
  t = await createTestApp({
    chain: env.chain,
    config: { currencies: env.boot.currencies, tips: { maxPercentOfOrder: 50, watcherIntervalMs: 0 } },
    orders: { reviewWindowSeconds: 60, watcherIntervalMs: 0, reconcileIntervalMs: 0, maxUnpaidOrdersPerIp: 10_000 },
  });
  admin = await operator(t);
  console.info(`[timing] reports setup: ${Date.now() - t0} ms`);
});

afterAll(async () => {
  await t?.close();
  await env?.stop();
  console.info(`[timing] e2e.reports total: ${Date.now() - t0} ms`);
});

/** A two-milestone order (`amounts` USDC) of a fresh buyer (100 USDC) for `seller`, milestone 1 paid over HTTP. */
async function milestoneOrder(seller: Party, amounts: number[]) {
  const buyer = await newParty(t, env, { sol: 2, usdc: 100 });
  const l = await newListing(t, seller, { price: amounts.reduce((s, a) => s + a, 0) });
  const terms: OrderTermsInput = {
    packageKey: null,
    packageName: null,
    priceBaseUnits: amounts.reduce((s, a) => s + USDC(a), 0n),
    revisionsIncluded: 0,
    milestones: amounts.map((a, i) => ({ title: `Part ${i + 1}`, amountBaseUnits: USDC(a), deliveryDays: i + 2 })),
  };
  const principal = { kind: 'user' as const, userId: buyer.userId, wallet: buyer.wallet, isAdmin: false };
  const created = await t.services.orders!.service.create(principal, { listingId: l.listing_id, terms, idempotencyKey: randomUUID() });
  await post(buyer, `/orders/${created.order.id}/transaction`, { signed_transaction: signedBy(buyer.kp, created.payment!.transaction) });
  return { buyer, id: created.order.id };
}

describe('revenue reports on the localnet', () => {
  it('the report\'s figures equal the token balance changes on the localnet: treasury = fee revenue, sellers = payouts + tips, buyers = refunds - tips', async () => {
    const [s1, s2] = await Promise.all([newParty(t, env, { sol: 2 }), newParty(t, env, { sol: 2 })]);
    // five funded orders (the buyers paid into escrow: not revenue until an escrow pays out)
    const released = await fundedOrderOf(t, env, { seller: s1, price: 25 });
    const claimed = await fundedOrderOf(t, env, { seller: s1, price: 4 });
    const refunded = await fundedOrderOf(t, env, { seller: s1, price: 10 });
    const split = await fundedOrderOf(t, env, { seller: s2, price: 10 });
    const settled = await fundedOrderOf(t, env, { seller: s2, price: 20 });
    const buyers = [released, claimed, refunded, split, settled].map((o) => o.buyer);
    const wallets = [env.boot.treasury, s1.wallet, s2.wallet, ...buyers.map((b) => b.wallet)];
    const before = await Promise.all(wallets.map(usdc));
    const [marketBefore, s1Before, s2Before] = await Promise.all([reportOf(admin, '/admin/revenue-report'), reportOf(s1, '/user/revenue-report'), reportOf(s2, '/user/revenue-report')]);
    expect([s1Before.escrows_closed, s2Before.escrows_closed]).toEqual([0, 0]);

    // release (the buyer confirms)
    await post(released.buyer, `/orders/${released.id}/confirm`);
    // auto-release: delivered, the review window passes on the chain clock, the crank claims
    await post(s1, `/orders/${claimed.id}/deliver`);
    await env.localnet.advanceClock(65);
    expect((await t.services.orders!.autoRelease.runOnce()).claimed).toContain(claimed.id);
    // the seller refunds
    await post(s1, `/orders/${refunded.id}/refund`);
    // a dispute split 50/50 by the arbiter
    await post(split.buyer, `/orders/${split.id}/dispute`, { reason: 'Not what the listing said' });
    await post(admin, `/orders/${split.id}/resolve`, { buyer_bps: 5000 });
    // a settlement by agreement: 30 % back to the buyer
    await post(s2, `/orders/${settled.id}/settlement`, { buyer_bps: 3000 });
    expect(await post(settled.buyer, `/orders/${settled.id}/settlement/accept`, { buyer_bps: 3000 })).toMatchObject({ status: 'resolved', settled_by: 'agreement' });
    // a tip of 2.5 USDC on the released order, signed by its buyer
    const tipRes = await request(t.app).post(`${API}/orders/${released.id}/tips`).set(released.buyer.headers).set('Idempotency-Key', randomUUID()).send({ amount: 2.5 });
    expect(tipRes.status, JSON.stringify(tipRes.body)).toBe(201);
    const tip = tipRes.body as TipWithPayment;
    expect(await post(released.buyer, `/orders/${released.id}/tips/${tip.tip_id}/transaction`, { signed_transaction: signedBy(released.buyer.kp, tip.payment.transaction) })).toMatchObject({ status: 'confirmed' });

    const after = await Promise.all(wallets.map(usdc));
    const delta = after.map((a, i) => a - before[i]!);
    const [treasury, seller1, seller2, ...buyerDeltas] = delta as [bigint, bigint, bigint, ...bigint[]];
    const buyersTotal = buyerDeltas.reduce((s, d) => s + d, 0n);
    const minus = (a: { [k: string]: unknown }, b: { [k: string]: unknown }, k: string) => BigInt(a[k] as string) - BigInt(b[k] as string);
    const [market, r1, r2] = await Promise.all([reportOf(admin, '/admin/revenue-report'), reportOf(s1, '/user/revenue-report'), reportOf(s2, '/user/revenue-report')]);

    console.info(`[reports] chain deltas (base units): treasury ${treasury}, seller1 ${seller1}, seller2 ${seller2}, buyers ${buyersTotal}; report: ${JSON.stringify(market)}`);
    // the marketplace: five escrows closed, 69 USDC left escrow; the fee is what the treasury received
    expect(market.escrows_closed - marketBefore.escrows_closed).toBe(5);
    expect(market.tips - marketBefore.tips).toBe(1);
    expect(minus(market, marketBefore, 'volume_base_units')).toBe(USDC(25 + 4 + 10 + 10 + 20));
    expect(minus(market, marketBefore, 'fee_revenue_base_units')).toBe(treasury);
    expect(minus(market, marketBefore, 'seller_payouts_base_units') + minus(market, marketBefore, 'tips_base_units')).toBe(seller1 + seller2);
    expect(minus(market, marketBefore, 'buyer_refunds_base_units') - minus(market, marketBefore, 'tips_base_units')).toBe(buyersTotal);
    expect(minus(market, marketBefore, 'tips_base_units')).toBe(USDC(2.5));
    expect(treasury).toBeGreaterThan(0n);
    // each seller's own report: her balance change, nothing of the other's
    expect(BigInt(r1.seller_payouts_base_units) + BigInt(r1.tips_base_units)).toBe(seller1);
    expect(BigInt(r2.seller_payouts_base_units) + BigInt(r2.tips_base_units)).toBe(seller2);
    expect([r1.escrows_closed, r1.tips, r2.escrows_closed, r2.tips]).toEqual([3, 1, 2, 0]);
    expect(BigInt(r1.fee_revenue_base_units) + BigInt(r2.fee_revenue_base_units)).toBe(treasury);
    expect(BigInt(r1.buyer_refunds_base_units)).toBe(buyerDeltas[2]!); // the refund returned 10 USDC
    expect(BigInt(r2.buyer_refunds_base_units)).toBe(buyerDeltas[3]! + buyerDeltas[4]!);
    expect([r1.escrows_unverified, r2.escrows_unverified]).toEqual([0, 0]);
    // an admin reading one seller's report gets the same figures as the seller herself
    expect(await reportOf(admin, `/admin/revenue-report?seller=${s2.wallet}`)).toEqual(r2);
  });

  it('a two-milestone order counts each escrow once: milestone 1 released, milestone 2 settled by agreement; the seller\'s report equals her balance change', async () => {
    const seller = await newParty(t, env, { sol: 2 });
    const { buyer, id } = await milestoneOrder(seller, [10, 15]);
    const treasuryBefore = await usdc(env.boot.treasury);
    const [sellerBefore, buyerBefore] = await Promise.all([usdc(seller.wallet), usdc(buyer.wallet)]);
    await post(seller, `/orders/${id}/milestones/1/deliver`);
    await post(buyer, `/orders/${id}/milestones/1/confirm`);
    const funded = await post(buyer, `/orders/${id}/milestones/fund`, { milestones: [2] });
    await post(buyer, `/orders/${id}/transaction`, { signed_transaction: signedBy(buyer.kp, funded.transaction) });
    const buyerFunded = await usdc(buyer.wallet); // milestone 2 paid into its escrow (not revenue)
    await post(seller, `/orders/${id}/settlement`, { buyer_bps: 3000 });
    const settled = await post(buyer, `/orders/${id}/settlement/accept`, { buyer_bps: 3000 });
    expect(settled.milestones.map((m: { status: string }) => m.status)).toEqual(['completed', 'resolved']);
    const types = (await t.db.prisma.event.findMany({ where: { resourceId: id }, orderBy: { resourceSeq: 'asc' }, select: { type: true } })).map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['milestone.released', 'settlement.accepted']));

    const r = await reportOf(seller, '/user/revenue-report');
    const [treasuryAfter, sellerAfter, buyerAfter] = await Promise.all([usdc(env.boot.treasury), usdc(seller.wallet), usdc(buyer.wallet)]);
    console.info(`[reports] two milestones: events ${types.join(', ')}; report ${JSON.stringify(r)}`);
    expect(r.escrows_closed).toBe(2);
    expect(BigInt(r.volume_base_units)).toBe(USDC(25));
    expect(BigInt(r.seller_payouts_base_units)).toBe(sellerAfter - sellerBefore);
    expect(BigInt(r.fee_revenue_base_units)).toBe(treasuryAfter - treasuryBefore);
    expect(BigInt(r.buyer_refunds_base_units)).toBe(buyerAfter - buyerFunded);
    expect(buyerFunded).toBe(buyerBefore - USDC(15));
  });
});
