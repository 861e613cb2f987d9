/**
 * Use case "read and present": GET /orders, GET /orders/{id}, the Solana Pay GET, and the contract's
 * `Order` of a record for its caller (transactions + `allowed_actions`). Reads only: no step writes.
 */
import type { Order } from '@bazaar/contract';
import { cursorKey, decodeCursor, newestPage } from '../../../lib/cursor.js';
import { type OrderStatus, allowedActions, needsChainClock } from '../order-state.js';
import { nextStepOf, presentViews } from '../order-view.js';
import { toOrderDto } from '../orders.dto.js';
import { orderErrors } from '../orders.errors.js';
import type { OrderRecord } from '../orders.types.js';
import { type OrdersContext, type PrincipalLike, clocks, roleOf } from './context.js';

export interface ListOrdersQuery {
  role?: 'buyer' | 'seller';
  status?: OrderStatus;
  /** 1..100, default 20 */
  limit?: number;
  cursor?: string | null;
}

export function readAndPresent(c: OrdersContext) {
  /** Buyer, seller or admin; anyone else gets 404 (existence is not disclosed). */
  async function get(p: PrincipalLike, orderId: string): Promise<OrderRecord> {
    const order = await c.repo.get(orderId);
    if (!order || !roleOf(order, p)) throw orderErrors.notFound(orderId);
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
    const roles = orders.map((o) => roleOf(o, p));
    const needChain = orders.some((o, i) => needsChainClock(o.status, roles[i]!));
    const at = needChain ? await clocks(c, true).catch(() => clocks(c, false)) : await clocks(c, false);
    // a page's listings, parties, reviews and chain transactions in a bounded number of statements (order-view.ts)
    const views = await presentViews(orders, c.repo, c.hasReview);
    return orders.map((o, i) => {
      const view = views.get(o.id)!;
      const next = nextStepOf(o, at, c.settings.paymentGraceSeconds);
      return toOrderDto(o, view, allowedActions(o, roles[i]!, at, view.reviewed), next, at);
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
