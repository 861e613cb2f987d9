/**
 * Milestones (issue 24), the order-level rules over an order's rows. A row of `orders` is one milestone's
 * escrow unit and takes the contract's lifecycle table on its own (order-state.ts); this file derives
 * what the ORDER is from its rows (pure functions, no storage):
 *
 *  - `orderStatusOf`: one milestone -> the row's status (today's orders, unchanged). Several ->
 *      ended            the buyer ended it (ended_at);
 *      awaiting_payment milestone 1 awaits payment; expired: milestone 1 expired unpaid;
 *      in_progress      a milestone is open (awaiting payment, in progress, delivered, disputed), or more may
 *                       be funded after a milestone that paid the seller;
 *      completed        every milestone settled and one paid the seller;
 *      refunded         no milestone open, none paid the seller (e.g. milestone 1 refunded): decision, the
 *                       scheduled rest cannot be funded any more (the seller refunding the first milestone
 *                       cancels the order; a later refund after a paid milestone leaves it in_progress).
 *  - `currentMilestone`: the first row not settled (scheduled included), null once the order is closed.
 *  - `listingEventOfOrder`: the listing follows the ORDER (design note 2): reserved when milestone 1 is
 *    funded, sold when the order completes or ends with a seller payout, available again when it is
 *    refunded, expired, or ended with nothing paid to the seller.
 */
import type { ListingOrderEvent, OrderLevelStatus } from '@bazaar/contract';
import { TERMINAL_ORDER_LEVEL_STATUSES } from '@bazaar/contract';
import type { OrderStatus } from './order-state.js';
import type { OrderRecord } from './orders.types.js';

/** The row fields the order-level rules read. */
export type MilestoneRow = Pick<OrderRecord, 'milestoneIndex' | 'milestoneCount' | 'status' | 'payout' | 'buyerBps' | 'endedAt' | 'fundedAt'>;

const SETTLED: ReadonlySet<OrderStatus> = new Set(['completed', 'resolved', 'refunded', 'expired']);
/** Row statuses of a milestone whose escrow is open or being paid (an order cannot end meanwhile). */
export const OPEN_MILESTONE_STATUSES: readonly OrderStatus[] = ['awaiting_payment', 'in_progress', 'delivered', 'disputed'];
const OPEN: ReadonlySet<OrderStatus> = new Set(OPEN_MILESTONE_STATUSES);

/** The milestone has settled (its escrow closed, or milestone 1 expired unpaid). */
export function isSettled(status: OrderStatus): boolean {
  return SETTLED.has(status);
}

/** The settled milestone paid the seller something (release, claim, a split that is not a full refund). */
export function paidSeller(r: Pick<MilestoneRow, 'status' | 'payout' | 'buyerBps'>): boolean {
  if (r.payout) return r.payout.seller > 0n;
  return r.status === 'completed' || (r.status === 'resolved' && r.buyerBps !== 10_000);
}

/** The order's status from its rows (sorted by index or not). See the file comment. */
export function orderStatusOf(rows: readonly MilestoneRow[]): OrderLevelStatus {
  const sorted = [...rows].sort((a, b) => a.milestoneIndex - b.milestoneIndex);
  const first = sorted[0]!;
  if (first.milestoneCount === 1 && sorted.length === 1) return first.status;
  if (sorted.some((r) => r.endedAt)) return 'ended';
  if (first.status === 'awaiting_payment' || first.status === 'expired') return first.status;
  if (sorted.some((r) => OPEN.has(r.status))) return 'in_progress';
  const paid = sorted.some((r) => isSettled(r.status) && paidSeller(r));
  if (sorted.some((r) => r.status === 'scheduled')) return paid ? 'in_progress' : 'refunded';
  return paid ? 'completed' : 'refunded';
}

/** Whether an order-level status is closed (nothing more happens to the order). */
export function orderClosed(status: OrderLevelStatus): boolean {
  return (TERMINAL_ORDER_LEVEL_STATUSES as readonly string[]).includes(status);
}

/** Index of the first milestone that is not settled; null when the order is closed. */
export function currentMilestone(rows: readonly MilestoneRow[]): number | null {
  if (orderClosed(orderStatusOf(rows))) return null;
  const sorted = [...rows].sort((a, b) => a.milestoneIndex - b.milestoneIndex);
  return sorted.find((r) => !isSettled(r.status))?.milestoneIndex ?? null;
}

/**
 * The listing transition when a multi-milestone order's status goes `before` -> `after` (null: none).
 * `rows`: the order's rows after the change (a seller payout decides sold vs available for `ended`).
 */
export function listingEventOfOrder(before: OrderLevelStatus, after: OrderLevelStatus, rows: readonly MilestoneRow[]): ListingOrderEvent | null {
  if (before === after) return null;
  if (before === 'awaiting_payment' && after === 'in_progress') return 'order_funded';
  const everFunded = rows.some((r) => r.fundedAt);
  switch (after) {
    case 'completed':
      return 'order_completed';
    case 'ended':
      return rows.some((r) => isSettled(r.status) && paidSeller(r)) ? 'order_completed' : everFunded ? 'order_refunded' : null;
    case 'refunded':
      return everFunded ? 'order_refunded' : null;
    default:
      return null;
  }
}

/** The order.* event of an order-level status change of a multi-milestone order (null: none). */
export function orderLevelEventOf(before: OrderLevelStatus, after: OrderLevelStatus): 'order.funded' | 'order.completed' | 'order.refunded' | 'order.expired' | 'order.ended' | null {
  if (before === after) return null;
  if (before === 'awaiting_payment' && after === 'in_progress') return 'order.funded';
  switch (after) {
    case 'completed':
      return 'order.completed';
    case 'refunded':
      return 'order.refunded';
    case 'expired':
      return 'order.expired';
    case 'ended':
      return 'order.ended';
    default:
      return null;
  }
}

/** The buyer may review the order: completed / resolved, or ended after a milestone paid the seller. */
export function orderReviewable(rows: readonly MilestoneRow[]): boolean {
  const s = orderStatusOf(rows);
  if (s === 'completed' || s === 'resolved') return true;
  return s === 'ended' && rows.some((r) => isSettled(r.status) && paidSeller(r));
}

/**
 * Why the buyer may not end the order now (null: she may): a one-milestone order or a closed one ->
 * `invalid` (409 invalid-state-transition); a milestone open (awaiting payment, in progress, delivered,
 * disputed) -> `open` with their indexes (409 milestone-open); nothing settled yet -> `invalid`.
 */
export function endRefusal(rows: readonly MilestoneRow[]): { invalid: string } | { open: number[] } | null {
  if (rows.length < 2) return { invalid: 'an order with one milestone ends when it settles' };
  const status = orderStatusOf(rows);
  if (orderClosed(status)) return { invalid: `the order is ${status}` };
  const open = rows.filter((r) => OPEN.has(r.status)).map((r) => r.milestoneIndex).sort((a, b) => a - b);
  if (open.length) return { open };
  if (!rows.some((r) => isSettled(r.status))) return { invalid: 'no milestone has settled yet' };
  return null;
}
