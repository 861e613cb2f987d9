/**
 * Live order updates: the ONE place where the service's event stream plugs in.
 *
 * `watchOrder` follows the service's Server-Sent Events stream (`GET /api/v1/events/stream`, filtered to
 * this order, through the SDK's `followEvents`, which reconnects and resumes with Last-Event-ID) and
 * re-reads the order on each of its events (the payment watcher, the other party or the auto-release
 * crank moved it). The event carries the order as the service saw it; the page re-reads it so that
 * `allowed_actions` is computed for this viewer. A slow poll (FALLBACK_POLL_MS) stays as the fallback
 * for a proxy that buffers or cuts the stream.
 */
import type { Order } from '@bazaar/client-sdk';
import { followEvents } from '@bazaar/client-sdk/events';
import { API_ORIGIN, client, session } from './api.js';

/** Fallback poll interval, ms, for when the event stream is unavailable. */
export const FALLBACK_POLL_MS = 15_000;

const fingerprint = (o: Order) => `${o.status}|${o.escrow_state}|${o.allowed_actions.join(',')}|${o.transactions.length}`;

/**
 * Watch one order: `onChange(order)` on every change after `initial`. Returns the function that stops
 * watching (pages call it when they are left: it closes the stream). Failed reads are skipped (the next
 * event or poll retries); a stream refused for good (401/403) leaves the poll running.
 */
export function watchOrder(initial: Order, onChange: (order: Order) => void): () => void {
  let last = fingerprint(initial);
  const stop = new AbortController();
  const refresh = async () => {
    const res = await client.orders.getOrder({ params: { order_id: initial.order_id } }).catch(() => null);
    if (stop.signal.aborted || res?.status !== 200) return;
    const now = fingerprint(res.body);
    if (now !== last) {
      last = now;
      onChange(res.body);
    }
  };
  const timer = setInterval(() => void refresh(), FALLBACK_POLL_MS);
  void followEvents({
    baseUrl: API_ORIGIN,
    token: session()?.token,
    resourceType: 'order',
    resourceId: initial.order_id,
    signal: stop.signal,
    onEvent: () => refresh(),
  }).catch(() => undefined);
  return () => {
    stop.abort();
    clearInterval(timer);
  };
}
