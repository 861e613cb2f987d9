/** Use case "list an order's tips" (GET /orders/{order_id}/tips): the parties and admins; newest first, keyset pages. */
import { cursorKey, decodeCursor, encodeCursor, type CursorSpec } from '../../../lib/cursor.js';
import type { TipRecord } from '../tips.types.js';
import { type TipsCaller, type TipsContext, visibleOrder } from './context.js';

export function listTips(c: TipsContext) {
  return {
    async list(p: TipsCaller, orderId: string, page: { limit: number; cursor?: string }): Promise<{ items: TipRecord[]; nextCursor: string | null }> {
      const order = await visibleOrder(c, p, orderId);
      const spec: CursorSpec = { sort: 'newest', filters: { order: order.id }, keys: [cursorKey.timestamp] };
      const after = page.cursor ? decodeCursor(page.cursor, spec) : undefined;
      const rows = await c.repo.listForOrder(order.id, page.limit + 1, after ? { createdAt: new Date(after.keys[0] as string), id: after.id } : undefined);
      const items = rows.slice(0, page.limit);
      const last = items[items.length - 1];
      return { items, nextCursor: rows.length > page.limit && last ? encodeCursor(spec, [last.createdAt.toISOString()], last.id) : null };
    },
  };
}
