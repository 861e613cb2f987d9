/**
 * Revisions, deadline extensions and settlement by agreement (issue 24 items 2-4), at the service level
 * on the fakes (the memory repo and the simulated escrow program): the happy paths with the payout and the
 * events, the adversarial cases (the proposer accepting her own proposal, strangers, wrong roles, expired
 * and replaced proposals, an earlier deadline, revisions outside the review window or beyond the limit,
 * settlement during a dispute), crash recovery between the chain and the database, and the proposal sweep.
 * The row-by-row table walk (tests/orders.service.test.ts) covers every row for every role.
 */
import { randomUUID } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { AutoReleaseCrank, PaymentWatcher } from '../server/src/modules/orders/payment-watcher.js';
import { MemoryOrdersRepo } from './helpers/memory-orders-repo.js';
import { OrdersService } from '../server/src/modules/orders/orders.service.js';
import { crashingEscrow } from './helpers/crash-ports.js';
import { FakeEscrow, FakeListings, testOrdersSettings, user } from './orders.fakes.js';
import type { PrincipalLike } from '../server/src/modules/orders/orders.service.js';

const USDC = { code: 'USDC', mint: Keypair.generate().publicKey.toBase58(), decimals: 6 };
const DAY = 86_400;

function setup(o: { revisions?: number } = {}) {
  const repo = new MemoryOrdersRepo();
  const escrow = new FakeEscrow();
  const listings = new FakeListings();
  const crash = crashingEscrow();
  let serviceMs = Date.UTC(2027, 0, 1);
  const posted: { orderId: string; body: string; by: string | null }[] = [];
  const service = new OrdersService({
    repo,
    escrow: crash.wrap(escrow),
    listings,
    currency: (c) => (c === 'USDC' ? USDC : undefined),
    settings: testOrdersSettings({ reviewWindowSeconds: 3600, paymentTtlSeconds: 900, paymentGraceSeconds: 60, inflightWaitMs: 300 }),
    now: () => new Date(serviceMs),
    chat: { postOrderMessage: async (p: PrincipalLike, orderId: string, body: string) => void posted.push({ orderId, body, by: p.userId }) },
  });
  const buyer = user(randomUUID(), Keypair.generate().publicKey.toBase58());
  const seller = user(randomUUID(), Keypair.generate().publicKey.toBase58());
  const admin = user(randomUUID(), Keypair.generate().publicKey.toBase58(), { isAdmin: true });
  const stranger = user(randomUUID(), Keypair.generate().publicKey.toBase58());
  const listing = listings.add({ id: randomUUID(), sellerId: seller.userId!, sellerWallet: seller.wallet!, priceBaseUnits: 10_000_000n });
  const watcher = new PaymentWatcher({ service, repo });
  const crank = new AutoReleaseCrank({ service });
  async function funded() {
    const { order } = await service.create(buyer, { listingId: listing.id });
    escrow.fund(service.fundTerms(order));
    await watcher.runOnce();
    // the package's terms (helper "packages" freezes them at creation): `revisions` included
    repo.orders.get(order.id)!.revisionsIncluded = o.revisions ?? 0;
    return (await repo.get(order.id))!;
  }
  async function delivered() {
    const f = await funded();
    return service.deliver(seller, f.id);
  }
  const advanceService = (seconds: number) => (serviceMs += seconds * 1000);
  return { repo, escrow, crash, listings, service, buyer, seller, admin, stranger, listing, crank, funded, delivered, posted, advanceService };
}

const slug = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { slug?: string }) => e.slug,
  );
const events = (ctx: ReturnType<typeof setup>, id: string) => ctx.repo.events.filter((e) => e.orderId === id).map((e) => e.type);

describe('revisions (issue 24 item 2)', () => {
  it('the buyer sends a delivered order back to work: the timer stops, the deadline moves by the time left (at least a day), the count rises on both sides, the message reaches the chat', async () => {
    const ctx = setup({ revisions: 2 });
    const f = await ctx.funded();
    ctx.escrow.advance(DAY); // delivered two days before a three-day deadline
    const d = await ctx.service.deliver(ctx.seller, f.id);
    const left = f.deliveryDeadline - Math.floor(d.deliveredAt!.getTime() / 1000);
    ctx.escrow.advance(600);
    const listingCalls = ctx.listings.calls.length;
    const after = await ctx.service.requestRevision(ctx.buyer, f.id, '  the logo must be blue  ');
    // back in progress is not a new funding: the listing (reserved) is left alone
    expect(ctx.listings.calls.slice(listingCalls)).toEqual([]);
    expect(after).toMatchObject({ status: 'in_progress', deliveredAt: null, autoReleaseAt: null, revisionsUsed: 1 });
    expect(after.deliveryDeadline).toBe(ctx.escrow.now + left);
    expect(after.deliveryDeadline).toBe(ctx.escrow.accounts.get(f.id)!.deliveryDeadline); // what the program holds
    expect(ctx.escrow.accounts.get(f.id)!.state).toBe('funded');
    expect(ctx.escrow.count('request_revision', f.id)).toBe(1);
    expect(ctx.posted).toEqual([{ orderId: f.id, body: 'Revision requested: the logo must be blue', by: ctx.buyer.userId }]);
    expect(events(ctx, f.id)).toContain('revision.requested');
    const dto = await ctx.service.presentOne(ctx.buyer, after);
    expect(dto).toMatchObject({ revisions_included: 2, revisions_used: 1, status: 'in_progress', auto_release_at: null });
    // auto-release cannot take it while it is back in progress
    ctx.escrow.advance(7200);
    expect((await ctx.crank.runOnce()).claimed).toEqual([]);
  });

  it('delivering again after a revision, inside one blockhash: a new mark_delivered transaction lands (not the first one repeated, which the cluster drops) (found by the demo)', async () => {
    const ctx = setup({ revisions: 1 });
    ctx.escrow.sameBlockhash = true;
    const f = await ctx.funded();
    const first = await ctx.service.deliver(ctx.seller, f.id);
    await ctx.service.requestRevision(ctx.buyer, f.id, 'a bolder typeface');
    const again = await ctx.service.deliver(ctx.seller, f.id);
    expect(again.status).toBe('delivered');
    // the program saw the second delivery: the review window runs again on chain
    expect(ctx.escrow.accounts.get(f.id)!.state).toBe('delivered');
    const delivered = ctx.escrow.sent.filter((s) => s.orderId === f.id && s.ix === 'mark_delivered').map((s) => s.signature);
    expect(delivered).toHaveLength(2);
    expect(new Set(delivered).size).toBe(2);
    expect(first.deliveredAt).not.toBeNull();
  });

  it('beyond the included revisions: 409 revision-limit-reached, nothing sent, and allowed_actions does not offer it', async () => {
    const ctx = setup({ revisions: 1 });
    const d = await ctx.delivered();
    await ctx.service.requestRevision(ctx.buyer, d.id, 'again please');
    await ctx.service.deliver(ctx.seller, d.id);
    expect((await ctx.service.presentOne(ctx.buyer, (await ctx.repo.get(d.id))!)).allowed_actions).not.toContain('request_revision');
    const sent = ctx.escrow.sent.length;
    const err = await ctx.service.requestRevision(ctx.buyer, d.id, 'once more').catch((e) => e);
    expect(err).toMatchObject({ slug: 'revision-limit-reached', extensions: { revisions_included: 1, revisions_used: 1 } });
    expect(ctx.escrow.sent.length).toBe(sent);
    expect((await ctx.repo.get(d.id))!.status).toBe('delivered');
  });

  it('an order without revisions (today\'s listings): refused with revision-limit-reached', async () => {
    const ctx = setup();
    const d = await ctx.delivered();
    expect(await slug(ctx.service.requestRevision(ctx.buyer, d.id, 'change it'))).toBe('revision-limit-reached');
  });

  it('on an undelivered order, or once auto-release is due (chain clock): 409 invalid-state-transition, nothing sent', async () => {
    const ctx = setup({ revisions: 3 });
    const f = await ctx.funded();
    expect(await slug(ctx.service.requestRevision(ctx.buyer, f.id, 'change it'))).toBe('invalid-state-transition');
    const d = await ctx.service.deliver(ctx.seller, f.id);
    ctx.escrow.now = Math.ceil(d.autoReleaseAt!.getTime() / 1000);
    expect(await slug(ctx.service.requestRevision(ctx.buyer, d.id, 'change it'))).toBe('invalid-state-transition');
    expect(ctx.escrow.count('request_revision')).toBe(0);
  });

  it('the seller, the arbiter: 403; a stranger: 404; an empty message: 400', async () => {
    const ctx = setup({ revisions: 3 });
    const d = await ctx.delivered();
    expect(await slug(ctx.service.requestRevision(ctx.seller, d.id, 'x'))).toBe('forbidden');
    expect(await slug(ctx.service.requestRevision(ctx.admin, d.id, 'x'))).toBe('forbidden');
    expect(await slug(ctx.service.requestRevision(ctx.stranger, d.id, 'x'))).toBe('not-found');
    expect(await slug(ctx.service.requestRevision(ctx.buyer, d.id, '   '))).toBe('validation-error');
    expect(ctx.escrow.count('request_revision')).toBe(0);
  });

  it('a crash between the chain and the database: the reconciler applies the revision once (the count rises once)', async () => {
    const ctx = setup({ revisions: 2 });
    const d = await ctx.delivered();
    ctx.crash.afterSend = () => {
      throw new Error('simulated crash');
    };
    await expect(ctx.service.requestRevision(ctx.buyer, d.id, 'blue')).rejects.toThrow('simulated crash');
    ctx.crash.afterSend = undefined;
    expect((await ctx.repo.get(d.id))!.status).toBe('delivered');
    expect(Object.values(await ctx.service.reconciler.runOnce())).toEqual(['confirmed']);
    expect(await ctx.repo.get(d.id)).toMatchObject({ status: 'in_progress', revisionsUsed: 1, deliveredAt: null });
    expect(ctx.escrow.count('request_revision')).toBe(1);
    expect(events(ctx, d.id).filter((e) => e === 'revision.requested')).toHaveLength(1);
  });
});

describe('revisions from the buyer\'s own wallet (drift)', () => {
  it('the reconciler catches up a revision requested directly on chain: in progress, the program\'s deadline, the count + 1, revision.requested', async () => {
    const ctx = setup({ revisions: 1 });
    const d = await ctx.delivered();
    await ctx.escrow.requestRevision(d.id); // her wallet, not the API
    await ctx.service.reconciler.runOnce();
    expect(await ctx.repo.get(d.id)).toMatchObject({ status: 'in_progress', revisionsUsed: 1, deliveredAt: null, deliveryDeadline: ctx.escrow.accounts.get(d.id)!.deliveryDeadline });
    expect(events(ctx, d.id)).toContain('revision.requested');
  });
});

describe('deadline extensions (issue 24 item 3)', () => {
  it('the seller proposes, the buyer accepts: the program\'s deadline moves with her consent; extension.proposed then extension.accepted', async () => {
    const ctx = setup();
    const f = await ctx.funded();
    const wanted = f.deliveryDeadline + 2 * DAY;
    const proposed = await ctx.service.proposeExtension(ctx.seller, f.id, wanted, 'the font licence is late');
    expect(ctx.escrow.sent.filter((s) => s.orderId === f.id).map((s) => s.ix)).toEqual([]); // off chain until she consents
    const dto = await ctx.service.presentOne(ctx.buyer, proposed);
    expect(dto.extension_proposal).toMatchObject({ proposed_by: 'seller', new_deadline: new Date(wanted * 1000).toISOString(), message: 'the font licence is late' });
    expect(Date.parse(dto.extension_proposal!.expires_at) - Date.parse(dto.extension_proposal!.proposed_at)).toBe(259_200_000); // ORDER_EXTENSION_PROPOSAL_TTL_SECONDS default
    expect(dto.allowed_actions).toEqual(expect.arrayContaining(['accept_extension', 'decline_extension']));
    expect((await ctx.service.presentOne(ctx.seller, proposed)).allowed_actions).not.toContain('accept_extension');
    const after = await ctx.service.acceptExtension(ctx.buyer, f.id, wanted);
    expect(after.deliveryDeadline).toBe(wanted);
    expect(after.extension).toBeNull();
    expect(ctx.escrow.accounts.get(f.id)!.deliveryDeadline).toBe(wanted);
    expect(events(ctx, f.id).slice(-2)).toEqual(['extension.proposed', 'extension.accepted']);
    // the buyer's refund right moved with it
    ctx.escrow.now = f.deliveryDeadline + 1;
    expect(await slug(ctx.service.refund(ctx.buyer, f.id))).toBe('forbidden');
  });

  it('an earlier (or equal) deadline is refused with 400; the buyer, the arbiter and strangers cannot propose', async () => {
    const ctx = setup();
    const f = await ctx.funded();
    expect(await slug(ctx.service.proposeExtension(ctx.seller, f.id, f.deliveryDeadline, null))).toBe('validation-error');
    expect(await slug(ctx.service.proposeExtension(ctx.seller, f.id, f.deliveryDeadline - DAY, null))).toBe('validation-error');
    expect(await slug(ctx.service.proposeExtension(ctx.buyer, f.id, f.deliveryDeadline + DAY, null))).toBe('forbidden');
    expect(await slug(ctx.service.proposeExtension(ctx.admin, f.id, f.deliveryDeadline + DAY, null))).toBe('forbidden');
    expect(await slug(ctx.service.proposeExtension(ctx.stranger, f.id, f.deliveryDeadline + DAY, null))).toBe('not-found');
    expect((await ctx.repo.get(f.id))!.extension).toBeNull();
  });

  it('the seller cannot accept her own proposal; the buyer must name the pending deadline (a replaced one is not accepted blind)', async () => {
    const ctx = setup();
    const f = await ctx.funded();
    await ctx.service.proposeExtension(ctx.seller, f.id, f.deliveryDeadline + DAY, null);
    expect(await slug(ctx.service.acceptExtension(ctx.seller, f.id, f.deliveryDeadline + DAY))).toBe('forbidden');
    await ctx.service.proposeExtension(ctx.seller, f.id, f.deliveryDeadline + 5 * DAY, null); // replaced meanwhile
    const err = await ctx.service.acceptExtension(ctx.buyer, f.id, f.deliveryDeadline + DAY).catch((e) => e);
    expect(err.slug).toBe('proposal-changed');
    expect(ctx.escrow.count('extend_deadline')).toBe(0);
    expect((await ctx.repo.get(f.id))!.deliveryDeadline).toBe(f.deliveryDeadline);
  });

  it('declined or expired: nothing moves; an expired one 409 proposal-expired, hidden, and extension.expired written once by the sweep', async () => {
    const ctx = setup();
    const f = await ctx.funded();
    await ctx.service.proposeExtension(ctx.seller, f.id, f.deliveryDeadline + DAY, null);
    expect((await ctx.service.declineExtension(ctx.buyer, f.id)).extension).toBeNull();
    expect(await slug(ctx.service.acceptExtension(ctx.buyer, f.id, f.deliveryDeadline + DAY))).toBe('no-pending-proposal');
    expect(await slug(ctx.service.declineExtension(ctx.buyer, f.id))).toBe('no-pending-proposal');

    await ctx.service.proposeExtension(ctx.seller, f.id, f.deliveryDeadline + DAY, null);
    ctx.advanceService(259_200); // the TTL, on the service clock
    expect(await slug(ctx.service.acceptExtension(ctx.buyer, f.id, f.deliveryDeadline + DAY))).toBe('proposal-expired');
    const dto = await ctx.service.presentOne(ctx.buyer, (await ctx.repo.get(f.id))!);
    expect(dto.extension_proposal).toBeNull();
    expect(dto.allowed_actions).not.toContain('accept_extension');
    expect((await ctx.crank.runOnce()).expired).toEqual([`${f.id}:extension.expired`]);
    expect((await ctx.crank.runOnce()).expired).toEqual([]);
    expect(events(ctx, f.id).filter((e) => e === 'extension.expired')).toHaveLength(1);
    expect(ctx.escrow.count('extend_deadline')).toBe(0);
  });

  it('a crash after extend_deadline landed: the reconciler moves the deadline from the intent, the proposal is consumed, nothing is sent twice', async () => {
    const ctx = setup();
    const f = await ctx.funded();
    const wanted = f.deliveryDeadline + DAY;
    await ctx.service.proposeExtension(ctx.seller, f.id, wanted, null);
    ctx.crash.afterSend = () => {
      throw new Error('simulated crash');
    };
    await expect(ctx.service.acceptExtension(ctx.buyer, f.id, wanted)).rejects.toThrow('simulated crash');
    ctx.crash.afterSend = undefined;
    expect((await ctx.repo.get(f.id))!.deliveryDeadline).toBe(f.deliveryDeadline);
    // the account's state did not change (Funded): only the signature tells it landed
    expect(Object.values(await ctx.service.reconciler.runOnce())).toEqual(['confirmed']);
    expect(await ctx.repo.get(f.id)).toMatchObject({ deliveryDeadline: wanted, extension: null });
    expect(ctx.escrow.count('extend_deadline')).toBe(1);
    expect(events(ctx, f.id)).toContain('extension.accepted');
  });

  it('delivering ends a pending extension request', async () => {
    const ctx = setup();
    const f = await ctx.funded();
    await ctx.service.proposeExtension(ctx.seller, f.id, f.deliveryDeadline + DAY, null);
    expect((await ctx.service.deliver(ctx.seller, f.id)).extension).toBeNull();
  });
});

describe('settlement by agreement (issue 24 item 4)', () => {
  it('the seller proposes 30 % back, the buyer accepts: the program pays exactly that split, the fee on the seller\'s share only; resolved, settled_by agreement', async () => {
    const ctx = setup();
    const d = await ctx.delivered();
    const proposed = await ctx.service.proposeSettlement(ctx.seller, d.id, 3000);
    expect(ctx.escrow.proposals.get(d.id)).toMatchObject({ buyerBps: 3000, by: 'seller', expiresAt: ctx.escrow.now + 259_200 });
    const dto = await ctx.service.presentOne(ctx.buyer, proposed);
    // 10 USDC, fee 250 bps on the seller's 7 USDC
    expect(dto.settlement_proposal).toMatchObject({
      proposed_by: 'seller',
      buyer_bps: 3000,
      preview: { buyer_base_units: '3000000', seller_base_units: '6825000', treasury_base_units: '175000' },
    });
    expect(dto.allowed_actions).toContain('accept_settlement');
    expect((await ctx.service.presentOne(ctx.seller, proposed)).allowed_actions).toEqual(expect.arrayContaining(['withdraw_settlement']));
    expect((await ctx.service.presentOne(ctx.seller, proposed)).allowed_actions).not.toContain('accept_settlement');
    const after = await ctx.service.acceptSettlement(ctx.buyer, d.id, 3000);
    expect(after).toMatchObject({ status: 'resolved', settledBy: 'agreement', buyerBps: 3000, settlement: null });
    expect(after.payout).toMatchObject({ buyer: 3_000_000n, seller: 6_825_000n, treasury: 175_000n });
    expect(ctx.escrow.balances.get(ctx.buyer.wallet!)).toBe(3_000_000n);
    expect(ctx.escrow.balances.get(ctx.seller.wallet!)).toBe(6_825_000n);
    expect(ctx.escrow.accounts.has(d.id)).toBe(false);
    expect(ctx.listings.rows.get(ctx.listing.id)!.status).toBe('sold'); // as a partial resolve
    expect(events(ctx, d.id).slice(-2)).toEqual(['settlement.proposed', 'settlement.accepted']);
    expect((await ctx.service.presentOne(ctx.buyer, after)).settled_by).toBe('agreement');
  });

  it('cancel (10000 bps) returns everything without a fee and puts the listing back on sale', async () => {
    const ctx = setup();
    const f = await ctx.funded();
    await ctx.service.proposeSettlement(ctx.buyer, f.id, 10_000);
    const after = await ctx.service.acceptSettlement(ctx.seller, f.id, 10_000);
    expect(after.payout).toMatchObject({ buyer: 10_000_000n, seller: 0n, treasury: 0n });
    expect(ctx.listings.rows.get(ctx.listing.id)!.status).toBe('available');
  });

  it('the proposer cannot accept her own proposal (403); the arbiter is no party (403); a stranger 404; nothing is paid', async () => {
    const ctx = setup();
    const f = await ctx.funded();
    await ctx.service.proposeSettlement(ctx.buyer, f.id, 8000);
    expect(await slug(ctx.service.acceptSettlement(ctx.buyer, f.id, 8000))).toBe('forbidden');
    expect(await slug(ctx.service.acceptSettlement(ctx.admin, f.id, 8000))).toBe('forbidden');
    expect(await slug(ctx.service.proposeSettlement(ctx.admin, f.id, 8000))).toBe('forbidden');
    expect(await slug(ctx.service.acceptSettlement(ctx.stranger, f.id, 8000))).toBe('not-found');
    expect(await slug(ctx.service.withdrawSettlement(ctx.seller, f.id))).toBe('forbidden');
    expect(ctx.escrow.count('accept_settlement')).toBe(0);
    expect((await ctx.repo.get(f.id))!.status).toBe('in_progress');
  });

  it('accepting names the split: a different buyer_bps (the proposal was replaced) is refused 409 proposal-changed, nothing sent', async () => {
    const ctx = setup();
    const f = await ctx.funded();
    await ctx.service.proposeSettlement(ctx.seller, f.id, 5000);
    await ctx.service.proposeSettlement(ctx.seller, f.id, 1000); // replaced by a worse one
    const err = await ctx.service.acceptSettlement(ctx.buyer, f.id, 5000).catch((e) => e);
    expect(err).toMatchObject({ slug: 'proposal-changed', extensions: { pending: { buyer_bps: 1000 } } });
    expect(ctx.escrow.count('accept_settlement')).toBe(0);
    // a counter-offer by the other party replaces it too, and the first proposer may then accept
    await ctx.service.proposeSettlement(ctx.buyer, f.id, 4000);
    expect((await ctx.service.acceptSettlement(ctx.seller, f.id, 4000)).status).toBe('resolved');
  });

  it('out-of-range bps: 400; no proposal: 409 no-pending-proposal; before funding: 409', async () => {
    const ctx = setup();
    const f = await ctx.funded();
    expect(await slug(ctx.service.proposeSettlement(ctx.buyer, f.id, 10_001))).toBe('validation-error');
    expect(await slug(ctx.service.proposeSettlement(ctx.buyer, f.id, 12.5))).toBe('validation-error');
    expect(await slug(ctx.service.acceptSettlement(ctx.seller, f.id, 0))).toBe('no-pending-proposal');
    expect(await slug(ctx.service.withdrawSettlement(ctx.seller, f.id))).toBe('no-pending-proposal');
    const { order } = await ctx.service.create(ctx.buyer, { listingId: ctx.listings.add({ id: randomUUID(), sellerId: ctx.seller.userId!, sellerWallet: ctx.seller.wallet! }).id });
    expect(await slug(ctx.service.proposeSettlement(ctx.buyer, order.id, 5000))).toBe('invalid-state-transition');
  });

  it('a dispute may be opened while a proposal is pending, and the proposal may still be accepted during it', async () => {
    const ctx = setup();
    const d = await ctx.delivered();
    await ctx.service.proposeSettlement(ctx.buyer, d.id, 6000);
    expect((await ctx.service.dispute(ctx.seller, d.id, 'the buyer asks too much')).status).toBe('disputed');
    const dto = await ctx.service.presentOne(ctx.seller, (await ctx.repo.get(d.id))!);
    expect(dto.settlement_proposal?.buyer_bps).toBe(6000);
    expect(dto.allowed_actions).toContain('accept_settlement');
    const after = await ctx.service.acceptSettlement(ctx.seller, d.id, 6000);
    expect(after).toMatchObject({ status: 'resolved', settledBy: 'agreement', buyerBps: 6000 });
  });

  it('withdrawn by the proposer: cleared on chain and off; the other party can no longer accept it', async () => {
    const ctx = setup();
    const f = await ctx.funded();
    await ctx.service.proposeSettlement(ctx.seller, f.id, 2000);
    const after = await ctx.service.withdrawSettlement(ctx.seller, f.id);
    expect(after.settlement).toBeNull();
    expect(ctx.escrow.proposals.has(f.id)).toBe(false);
    expect(await slug(ctx.service.acceptSettlement(ctx.buyer, f.id, 2000))).toBe('no-pending-proposal');
    expect(events(ctx, f.id).slice(-2)).toEqual(['settlement.proposed', 'settlement.withdrawn']);
  });

  it('expired (chain clock): 409 proposal-expired, hidden, settlement.expired written once by the sweep, the escrow untouched', async () => {
    const ctx = setup();
    const f = await ctx.funded();
    await ctx.service.proposeSettlement(ctx.seller, f.id, 2000);
    ctx.escrow.advance(259_200);
    expect(await slug(ctx.service.acceptSettlement(ctx.buyer, f.id, 2000))).toBe('proposal-expired');
    expect((await ctx.service.presentOne(ctx.buyer, (await ctx.repo.get(f.id))!)).settlement_proposal).toBeNull();
    expect((await ctx.crank.runOnce()).expired).toEqual([`${f.id}:settlement.expired`]);
    expect((await ctx.crank.runOnce()).expired).toEqual([]);
    expect(events(ctx, f.id).filter((e) => e === 'settlement.expired')).toHaveLength(1);
    expect(ctx.escrow.count('accept_settlement')).toBe(0);
    expect((await ctx.repo.get(f.id))!.status).toBe('in_progress');
  });

  it('a crash after accept_settlement landed: the reconciler resolves the order with the chain\'s payout, nothing is paid twice', async () => {
    const ctx = setup();
    const d = await ctx.delivered();
    await ctx.service.proposeSettlement(ctx.seller, d.id, 2500);
    ctx.crash.afterSend = () => {
      throw new Error('simulated crash');
    };
    await expect(ctx.service.acceptSettlement(ctx.buyer, d.id, 2500)).rejects.toThrow('simulated crash');
    ctx.crash.afterSend = undefined;
    expect((await ctx.repo.get(d.id))!.status).toBe('delivered');
    expect(Object.values(await ctx.service.reconciler.runOnce())).toEqual(['confirmed']);
    expect(await ctx.repo.get(d.id)).toMatchObject({ status: 'resolved', settledBy: 'agreement', buyerBps: 2500, payout: { buyer: 2_500_000n } });
    expect(ctx.listings.rows.get(ctx.listing.id)!.status).toBe('sold');
    expect(ctx.escrow.count('accept_settlement')).toBe(1);
  });

  it('a crash after propose_settlement landed: the reconciler records the proposal from the intent (a status-keeping instruction is judged by its signature)', async () => {
    const ctx = setup();
    const f = await ctx.funded();
    ctx.crash.afterSend = () => {
      throw new Error('simulated crash');
    };
    await expect(ctx.service.proposeSettlement(ctx.buyer, f.id, 7000)).rejects.toThrow('simulated crash');
    ctx.crash.afterSend = undefined;
    expect((await ctx.repo.get(f.id))!.settlement).toBeNull();
    expect(Object.values(await ctx.service.reconciler.runOnce())).toEqual(['confirmed']);
    expect((await ctx.repo.get(f.id))!.settlement).toMatchObject({ proposedBy: 'buyer', buyerBps: 7000 });
    expect(events(ctx, f.id)).toContain('settlement.proposed');
    expect((await ctx.service.acceptSettlement(ctx.seller, f.id, 7000)).status).toBe('resolved');
    expect(ctx.escrow.count('propose_settlement')).toBe(1);
  });
});
