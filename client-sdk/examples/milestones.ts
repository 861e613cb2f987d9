import { newIdempotencyKey, type BazaarClient } from '@bazaar/client-sdk';

// Clients logged in as the buyer and as the seller (loginWithWallet, see the quickstart).
declare const buyer: BazaarClient;
declare const seller: BazaarClient;
// Signs a base64 transaction with the buyer's wallet and returns it base64 (e.g. a wallet adapter).
declare function signWithBuyerWallet(transactionBase64: string): Promise<string>;
const orderId = '0b7f5c3e-2a8d-4f7e-9c1a-5d3e2f1a0b9c'; // an order of a package with two milestones

// 1. Fund the next milestone: one transaction (one fund instruction per milestone named), one signature.
const payment = await buyer.orders.fundOrderMilestones({
  params: { order_id: orderId },
  headers: { 'idempotency-key': newIdempotencyKey() },
  body: { milestones: [2] }, // the next unfunded ones, in order: [2] or [2, 3]
});
if (payment.status !== 200) throw new Error(`fund: ${payment.body.type}`);
const funded = await buyer.orders.submitOrderTransaction({
  params: { order_id: orderId },
  body: { signed_transaction: await signWithBuyerWallet(payment.body.transaction) },
});
if (funded.status === 200) console.log(`milestone 2: ${funded.body.milestones[1]!.status}`); // in_progress

// 2. Once the seller delivered it, confirm that one milestone: its escrow pays the seller its amount - fee.
const confirmed = await buyer.orders.confirmMilestone({ params: { order_id: orderId, index: 2 } });
if (confirmed.status === 200) console.log(`order ${confirmed.body.status}, current milestone ${confirmed.body.current_milestone}`);

// 3. Or settle milestone 2 by agreement: one party proposes the buyer's share (basis points, 10000 =
//    cancel), the other accepts the same split; the escrow program pays exactly it, no arbiter. The
//    *Milestone routes take any funded milestone (also one funded ahead of the current one); the order
//    routes (proposeSettlement, acceptSettlement, ...) act on current_milestone.
const proposed = await buyer.orders.proposeMilestoneSettlement({
  params: { order_id: orderId, index: 2 },
  headers: { 'idempotency-key': newIdempotencyKey() },
  body: { buyer_bps: 2000 }, // 20 % back to the buyer
});
if (proposed.status === 200) console.log('the split, in base units:', proposed.body.milestones[1]!.settlement_proposal?.preview);
const settled = await seller.orders.acceptMilestoneSettlement({
  params: { order_id: orderId, index: 2 },
  headers: { 'idempotency-key': newIdempotencyKey() },
  body: { buyer_bps: 2000 }, // must name the pending split (409 proposal-changed otherwise)
});
if (settled.status === 200) console.log(`milestone 2 ${settled.body.milestones[1]!.status}, payout`, settled.body.milestones[1]!.payout);
