/**
 * Conversations (inquiries and order conversations) and custom offers (issue 24 item 6), loaded on demand
 * (a dynamic import from main.tsx). `#/conversations`: the caller's conversations with unread counts;
 * `#/conversations/:id`: the thread, oldest first, where a message of kind `offer` shows as an offer card
 * (title, price, milestones, revisions, expiry, state). The seller sends an offer (POST
 * /conversations/{id}/offers); the buyer accepts it (POST /offers/{id}/accept, Idempotency-Key: the page goes
 * to the new order) or declines it; the seller withdraws it. Every refusal shows the service's words.
 */
import { useQuery } from '@tanstack/react-query';
import { useState } from 'preact/hooks';
import type { Message, Offer } from '@bazaar/client-sdk';
import { newIdempotencyKey } from '@bazaar/client-sdk/lite';
import { client, ok, session } from '../api.js';
import { plain } from '../errors.js';
import { formatAmount } from '../format.js';
import { queryClient, useDecimals, useListing } from '../queries.js';
import { navigate } from '../router.js';
import { ActionButton, ErrorBox, Field, Linkified, Loading, PageHeading, Party, Time, described, say } from '../ui.js';
import { rememberPayment, withFields } from './order.js';
import { SignInPrompt, isSignInNeeded } from './sign-in.js';

/** A conversation as GET /conversations lists it (the contract names no type for it). */
type Conversation = Extract<Awaited<ReturnType<typeof client.chat.listConversations>>, { status: 200 }>['body']['data'][number];

export function ConversationsPage() {
  const list = useQuery({
    queryKey: ['conversations'],
    queryFn: async (): Promise<Conversation[]> => ok(await client.chat.listConversations({ query: { limit: 50 } }), 200).data,
  });
  const me = session()?.wallet;
  if (list.error) {
    if (isSignInNeeded(list.error)) return <SignInPrompt />;
    return <ErrorBox heading="Messages not available" error={list.error} retry={() => void list.refetch()} />;
  }
  if (!list.data) return <Loading what="Loading your conversations" />;
  return (
    <section>
      <PageHeading text="Messages" />
      {list.data.length ? (
        <ul class="cards orders" aria-label="Conversations">
          {list.data.map((c) => (
            <li class="card" data-conversation={c.conversation_id}>
              <h3>
                <a href={`#/conversations/${c.conversation_id}`}>{c.order_id ? 'Order conversation' : 'Inquiry'} with the {c.seller_wallet === me ? 'buyer' : 'seller'}</a>
              </h3>
              <p class="meta">
                <Party wallet={c.seller_wallet === me ? c.buyer_wallet : c.seller_wallet} /> · last message <Time iso={c.last_message_at} />
                {c.unread_count ? ` · ${c.unread_count} unread` : ''}
              </p>
            </li>
          ))}
        </ul>
      ) : (
        <p class="empty">No conversations yet. Ask a seller from a listing's page.</p>
      )}
    </section>
  );
}

const OFFER_WORDS: Record<Offer['status'], string> = {
  pending: 'Waiting for the buyer',
  accepted: 'Accepted: an order was created',
  declined: 'Declined by the buyer',
  withdrawn: 'Withdrawn by the seller',
  expired: 'Expired',
};

function offerDone(next: Offer, conversationId: string) {
  void queryClient.invalidateQueries({ queryKey: ['conversation', conversationId] });
  say(`Offer ${OFFER_WORDS[next.status].toLowerCase()}.`);
}

/** An offer in the thread: its terms and state, and the caller's choices while it is pending. */
function OfferCard({ offer, conversationId }: { offer: Offer; conversationId: string }) {
  const decimals = useDecimals();
  const money = (base: string) => formatAmount(base, decimals(offer.currency), offer.currency);
  const me = session()?.wallet;
  const pending = offer.status === 'pending' && Date.parse(offer.expires_at) > Date.now();
  return (
    <article class="offer" data-testid="offer" data-offer={offer.offer_id} data-status={offer.status} aria-labelledby={`offer-${offer.offer_id}`}>
      <h3 id={`offer-${offer.offer_id}`}>
        Custom offer: <bdi>{offer.title}</bdi> · {money(offer.price_base_units)}
      </h3>
      <p dir="auto">{offer.description}</p>
      <ol class="terms" aria-label="Milestones of the offer">
        {offer.milestones.map((m, i) => (
          <li>
            <bdi>{m.title ?? `Milestone ${i + 1}`}</bdi>: {money(m.amount_base_units)}, {m.delivery_days} day{m.delivery_days === 1 ? '' : 's'}
          </li>
        ))}
      </ol>
      <p class="meta">
        {offer.revisions} revision{offer.revisions === 1 ? '' : 's'} included · {offer.status === 'pending' ? <>expires <Time iso={offer.expires_at} /></> : OFFER_WORDS[offer.status]}
      </p>
      {offer.order_id ? (
        <p>
          <a href={`#/orders/${offer.order_id}`}>Open the order</a>
        </p>
      ) : null}
      {pending && me === offer.buyer_wallet ? (
        <div class="row-actions">
          <ActionButton
            class="primary"
            data-action="accept-offer"
            work={async () => {
              const r = ok(await client.offers.acceptOffer({ params: { offer_id: offer.offer_id }, headers: { 'idempotency-key': newIdempotencyKey() }, body: {} }), 201);
              rememberPayment(r.order);
              say('Offer accepted: pay the order into escrow.', 'info', true);
              navigate(`/orders/${r.order.order_id}`);
            }}
          >
            Accept and order ({money(offer.price_base_units)})
          </ActionButton>
          <ActionButton data-action="decline-offer" work={async () => offerDone(ok(await client.offers.declineOffer({ params: { offer_id: offer.offer_id } }), 200), conversationId)}>
            Decline
          </ActionButton>
        </div>
      ) : null}
      {pending && me === offer.seller_wallet ? (
        <ActionButton data-action="withdraw-offer" work={async () => offerDone(ok(await client.offers.withdrawOffer({ params: { offer_id: offer.offer_id } }), 200), conversationId)}>
          Withdraw the offer
        </ActionButton>
      ) : null}
    </article>
  );
}

interface MilestoneRow {
  title: string;
  amount: string;
  days: string;
}

/** The seller's custom offer form: title, description, price, milestones (or delivery days), revisions, expiry. */
function OfferForm({ conversation }: { conversation: Conversation }) {
  const listing = useListing(conversation.listing_id);
  const [f, setF] = useState({ title: '', description: '', price: '', days: '7', revisions: '1', expires: '7' });
  const [rows, setRows] = useState<MilestoneRow[]>([]);
  const [fields, setFields] = useState<Record<string, string>>({});
  const currency = listing.data?.currency ?? 'USDC';
  const set = (k: keyof typeof f) => (e: { currentTarget: HTMLInputElement | HTMLTextAreaElement }) => setF({ ...f, [k]: e.currentTarget.value });
  const setRow = (i: number, k: keyof MilestoneRow, v: string) => setRows(rows.map((r, j) => (j === i ? { ...r, [k]: v } : r)));
  return (
    <details class="offer-form">
      <summary>Send a custom offer</summary>
      <form class="stack" onSubmit={(e) => e.preventDefault()}>
        <Field id="offer-title" label="Offer title" error={fields.title}>
          <input {...described('offer-title', undefined, fields.title)} maxLength={200} value={f.title} onInput={set('title')} />
        </Field>
        <Field id="offer-description" label="What you will do" error={fields.description}>
          <textarea {...described('offer-description', undefined, fields.description)} rows={3} maxLength={5000} value={f.description} onInput={set('description')} />
        </Field>
        <Field id="offer-price" label={`Price (${currency})`} hint={rows.length ? 'The milestones add up to this price.' : undefined} error={fields.price}>
          <input inputMode="decimal" {...described('offer-price', rows.length ? 'The milestones add up to this price.' : undefined, fields.price)} value={f.price} onInput={set('price')} />
        </Field>
        {rows.length ? (
          <fieldset>
            <legend>Milestones</legend>
            {rows.map((r, i) => (
              <div class="milestone-row">
                <Field id={`offer-m${i}-title`} label={`Milestone ${i + 1} title`}>
                  <input id={`offer-m${i}-title`} maxLength={200} value={r.title} onInput={(e) => setRow(i, 'title', e.currentTarget.value)} />
                </Field>
                <Field id={`offer-m${i}-amount`} label={`Milestone ${i + 1} amount`}>
                  <input id={`offer-m${i}-amount`} inputMode="decimal" value={r.amount} onInput={(e) => setRow(i, 'amount', e.currentTarget.value)} />
                </Field>
                <Field id={`offer-m${i}-days`} label={`Milestone ${i + 1} delivery days`}>
                  <input id={`offer-m${i}-days`} type="number" min={1} max={365} value={r.days} onInput={(e) => setRow(i, 'days', e.currentTarget.value)} />
                </Field>
                <button type="button" onClick={() => setRows(rows.filter((_, j) => j !== i))}>
                  Remove milestone {i + 1}
                </button>
              </div>
            ))}
            {fields.milestones ? <p class="field-error">{fields.milestones}</p> : null}
          </fieldset>
        ) : (
          <Field id="offer-days" label="Delivery time (days)" error={fields.delivery_days}>
            <input type="number" min={1} max={365} {...described('offer-days', undefined, fields.delivery_days)} value={f.days} onInput={set('days')} />
          </Field>
        )}
        {rows.length < 10 ? (
          <button type="button" onClick={() => setRows([...rows, { title: '', amount: '', days: '3' }])}>
            Add a milestone
          </button>
        ) : null}
        <Field id="offer-revisions" label="Revisions included" error={fields.revisions}>
          <input type="number" min={0} max={20} {...described('offer-revisions', undefined, fields.revisions)} value={f.revisions} onInput={set('revisions')} />
        </Field>
        <Field id="offer-expires" label="Valid for (days)" hint="1 to 30 days" error={fields.expires_at}>
          <input type="number" min={1} max={30} {...described('offer-expires', '1 to 30 days', fields.expires_at)} value={f.expires} onInput={set('expires')} />
        </Field>
        <ActionButton
          class="primary"
          onError={(e) => {
            const p = plain(e);
            setFields(p.fields);
            say(withFields(p), 'error');
          }}
          work={async () => {
            const offer = ok(
              await client.offers.createOffer({
                params: { conversation_id: conversation.conversation_id },
                body: {
                  title: f.title,
                  description: f.description,
                  currency,
                  price: Number(f.price),
                  revisions: Number(f.revisions),
                  expires_at: new Date(Date.now() + Number(f.expires) * 86_400_000).toISOString(),
                  ...(rows.length
                    ? { milestones: rows.map((r) => ({ title: r.title, amount: Number(r.amount), delivery_days: Number(r.days) })) }
                    : { delivery_days: Number(f.days) }),
                },
              }),
              201,
            );
            setFields({});
            setF({ ...f, title: '', description: '', price: '' });
            setRows([]);
            await queryClient.invalidateQueries({ queryKey: ['conversation', conversation.conversation_id] });
            say(`Offer “${offer.title}” sent.`);
          }}
        >
          Send the offer
        </ActionButton>
      </form>
    </details>
  );
}

export function ConversationPage({ id }: { id: string }) {
  const thread = useQuery({
    queryKey: ['conversation', id],
    refetchInterval: 10_000,
    queryFn: async () => {
      const page = ok(await client.chat.listConversationMessages({ params: { conversation_id: id }, query: { limit: 100 } }), 200);
      return { conversation: page.conversation, messages: page.data.slice().reverse() as Message[] };
    },
  });
  const [text, setText] = useState('');
  const [fields, setFields] = useState<Record<string, string>>({});
  if (thread.error) {
    if (isSignInNeeded(thread.error)) return <SignInPrompt />;
    return <ErrorBox heading="Conversation not available" error={thread.error} retry={() => void thread.refetch()} />;
  }
  if (!thread.data) return <Loading what="Loading the conversation" />;
  const { conversation: c, messages } = thread.data;
  const me = session()?.wallet;
  const seller = me === c.seller_wallet;
  return (
    <article>
      <PageHeading text={`Conversation with the ${seller ? 'buyer' : 'seller'}`} />
      <p>
        About <a href={`#/listings/${c.listing_id}`}>the listing</a>
        {c.order_id ? (
          <>
            {' '}
            and <a href={`#/orders/${c.order_id}`}>its order</a>
          </>
        ) : null}{' '}
        with <Party wallet={seller ? c.buyer_wallet : c.seller_wallet} />.
      </p>
      {messages.length ? (
        <ol class="messages" aria-label="Messages" aria-live="polite">
          {messages.map((m) => (
            <li key={m.message_id} class={m.sender_wallet === me ? 'mine' : ''} data-testid="message" data-kind={m.kind}>
              <p class="meta">
                {m.sender_wallet === me ? 'You' : `The ${m.sender_role}`} · <Time iso={m.created_at} />
              </p>
              {m.kind === 'offer' && m.offer ? (
                <OfferCard offer={m.offer} conversationId={id} />
              ) : (
                <p class="body" dir="auto">
                  <Linkified text={m.body} />
                </p>
              )}
            </li>
          ))}
        </ol>
      ) : (
        <p>No messages yet.</p>
      )}
      <form class="stack" onSubmit={(e) => e.preventDefault()}>
        <Field id="conversation-body" label="Message" error={fields.body}>
          <textarea {...described('conversation-body', undefined, fields.body)} rows={2} maxLength={4000} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </Field>
        <ActionButton
          onError={(e) => {
            const p = plain(e);
            setFields(p.fields);
            say(withFields(p), 'error');
          }}
          work={async () => {
            ok(await client.chat.sendConversationMessage({ params: { conversation_id: id }, body: { body: text } }), 201);
            setText('');
            setFields({});
            await queryClient.invalidateQueries({ queryKey: ['conversation', id] });
          }}
        >
          Send message
        </ActionButton>
      </form>
      {seller ? <OfferForm conversation={c} /> : null}
    </article>
  );
}
