/**
 * One order, for its buyer or seller: what was bought and from whom (title, the other party with name,
 * rating and reviews), its state in plain words and what happens next (who acts, by when, a live
 * countdown), exactly the actions the service allows the caller (`allowed_actions`) as buttons, the
 * order's conversation (delivery notes and links included), a published review, and the details
 * (amounts, escrow on chain, deadlines, transactions). Updates live (live.ts).
 */
import { useQuery } from '@tanstack/react-query';
import qrcode from 'qrcode-generator';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Suspense, lazy } from 'preact/compat';
import type { CreateOrderResponse, Message, OrderAction } from '@bazaar/client-sdk';
import { client, ok, session } from '../api.js';
import { plain } from '../errors.js';
import { formatAmount, formatTime } from '../format.js';
import { followOrder } from '../live.js';
import { explorerUrl, queryClient, useDecimals, useNetwork, useOrder, type RichOrder } from '../queries.js';
import { ACTION_LABELS, AGREEMENT_ACTIONS, STATUS_WORDS, nextStep, roleOf } from '../status.js';
import { ActionButton, Address, Countdown, ErrorBox, Field, Linkified, Loading, PageHeading, Party, Rating, Time, described, focusOn, say } from '../ui.js';
import { payOrder } from '../wallet.js';
import { SignInPrompt, isSignInNeeded } from './sign-in.js';

/** Milestones, revisions, extensions, settlements and tips (issue 24): a chunk of its own, loaded with the first order page. */
const OrderDeals = lazy(() => import('./order-deals.js'));

/** Solana Pay links of orders created in this tab (createOrder returns it; no second request needed). */
const solanaPayLinks = new Map<string, string>();

/** Keep the payment link of a new order for its page. */
export function rememberPayment(order: CreateOrderResponse): void {
  if (order.payment) solanaPayLinks.set(order.order_id, order.payment.solana_pay_url);
}

/** After an action: the order as the service returned it goes into the cache, lists are re-read. */
export function settled(next: RichOrder) {
  queryClient.setQueryData<RichOrder>(['order', next.order_id], (old) => ({ ...old, ...next }));
  void queryClient.invalidateQueries({ queryKey: ['order', next.order_id] });
  void queryClient.invalidateQueries({ queryKey: ['orders'] });
  say(`Done: ${STATUS_WORDS[next.status].toLowerCase()}.`);
  // the focus goes to the order's new state (the action's button may be gone)
  focusOn(document.getElementById('order-state'));
}

/** The message of a refusal with its field errors spelled out (a field the form does not show is still named). */
export const withFields = (p: { message: string; fields: Record<string, string> }) =>
  Object.keys(p.fields).length ? `${p.message} ${Object.entries(p.fields).map(([k, v]) => `${k}: ${v}`).join('; ')}` : p.message;

/** Field errors of a failed form (problem `errors[]`), or the message in the status region. */
export function useFormErrors() {
  const [fields, setFields] = useState<Record<string, string>>({});
  const onError = (e: unknown) => {
    const p = plain(e);
    setFields(p.fields);
    say(withFields(p), 'error');
  };
  return { fields, setFields, onError };
}

/** The Solana Pay QR code and link (a phone wallet scans it), with a word on when wallets refuse it. */
function SolanaPay({ order }: { order: RichOrder }) {
  const network = useNetwork();
  const link = useQuery({
    queryKey: ['solana-pay', order.order_id],
    staleTime: Infinity,
    queryFn: async () =>
      solanaPayLinks.get(order.order_id) ?? ok(await client.orders.createOrderPayment({ params: { order_id: order.order_id } }), 200).solana_pay_url,
  });
  if (!link.data) return link.error ? <p>No Solana Pay link right now.</p> : null;
  const qr = qrcode(0, 'M');
  qr.addData(link.data);
  qr.make();
  const insecure = !link.data.startsWith('solana:https:');
  const refused = network.data?.solana_pay_supported === false || insecure;
  const why = network.data?.solana_pay_unsupported_reason;
  return (
    <figure class="solana-pay">
      <img src={qr.createDataURL(4, 8)} alt="Solana Pay QR code of this payment" width={qr.getModuleCount() * 4 + 16} />
      <figcaption>
        Or scan with a phone wallet (Solana Pay):{' '}
        <a href={link.data} data-testid="solana-pay-link">
          open in wallet
        </a>
        {refused ? (
          <p class="hint" data-testid="solana-pay-hint">
            {why ??
              (network.data?.cluster === 'localnet' || insecure
                ? 'This service runs on a local test network without https: phone wallets refuse its Solana Pay link. Pay with the browser wallet above instead.'
                : 'Phone wallets may refuse this link; pay with the browser wallet above instead.')}
          </p>
        ) : null}
      </figcaption>
    </figure>
  );
}

function DeliverForm({ order }: { order: RichOrder }) {
  const { fields, onError } = useFormErrors();
  const note = useRef<HTMLTextAreaElement>(null);
  const hint = 'What you deliver: a message and links (files, a shared folder). The buyer reads it in the conversation.';
  return (
    <form class="stack" onSubmit={(e) => e.preventDefault()}>
      <Field id="deliver-note" label="Delivery message" hint={hint} error={fields.body}>
        <textarea ref={note} {...described('deliver-note', hint, fields.body)} name="body" rows={4} maxLength={4000} />
      </Field>
      <ActionButton
        class="primary"
        data-action="deliver"
        onError={onError}
        work={async () => {
          const text = note.current!.value.trim();
          if (text) {
            ok(await client.chat.sendOrderMessage({ params: { order_id: order.order_id }, body: { body: text } }), 201);
            void queryClient.invalidateQueries({ queryKey: ['messages', order.order_id] });
          }
          say(`${ACTION_LABELS.deliver}: waiting for the chain…`);
          settled(ok(await client.orders.deliverOrder({ params: { order_id: order.order_id } }), 200));
        }}
      >
        {ACTION_LABELS.deliver}
      </ActionButton>
    </form>
  );
}

function DisputeForm({ order }: { order: RichOrder }) {
  const { fields, onError } = useFormErrors();
  const reason = useRef<HTMLTextAreaElement>(null);
  const hint = '10 to 2000 characters; the arbiter reads it';
  // the seller before delivery: a dispute is for a buyer who does not answer or asks for more than was sold;
  // said as such, next to the other ways out (deliver, refund), not as the first thing to do on a new sale
  const sellerEarly = session()?.wallet === order.seller_wallet && order.status === 'in_progress';
  return (
    <details>
      <summary>{sellerEarly ? 'A problem with the buyer? Ask the arbiter' : ACTION_LABELS.dispute}</summary>
      {sellerEarly && (
        <p>
          For a buyer who does not answer or asks for more than the listing sells. A dispute locks the escrow until the arbiter
          decides and does not stop the delivery deadline; you can also deliver, or refund the buyer.
        </p>
      )}
      <form class="stack" onSubmit={(e) => e.preventDefault()}>
        <Field id="dispute-reason" label="Why do you dispute this order?" hint={hint} error={fields.reason}>
          <textarea ref={reason} {...described('dispute-reason', hint, fields.reason)} name="reason" rows={3} maxLength={2000} />
        </Field>
        <ActionButton
          class="danger"
          onError={onError}
          work={async () => {
            settled(ok(await client.orders.disputeOrder({ params: { order_id: order.order_id }, body: { reason: reason.current!.value } }), 200));
            say('Dispute opened: the escrow is locked until the arbiter decides.');
          }}
        >
          Send the dispute
        </ActionButton>
      </form>
    </details>
  );
}

function ReviewForm({ order }: { order: RichOrder }) {
  const { fields, onError } = useFormErrors();
  const rating = useRef<HTMLSelectElement>(null);
  const text = useRef<HTMLTextAreaElement>(null);
  const hint = 'optional, up to 2000 characters';
  return (
    <section>
      <h2>{ACTION_LABELS.review}</h2>
      <form class="stack" onSubmit={(e) => e.preventDefault()}>
        <Field id="review-rating" label="Rating" error={fields.rating}>
          <select ref={rating} {...described('review-rating', undefined, fields.rating)} name="rating">
            {[5, 4, 3, 2, 1].map((n) => (
              <option value={n}>
                {n} star{n > 1 ? 's' : ''}
              </option>
            ))}
          </select>
        </Field>
        <Field id="review-text" label="Review" hint={hint} error={fields.text}>
          <textarea ref={text} {...described('review-text', hint, fields.text)} name="text" maxLength={2000} rows={3} />
        </Field>
        <ActionButton
          class="primary"
          onError={onError}
          work={async () => {
            ok(await client.reviews.createReview({ params: { order_id: order.order_id }, body: { rating: Number(rating.current!.value), text: text.current!.value } }), 201);
            await queryClient.invalidateQueries({ queryKey: ['order', order.order_id] });
            await queryClient.invalidateQueries({ queryKey: ['review', order.order_id] });
            say('Thank you: review published.');
          }}
        >
          Publish review
        </ActionButton>
      </form>
    </section>
  );
}

/** Exactly the caller's `allowed_actions` (the arbiter's `resolve` is not in this app). */
function Actions({ order }: { order: RichOrder }) {
  const decimals = useDecimals();
  const buyer = session()?.wallet === order.buyer_wallet;
  const id = { order_id: order.order_id };
  const amount = formatAmount(order.amount_base_units, decimals(order.currency), order.currency);
  const button = (action: 'pay' | 'confirm' | 'refund') => {
    const label = action === 'refund' ? `Refund ${amount} to ${buyer ? 'me' : 'the buyer'}` : ACTION_LABELS[action];
    return (
      <ActionButton
        class={action === 'refund' ? 'danger' : 'primary'}
        data-action={action}
        work={async () => {
          say(`${ACTION_LABELS[action]}: waiting for the chain…`);
          settled(
            action === 'pay'
              ? await payOrder(order.order_id)
              : action === 'confirm'
                ? ok(await client.orders.confirmOrder({ params: id }), 200)
                : ok(await client.orders.refundOrder({ params: id }), 200),
          );
        }}
      >
        {label}
      </ActionButton>
    );
  };
  // several milestones: each milestone's actions are on its row of the milestone list (order-deals.tsx)
  const multi = order.milestones.length > 1;
  const items = order.allowed_actions
    .filter((a) => a !== 'resolve' && a !== 'fund' && a !== 'end' && !AGREEMENT_ACTIONS.has(a))
    .filter((a) => !multi || a === 'pay' || a === 'review')
    .map((a) => {
      switch (a) {
        case 'deliver':
          return <DeliverForm order={order} />;
        case 'dispute':
          return <DisputeForm order={order} />;
        case 'review':
          return <ReviewForm order={order} />;
        case 'confirm':
          // an early release (before the seller marked it delivered) pays the seller at once and ends the
          // buyer's dispute and refund: one more step (a disclosure with the warning) before the button
          return order.status === 'in_progress' ? (
            <details>
              <summary>Release the payment before delivery</summary>
              <p>The seller has not marked this order delivered. Releasing pays the seller now (the amount minus the fee); you can no longer dispute or get a refund.</p>
              {button('confirm')}
            </details>
          ) : (
            button('confirm')
          );
        case 'refund':
          // a refund gives the whole escrow back: one more step (a disclosure) before the button
          return (
            <details>
              <summary>{buyer ? 'Get a refund' : ACTION_LABELS.refund}</summary>
              <p>The buyer gets the whole amount back; no fee is charged.</p>
              {button('refund')}
            </details>
          );
        case 'pay':
          return button('pay');
        default:
          return null;
      }
    });
  return (
    <div class="actions" role="group" aria-label="Actions" data-actions={order.allowed_actions.join(',')}>
      {items.length ? items : <p>Nothing for you to do on this order now.</p>}
    </div>
  );
}

/** The order's conversation: oldest first, live (message events), with a form to write. */
function Conversation({ order, role }: { order: RichOrder; role: string }) {
  const messages = useQuery({
    queryKey: ['messages', order.order_id],
    refetchInterval: 15_000,
    queryFn: async (): Promise<Message[]> => ok(await client.chat.listOrderMessages({ params: { order_id: order.order_id }, query: { limit: 100 } }), 200).data.slice().reverse(),
  });
  const { fields, setFields, onError } = useFormErrors();
  const [text, setText] = useState('');
  const me = session()?.wallet;
  const who = (m: Message) => (m.sender_wallet === me ? 'You' : m.sender_role === 'arbiter' ? 'The arbiter' : m.sender_role === 'seller' ? 'The seller' : 'The buyer');
  return (
    <section aria-labelledby="conversation">
      <h2 id="conversation">Conversation</h2>
      {messages.error ? (
        <ErrorBox error={messages.error} retry={() => void messages.refetch()} />
      ) : !messages.data ? (
        <p class="loading">Loading the messages…</p>
      ) : messages.data.length ? (
        <ol class="messages" aria-label="Messages" aria-live="polite">
          {messages.data.map((m) => (
            <li key={m.message_id} class={m.sender_wallet === me ? 'mine' : ''} data-testid="message">
              <p class="meta">
                {who(m)} · <Time iso={m.created_at} />
              </p>
              <p class="body" dir="auto">
                <Linkified text={m.body} />
              </p>
            </li>
          ))}
        </ol>
      ) : (
        <p>No messages yet. {role === 'buyer' ? 'Ask the seller anything about the work here.' : 'Write to the buyer here.'}</p>
      )}
      <form
        class="stack"
        onSubmit={(e) => {
          e.preventDefault();
        }}
      >
        <Field id="message-body" label="Message" error={fields.body}>
          <textarea {...described('message-body', undefined, fields.body)} name="body" rows={2} maxLength={4000} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </Field>
        <ActionButton
          onError={onError}
          work={async () => {
            ok(await client.chat.sendOrderMessage({ params: { order_id: order.order_id }, body: { body: text } }), 201);
            setText('');
            setFields({});
            await queryClient.invalidateQueries({ queryKey: ['messages', order.order_id] });
          }}
        >
          Send message
        </ActionButton>
      </form>
    </section>
  );
}

/** The buyer's published review of this order (`review`, null before). */
function PublishedReview({ order }: { order: RichOrder }) {
  const r = order.review;
  if (!r) return null;
  return (
    <section aria-labelledby="review" data-testid="review">
      <h2 id="review">Review</h2>
      <p>
        <Rating average={r.rating} count={1} /> <span class="sr-only">rating {r.rating} of 5</span>
      </p>
      {r.text ? (
        <blockquote dir="auto">
          <Linkified text={r.text} />
        </blockquote>
      ) : null}
    </section>
  );
}

export function OrderPage({ id }: { id: string }) {
  const order = useOrder(id);
  useEffect(() => followOrder(id), [id]);
  const o = order.data;
  const network = useNetwork();
  const decimals = useDecimals();
  if (order.error) {
    if (isSignInNeeded(order.error)) return <SignInPrompt />;
    return <ErrorBox heading="Order not available" error={order.error} retry={() => void order.refetch()} />;
  }
  if (!o) return <Loading what="Loading the order" />;
  const role = roleOf(o, session()?.wallet);
  const title = o.listing.title;
  const next = nextStep(o, role);
  const d = decimals(o.currency);
  const other = role === 'seller' ? { wallet: o.buyer_wallet, summary: o.buyer } : { wallet: o.seller_wallet, summary: o.seller };
  return (
    <article>
      <PageHeading text={`Order for “${title}”`}>
        Order for “<bdi>{title}</bdi>”
      </PageHeading>
      <p data-testid="order-context">
        {role === 'buyer' ? 'You bought ' : role === 'seller' ? 'You sold ' : 'Order of '}
        <a href={`#/listings/${o.listing_id}`} dir="auto">
          {title}
        </a>{' '}
        {role === 'seller' ? 'to ' : 'from '}
        <Party wallet={other.wallet} summary={other.summary} testId="other-party" /> for <strong>{formatAmount(o.amount_base_units, d, o.currency)}</strong>
        {o.package_name ? <> (package “<bdi>{o.package_name}</bdi>”)</> : null}
        {o.milestones.length > 1 ? `, in ${o.milestones.length} milestones` : ''}
        {o.revisions_included ? `, ${o.revisions_included} revision${o.revisions_included === 1 ? '' : 's'} included` : ''}.
      </p>
      <section id="order-state" aria-labelledby="state" class="state">
        <h2 id="state">
          Status: <span data-testid="order-status" data-status={o.status}>{STATUS_WORDS[o.status]}</span>
        </h2>
        <p data-testid="next-step">
          <strong>What happens next: </strong>
          {next.text}
          {next.due && Date.parse(next.due) > Date.now() ? (
            <>
              {' '}
              By <Time iso={next.due} />: <Countdown to={next.due} /> left.{next.after ? ` ${next.after}` : ''}
            </>
          ) : null}
        </p>
        {o.dispute_reason ? (
          <p class="dispute" dir="auto">
            <strong>Dispute: </strong>
            {o.dispute_reason}
          </p>
        ) : null}
      </section>
      <Actions order={o} />
      <Suspense fallback={<p class="loading">Loading…</p>}>
        <OrderDeals order={o} />
      </Suspense>
      {o.allowed_actions.includes('pay') ? <SolanaPay order={o} /> : null}
      <PublishedReview order={o} />
      <Conversation order={o} role={role} />
      <section aria-labelledby="details">
        <h2 id="details">Details</h2>
        <dl>
          <dt>Amount</dt>
          <dd>
            {formatAmount(o.amount_base_units, d, o.currency)} (fee {o.fee_bps / 100} %: the seller receives {formatAmount(o.seller_receives_base_units, d, o.currency)})
          </dd>
          <dt>Escrow on chain</dt>
          <dd>
            <span data-testid="escrow-state" data-state={o.escrow_state}>
              {o.escrow_state}
            </span>{' '}
            ·{' '}
            <a href={o.escrow_account_explorer_url ?? explorerUrl(network.data, 'address', o.escrow_account_address)} target="_blank" rel="noopener" data-testid="escrow-link">
              escrow account on the explorer
            </a>
          </dd>
          <dt>Ordered</dt>
          <dd>
            <Time iso={o.created_at} />
          </dd>
          {o.status === 'awaiting_payment' ? (
            <>
              <dt>Pay before</dt>
              <dd>
                <Time iso={o.payment_expires_at} />
              </dd>
            </>
          ) : o.funded_at ? (
            <>
              <dt>Paid</dt>
              <dd>
                <Time iso={o.funded_at} />
              </dd>
            </>
          ) : null}
          <dt>Delivery due</dt>
          <dd>
            <Time iso={o.delivery_deadline} />
          </dd>
          {o.delivered_at ? (
            <>
              <dt>Delivered</dt>
              <dd>
                <Time iso={o.delivered_at} />
              </dd>
            </>
          ) : null}
          {o.auto_release_at && o.status === 'delivered' ? (
            <>
              <dt>Automatic release</dt>
              <dd>
                <Time iso={o.auto_release_at} />
              </dd>
            </>
          ) : null}
          {o.completed_at ? (
            <>
              <dt>Closed</dt>
              <dd>{formatTime(o.completed_at)}</dd>
            </>
          ) : null}
        </dl>
        <h3>Transactions</h3>
        {o.transactions.length ? (
          <ul class="transactions">
            {o.transactions.map((t) => (
              <li>
                {t.action} · {t.status} ·{' '}
                <a href={t.explorer_url ?? explorerUrl(network.data, 'tx', t.signature)} target="_blank" rel="noopener" title={t.signature}>
                  {t.signature.slice(0, 8)}…
                </a>
              </li>
            ))}
          </ul>
        ) : (
          <p>None yet.</p>
        )}
        <p class="meta">
          Order <Address value={o.order_id} label="order number" />
        </p>
      </section>
    </article>
  );
}
