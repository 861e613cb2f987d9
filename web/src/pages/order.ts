/**
 * One order: amounts, the escrow (status and on-chain state, PDA, vault), its transactions, and the
 * actions the caller may take now (`allowed_actions`): pay (wallet, or Solana Pay QR for a phone
 * wallet), deliver, confirm, dispute, refund, review. Updates live (live.ts).
 */
import qrcode from 'qrcode-generator';
import type { CreateOrderResponse, Order, OrderAction } from '@bazaar/client-sdk';
import { client, ok, session } from '../api.js';
import { busy, field, go, h, say, short, when, type Page } from '../dom.js';
import { watchOrder } from '../live.js';
import { payOrder } from '../wallet.js';
import { explorerUrl } from './listing.js';

/** Solana Pay links of orders created in this tab (createOrder returns it; no second request needed). */
const solanaPayLinks = new Map<string, string>();

/** Keep the payment link of a new order for its page. */
export function rememberPayment(order: CreateOrderResponse): void {
  if (order.payment) solanaPayLinks.set(order.order_id, order.payment.solana_pay_url);
}

const ACTION_LABELS: Record<OrderAction, string> = {
  pay: 'Pay with wallet',
  deliver: 'Mark delivered',
  confirm: 'Confirm delivery and release payment',
  dispute: 'Open a dispute',
  refund: 'Refund the buyer',
  resolve: 'Resolve dispute',
  review: 'Review the seller',
};

/** The Solana Pay QR code and link of an order awaiting payment (a phone wallet scans it). */
async function solanaPayBox(order: Order): Promise<HTMLElement> {
  let link = solanaPayLinks.get(order.order_id);
  if (!link) {
    link = ok(await client.orders.createOrderPayment({ params: { order_id: order.order_id } }), 200).solana_pay_url;
    solanaPayLinks.set(order.order_id, link);
  }
  const qr = qrcode(0, 'M');
  qr.addData(link);
  qr.make();
  return h(
    'figure',
    { class: 'solana-pay' },
    h('img', { src: qr.createDataURL(4, 8), alt: 'Solana Pay QR code of this payment', width: qr.getModuleCount() * 4 + 16 }),
    h('figcaption', {}, 'Or scan with a phone wallet (Solana Pay): ', h('a', { href: link, 'data-testid': 'solana-pay-link' }, 'open in wallet')),
  );
}

/** The forms and buttons of `order.allowed_actions`; `done(order)` gets the order after an action. */
function actionPanel(order: Order, done: (o: Order) => void): HTMLElement {
  const panel = h('div', { class: 'actions', role: 'group', 'aria-label': 'Actions' });
  const id = { order_id: order.order_id };
  const buyer = session()?.wallet === order.buyer_wallet;
  const refundLabel = `Refund ${order.amount} ${order.currency} to ${buyer ? 'me' : 'the buyer'}`;
  for (const action of order.allowed_actions) {
    if (action === 'resolve') continue; // the arbiter's (admin) action, not in this app
    if (action === 'dispute' || action === 'review') {
      panel.append(action === 'dispute' ? disputeForm(order, done) : reviewForm(order, done));
      continue;
    }
    const b = h('button', { type: 'button', class: action === 'refund' ? 'danger' : 'primary', 'data-action': action }, action === 'refund' ? refundLabel : ACTION_LABELS[action]);
    b.addEventListener(
      'click',
      busy(b, async () => {
        say(`${ACTION_LABELS[action]}: waiting for the chain…`);
        const next =
          action === 'pay'
            ? await payOrder(order.order_id)
            : action === 'deliver'
              ? ok(await client.orders.deliverOrder({ params: id }), 200)
              : action === 'confirm'
                ? ok(await client.orders.confirmOrder({ params: id }), 200)
                : ok(await client.orders.refundOrder({ params: id }), 200);
        say(`Done: the order is ${next.status.replace('_', ' ')}.`);
        done(next);
      }),
    );
    // an early release (before the seller marked it delivered) pays the seller at once and ends the
    // buyer's dispute and refund: one more step (a disclosure with the warning) before the button
    if (action === 'confirm' && order.status === 'in_progress') {
      b.textContent = 'Release payment now';
      panel.append(h('details', {}, h('summary', {}, 'Release the payment before delivery'), h('p', {}, 'The seller has not marked this order delivered. Releasing pays the seller now (the amount minus the fee); you can no longer dispute or get a refund.'), b));
      continue;
    }
    // a refund gives the whole escrow back: one more step (a disclosure) before the button
    if (action === 'refund') {
      panel.append(h('details', {}, h('summary', {}, buyer ? 'Get a refund' : ACTION_LABELS.refund), h('p', {}, 'The buyer gets the whole amount back; no fee is charged.'), b));
      continue;
    }
    panel.append(b);
  }
  if (!panel.children.length) panel.append(h('p', {}, 'Nothing to do on this order now.'));
  return panel;
}

function disputeForm(order: Order, done: (o: Order) => void): HTMLElement {
  const reason = h('textarea', { name: 'reason', required: true, minlength: 10, maxlength: 2000, rows: 3 });
  const submit = h('button', { type: 'submit', class: 'danger' }, 'Send the dispute');
  const form = h('form', { class: 'stack' }, field('Why do you dispute this order?', reason, '10 to 2000 characters; the arbiter reads it'), submit);
  const send = busy(submit, async () => {
    done(ok(await client.orders.disputeOrder({ params: { order_id: order.order_id }, body: { reason: reason.value } }), 200));
    say('Dispute opened: the escrow is frozen until the arbiter resolves it.');
  });
  form.addEventListener('submit', (e) => (e.preventDefault(), void send()));
  return h('details', {}, h('summary', {}, ACTION_LABELS.dispute), form);
}

function reviewForm(order: Order, done: (o: Order) => void): HTMLElement {
  const rating = h('select', { name: 'rating' }, ...[5, 4, 3, 2, 1].map((n) => h('option', { value: n }, `${n} star${n > 1 ? 's' : ''}`)));
  const text = h('textarea', { name: 'text', maxlength: 2000, rows: 3 });
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Publish review');
  const form = h('form', { class: 'stack' }, field('Rating', rating), field('Review', text, 'optional, up to 2000 characters'), submit);
  const send = busy(submit, async () => {
    ok(await client.reviews.createReview({ params: { order_id: order.order_id }, body: { rating: Number(rating.value), text: text.value } }), 201);
    say('Thank you: review published.');
    done(ok(await client.orders.getOrder({ params: { order_id: order.order_id } }), 200));
  });
  form.addEventListener('submit', (e) => (e.preventDefault(), void send()));
  return h('section', {}, h('h2', {}, ACTION_LABELS.review), form);
}

export const orderPage: Page = async ({ params, onLeave }) => {
  let order = ok(await client.orders.getOrder({ params: { order_id: params.id! } }), 200);
  const root = h('article', {});
  const me = session()?.wallet;

  const draw = async (o: Order) => {
    const role = o.buyer_wallet === me ? 'buyer' : o.seller_wallet === me ? 'seller' : 'admin';
    const listing = h('a', { href: `#/listings/${o.listing_id}` }, 'the listing');
    root.replaceChildren(
      h('h1', {}, `Order ${o.order_id.slice(0, 8)}`),
      h('p', {}, `You are the ${role} of this order for `, listing, '.'),
      h(
        'dl',
        {},
        h('dt', {}, 'Status'),
        h('dd', { 'data-testid': 'order-status' }, o.status),
        h('dt', {}, 'Escrow on chain'),
        h('dd', { 'data-testid': 'escrow-state' }, o.escrow_state, ' · ', h('a', { href: explorerUrl(o.escrow_account_address), target: '_blank', rel: 'noopener', class: 'mono' }, short(o.escrow_account_address))),
        h('dt', {}, 'Amount'),
        h('dd', {}, `${o.amount} ${o.currency} (fee ${o.fee_bps / 100} %, the seller receives ${+((Number(o.seller_receives_base_units) / Number(o.amount_base_units)) * o.amount).toFixed(9)} ${o.currency})`),
        h('dt', {}, 'Pay before'),
        h('dd', {}, when(o.payment_expires_at)),
        h('dt', {}, 'Delivery deadline'),
        h('dd', {}, when(o.delivery_deadline)),
        h('dt', {}, 'Auto-release'),
        h('dd', {}, o.auto_release_at ? when(o.auto_release_at) : 'after delivery + review window'),
        o.dispute_reason ? h('dt', {}, 'Dispute') : null,
        o.dispute_reason ? h('dd', {}, o.dispute_reason) : null,
      ),
      actionPanel(o, (next) => {
        order = next;
        void draw(next);
      }),
      o.allowed_actions.includes('pay') ? await solanaPayBox(o).catch(() => h('p', {}, 'No Solana Pay link right now.')) : '',
      h('h2', {}, 'Transactions'),
      o.transactions.length
        ? h('ul', {}, ...o.transactions.map((t) => h('li', { class: 'mono' }, `${t.action} · ${t.status} · ${short(t.signature)}`)))
        : h('p', {}, 'None yet.'),
    );
  };
  await draw(order);
  onLeave(
    watchOrder(order, (next) => {
      order = next;
      say(`The order is now ${next.status.replace('_', ' ')}.`);
      void draw(next);
    }),
  );
  return root;
};
