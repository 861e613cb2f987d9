/**
 * Orders with milestones (issue 24) end to end: the real app (PGlite) on the real chain (one shared
 * localnet). An order's terms come from a trusted caller (the listing's or package's terms, an accepted
 * offer), never from the request body: here the orders service's `create` with `terms`, the seam the
 * packages and offers modules call. Everything else goes over HTTP: each milestone is its own escrow (its
 * id = the escrow id), funded with one wallet signature per funding (one `fund` instruction per milestone),
 * settled on its own; the order completes when the last one settles, or ends when the buyer says so.
 */
import { randomUUID } from 'node:crypto';
import { Transaction } from '@solana/web3.js';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Order } from '@bazaar/contract';
import { type BootstrappedChain } from './helpers/localnet';
import { sharedBootstrappedChain } from './helpers/shared-chain';
import { createTestApp } from './helpers/app';
import { crashingEscrow } from './helpers/crash-ports.js';
import { listing as newListing, party as newParty, signedBy, usdcBalance as usdcOf, USDC, type Party } from './helpers/parties';
import type { OrderTermsInput } from '../server/src/modules/orders/orders.types';

const API = '/api/v1';
type TestApp = Awaited<ReturnType<typeof createTestApp>>;

let env: BootstrappedChain;
let t: TestApp;
const crash = crashingEscrow();
/** the service's wall clock (payment windows) runs ahead of real time by this much */
let clockOffsetMs = 0;

const party = (usdc = 0) => newParty(t, env, { sol: 2, usdc });
const post = (who: Pick<Party, 'headers'>, path: string, body?: object, key?: string) => {
  const r = request(t.app).post(`${API}${path}`).set(who.headers);
  return (key ? r.set('Idempotency-Key', key) : r).send(body ?? {});
};
const get = (who: Pick<Party, 'headers'>, path: string) => request(t.app).get(`${API}${path}`).set(who.headers);
const principal = (p: Party) => ({ kind: 'user' as const, userId: p.userId, wallet: p.wallet, isAdmin: false });

/** terms of `amounts` USDC milestones (the trusted seam: a listing's package, an accepted offer) */
const terms = (amounts: number[], revisions = 0): OrderTermsInput => ({
  packageKey: null,
  packageName: null,
  priceBaseUnits: amounts.reduce((s, a) => s + USDC(a), 0n),
  revisionsIncluded: revisions,
  milestones: amounts.map((a, i) => ({ title: `Part ${i + 1}`, amountBaseUnits: USDC(a), deliveryDays: i + 2 })),
});

/** A multi-milestone order of a fresh buyer (100 USDC) for a fresh seller's listing, milestone 1 paid over HTTP. */
async function milestoneOrder(amounts: number[], revisions = 0) {
  const [buyer, seller] = await Promise.all([party(100), party()]);
  const l = await newListing(t, seller, { price: amounts.reduce((s, a) => s + a, 0) });
  const created = await t.services.orders!.service.create(principal(buyer), { listingId: l.listing_id, terms: terms(amounts, revisions), idempotencyKey: randomUUID() });
  const id = created.order.id;
  const paid = await post(buyer, `/orders/${id}/transaction`, { signed_transaction: signedBy(buyer.kp, created.payment!.transaction) });
  expect(paid.status, JSON.stringify(paid.body)).toBe(200);
  return { buyer, seller, listingId: l.listing_id, id, created, paid: paid.body as Order };
}

/** POST /orders/{id}/milestones/fund with a fresh (or given) key, signed and submitted by the buyer. */
async function fund(buyer: Party, id: string, milestones: number[], key = randomUUID()) {
  const res = await post(buyer, `/orders/${id}/milestones/fund`, { milestones }, key);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const submitted = await post(buyer, `/orders/${id}/transaction`, { signed_transaction: signedBy(buyer.kp, res.body.transaction) });
  expect(submitted.status, JSON.stringify(submitted.body)).toBe(200);
  return { issued: res.body, order: submitted.body as Order };
}

const eventsOf = async (orderId: string) =>
  (await t.db.prisma.event.findMany({ where: { resourceId: orderId }, orderBy: { resourceSeq: 'asc' }, select: { type: true } })).map((e) => e.type);
const listingStatus = async (listingId: string) => (await t.db.prisma.listing.findUniqueOrThrow({ where: { id: listingId } })).status;

beforeAll(async () => {
  env = await sharedBootstrappedChain('orders-milestones');
  t = await createTestApp({
    // PGlite, or a fresh PostgreSQL database when TEST_DATABASE_URL is set (the row locks of funding and ending)
    postgres: Boolean(process.env.TEST_DATABASE_URL),
    now: () => new Date(Date.now() + clockOffsetMs),
    chain: env.chain,
    config: { currencies: env.boot.currencies },
    orders: { reviewWindowSeconds: 60, watcherIntervalMs: 0, reconcileIntervalMs: 0, maxUnpaidOrdersPerIp: 10_000, ports: { escrow: crash.wrap } },
  });
});

afterAll(async () => {
  await t?.close();
  await env?.stop();
});

describe('orders with milestones on the real chain', () => {
  it('two milestones: fund 1, deliver, confirm, fund 2, deliver, confirm -> completed; each its own escrow; events in order', async () => {
    const { buyer, seller, listingId, id, created, paid } = await milestoneOrder([10, 15]);
    const sellerBefore = await usdcOf(env, seller.wallet);
    const first = (await request(t.app).get(`${API}/orders/${id}`).set(buyer.headers)).body as Order;
    expect(first).toMatchObject({ order_id: id, amount_base_units: String(USDC(25)), current_milestone: 1 });
    expect(created.order.milestoneCount).toBe(2);
    expect(paid).toMatchObject({ status: 'in_progress', current_milestone: 1 });
    expect(paid.milestones.map((m) => [m.index, m.status, m.amount_base_units])).toEqual([
      [1, 'in_progress', String(USDC(10))],
      [2, 'scheduled', String(USDC(15))],
    ]);
    // milestone 1 is the order's own escrow (today's orders unchanged), milestone 2 has its own
    expect(paid.milestones[0]!.milestone_id).toBe(id);
    expect(paid.milestones[1]!.escrow_account_address).toBe(env.chain.escrow.addresses(paid.milestones[1]!.milestone_id, env.boot.usdcMint).escrow);
    expect(paid.milestones[1]!.escrow_account_address).not.toBe(paid.escrow_account_address);
    expect(await listingStatus(listingId)).toBe('reserved');

    expect((await post(seller, `/orders/${id}/milestones/1/deliver`)).status).toBe(200);
    const afterOne = await post(buyer, `/orders/${id}/confirm`); // the order route acts on the current milestone
    expect(afterOne.status, JSON.stringify(afterOne.body)).toBe(200);
    expect(afterOne.body).toMatchObject({ status: 'in_progress', current_milestone: 2 });
    expect(afterOne.body.milestones.map((m: { status: string }) => m.status)).toEqual(['completed', 'scheduled']);
    expect(afterOne.body.allowed_actions).toEqual(expect.arrayContaining(['fund', 'end']));
    expect(afterOne.body.milestones[1].allowed_actions).toEqual(['fund']);
    expect(await listingStatus(listingId)).toBe('reserved'); // the listing follows the order, not the milestone
    // milestone 1 released is not the order completed: no review yet
    const tooEarly = await post(buyer, `/orders/${id}/review`, { rating: 5 });
    expect(tooEarly.status).toBe(409);
    expect(tooEarly.body.type).toContain('review-not-allowed');

    const { issued, order: funded2 } = await fund(buyer, id, [2]);
    expect(issued).toMatchObject({ order_id: id, milestones: [2] });
    expect(funded2.milestones[1]).toMatchObject({ status: 'in_progress' });
    expect((await post(seller, `/orders/${id}/milestones/2/deliver`)).status).toBe(200);
    const done = await post(buyer, `/orders/${id}/milestones/2/confirm`);
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body).toMatchObject({ status: 'completed', current_milestone: null });
    expect(done.body.allowed_actions).toContain('review');
    // the seller got both milestones minus the fee on each (2.5 %), from two escrows
    expect((await usdcOf(env, seller.wallet)) - sellerBefore).toBe(USDC(10) - USDC(0.25) + USDC(15) - USDC(0.375));
    expect(await listingStatus(listingId)).toBe('sold');
    expect(await eventsOf(id)).toEqual([
      'order.created',
      'milestone.funded',
      'order.funded',
      'milestone.delivered',
      'milestone.released',
      'milestone.payment_due',
      'milestone.funded',
      'milestone.delivered',
      'milestone.released',
      'order.completed',
    ]);
    // one entry per order in GET /orders (not one per milestone)
    const list = await get(buyer, '/orders');
    expect(list.body.data.map((o: Order) => o.order_id)).toEqual([id]);
    expect((await get(buyer, '/orders?status=completed')).body.data.map((o: Order) => o.order_id)).toEqual([id]);
    // every row (milestone) against its own escrow account on chain: none mismatches
    expect((await t.services.orders!.checkIntegrity()).mismatches).toEqual([]);
  });

  it('three milestones: refusals with stable problem types, then milestones 2 and 3 funded in ONE transaction (two fund instructions, one signature)', async () => {
    const { buyer, seller, id } = await milestoneOrder([5, 6, 7]);
    const outOfOrder = await post(buyer, `/orders/${id}/milestones/fund`, { milestones: [3] }, randomUUID());
    expect(outOfOrder.status).toBe(409);
    expect(outOfOrder.body).toMatchObject({ type: expect.stringContaining('milestone-out-of-order'), next: 2 });
    const scheduled = await post(seller, `/orders/${id}/milestones/2/deliver`);
    expect(scheduled.status).toBe(409);
    expect(scheduled.body.type).toContain('invalid-state-transition');
    const open = await post(buyer, `/orders/${id}/end`);
    expect(open.status).toBe(409);
    expect(open.body).toMatchObject({ type: expect.stringContaining('milestone-open'), open: [1] });
    expect((await post(seller, `/orders/${id}/milestones/4/deliver`)).status).toBe(404);
    // a later milestone's id is an escrow id, not an order: not addressable as an order
    const secondId = ((await get(buyer, `/orders/${id}`)).body as Order).milestones[1]!.milestone_id;
    expect((await get(buyer, `/orders/${secondId}`)).status).toBe(404);
    expect((await post(seller, `/orders/${secondId}/deliver`)).status).toBe(404);
    expect((await post(seller, `/orders/${id}/milestones/fund`, { milestones: [2] }, randomUUID())).status).toBe(403);

    const res = await post(buyer, `/orders/${id}/milestones/fund`, { milestones: [2, 3] }, randomUUID());
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const tx = Transaction.from(Buffer.from(res.body.transaction, 'base64'));
    const program = env.chain.escrow.programId.toBase58();
    expect(tx.instructions.filter((ix) => ix.programId.toBase58() === program)).toHaveLength(2);
    // the fund-tx check: only the transaction issued (both instructions), nothing else
    const partial = new Transaction({ feePayer: buyer.kp.publicKey, blockhash: tx.recentBlockhash!, lastValidBlockHeight: tx.lastValidBlockHeight ?? 0 });
    partial.add(...tx.instructions.slice(0, -1));
    partial.partialSign(buyer.kp);
    const bad = await post(buyer, `/orders/${id}/transaction`, { signed_transaction: partial.serialize({ requireAllSignatures: false }).toString('base64') });
    expect(bad.status).toBe(400);
    expect(bad.body.type).toContain('validation-error');
    const paid = await post(buyer, `/orders/${id}/transaction`, { signed_transaction: signedBy(buyer.kp, res.body.transaction) });
    expect(paid.status, JSON.stringify(paid.body)).toBe(200);
    expect(paid.body.milestones.map((m: { status: string }) => m.status)).toEqual(['in_progress', 'in_progress', 'in_progress']);
    const sigs = paid.body.milestones.slice(1).map((m: Order['milestones'][number]) => m.transactions.find((x) => x.action === 'fund')?.signature);
    expect(sigs[0]).toBeTruthy();
    expect(sigs[0]).toBe(sigs[1]);
    const again = await post(buyer, `/orders/${id}/milestones/fund`, { milestones: [2] }, randomUUID());
    expect(again.status).toBe(409);
    expect(again.body.type).toContain('invalid-state-transition');
  });

  it('agreements on a milestone funded ahead of the current one: milestone 2 settled by agreement (the program pays exactly that split), milestone 3 revised and extended, while milestone 1 stays current', async () => {
    const { buyer, seller, id } = await milestoneOrder([5, 6, 7], 1);
    // an unfunded milestone: the table refuses (409), an index the order lacks: 404, a stranger: 404; never a 500
    const unfunded = await post(seller, `/orders/${id}/milestones/2/settlement`, { buyer_bps: 4000 }, randomUUID());
    expect(unfunded.status, JSON.stringify(unfunded.body)).toBe(409);
    expect(unfunded.body.type).toContain('invalid-state-transition');
    const missing = await post(seller, `/orders/${id}/milestones/4/settlement`, { buyer_bps: 4000 }, randomUUID());
    expect(missing.status).toBe(404);
    expect(missing.body.type).toContain('not-found');
    expect((await post(seller, `/orders/${id}/milestones/11/extension/decline`, {}, randomUUID())).body.type).toContain('validation-error');
    const stranger = await party();
    expect((await post(stranger, `/orders/${id}/milestones/1/settlement`, { buyer_bps: 0 }, randomUUID())).status).toBe(404);
    expect((await post(seller, `/orders/${id}/milestones/2/settlement`, { buyer_bps: 4000 })).body.type).toContain('idempotency-key-missing');
    // milestones 2 and 3 funded in ONE transaction: both funded ahead of milestone 1, the current one
    const { order: funded } = await fund(buyer, id, [2, 3]);
    expect(funded).toMatchObject({ current_milestone: 1 });
    expect(funded.milestones.map((m) => m.status)).toEqual(['in_progress', 'in_progress', 'in_progress']);
    const [m2, m3] = [funded.milestones[1]!.milestone_id, funded.milestones[2]!.milestone_id];

    // settlement of milestone 2: the seller proposes 40 % back to the buyer; it shows on milestone 2 only
    const k = randomUUID();
    const proposed = await post(seller, `/orders/${id}/milestones/2/settlement`, { buyer_bps: 4000 }, k);
    expect(proposed.status, JSON.stringify(proposed.body)).toBe(200);
    const shown = proposed.body as Order;
    // 6 USDC: the buyer 2.4, the seller 3.6 minus the 2.5 % fee on his share only
    const split = { buyer_base_units: String(USDC(2.4)), seller_base_units: String(USDC(3.6) - USDC(0.09)), treasury_base_units: String(USDC(0.09)) };
    expect(shown.milestones[1]!.settlement_proposal).toMatchObject({ proposed_by: 'seller', buyer_bps: 4000, preview: split });
    expect(shown.settlement_proposal).toBeNull(); // the order level shows the current milestone's (1): none
    expect(shown.milestones[0]!.settlement_proposal).toBeNull();
    const buyerView = (await get(buyer, `/orders/${id}`)).body as Order;
    expect(buyerView.milestones[1]!.allowed_actions).toEqual(expect.arrayContaining(['accept_settlement']));
    expect(buyerView.allowed_actions).not.toContain('accept_settlement'); // the order routes act on milestone 1
    expect((await post(seller, `/orders/${id}/milestones/2/settlement/accept`, { buyer_bps: 4000 }, randomUUID())).status).toBe(403);
    const changed = await post(buyer, `/orders/${id}/milestones/2/settlement/accept`, { buyer_bps: 5000 }, randomUUID());
    expect(changed.status).toBe(409);
    expect(changed.body.type).toContain('proposal-changed');
    // the order route has nothing pending on milestone 1
    expect((await post(buyer, `/orders/${id}/settlement/accept`, { buyer_bps: 4000 }, randomUUID())).body.type).toContain('no-pending-proposal');

    const [buyerBefore, sellerBefore] = await Promise.all([usdcOf(env, buyer.wallet), usdcOf(env, seller.wallet)]);
    const acceptKey = randomUUID();
    const accepted = await post(buyer, `/orders/${id}/milestones/2/settlement/accept`, { buyer_bps: 4000 }, acceptKey);
    expect(accepted.status, JSON.stringify(accepted.body)).toBe(200);
    const after = accepted.body as Order;
    expect(after).toMatchObject({ status: 'in_progress', current_milestone: 1 });
    expect(after.milestones.map((m) => m.status)).toEqual(['in_progress', 'resolved', 'in_progress']);
    expect(after.milestones[1]).toMatchObject({ settlement_proposal: null, payout: { ...split, verified: expect.any(Boolean) } });
    // the program paid exactly that split from milestone 2's escrow and closed it
    expect((await usdcOf(env, buyer.wallet)) - buyerBefore).toBe(USDC(2.4));
    expect((await usdcOf(env, seller.wallet)) - sellerBefore).toBe(USDC(3.6) - USDC(0.09));
    expect(await env.chain.escrow.fetchOrder(m2)).toBeNull();
    // money path: a retry with the same key answers the stored 200, nothing is sent again
    const replay = await post(buyer, `/orders/${id}/milestones/2/settlement/accept`, { buyer_bps: 4000 }, acceptKey);
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((await usdcOf(env, buyer.wallet)) - buyerBefore).toBe(USDC(2.4));
    const settledAgain = await post(seller, `/orders/${id}/milestones/2/settlement`, { buyer_bps: 0 }, randomUUID());
    expect(settledAgain.status).toBe(409);
    expect(settledAgain.body.type).toContain('invalid-state-transition');

    // milestone 3 (not current): delivered, a revision sends it back to work, then an extension moves its deadline
    expect((await post(seller, `/orders/${id}/milestones/3/deliver`)).status).toBe(200);
    const revised = await post(buyer, `/orders/${id}/milestones/3/revision`, { message: 'Part 3 in blue, please' }, randomUUID());
    expect(revised.status, JSON.stringify(revised.body)).toBe(200);
    expect((revised.body as Order).milestones.map((m) => [m.status, m.revisions_used])).toEqual([
      ['in_progress', 0],
      ['resolved', 0],
      ['in_progress', 1],
    ]);
    expect((revised.body as Order).milestones[2]).toMatchObject({ delivered_at: null, auto_release_at: null });
    const chat = (await get(seller, `/orders/${id}/messages`)).body.data as Array<{ body: string }>;
    expect(chat.map((m) => m.body)).toContain('Revision requested (milestone 3): Part 3 in blue, please');
    const deadline1 = (revised.body as Order).milestones[0]!.delivery_deadline;
    const later = new Date(Date.parse((revised.body as Order).milestones[2]!.delivery_deadline!) + 2 * 86_400_000).toISOString();
    const ext = await post(seller, `/orders/${id}/milestones/3/extension`, { new_deadline: later, message: 'The blue takes longer' }, randomUUID());
    expect(ext.status, JSON.stringify(ext.body)).toBe(200);
    expect((ext.body as Order).milestones[2]!.extension_proposal).toMatchObject({ proposed_by: 'seller', new_deadline: later, message: 'The blue takes longer' });
    expect((ext.body as Order).extension_proposal).toBeNull();
    const extended = await post(buyer, `/orders/${id}/milestones/3/extension/accept`, { new_deadline: later }, randomUUID());
    expect(extended.status, JSON.stringify(extended.body)).toBe(200);
    expect((extended.body as Order).milestones[2]).toMatchObject({ delivery_deadline: later, extension_proposal: null });
    expect((extended.body as Order).milestones[0]!.delivery_deadline).toBe(deadline1);
    expect((await env.chain.escrow.fetchOrder(m3))!.deliveryDeadline).toBe(Date.parse(later) / 1000);

    // the order goes on with milestone 1: the order routes still act on it
    const delivered1 = await post(seller, `/orders/${id}/deliver`);
    expect(delivered1.status).toBe(200);
    expect((delivered1.body as Order).milestones.map((m) => m.status)).toEqual(['delivered', 'resolved', 'in_progress']);
    expect(await eventsOf(id)).toEqual(expect.arrayContaining(['settlement.proposed', 'settlement.accepted', 'revision.requested', 'extension.proposed', 'extension.accepted']));
    expect((await t.services.orders!.checkIntegrity()).mismatches).toEqual([]);
  });

  it('end after milestone 1: the unfunded rest is not bought (ended, order.ended), the listing is sold, the buyer may review; repeating answers the order', async () => {
    const { buyer, seller, listingId, id } = await milestoneOrder([8, 9]);
    const early = await post(buyer, `/orders/${id}/end`);
    expect(early.status).toBe(409);
    expect((await post(seller, `/orders/${id}/milestones/1/deliver`)).status).toBe(200);
    expect((await post(buyer, `/orders/${id}/milestones/1/confirm`)).status).toBe(200);
    expect((await post(seller, `/orders/${id}/end`)).status).toBe(403);
    const ended = await post(buyer, `/orders/${id}/end`);
    expect(ended.status, JSON.stringify(ended.body)).toBe(200);
    expect(ended.body).toMatchObject({ status: 'ended', current_milestone: null });
    expect(ended.body.milestones.map((m: { status: string }) => m.status)).toEqual(['completed', 'scheduled']);
    expect(ended.body.allowed_actions).toEqual(['review']);
    expect((await post(buyer, `/orders/${id}/review`, { rating: 4, text: 'Good first part' })).status).toBe(201);
    expect((await post(buyer, `/orders/${id}/end`)).body.status).toBe('ended');
    expect((await post(buyer, `/orders/${id}/milestones/fund`, { milestones: [2] }, randomUUID())).status).toBe(409);
    expect(await listingStatus(listingId)).toBe('sold');
    expect((await eventsOf(id)).slice(-1)).toEqual(['order.ended']);
    expect((await get(buyer, '/orders?status=ended')).body.data.map((o: Order) => o.order_id)).toEqual([id]);
  });

  it('funding milestone 2 survives a crash between the chain and the database: the watcher records it, a retry answers the funded order; the fund request is idempotent', async () => {
    const { buyer, seller, id } = await milestoneOrder([4, 4]);
    expect((await post(seller, `/orders/${id}/milestones/1/deliver`)).status).toBe(200);
    expect((await post(buyer, `/orders/${id}/confirm`)).status).toBe(200);
    const key = randomUUID();
    const issued = await post(buyer, `/orders/${id}/milestones/fund`, { milestones: [2] }, key);
    expect(issued.status).toBe(200);
    const replay = await post(buyer, `/orders/${id}/milestones/fund`, { milestones: [2] }, key);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(issued.body);
    const signed = signedBy(buyer.kp, issued.body.transaction);
    const m2 = () => get(buyer, `/orders/${id}`).then((r) => (r.body as Order).milestones[1]!);
    const m2id = (await m2()).milestone_id;
    // the process "dies" once the transaction landed, before anything is written (the request never returns)
    let die!: () => void;
    let landed!: () => void;
    const reached = new Promise<void>((r) => (landed = r));
    crash.afterSubmit = () => {
      crash.afterSubmit = undefined;
      landed();
      return new Promise<void>((_, reject) => (die = () => reject(new Error('crashed after the fund transaction landed'))));
    };
    const dying = post(buyer, `/orders/${id}/transaction`, { signed_transaction: signed }).then((r) => r.status);
    await reached;
    expect(await env.chain.escrow.fetchOrder(m2id)).not.toBeNull();
    expect((await m2()).status).toBe('awaiting_payment');
    await t.services.orders!.watcher.runOnce();
    expect((await m2()).status).toBe('in_progress');
    const retry = await post(buyer, `/orders/${id}/transaction`, { signed_transaction: signed });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.milestones[1].status).toBe('in_progress');
    die();
    expect(await dying).toBe(200); // the dead request's own catch-up finds the escrow funded and the row recorded
    expect((await eventsOf(id)).filter((e) => e === 'milestone.funded')).toHaveLength(2);
  });

  it('an unpaid later milestone lapses back to scheduled (milestone.lapsed), the order stays open and the buyer funds it again', async () => {
    const { buyer, seller, id } = await milestoneOrder([3, 3]);
    expect((await post(seller, `/orders/${id}/milestones/1/deliver`)).status).toBe(200);
    expect((await post(buyer, `/orders/${id}/confirm`)).status).toBe(200);
    const first = await post(buyer, `/orders/${id}/milestones/fund`, { milestones: [2] }, randomUUID());
    expect(first.status).toBe(200);
    // the payment window and its grace pass unpaid on the service clock
    clockOffsetMs = new Date(first.body.payment_expires_at).getTime() - Date.now() + 121_000;
    try {
      await t.services.orders!.watcher.runOnce();
    } finally {
      clockOffsetMs = 0;
    }
    const after = (await get(buyer, `/orders/${id}`)).body as Order;
    expect(after).toMatchObject({ status: 'in_progress', current_milestone: 2 });
    expect(after.milestones[1]).toMatchObject({ status: 'scheduled', allowed_actions: ['fund'] });
    expect((await eventsOf(id)).slice(-1)).toEqual(['milestone.lapsed']);
    const { order } = await fund(buyer, id, [2]);
    expect(order.milestones[1]!.status).toBe('in_progress');
  });

  it('the last milestone auto-released by the crank after its review window completes the order (milestone.released, order.completed)', async () => {
    const { buyer, seller, id, listingId } = await milestoneOrder([2, 3]);
    expect((await post(seller, `/orders/${id}/deliver`)).status).toBe(200);
    expect((await post(buyer, `/orders/${id}/confirm`)).status).toBe(200);
    const { order } = await fund(buyer, id, [2]);
    const m2 = order.milestones[1]!.milestone_id;
    expect((await post(seller, `/orders/${id}/deliver`)).status).toBe(200); // the current milestone: 2
    const orders = t.services.orders!;
    expect((await orders.autoRelease.runOnce()).claimed).not.toContain(m2);
    await env.localnet.advanceClock(65);
    expect((await orders.autoRelease.runOnce()).claimed).toContain(m2);
    const read = (await get(seller, `/orders/${id}`)).body as Order;
    expect(read).toMatchObject({ status: 'completed', current_milestone: null });
    expect(read.milestones[1]!.transactions.map((x) => x.action)).toEqual(['fund', 'mark_delivered', 'claim']);
    expect((await eventsOf(id)).slice(-2)).toEqual(['milestone.released', 'order.completed']);
    expect(await listingStatus(listingId)).toBe('sold');
  });

  it('a one-milestone order is one row exactly as before: milestones = [itself], current_milestone 1, no fund or end', async () => {
    const [buyer, seller] = await Promise.all([party(100), party()]);
    const l = await newListing(t, seller, { price: 3 });
    const res = await post(buyer, '/orders', { listing_id: l.listing_id }, randomUUID());
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ current_milestone: 1, allowed_actions: ['pay'] });
    expect(res.body.milestones).toHaveLength(1);
    expect(res.body.milestones[0]).toMatchObject({ index: 1, milestone_id: res.body.order_id, status: 'awaiting_payment', amount_base_units: String(USDC(3)) });
    const end = await post(buyer, `/orders/${res.body.order_id}/end`);
    expect(end.status).toBe(409);
    expect(end.body.type).toContain('invalid-state-transition');
    expect((await post(buyer, `/orders/${res.body.order_id}/milestones/fund`, { milestones: [2] }, randomUUID())).status).toBe(409);
  });
});
