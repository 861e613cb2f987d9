/**
 * Orders with milestones (issue 24) against in-memory fakes: the trusted terms, the table's milestone rows
 * (schedule, fund, lapse) through the service, the order-level rules of milestones.ts, and custodial
 * orders (refused with several milestones). The localnet stories are in tests/e2e.orders-milestones.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { Keypair, Transaction } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { FundMilestonesBody, MAX_MILESTONES_PER_FUND, orderTransitions, type OrderTransition } from '@bazaar/contract';
import { MAX_MILESTONES_PER_FUND_TRANSACTION } from '../server/src/chain/escrow.js';
import { MemoryOrdersRepo } from './helpers/memory-orders-repo.js';
import { OrdersService } from '../server/src/modules/orders/orders.service.js';
import { PaymentWatcher } from '../server/src/modules/orders/payment-watcher.js';
import { currentMilestone, endRefusal, listingEventOfOrder, orderReviewable, orderStatusOf, type MilestoneRow } from '../server/src/modules/orders/milestones.js';
import { allowedActions } from '../server/src/modules/orders/order-state.js';
import { FakeEscrow, FakeListings, testOrdersSettings, user } from './orders.fakes.js';
import type { CustodialPaymentsPort, OrderTermsInput } from '../server/src/modules/orders/orders.types.js';

const USDC = { code: 'USDC', mint: Keypair.generate().publicKey.toBase58(), decimals: 6 };
const terms = (amounts: bigint[], price = amounts.reduce((s, a) => s + a, 0n)): OrderTermsInput => ({
  packageKey: null,
  packageName: 'Standard',
  priceBaseUnits: price,
  revisionsIncluded: 2,
  milestones: amounts.map((a, i) => ({ title: `Part ${i + 1}`, amountBaseUnits: a, deliveryDays: 2 })),
});

function setup(custody?: CustodialPaymentsPort) {
  const repo = new MemoryOrdersRepo();
  const escrow = new FakeEscrow();
  const listings = new FakeListings();
  let now = new Date('2026-11-26T12:00:00Z');
  const service = new OrdersService({
    repo,
    escrow,
    listings,
    currency: (c) => (c === 'USDC' ? USDC : undefined),
    custody,
    settings: testOrdersSettings({ reviewWindowSeconds: 3600, paymentTtlSeconds: 900, paymentGraceSeconds: 60 }),
    now: () => now,
  });
  const buyer = user(randomUUID(), Keypair.generate().publicKey.toBase58());
  const seller = user(randomUUID(), Keypair.generate().publicKey.toBase58());
  const listing = listings.add({ id: randomUUID(), sellerId: seller.userId!, sellerWallet: seller.wallet! });
  const watcher = new PaymentWatcher({ service, repo });
  return { repo, escrow, listings, service, buyer, seller, listing, watcher, advance: (ms: number) => (now = new Date(now.getTime() + ms)) };
}

const slug = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { slug?: string }) => e.slug,
  );

describe('orders with milestones (fakes)', () => {
  it('trusted terms: one row per milestone in one creation, milestone 1 awaiting payment (the order id), the rest scheduled with no window', async () => {
    const ctx = setup();
    const { order, payment } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id, terms: terms([10n, 15n]), idempotencyKey: 'k1' });
    expect(order).toMatchObject({ orderId: order.id, milestoneIndex: 1, milestoneCount: 2, amount: 10n, revisionsIncluded: 2, packageName: 'Standard', status: 'awaiting_payment' });
    const rows = (await ctx.repo.milestonesOf([order.id])).get(order.id)!;
    expect(rows.map((r) => [r.milestoneIndex, r.status, r.amount])).toEqual([
      [1, 'awaiting_payment', 10n],
      [2, 'scheduled', 15n],
    ]);
    expect(rows[1]!.id).not.toBe(order.id);
    // the fund transaction pays milestone 1 only
    expect(Transaction.from(Buffer.from(payment!.transaction, 'base64')).instructions).toHaveLength(1);
    // a retry with the same key returns the same order, no second set of rows
    const again = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id, terms: terms([10n, 15n]), idempotencyKey: 'k1' });
    expect(again.order.id).toBe(order.id);
    expect(ctx.repo.orders.size).toBe(2);
  });

  it('refuses terms that do not add up (400 validation-error): a sum other than the price, 11 milestones, a zero amount', async () => {
    const ctx = setup();
    const create = (t: OrderTermsInput) => slug(ctx.service.create(ctx.buyer, { listingId: ctx.listing.id, terms: t }));
    expect(await create(terms([10n, 15n], 24n))).toBe('validation-error');
    expect(await create(terms(Array(11).fill(1n)))).toBe('validation-error');
    expect(await create(terms([0n, 15n]))).toBe('validation-error');
    expect(ctx.repo.orders.size).toBe(0);
  });

  it('the agreement routes act on the current milestone: a settlement of milestone 2 (offered in allowed_actions), a revision of it; a later milestone\'s id is still 404 as an order', async () => {
    const ctx = setup();
    const { order } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id, terms: terms([10n, 20n]) });
    ctx.escrow.fund(ctx.service.fundTerms(order));
    await ctx.watcher.runOnce();
    await ctx.service.confirm(ctx.buyer, order.id);
    await ctx.service.fundMilestones(ctx.buyer, order.id, [2]);
    const rows = () => ctx.repo.milestonesOf([order.id]).then((m) => m.get(order.id)!);
    const second = (await rows())[1]!;
    ctx.escrow.fund(ctx.service.fundTerms(second));
    await ctx.watcher.runOnce();
    // the seller's order-level actions offer the agreements on milestone 2 (the current one)
    const sellerView = await ctx.service.presentOne(ctx.seller, (await ctx.repo.get(order.id))!);
    expect(sellerView.current_milestone).toBe(2);
    expect(sellerView.allowed_actions).toEqual(expect.arrayContaining(['deliver', 'propose_extension', 'propose_settlement']));
    // a revision of milestone 2 once delivered (its row, not the settled milestone 1)
    await ctx.service.deliver(ctx.seller, order.id);
    expect((await ctx.service.presentOne(ctx.buyer, (await ctx.repo.get(order.id))!)).allowed_actions).toContain('request_revision');
    await ctx.service.requestRevision(ctx.buyer, order.id, 'darker please');
    expect((await rows()).map((r) => [r.status, r.revisionsUsed])).toEqual([
      ['completed', 0],
      ['in_progress', 1],
    ]);
    // a settlement of milestone 2: proposed by the seller, offered to and accepted by the buyer
    await ctx.service.proposeSettlement(ctx.seller, order.id, 4000);
    const buyerView = await ctx.service.presentOne(ctx.buyer, (await ctx.repo.get(order.id))!);
    expect(buyerView.settlement_proposal).toMatchObject({ proposed_by: 'seller', buyer_bps: 4000 });
    expect(buyerView.allowed_actions).toContain('accept_settlement');
    await ctx.service.acceptSettlement(ctx.buyer, order.id, 4000);
    expect((await rows()).map((r) => r.status)).toEqual(['completed', 'resolved']);
    expect((await rows())[1]).toMatchObject({ settledBy: 'agreement' });
    // milestone 2's own id is not an order's: 404 on the agreement routes as on the others
    expect(await slug(ctx.service.proposeSettlement(ctx.seller, second.id, 5000))).toBe('not-found');
  });

  it('the agreement use cases with a milestone index act on that milestone, current or funded ahead; its proposals show on it; 404 for an index the order lacks, 409 for an unfunded one', async () => {
    const ctx = setup();
    const { order } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id, terms: terms([10n, 20n, 30n]) });
    const rows = () => ctx.repo.milestonesOf([order.id]).then((m) => m.get(order.id)!);
    ctx.escrow.fund(ctx.service.fundTerms(order));
    await ctx.watcher.runOnce();
    // before milestone 3 is funded: the table refuses every agreement on it; an index the order lacks is 404
    expect(await slug(ctx.service.proposeSettlement(ctx.seller, order.id, 1000, 3))).toBe('invalid-state-transition');
    expect(await slug(ctx.service.proposeExtension(ctx.seller, order.id, 2_000_000_000, null, 3))).toBe('invalid-state-transition');
    expect(await slug(ctx.service.proposeSettlement(ctx.seller, order.id, 1000, 4))).toBe('not-found');
    expect(await slug(ctx.service.requestRevision(ctx.buyer, order.id, 'x', 4))).toBe('not-found');
    await ctx.service.fundMilestones(ctx.buyer, order.id, [2, 3]);
    for (const r of (await rows()).slice(1)) ctx.escrow.fund(ctx.service.fundTerms(r));
    await ctx.watcher.runOnce();
    expect((await rows()).map((r) => r.status)).toEqual(['in_progress', 'in_progress', 'in_progress']);
    const present = async (who: typeof ctx.buyer) => ctx.service.presentOne(who, (await ctx.repo.get(order.id))!);

    // milestone 3: an extension proposed, declined, proposed again and accepted; milestone 1's deadline stays
    const [d1, d3] = [(await rows())[0]!.deliveryDeadline, (await rows())[2]!.deliveryDeadline];
    await ctx.service.proposeExtension(ctx.seller, order.id, d3 + 86_400, 'later', 3);
    const withExt = await present(ctx.buyer);
    expect(withExt.milestones[2]!.extension_proposal).toMatchObject({ new_deadline: new Date((d3 + 86_400) * 1000).toISOString(), message: 'later' });
    expect(withExt.milestones[2]!.allowed_actions).toEqual(expect.arrayContaining(['accept_extension', 'decline_extension']));
    expect(withExt.extension_proposal).toBeNull(); // the order level: the current milestone's (1)
    expect(await slug(ctx.service.acceptExtension(ctx.buyer, order.id, d3 + 86_400))).toBe('no-pending-proposal'); // the order route: milestone 1
    await ctx.service.declineExtension(ctx.buyer, order.id, 3);
    expect((await present(ctx.buyer)).milestones[2]!.extension_proposal).toBeNull();
    await ctx.service.proposeExtension(ctx.seller, order.id, d3 + 2 * 86_400, null, 3);
    await ctx.service.acceptExtension(ctx.buyer, order.id, d3 + 2 * 86_400, 3);
    expect((await rows()).map((r) => r.deliveryDeadline)).toEqual([d1, (await rows())[1]!.deliveryDeadline, d3 + 2 * 86_400]);
    expect(ctx.escrow.accounts.get((await rows())[2]!.id)!.deliveryDeadline).toBe(d3 + 2 * 86_400);

    // milestone 3 delivered, then a revision of it
    await ctx.service.deliverMilestone(ctx.seller, order.id, 3);
    await ctx.service.requestRevision(ctx.buyer, order.id, 'again', 3);
    expect((await rows()).map((r) => [r.status, r.revisionsUsed])).toEqual([
      ['in_progress', 0],
      ['in_progress', 0],
      ['in_progress', 1],
    ]);

    // milestone 2: a settlement proposed by the buyer, withdrawn, proposed by the seller and accepted by the buyer
    await ctx.service.proposeSettlement(ctx.buyer, order.id, 10_000, 2);
    expect((await present(ctx.seller)).milestones[1]!.settlement_proposal).toMatchObject({ proposed_by: 'buyer', buyer_bps: 10_000 });
    expect(await slug(ctx.service.withdrawSettlement(ctx.seller, order.id, 2))).toBe('forbidden');
    await ctx.service.withdrawSettlement(ctx.buyer, order.id, 2);
    expect((await present(ctx.seller)).milestones[1]!.settlement_proposal).toBeNull();
    await ctx.service.proposeSettlement(ctx.seller, order.id, 2500, 2);
    const offered = await present(ctx.buyer);
    expect(offered.milestones[1]!.settlement_proposal).toMatchObject({ proposed_by: 'seller', buyer_bps: 2500, preview: { buyer_base_units: '5' } });
    expect(offered.milestones[1]!.allowed_actions).toContain('accept_settlement');
    expect(offered.settlement_proposal).toBeNull();
    expect(offered.allowed_actions).not.toContain('accept_settlement');
    await ctx.service.acceptSettlement(ctx.buyer, order.id, 2500, 2);
    const after = await rows();
    expect(after.map((r) => r.status)).toEqual(['in_progress', 'resolved', 'in_progress']);
    expect(after[1]).toMatchObject({ settledBy: 'agreement', payout: { buyer: 5n } });
    expect(ctx.escrow.count('accept_settlement', after[1]!.id)).toBe(1);
    expect(orderStatusOf(after)).toBe('in_progress');
    expect(currentMilestone(after)).toBe(1);
    // settled: nothing more on milestone 2; the order routes still act on milestone 1
    expect(await slug(ctx.service.proposeSettlement(ctx.seller, order.id, 0, 2))).toBe('invalid-state-transition');
    await ctx.service.proposeSettlement(ctx.seller, order.id, 0);
    expect((await rows())[0]!.settlement).toMatchObject({ buyerBps: 0 });
  });

  it('a custodial order with several milestones is refused (409 custodial-milestones-unsupported); with one it is paid as before', async () => {
    const paid: string[] = [];
    const custody: CustodialPaymentsPort = {
      buyerAddressFor: async () => Keypair.generate().publicKey.toBase58(),
      assertAvailable: async () => undefined,
      payOrder: async (o) => (paid.push(o.id), { status: 'pending' }),
      bookOrderOutcome: async () => true,
    };
    const ctx = setup(custody);
    expect(await slug(ctx.service.create(ctx.buyer, { listingId: ctx.listing.id, paymentSource: 'custodial', terms: terms([10n, 15n]) }))).toBe('custodial-milestones-unsupported');
    expect(paid).toEqual([]);
    await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id, paymentSource: 'custodial' });
    expect(paid).toHaveLength(1);
  });

  it('the table\'s milestone rows through the service: fund (buyer only, scheduled -> awaiting_payment), pay, lapse back to scheduled (not expired)', async () => {
    const ctx = setup();
    const { order } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id, terms: terms([10n, 15n, 5n]) });
    ctx.escrow.fund(ctx.service.fundTerms(order));
    await ctx.watcher.runOnce();
    await ctx.service.confirm(ctx.buyer, order.id);
    const rows = () => ctx.repo.milestonesOf([order.id]).then((m) => m.get(order.id)!);
    const scheduled = (await rows())[1]!;
    const at = { chainSeconds: ctx.escrow.now, serviceMs: Date.now() };
    const fundRow = (orderTransitions as readonly OrderTransition[]).find((t) => t.action === 'fund')!;
    expect(fundRow).toMatchObject({ from: 'scheduled', to: 'awaiting_payment', by: ['buyer'], milestone: 'later' });
    expect(allowedActions(scheduled, 'buyer', at)).toEqual(['fund']);
    expect(allowedActions(scheduled, 'seller', at)).toEqual([]);
    expect(await slug(ctx.service.fundMilestones(ctx.seller, order.id, [2]))).toBe('forbidden');
    expect(await slug(ctx.service.fundMilestones(ctx.buyer, order.id, [2, 2]))).toBe('milestone-out-of-order');
    expect(await slug(ctx.service.fundMilestones(ctx.buyer, order.id, [4]))).toBe('not-found');
    const issued = await ctx.service.fundMilestones(ctx.buyer, order.id, [2]);
    expect(issued.milestones).toEqual([2]);
    expect((await rows()).map((r) => r.status)).toEqual(['completed', 'awaiting_payment', 'scheduled']);
    // milestone 3 cannot be asked for while milestone 2 awaits its payment (in order)
    expect(await slug(ctx.service.fundMilestones(ctx.buyer, order.id, [3]))).toBe('invalid-state-transition');
    // unpaid past its window + grace: back to scheduled, the order open
    ctx.advance(900_000 + 61_000);
    await ctx.watcher.runOnce();
    expect((await rows()).map((r) => r.status)).toEqual(['completed', 'scheduled', 'scheduled']);
    expect(orderStatusOf(await rows())).toBe('in_progress');
    // funded again, then paid from the wallet directly (the watcher sees the escrow)
    const again = await ctx.service.fundMilestones(ctx.buyer, order.id, [2, 3]);
    expect(Transaction.from(Buffer.from(again.transaction, 'base64')).instructions).toHaveLength(2);
    // POST /orders/{id}/payment: a fresh transaction for both (the first one's blockhash may have expired)
    const fresh = await ctx.service.refreshPayment(ctx.buyer, order.id);
    expect(fresh.order).toMatchObject({ orderId: order.id, milestoneIndex: 2 });
    expect(Transaction.from(Buffer.from(fresh.payment.transaction, 'base64')).instructions.map((ix) => JSON.parse(ix.data.toString()).orderId)).toEqual(
      (await rows()).slice(1).map((r) => r.id),
    );
    for (const r of (await rows()).slice(1)) ctx.escrow.fund(ctx.service.fundTerms(r));
    await ctx.watcher.runOnce();
    expect((await rows()).map((r) => r.status)).toEqual(['completed', 'in_progress', 'in_progress']);
    // milestone 1 still expires the order (the `expire` row is the first milestone's)
    const other = await ctx.service.create(ctx.buyer, { listingId: ctx.listings.add({ id: randomUUID(), sellerId: ctx.seller.userId!, sellerWallet: ctx.seller.wallet! }).id, terms: terms([1n, 1n]) });
    ctx.advance(900_000 + 61_000);
    await ctx.watcher.runOnce();
    expect(orderStatusOf((await ctx.repo.milestonesOf([other.order.id])).get(other.order.id)!)).toBe('expired');
  });

  it('the agreement routes act on the current milestone: once milestone 1 settled, a revision, an extension and a settlement move milestone 2 (found by the demo)', async () => {
    const ctx = setup();
    const { order } = await ctx.service.create(ctx.buyer, { listingId: ctx.listing.id, terms: terms([10n, 15n]) });
    const rows = () => ctx.repo.milestonesOf([order.id]).then((m) => m.get(order.id)!);
    ctx.escrow.fund(ctx.service.fundTerms(order));
    await ctx.watcher.runOnce();
    await ctx.service.confirm(ctx.buyer, order.id);
    await ctx.service.fundMilestones(ctx.buyer, order.id, [2]);
    ctx.escrow.fund(ctx.service.fundTerms((await rows())[1]!));
    await ctx.watcher.runOnce();
    await ctx.service.deliverMilestone(ctx.seller, order.id, 2);
    // the order routes without an index: milestone 2 is the current one
    await ctx.service.requestRevision(ctx.buyer, order.id, 'A bolder typeface, please.');
    expect((await rows()).map((r) => [r.status, r.revisionsUsed])).toEqual([
      ['completed', 0],
      ['in_progress', 1],
    ]);
    const wanted = (await rows())[1]!.deliveryDeadline + 3 * 86_400;
    await ctx.service.proposeExtension(ctx.seller, order.id, wanted, 'More time for the brand sheet.');
    // the buyer's buttons: the agreement rows show in allowed_actions, on the order and on milestone 2
    const shown = await ctx.service.presentOne(ctx.buyer, (await ctx.repo.get(order.id))!);
    expect(shown.allowed_actions).toEqual(expect.arrayContaining(['accept_extension', 'decline_extension', 'propose_settlement']));
    expect(shown.milestones[1]!.allowed_actions).toEqual(expect.arrayContaining(['accept_extension', 'decline_extension']));
    expect(shown.milestones[0]!.allowed_actions).toEqual([]);
    await ctx.service.acceptExtension(ctx.buyer, order.id, wanted);
    expect((await rows())[1]!.deliveryDeadline).toBe(wanted);
    await ctx.service.proposeSettlement(ctx.buyer, order.id, 2000);
    expect((await ctx.service.presentOne(ctx.seller, (await ctx.repo.get(order.id))!)).allowed_actions).toContain('accept_settlement');
    await ctx.service.acceptSettlement(ctx.seller, order.id, 2000);
    const after = await rows();
    expect(after.map((r) => r.status)).toEqual(['completed', 'resolved']);
    expect(after[1]!.payout).toMatchObject({ buyer: 3n });
    expect(orderStatusOf(after)).toBe('completed');
  });
});

describe('milestones.ts: the order from its rows', () => {
  const row = (i: number, status: MilestoneRow['status'], o: Partial<MilestoneRow> = {}): MilestoneRow => ({
    milestoneIndex: i,
    milestoneCount: 3,
    status,
    payout: null,
    buyerBps: null,
    endedAt: null,
    fundedAt: status === 'scheduled' || status === 'awaiting_payment' ? null : new Date(),
    ...o,
  });

  it('derives the order status, the current milestone and the listing effect', () => {
    const cases: Array<[MilestoneRow[], string, number | null]> = [
      [[row(1, 'awaiting_payment'), row(2, 'scheduled'), row(3, 'scheduled')], 'awaiting_payment', 1],
      [[row(1, 'expired'), row(2, 'scheduled'), row(3, 'scheduled')], 'expired', null],
      [[row(1, 'in_progress'), row(2, 'scheduled'), row(3, 'scheduled')], 'in_progress', 1],
      [[row(1, 'completed'), row(2, 'scheduled'), row(3, 'scheduled')], 'in_progress', 2],
      [[row(1, 'refunded'), row(2, 'scheduled'), row(3, 'scheduled')], 'refunded', null],
      [[row(1, 'completed'), row(2, 'refunded'), row(3, 'scheduled')], 'in_progress', 3],
      [[row(1, 'completed'), row(2, 'completed'), row(3, 'completed')], 'completed', null],
      [[row(1, 'resolved', { buyerBps: 10_000 }), row(2, 'refunded'), row(3, 'refunded')], 'refunded', null],
      [[row(1, 'completed', { endedAt: new Date() }), row(2, 'scheduled', { endedAt: new Date() }), row(3, 'scheduled', { endedAt: new Date() })], 'ended', null],
    ];
    for (const [rows, status, current] of cases) {
      expect(orderStatusOf(rows), rows.map((r) => r.status).join(',')).toBe(status);
      expect(currentMilestone(rows), rows.map((r) => r.status).join(',')).toBe(current);
    }
    const ended = [row(1, 'completed', { endedAt: new Date() }), row(2, 'scheduled', { endedAt: new Date() })];
    expect(listingEventOfOrder('in_progress', 'ended', ended)).toBe('order_completed');
    expect(orderReviewable(ended)).toBe(true);
    const endedUnpaid = [row(1, 'refunded', { endedAt: new Date() }), row(2, 'scheduled', { endedAt: new Date() })];
    expect(listingEventOfOrder('in_progress', 'ended', endedUnpaid)).toBe('order_refunded');
    expect(orderReviewable(endedUnpaid)).toBe(false);
    expect(listingEventOfOrder('awaiting_payment', 'expired', [row(1, 'expired'), row(2, 'scheduled')])).toBeNull();
  });

  it('the buyer may end only with nothing open and something settled', () => {
    expect(endRefusal([row(1, 'completed', { milestoneCount: 1 })])).toMatchObject({ invalid: expect.any(String) });
    expect(endRefusal([row(1, 'in_progress'), row(2, 'scheduled')])).toEqual({ open: [1] });
    expect(endRefusal([row(1, 'completed'), row(2, 'awaiting_payment'), row(3, 'scheduled')])).toEqual({ open: [2] });
    expect(endRefusal([row(1, 'completed'), row(2, 'scheduled'), row(3, 'scheduled')])).toBeNull();
    expect(endRefusal([row(1, 'completed'), row(2, 'completed'), row(3, 'completed')])).toMatchObject({ invalid: expect.stringContaining('completed') });
  });
});

describe('milestones per fund transaction', () => {
  it('the API takes at most as many milestones per request as one transaction holds (the chain client measured 4)', () => {
    expect(MAX_MILESTONES_PER_FUND).toBe(MAX_MILESTONES_PER_FUND_TRANSACTION);
    expect(FundMilestonesBody.safeParse({ milestones: [2, 3, 4, 5] }).success).toBe(true);
    expect(FundMilestonesBody.safeParse({ milestones: [2, 3, 4, 5, 6] }).success).toBe(false);
  });
});
