/**
 * Order states in plain words, and "what happens next": who acts, by when, and what the timers do
 * (the order lifecycle table of the contract, told to the buyer or the seller). The service's
 * `next_step` (actor, kind, due_at) is used when it sends one; the page adds a live countdown to `due`.
 */
import type { OrderAction, OrderLevelStatus as OrderStatus } from '@bazaar/client-sdk';
import type { RichOrder } from './queries.js';

export type Role = 'buyer' | 'seller' | 'other';

export const STATUS_WORDS: Record<OrderStatus, string> = {
  scheduled: 'Scheduled: not funded yet',
  ended: 'Ended by the buyer after a milestone',
  awaiting_payment: 'Waiting for payment',
  in_progress: 'Paid: work in progress',
  delivered: 'Delivered: waiting for the buyer to confirm',
  disputed: 'In dispute',
  completed: 'Completed: the seller was paid',
  resolved: 'Resolved by the arbiter',
  refunded: 'Refunded to the buyer',
  expired: 'Expired: not paid in time',
};

/** Button labels of the actions (the caller's `allowed_actions`). */
export const ACTION_LABELS: Record<OrderAction, string> = {
  pay: 'Pay with wallet',
  deliver: 'Mark delivered',
  confirm: 'Confirm delivery and release payment',
  dispute: 'Open a dispute',
  refund: 'Refund the buyer',
  resolve: 'Resolve dispute',
  review: 'Review the seller',
  request_revision: 'Request a revision',
  propose_extension: 'Ask for more time',
  accept_extension: 'Accept the new deadline',
  decline_extension: 'Decline the new deadline',
  propose_settlement: 'Propose a settlement',
  accept_settlement: 'Accept the settlement',
  withdraw_settlement: 'Withdraw the settlement proposal',
  fund: 'Fund the next milestone',
  end: 'End the order here',
};

/**
 * The agreement actions (issue 24: revisions, extensions, settlement by agreement): each needs its own form
 * (a message, a deadline, a split named back), which the order page has (pages/order-deals.tsx); they are
 * never offered as plain buttons (the order list and the order's action bar leave them out).
 */
export const AGREEMENT_ACTIONS: ReadonlySet<OrderAction> = new Set<OrderAction>([
  'request_revision',
  'propose_extension',
  'accept_extension',
  'decline_extension',
  'propose_settlement',
  'accept_settlement',
  'withdraw_settlement',
]);

export const roleOf = (o: RichOrder, wallet: string | undefined): Role =>
  o.buyer_wallet === wallet ? 'buyer' : o.seller_wallet === wallet ? 'seller' : 'other';

export interface NextStep {
  /** the sentence, without the time */
  text: string;
  /** when the step is due (a countdown is shown); null when no timer runs */
  due: string | null;
  /** what happens when `due` passes */
  after?: string;
}

type Told = Partial<Record<Role, string>> & { any: string };
const tell = (t: Told, role: Role) => t[role] ?? t.any;

/** The step in words, per `next_step.kind` and the reader's role. */
const KIND_WORDS: Record<string, Told> = {
  pay: { buyer: 'You pay into escrow; the seller is paid only when you confirm the delivery.', any: 'The buyer pays into escrow; start the work once it is paid.' },
  confirm_payment: { any: 'The service is confirming the payment on chain.' },
  expire: { any: 'The payment window closed unpaid: the service ends this order and nothing is charged.' },
  deliver: { seller: 'You deliver the work, with a message and links for the buyer.', any: 'The seller delivers the work; the payment stays in escrow meanwhile.' },
  refund_available: {
    buyer: 'The seller missed the delivery deadline: you may take a full refund now, or wait for the delivery.',
    seller: 'You missed the delivery deadline: the buyer may take a refund now; you can still deliver.',
    any: 'The seller missed the delivery deadline: the buyer may take a refund.',
  },
  confirm_or_dispute: {
    buyer: 'Check the delivery, then confirm it to pay the seller, or open a dispute if something is wrong.',
    any: 'The buyer checks the delivery and confirms it.',
  },
  auto_release: { any: 'The review window has passed: the service releases the payment to the seller.' },
  arbiter_decides: {
    seller: 'The arbiter (the marketplace operator) reads both sides and this conversation, then decides: pay you, refund the buyer, or split the amount. The escrow stays locked until then. You can also end the dispute by refunding the buyer.',
    any: 'The arbiter (the marketplace operator) reads both sides and this conversation, then decides: pay the seller, refund the buyer, or split the amount. The escrow stays locked until then. Add anything that helps in the conversation below.',
  },
};

/** What the timers do once the step is due (`next_step.after_due`). */
const AFTER_WORDS: Record<string, Told> = {
  hold_lapses: { buyer: 'Unpaid by then, the order expires and nothing is charged.', any: 'Unpaid by then, the order expires and the listing is for sale again.' },
  auto_release: { buyer: 'Without a word from you by then, the payment is released to the seller automatically.', seller: 'Without a dispute by then, the payment is released to you automatically.', any: 'Then the payment is released to the seller automatically.' },
  buyer_may_refund: { buyer: 'From then on you may take a full refund.', any: 'From then on the buyer may take a refund.' },
};

const DONE_WORDS: Record<OrderStatus, Told> = {
  scheduled: { any: '' },
  ended: { any: 'The buyer ended the order after a milestone: the rest was not bought.' },
  awaiting_payment: { any: '' },
  in_progress: { any: '' },
  delivered: { any: '' },
  disputed: { any: '' },
  completed: { any: 'Done: the seller was paid.' },
  resolved: { any: 'The arbiter decided this dispute; the escrow paid out as decided.' },
  refunded: { buyer: 'The whole amount went back to you; no fee was charged.', any: 'The buyer got the whole amount back; no fee was charged.' },
  expired: { any: 'Not paid in time: nothing was charged, and the listing is for sale again.' },
};

/** What happens next on `o` (the service's `next_step`: who acts, by when, what the timers do), told to `role`. */
export function nextStep(o: RichOrder, role: Role): NextStep {
  const s = o.next_step;
  const due = s.due_at;
  const after = s.after_due ? tell(AFTER_WORDS[s.after_due] ?? { any: '' }, role) || undefined : undefined;
  if (s.kind === 'done') {
    const text = tell(DONE_WORDS[o.status], role);
    return { text: o.allowed_actions.includes('review') ? `${text} You can review the seller.` : text, due: null };
  }
  const words = KIND_WORDS[s.kind];
  // a step this app does not know yet (new codes may come within v1): a generic line
  const text = words ? tell(words, role) : `Next: ${s.actor === role ? 'you' : `the ${s.actor}`} (${s.kind.replace(/_/g, ' ')}).`;
  return { text, due, after };
}
