/**
 * The parts of an order page that issue 24 added, loaded on demand (a dynamic import from order.tsx: the
 * marketplace's first load does not pay for them):
 *
 * - the milestones of a multi-milestone order as a list: title, amount, state in words, deadline, and each
 *   milestone's own actions from its `allowed_actions` (fund the next one or several with ONE wallet signature,
 *   deliver, confirm, dispute, refund: POST /orders/{id}/milestones/...), and `end` the order;
 * - revisions (the buyer requests changes with a message; revisions left, or why none can be asked);
 * - deadline extensions (the seller proposes a date and a reason; the buyer accepts or declines before it lapses);
 * - settlement by agreement (either party proposes a split with a slider and sees the payout; the other
 *   accepts naming the same split; the proposer withdraws);
 * - tips after the seller was paid (the wallet signs a plain transfer; the confirmation is shown).
 *
 * Every button comes from the caller's `allowed_actions` (order level: the agreement routes act on
 * `current_milestone`); every refusal shows the service's words (errors.ts `plain`, the problem's detail).
 */
import { useQuery } from '@tanstack/react-query';
import { useRef, useState } from 'preact/hooks';
import type { OrderMilestone, Tip } from '@bazaar/client-sdk';
import { newIdempotencyKey } from '@bazaar/client-sdk/lite';
import { client, ok, session } from '../api.js';
import { formatAmount, decimalToBaseUnits } from '../format.js';
import { queryClient, useDecimals, type RichOrder } from '../queries.js';
import { ACTION_LABELS, STATUS_WORDS } from '../status.js';
import { ActionButton, Field, Time, described, say } from '../ui.js';
import { fundMilestones, signWithWallet } from '../wallet.js';
import { settled, useFormErrors } from './order.js';

/** Idempotency-Key headers: one key per click (a retried request returns the first answer). */
const keyed = () => ({ 'idempotency-key': newIdempotencyKey() });

/** What a split of `amount` pays (the escrow program's arithmetic): buyer floor(amount*bps/1e4), the fee on the seller's share only. */
export function splitPreview(amount: bigint, buyerBps: number, feeBps: number) {
  const buyer = (amount * BigInt(buyerBps)) / 10_000n;
  const fee = ((amount - buyer) * BigInt(feeBps)) / 10_000n;
  return { buyer, seller: amount - buyer - fee, fee };
}

function useMoney(order: RichOrder) {
  const decimals = useDecimals();
  const d = decimals(order.currency);
  return (base: string | bigint) => formatAmount(base, d, order.currency);
}

// ---------------------------------------------------------------- milestones

function MilestoneActions({ order, m }: { order: RichOrder; m: OrderMilestone }) {
  const money = useMoney(order);
  const buyer = session()?.wallet === order.buyer_wallet;
  const params = { order_id: order.order_id, index: m.index };
  const reason = useRef<HTMLTextAreaElement>(null);
  const { fields, onError } = useFormErrors();
  const items = m.allowed_actions.map((a) => {
    switch (a) {
      case 'deliver':
        return (
          <ActionButton class="primary" data-action="deliver" work={async () => settled(ok(await client.orders.deliverMilestone({ params }), 200))}>
            Mark milestone {m.index} delivered
          </ActionButton>
        );
      case 'confirm': {
        const button = (
          <ActionButton class="primary" data-action="confirm" work={async () => settled(ok(await client.orders.confirmMilestone({ params }), 200))}>
            Release {money(m.amount_base_units)} to the seller
          </ActionButton>
        );
        // an early release (before delivery) pays at once and ends the buyer's dispute and refund on this milestone
        return m.status === 'in_progress' ? (
          <details>
            <summary>Release milestone {m.index} before delivery</summary>
            <p class="warning">The seller has not delivered this milestone. Releasing pays the seller now (the amount minus the fee); you can no longer dispute it or get it refunded.</p>
            {button}
          </details>
        ) : (
          button
        );
      }
      case 'refund':
        return (
          <details>
            <summary>{buyer ? `Get milestone ${m.index} refunded` : `Refund milestone ${m.index}`}</summary>
            <p>The buyer gets {money(m.amount_base_units)} back; no fee is charged.</p>
            <ActionButton class="danger" data-action="refund" work={async () => settled(ok(await client.orders.refundMilestone({ params }), 200))}>
              Refund {money(m.amount_base_units)} to {buyer ? 'me' : 'the buyer'}
            </ActionButton>
          </details>
        );
      case 'dispute':
        return (
          <details>
            <summary>Dispute milestone {m.index}</summary>
            <form class="stack" onSubmit={(e) => e.preventDefault()}>
              <Field id={`dispute-${m.index}`} label={`Why do you dispute milestone ${m.index}?`} hint="10 to 2000 characters; the arbiter reads it" error={fields.reason}>
                <textarea ref={reason} {...described(`dispute-${m.index}`, '10 to 2000 characters; the arbiter reads it', fields.reason)} rows={3} maxLength={2000} />
              </Field>
              <ActionButton
                class="danger"
                onError={onError}
                work={async () => settled(ok(await client.orders.disputeMilestone({ params, body: { reason: reason.current!.value } }), 200))}
              >
                Send the dispute
              </ActionButton>
            </form>
          </details>
        );
      default:
        return null; // fund: the list's one fund form; resolve: the arbiter's
    }
  });
  return items.some(Boolean) ? (
    <div class="row-actions" role="group" aria-label={`Actions on milestone ${m.index}`}>
      {items}
    </div>
  ) : null;
}

/** Fund the next milestone, or several at once (ONE transaction, one wallet signature). */
function FundNext({ order, fundable }: { order: RichOrder; fundable: OrderMilestone[] }) {
  const money = useMoney(order);
  const [count, setCount] = useState(1);
  const chosen = fundable.slice(0, count);
  const total = chosen.reduce((s, m) => s + BigInt(m.amount_base_units), 0n);
  return (
    <form class="stack fund" onSubmit={(e) => e.preventDefault()}>
      {fundable.length > 1 ? (
        <Field id="fund-count" label="Milestones to fund now">
          <select id="fund-count" value={String(count)} onChange={(e) => setCount(Number(e.currentTarget.value))}>
            {fundable.map((m, i) => (
              <option value={String(i + 1)}>{i === 0 ? `Milestone ${m.index} only` : `Milestones ${fundable[0]!.index} to ${m.index}`}</option>
            ))}
          </select>
        </Field>
      ) : null}
      <ActionButton
        class="primary"
        data-action="fund"
        work={async () => {
          say('Waiting for your wallet…');
          settled(await fundMilestones(order.order_id, chosen.map((m) => m.index), newIdempotencyKey()));
        }}
      >
        Fund {chosen.length === 1 ? `milestone ${chosen[0]!.index}` : `${chosen.length} milestones`} with wallet ({money(total)})
      </ActionButton>
      <p class="hint">The money goes into escrow: the seller is paid a milestone only when you release it.</p>
    </form>
  );
}

function Milestones({ order }: { order: RichOrder }) {
  const money = useMoney(order);
  const fundable = order.milestones.filter((m) => m.allowed_actions.includes('fund'));
  return (
    <section aria-labelledby="milestones">
      <h2 id="milestones">Milestones</h2>
      <ol class="milestones" aria-label="Milestones">
        {order.milestones.map((m) => (
          <li key={m.index} data-testid="milestone" data-index={m.index} data-status={m.status} data-actions={m.allowed_actions.join(',')} class={m.index === order.current_milestone ? 'current' : ''}>
            <h3>
              {m.index}. <bdi>{m.title ?? 'The work'}</bdi> · {money(m.amount_base_units)}
            </h3>
            <p>
              <span data-testid="milestone-status">{STATUS_WORDS[m.status]}</span>
              {m.delivery_deadline && !m.completed_at ? (
                <>
                  {' '}· delivery due <Time iso={m.delivery_deadline} />
                </>
              ) : m.status === 'scheduled' ? (
                <> · {m.delivery_days} day{m.delivery_days === 1 ? '' : 's'} from funding</>
              ) : null}
              {m.payout ? <> · paid out: seller {money(m.payout.seller_base_units)}, buyer {money(m.payout.buyer_base_units)}</> : null}
            </p>
            <MilestoneActions order={order} m={m} />
          </li>
        ))}
      </ol>
      {fundable.length ? <FundNext order={order} fundable={fundable} /> : null}
    </section>
  );
}

function EndOrder({ order }: { order: RichOrder }) {
  const rest = order.milestones.filter((m) => m.status === 'scheduled');
  return (
    <details>
      <summary>{ACTION_LABELS.end}</summary>
      <p class="warning">
        The {rest.length === 1 ? 'milestone' : `${rest.length} milestones`} not funded yet will not be bought; what was paid out stays paid. This cannot be undone.
      </p>
      <ActionButton class="danger" data-action="end" work={async () => settled(ok(await client.orders.endOrder({ params: { order_id: order.order_id } }), 200))}>
        End the order now
      </ActionButton>
    </details>
  );
}

// ---------------------------------------------------------------- revisions, extensions, settlement

/** The milestone the agreement routes act on (current_milestone), or the order's only one. */
const currentOf = (o: RichOrder) => o.milestones.find((m) => m.index === o.current_milestone) ?? o.milestones[0]!;

function Revision({ order }: { order: RichOrder }) {
  const { fields, setFields, onError } = useFormErrors();
  const [text, setText] = useState('');
  const m = currentOf(order);
  const left = m.revisions_included - m.revisions_used;
  const allowed = order.allowed_actions.includes('request_revision');
  const buyer = session()?.wallet === order.buyer_wallet;
  // the buyer reviewing a delivery: the button is offered, or shown disabled with its reason when none are left
  if (!allowed && !(buyer && m.status === 'delivered' && m.revisions_included > 0)) return null;
  const hint = `What should change (the seller reads it in the conversation). ${left} of ${m.revisions_included} revision${m.revisions_included === 1 ? '' : 's'} left.`;
  return (
    <section aria-labelledby="revision" class="panel">
      <h3 id="revision">Request changes</h3>
      <p data-testid="revisions-left">
        {left > 0 ? `${left} of ${m.revisions_included} revision${m.revisions_included === 1 ? '' : 's'} left.` : `You used all ${m.revisions_included} revision${m.revisions_included === 1 ? '' : 's'} this order includes.`}
      </p>
      {allowed ? (
        <form class="stack" onSubmit={(e) => e.preventDefault()}>
          <Field id="revision-message" label="What should change?" hint={hint} error={fields.message}>
            <textarea {...described('revision-message', hint, fields.message)} rows={3} maxLength={4000} value={text} onInput={(e) => setText(e.currentTarget.value)} />
          </Field>
          <ActionButton
            class="primary"
            data-action="request_revision"
            onError={onError}
            work={async () => {
              const next = ok(await client.orders.requestRevision({ params: { order_id: order.order_id }, headers: keyed(), body: { message: text } }), 200);
              setText('');
              setFields({});
              void queryClient.invalidateQueries({ queryKey: ['messages', order.order_id] });
              settled(next);
            }}
          >
            Request changes
          </ActionButton>
        </form>
      ) : (
        <>
          <button type="button" disabled aria-describedby="revision-why">
            Request changes
          </button>
          <p id="revision-why" class="hint">
            No revisions left: confirm the delivery, propose a settlement, or open a dispute.
          </p>
        </>
      )}
    </section>
  );
}

/** `datetime-local` value of a time (the user's zone). */
const localInput = (ms: number) => {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
};

function Extension({ order }: { order: RichOrder }) {
  const { fields, onError } = useFormErrors();
  const p = order.extension_proposal;
  const m = currentOf(order);
  const may = (a: 'propose_extension' | 'accept_extension' | 'decline_extension') => order.allowed_actions.includes(a);
  const base = Date.parse(m.delivery_deadline ?? order.delivery_deadline);
  const [when, setWhen] = useState(localInput(Math.max(base, Date.now()) + 3 * 86_400_000));
  const [why, setWhy] = useState('');
  if (!p && !may('propose_extension')) return null;
  const hint = 'Later than the current deadline; the buyer accepts or declines it within a few days.';
  return (
    <section aria-labelledby="extension" class="panel">
      <h3 id="extension">More time</h3>
      {p ? (
        <div data-testid="extension-proposal">
          <p>
            The seller asks to move the delivery deadline to <strong><Time iso={p.new_deadline} /></strong>
            {p.message ? (
              <>
                : “<bdi>{p.message}</bdi>”
              </>
            ) : null}
            . The proposal lapses <Time iso={p.expires_at} />.
          </p>
          {may('accept_extension') || may('decline_extension') ? (
            <div class="row-actions">
              {may('accept_extension') ? (
                <ActionButton
                  class="primary"
                  data-action="accept_extension"
                  work={async () =>
                    settled(ok(await client.orders.acceptExtension({ params: { order_id: order.order_id }, headers: keyed(), body: { new_deadline: p.new_deadline } }), 200))
                  }
                >
                  {ACTION_LABELS.accept_extension}
                </ActionButton>
              ) : null}
              {may('decline_extension') ? (
                <ActionButton
                  data-action="decline_extension"
                  work={async () => settled(ok(await client.orders.declineExtension({ params: { order_id: order.order_id }, headers: keyed() }), 200))}
                >
                  {ACTION_LABELS.decline_extension}
                </ActionButton>
              ) : null}
            </div>
          ) : null}
          {may('accept_extension') ? <p class="hint">Accepting moves the deadline on chain, and with it the day from which you may take a refund.</p> : null}
        </div>
      ) : null}
      {may('propose_extension') ? (
        <form class="stack" onSubmit={(e) => e.preventDefault()}>
          <Field id="extension-date" label="New delivery deadline" hint={hint} error={fields.new_deadline}>
            <input type="datetime-local" {...described('extension-date', hint, fields.new_deadline)} value={when} onInput={(e) => setWhen(e.currentTarget.value)} />
          </Field>
          <Field id="extension-message" label="Why (for the buyer)" error={fields.message}>
            <textarea {...described('extension-message', undefined, fields.message)} rows={2} maxLength={2000} value={why} onInput={(e) => setWhy(e.currentTarget.value)} />
          </Field>
          <ActionButton
            data-action="propose_extension"
            onError={onError}
            work={async () => {
              const at = Date.parse(when);
              if (Number.isNaN(at)) throw new Error('Choose a date and time for the new deadline.');
              settled(
                ok(
                  await client.orders.proposeExtension({
                    params: { order_id: order.order_id },
                    headers: keyed(),
                    body: { new_deadline: new Date(at).toISOString(), ...(why.trim() ? { message: why.trim() } : {}) },
                  }),
                  200,
                ),
              );
            }}
          >
            {p ? 'Propose another deadline' : ACTION_LABELS.propose_extension}
          </ActionButton>
        </form>
      ) : null}
    </section>
  );
}

function Settlement({ order }: { order: RichOrder }) {
  const money = useMoney(order);
  const { onError } = useFormErrors();
  const p = order.settlement_proposal;
  const m = currentOf(order);
  const me = session()?.wallet === order.buyer_wallet ? 'buyer' : 'seller';
  const may = (a: 'propose_settlement' | 'accept_settlement' | 'withdraw_settlement') => order.allowed_actions.includes(a);
  const [percent, setPercent] = useState(50);
  if (!p && !may('propose_settlement')) return null;
  const amount = BigInt(m.amount_base_units);
  const preview = splitPreview(amount, percent * 100, order.fee_bps);
  const pct = (bps: number) => `${bps / 100} %`;
  return (
    <section aria-labelledby="settlement" class="panel">
      <h3 id="settlement">Settle by agreement</h3>
      <p>
        Split {order.milestones.length > 1 ? `milestone ${m.index}'s` : "this order's"} {money(amount)} between you without the arbiter: once the other party accepts, the escrow program pays exactly that split and closes.
      </p>
      {p ? (
        <div data-testid="settlement-proposal" data-bps={p.buyer_bps}>
          <p>
            <strong>{p.proposed_by === me ? 'You proposed' : `The ${p.proposed_by} proposes`}</strong>: {pct(p.buyer_bps)} back to the buyer ({money(p.preview.buyer_base_units)}), the seller receives{' '}
            {money(p.preview.seller_base_units)} after the {order.fee_bps / 100} % fee ({money(p.preview.treasury_base_units)}). Lapses <Time iso={p.expires_at} />.
          </p>
          {may('accept_settlement') ? (
            <>
              <p class="warning">Accepting pays this split at once and closes the escrow: it cannot be undone, and no dispute is possible afterwards.</p>
              <ActionButton
                class="primary"
                data-action="accept_settlement"
                onError={onError}
                work={async () =>
                  settled(ok(await client.orders.acceptSettlement({ params: { order_id: order.order_id }, headers: keyed(), body: { buyer_bps: p.buyer_bps } }), 200))
                }
              >
                Accept: {pct(p.buyer_bps)} to the buyer
              </ActionButton>
            </>
          ) : null}
          {may('withdraw_settlement') ? (
            <ActionButton
              data-action="withdraw_settlement"
              onError={onError}
              work={async () => settled(ok(await client.orders.withdrawSettlement({ params: { order_id: order.order_id }, headers: keyed() }), 200))}
            >
              {ACTION_LABELS.withdraw_settlement}
            </ActionButton>
          ) : null}
        </div>
      ) : null}
      {may('propose_settlement') ? (
        <form class="stack" onSubmit={(e) => e.preventDefault()}>
          <Field id="settlement-share" label="Share back to the buyer (%)" hint="0 % pays the seller everything; 100 % cancels: everything back to the buyer.">
            <input
              type="range"
              min={0}
              max={100}
              step={1}
              {...described('settlement-share', '0 % pays the seller everything; 100 % cancels: everything back to the buyer.')}
              value={percent}
              aria-valuetext={`${percent} % to the buyer`}
              onInput={(e) => setPercent(Number(e.currentTarget.value))}
            />
          </Field>
          <Field id="settlement-percent" label="Exact percent">
            <input
              type="number"
              id="settlement-percent"
              min={0}
              max={100}
              step={1}
              value={percent}
              onInput={(e) => setPercent(Math.max(0, Math.min(100, Math.round(Number(e.currentTarget.value) || 0))))}
            />
          </Field>
          <p data-testid="settlement-preview" aria-live="polite">
            The buyer gets {money(preview.buyer)}; the seller receives {money(preview.seller)} (the {order.fee_bps / 100} % fee, {money(preview.fee)}, is charged on the seller's share only).
          </p>
          <p class="warning">Money moves as soon as the other party accepts: propose only a split you are ready to be paid.</p>
          <ActionButton
            data-action="propose_settlement"
            onError={onError}
            work={async () =>
              settled(ok(await client.orders.proposeSettlement({ params: { order_id: order.order_id }, headers: keyed(), body: { buyer_bps: percent * 100 } }), 200))
            }
          >
            {p ? `Propose ${percent} % instead` : `Propose ${percent} % to the buyer`}
          </ActionButton>
        </form>
      ) : null}
    </section>
  );
}

// ---------------------------------------------------------------- tips

/** The order paid its seller something (a completed order, or a settled milestone with a seller share). */
const paidSeller = (o: RichOrder) => o.milestones.some((m) => m.payout && BigInt(m.payout.seller_base_units) > 0n);

function Tips({ order }: { order: RichOrder }) {
  const money = useMoney(order);
  const decimals = useDecimals();
  const buyer = session()?.wallet === order.buyer_wallet;
  const tips = useQuery({
    queryKey: ['tips', order.order_id],
    enabled: paidSeller(order),
    queryFn: async (): Promise<Tip[]> => ok(await client.tips.listOrderTips({ params: { order_id: order.order_id }, query: { limit: 20 } }), 200).data,
  });
  const { fields, onError } = useFormErrors();
  const [amount, setAmount] = useState('');
  if (!paidSeller(order) || order.payment_source !== 'wallet') return null;
  const confirmed = (tips.data ?? []).filter((t) => t.status === 'confirmed');
  if (!buyer && !confirmed.length) return null;
  return (
    <section aria-labelledby="tips" class="panel">
      <h3 id="tips">Tips</h3>
      {confirmed.length ? (
        <ul data-testid="tips">
          {confirmed.map((t) => (
            <li>
              {money(t.amount_base_units)} tip, confirmed <Time iso={t.confirmed_at} />
            </li>
          ))}
        </ul>
      ) : null}
      {buyer ? (
        <form class="stack" onSubmit={(e) => e.preventDefault()}>
          <Field id="tip-amount" label={`Tip the seller (${order.currency})`} hint="Paid from your wallet to the seller at once; no fee." error={fields.amount}>
            <input inputMode="decimal" {...described('tip-amount', 'Paid from your wallet to the seller at once; no fee.', fields.amount)} value={amount} onInput={(e) => setAmount(e.currentTarget.value)} />
          </Field>
          <ActionButton
            data-action="tip"
            onError={onError}
            work={async () => {
              if (decimalToBaseUnits(amount.trim(), decimals(order.currency)) === null) throw new Error('Enter an amount, e.g. 0.5.');
              const tip = ok(await client.tips.createTip({ params: { order_id: order.order_id }, headers: keyed(), body: { amount: Number(amount.trim()) } }), 201);
              say('Waiting for your wallet…');
              const done = await signWithWallet(
                tip.payment.transaction,
                async (signed) => ok(await client.tips.submitTipTransaction({ params: { order_id: order.order_id, tip_id: tip.tip_id }, body: { signed_transaction: signed } }), 200),
                async () => tip as Tip,
              );
              setAmount('');
              await queryClient.invalidateQueries({ queryKey: ['tips', order.order_id] });
              say(done.status === 'confirmed' ? `Thank you: your tip of ${money(done.amount_base_units)} reached the seller.` : 'Tip sent: it shows here once the chain confirms it.');
            }}
          >
            Send tip
          </ActionButton>
        </form>
      ) : null}
    </section>
  );
}

/** Everything issue 24 adds to an order page (see the module comment). */
export default function OrderDeals({ order }: { order: RichOrder }) {
  const multi = order.milestones.length > 1;
  return (
    <>
      {multi ? <Milestones order={order} /> : null}
      <div class="deals">
        <Revision order={order} />
        <Extension order={order} />
        <Settlement order={order} />
        {order.allowed_actions.includes('end') ? <EndOrder order={order} /> : null}
        <Tips order={order} />
      </div>
    </>
  );
}
