/**
 * What every tips use case is given: its ports (repository, chain, the orders it tips), settings, clock,
 * id source and log (docs/design.md "Use cases": a use case imports this, the module's domain files,
 * server/src/lib, server/src/chain types and @bazaar/contract only).
 */
import type { TipsChainPort } from '../tips.chain.js';
import type { TipsRepo } from '../tips.repo.js';
import type { Log, TipOrder, TipOrdersPort } from '../tips.types.js';
import { tipErrors } from '../tips.errors.js';

/** TIP_* settings (server/src/config.ts ENV_VARS). */
export interface TipsSettings {
  /** a tip is at most this percent of the order's amount (TIP_MAX_PERCENT_OF_ORDER, default 100) */
  maxPercentOfOrder: number;
  /** background check of pending tips, ms (TIP_WATCHER_INTERVAL_MS, default 5000; 0 = off) */
  watcherIntervalMs: number;
}

export const TIPS_DEFAULTS: TipsSettings = { maxPercentOfOrder: 100, watcherIntervalMs: 5_000 };

export interface TipsContext {
  repo: TipsRepo;
  chain: TipsChainPort;
  orders: TipOrdersPort;
  settings: TipsSettings;
  now: () => Date;
  newId: () => string;
  log?: Log;
}

/** The caller as the tips rules see it. */
export interface TipsCaller {
  userId: string | null;
  isAdmin: boolean;
}

/** The caller's role on `order`: buyer, seller, admin, or null (a stranger: 404, existence not disclosed). */
export function roleOn(order: Pick<TipOrder, 'buyerId' | 'sellerId'>, p: TipsCaller): 'buyer' | 'seller' | 'admin' | null {
  if (p.userId && p.userId === order.buyerId) return 'buyer';
  if (p.userId && p.userId === order.sellerId) return 'seller';
  if (p.isAdmin) return 'admin';
  return null;
}

/** The order, when the caller is a party of it (or an admin); 404 otherwise. */
export async function visibleOrder(c: TipsContext, p: TipsCaller, orderId: string): Promise<TipOrder> {
  const order = await c.orders.get(orderId);
  if (!order || !roleOn(order, p)) throw tipErrors.notFound(`Order ${orderId}`);
  return order;
}
