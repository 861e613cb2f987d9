/**
 * Live order updates: the ONE place where the service's event stream plugs in.
 *
 * Today this polls `GET /orders/{id}` every POLL_MS and calls `onChange` when the order's status,
 * escrow state or allowed actions changed (the payment watcher, the other party or the auto-release
 * crank moved it). When the service publishes order events (issue 11), subscribe to them here and
 * keep polling only as the fallback; no page needs to change.
 */
import type { Order } from '@bazaar/client-sdk';
import { client } from './api.js';

/** Poll interval, ms: modest, the service's payment watcher itself runs every 2 s. */
export const POLL_MS = 3000;

const fingerprint = (o: Order) => `${o.status}|${o.escrow_state}|${o.allowed_actions.join(',')}|${o.transactions.length}`;

/**
 * Watch one order: `onChange(order)` on every change after `initial`. Returns the function that stops
 * watching (pages call it when they are left). Errors while polling are skipped (the next poll retries).
 */
export function watchOrder(initial: Order, onChange: (order: Order) => void): () => void {
  let last = fingerprint(initial);
  let stopped = false;
  const timer = setInterval(async () => {
    const res = await client.orders.getOrder({ params: { order_id: initial.order_id } }).catch(() => null);
    if (stopped || res?.status !== 200) return;
    const now = fingerprint(res.body);
    if (now !== last) {
      last = now;
      onChange(res.body);
    }
  }, POLL_MS);
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
