/** A listing: details, its Token-2022 NFT mint (explorer + metadata JSON), Buy or Edit. */
import { newIdempotencyKey } from '@bazaar/client-sdk';
import { API_ORIGIN, client, ok, session } from '../api.js';
import { busy, go, h, say, when, type Page } from '../dom.js';
import { rememberPayment } from './order.js';

/**
 * Solana Explorer link for an address on the cluster the app talks to: VITE_SOLANA_RPC_URL (custom
 * cluster, e.g. the localnet of `npm start`, default http://127.0.0.1:8899) or VITE_SOLANA_CLUSTER
 * (devnet, mainnet-beta).
 */
export function explorerUrl(address: string): string {
  const cluster = import.meta.env.VITE_SOLANA_CLUSTER;
  if (cluster) return `https://explorer.solana.com/address/${address}?cluster=${cluster}`;
  const rpc = import.meta.env.VITE_SOLANA_RPC_URL ?? 'http://127.0.0.1:8899';
  return `https://explorer.solana.com/address/${address}?cluster=custom&customUrl=${encodeURIComponent(rpc)}`;
}

export const listingPage: Page = async ({ params }) => {
  const l = ok(await client.listings.getListing({ params: { listing_id: params.id! } }), 200);
  const mine = session()?.wallet === l.seller_wallet;
  const actions = h('p', { class: 'actions' });
  if (mine) actions.append(h('a', { class: 'button', href: `#/listings/${l.listing_id}/edit` }, 'Edit listing'));
  else if (l.status === 'available') {
    const buy = h('button', { type: 'button', class: 'primary' }, `Buy for ${l.price} ${l.currency}`);
    buy.addEventListener(
      'click',
      busy(buy, async () => {
        // one key per click: a retried request returns the same order instead of a second one
        const order = ok(
          await client.orders.createOrder({ headers: { 'idempotency-key': newIdempotencyKey() }, body: { listing_id: l.listing_id } }),
          201,
        );
        rememberPayment(order);
        say('Order created: pay it into escrow.');
        go(`#/orders/${order.order_id}`);
      }),
    );
    actions.append(buy);
  } else if (l.held_until) {
    // an unpaid order holds it: it comes back unless that buyer pays in time
    actions.append(h('span', {}, `This listing is reserved for another buyer's checkout until ${when(l.held_until)}.`));
  } else actions.append(h('span', {}, `This listing is ${l.status}.`));

  const metadataUrl = `${API_ORIGIN}/api/v1/listings/${l.listing_id}/token-metadata.json`;
  return h(
    'article',
    {},
    h('h1', {}, l.title),
    h('p', { class: 'price' }, `${l.price} ${l.currency}`),
    h('p', { class: 'description' }, l.description),
    h(
      'dl',
      {},
      h('dt', {}, 'Category'),
      h('dd', {}, l.category),
      h('dt', {}, 'Delivery'),
      h('dd', {}, `${l.duration} day(s)`),
      h('dt', {}, 'Status'),
      h('dd', { 'data-testid': 'listing-status' }, l.status),
      h('dt', {}, 'Seller'),
      h('dd', { class: 'mono' }, l.seller_wallet),
      h('dt', {}, 'Token mint'),
      h(
        'dd',
        { class: 'mono' },
        h('a', { href: explorerUrl(l.token_mint_address), target: '_blank', rel: 'noopener', 'data-testid': 'mint-link' }, l.token_mint_address),
        ' (',
        h('a', { href: metadataUrl, target: '_blank', rel: 'noopener' }, 'metadata'),
        ')',
      ),
      h('dt', {}, 'Listed'),
      h('dd', {}, when(l.created_at)),
    ),
    actions,
  );
};
