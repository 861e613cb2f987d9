/**
 * Whether an order's buyer may tip its seller now: the one rule, written to grow with the order's
 * escrow units (issue 24: milestones).
 *
 * A tip follows money that reached the seller: eligible when at least one escrow unit of the order
 * (a milestone; an order without milestones is one) settled with a payout to the seller:
 *  - `completed` (released by the buyer or auto-released: the seller got amount - fee);
 *  - `resolved` with a seller share: the recorded payout to the seller is positive, or, when the payout
 *    was not read back, the buyer's share is below 10000 basis points (settlement by agreement and the
 *    arbiter's ruling both end `resolved`).
 * Refunded, expired and open units pay the seller nothing. An order paid from the custodial balance is
 * refused (`custodial`): see contract/src/tips.contract.ts.
 */
import type { TipMilestone, TipOrder } from './tips.types.js';

export type TipRefusal = 'not_paid_out' | 'custodial';

/** Whether this one escrow unit paid its seller (see the module comment). */
export function paidTheSeller(m: TipMilestone): boolean {
  if (m.status === 'completed') return true;
  if (m.status === 'resolved') return m.sellerPayout !== null ? m.sellerPayout > 0n : (m.buyerBps ?? 10_000) < 10_000;
  return false;
}

/** null when the buyer may tip `order`, else why not. */
export function tipRefusal(order: TipOrder): TipRefusal | null {
  if (order.paymentSource === 'custodial') return 'custodial';
  return order.milestones.some(paidTheSeller) ? null : 'not_paid_out';
}
