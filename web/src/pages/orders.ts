/** My orders, as buyer and as seller: status, escrow state, what I can do next (opens the order). */
import type { Order } from '@bazaar/client-sdk';
import { client, ok } from '../api.js';
import { h, short, when, type Page } from '../dom.js';

function table(caption: string, orders: Order[], counterpart: (o: Order) => string): HTMLElement {
  if (!orders.length) return h('p', {}, `${caption}: none yet.`);
  return h(
    'table',
    {},
    h('caption', {}, caption),
    h(
      'thead',
      {},
      h('tr', {}, ...['Order', 'Amount', 'Status', 'Escrow', 'You can', 'With', 'Created'].map((t) => h('th', { scope: 'col' }, t))),
    ),
    h(
      'tbody',
      {},
      ...orders.map((o) =>
        h(
          'tr',
          { 'data-order': o.order_id },
          h('th', { scope: 'row' }, h('a', { href: `#/orders/${o.order_id}` }, o.order_id.slice(0, 8))),
          h('td', { class: 'num' }, `${o.amount} ${o.currency}`),
          h('td', {}, o.status),
          h('td', {}, o.escrow_state),
          h('td', {}, o.allowed_actions.join(', ') || '—'),
          h('td', { class: 'mono' }, short(counterpart(o))),
          h('td', {}, when(o.created_at)),
        ),
      ),
    ),
  );
}

export const ordersPage: Page = async () => {
  const [bought, sold] = await Promise.all(
    (['buyer', 'seller'] as const).map(async (role) => ok(await client.orders.listOrders({ query: { role, limit: 50 } }), 200).data),
  );
  return h(
    'section',
    {},
    h('h1', {}, 'My orders'),
    h('h2', {}, 'Bought'),
    table('Orders I bought', bought!, (o) => o.seller_wallet),
    h('h2', {}, 'Sold'),
    table('Orders of my listings', sold!, (o) => o.buyer_wallet),
  );
};
