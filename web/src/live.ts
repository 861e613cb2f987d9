/**
 * Live updates: the ONE place where the service's event stream plugs in (`GET /api/v1/events/stream`,
 * Server-Sent Events, through the SDK's `followEvents`, which reconnects and resumes with Last-Event-ID).
 * Events do not carry what the caller may do (`allowed_actions` is computed per viewer), so each event
 * invalidates the cached reads it touches and the page re-reads them:
 *
 * - `followOrder(id)`: one order's events (the payment watcher, the other party, the auto-release crank)
 *   -> `['order', id]`; its messages -> `['messages', id]`. The order query also polls slowly
 *   (queries.ts) for a proxy that cuts the stream.
 * - `followMine(wallet, notify)`: every event of the signed-in user, for the news a seller must not miss:
 *   a new sale, a payment, a new message from the other party (`notify` shows it) -> `['orders']`.
 */
import type { Event, Message, Order } from '@bazaar/client-sdk';
import { followEvents } from '@bazaar/client-sdk/events';
import { API_ORIGIN, session } from './api.js';
import { queryClient } from './queries.js';

/** Follow one order; returns the function that stops following (closes the stream). */
export function followOrder(orderId: string): () => void {
  const stop = new AbortController();
  void followEvents({
    baseUrl: API_ORIGIN,
    token: session()?.token,
    resourceType: 'order',
    resourceId: orderId,
    signal: stop.signal,
    onEvent: () => {
      void queryClient.invalidateQueries({ queryKey: ['order', orderId] });
      void queryClient.invalidateQueries({ queryKey: ['orders'] });
    },
  }).catch(() => undefined);
  return () => stop.abort();
}

/** News for the signed-in user: what `notify` receives. */
export type News =
  | { kind: 'sale'; order: Order }
  | { kind: 'paid'; order: Order }
  | { kind: 'message'; message: Message };

/** Follow every event of `wallet` (a sale, a payment, a message); returns the stop function. */
export function followMine(wallet: string, notify: (n: News) => void): () => void {
  const stop = new AbortController();
  void followEvents({
    baseUrl: API_ORIGIN,
    token: session()?.token,
    types: ['order.created', 'order.funded', 'message.created', 'order.delivered', 'order.completed', 'order.disputed', 'order.refunded'],
    signal: stop.signal,
    onEvent: (e: Event) => {
      if (e.type === 'message.created') {
        const m = e.data as Message;
        if (m.order_id) void queryClient.invalidateQueries({ queryKey: ['messages', m.order_id] });
        if (m.sender_wallet !== wallet) notify({ kind: 'message', message: m });
        return;
      }
      const o = e.data as Order;
      void queryClient.invalidateQueries({ queryKey: ['orders'] });
      void queryClient.invalidateQueries({ queryKey: ['order', o.order_id] });
      if (o.seller_wallet !== wallet) return;
      if (e.type === 'order.created') notify({ kind: 'sale', order: o });
      else if (e.type === 'order.funded') notify({ kind: 'paid', order: o });
    },
  }).catch(() => undefined);
  return () => stop.abort();
}
