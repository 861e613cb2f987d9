/**
 * Use case "read and present": GET /orders, GET /orders/{id}, the Solana Pay GET, and the contract's
 * `Order` of a record for its caller (transactions + `allowed_actions`). Reads only: no step writes.
 */
import type { Order, OrderAction, OrderLevelStatus } from '@bazaar/contract';
import { cursorKey, decodeCursor, newestPage } from '../../../lib/cursor.js';
import { type OrderStatus, allowedActions, needsChainClock } from '../order-state.js';
import { nextStepOf, presentViews } from '../order-view.js';
import { toOrderDto, type MilestonePresentation } from '../orders.dto.js';
import { endRefusal, orderReviewable } from '../milestones.js';
import { orderErrors } from '../orders.errors.js';
import type { OrderRecord } from '../orders.types.js';
import { type OrdersContext, type PrincipalLike, clocks, roleOf } from './context.js';

export interface ListOrdersQuery {
  role?: 'buyer' | 'seller';
  /** the order-level status (a multi-milestone order's derived one) */
  status?: OrderLevelStatus;
  /** 1..100, default 20 */
  limit?: number;
  cursor?: string | null;
}

export function readAndPresent(c: OrdersContext) {
  /**
   * Buyer, seller or admin; anyone else gets 404 (existence is not disclosed). The order's first row (a
   * later milestone's id is an escrow id, not an order id: 404).
   */
  async function get(p: PrincipalLike, orderId: string): Promise<OrderRecord> {
    const order = await c.repo.get(orderId);
    if (!order || order.orderId !== order.id || !roleOf(order, p)) throw orderErrors.notFound(orderId);
    return order;
  }

  /** The caller's orders, newest first, cursor pagination (403 without a user credential). */
  async function list(p: PrincipalLike, q: ListOrdersQuery): Promise<{ data: OrderRecord[]; nextCursor: string | null }> {
    if (!p.userId) throw orderErrors.forbidden('Listing orders needs a user credential.');
    const limit = Math.min(Math.max(q.limit ?? 20, 1), 100);
    const spec = { sort: 'created_desc', filters: { role: q.role, status: q.status }, keys: [cursorKey.timestamp] };
    let after: { createdAt: Date; id: string } | undefined;
    if (q.cursor) {
      const cur = decodeCursor(q.cursor, spec);
      after = { createdAt: new Date(String(cur.keys[0])), id: cur.id };
    }
    const rows = await c.repo.list({ userId: p.userId, role: q.role, status: q.status, limit: limit + 1, after });
    const { items: data, nextCursor } = newestPage(rows, limit, spec);
    return { data, nextCursor };
  }

  /**
   * Orders as the contract's `Order` for caller `p`: with their chain transactions and the caller's
   * `allowed_actions`, the lifecycle table evaluated on the same clocks the rules use (the chain clock
   * is read once for the whole page; when the RPC cannot answer, the service clock stands in for it
   * and an action it lists may still be refused when taken).
   */
  async function present(p: PrincipalLike, orders: OrderRecord[]): Promise<Order[]> {
    // orders with several milestones: all their rows, in one statement for the page (none without them)
    const multiIds = [...new Set(orders.filter((o) => o.milestoneCount > 1).map((o) => o.orderId))];
    const rowsOf = multiIds.length ? await c.repo.milestonesOf(multiIds) : new Map<string, OrderRecord[]>();
    const firsts = orders.map((o) => (o.milestoneCount > 1 ? (rowsOf.get(o.orderId)?.[0] ?? o) : o));
    const allRows = [...firsts, ...[...rowsOf.values()].flat().filter((r) => r.milestoneIndex > 1)];
    const roles = firsts.map((o) => roleOf(o, p));
    const needChain = allRows.some((o) => needsChainClock(o.status, roleOf(o, p)));
    const at = needChain ? await clocks(c, true).catch(() => clocks(c, false)) : await clocks(c, false);
    // a page's listings, parties, reviews and chain transactions in a bounded number of statements (order-view.ts)
    const views = await presentViews(allRows, c.repo, c.hasReview);
    return firsts.map((o, i) => {
      const view = views.get(o.id)!;
      const role = roles[i]!;
      const rows = rowsOf.get(o.orderId);
      if (!rows || rows.length < 2) return toOrderDto(o, view, allowedActions(o, role, at, view.reviewed), nextStepOf(o, at, c.settings.paymentGraceSeconds), at);
      const presentations = new Map<string, MilestonePresentation>(
        rows.map((r) => [r.id, { allowed: allowedActions(r, role, at, true), next: nextStepOf(r, at, c.settings.paymentGraceSeconds) }]),
      );
      const orderActions: OrderAction[] = [];
      if (role === 'buyer' && endRefusal(rows) === null) orderActions.push('end');
      if (role === 'buyer' && orderReviewable(rows) && !view.reviewed) orderActions.push('review');
      return toOrderDto(o, view, [], presentations.get(o.id)!.next, at, { rows, views, presentations, orderActions });
    });
  }

  /** Solana Pay GET: public label and icon (404 for unknown orders). */
  async function solanaPayLabel(orderId: string): Promise<{ label: string; icon: string }> {
    const order = await c.repo.get(orderId);
    if (!order) throw orderErrors.notFound(orderId);
    return { label: c.settings.solanaPayLabel, icon: c.settings.solanaPayIcon };
  }

  return { get, list, present, solanaPayLabel };
}

export type ReadAndPresent = ReturnType<typeof readAndPresent>;
