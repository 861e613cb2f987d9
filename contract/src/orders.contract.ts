/**
 * Orders: a buyer's purchase of a listing, paid into an on-chain escrow (Anchor program, one order PDA
 * per order: seeds ["order", order_id as 16 bytes]; the vault is the PDA's associated token account).
 *
 * Order lifecycle table (`orderTransitions`; published in openapi.json as `x-order-transitions` of the Order
 * schema, with a rendered table in its description). The service enforces it, `allowed_actions` on each
 * order is the table evaluated for the caller on the same clocks, and the tests iterate over it:
 *
 * | from             | action       | to               | who              | timing (clock)                                  | on chain        | listing                | emits               |
 * |------------------|--------------|------------------|------------------|-------------------------------------------------|-----------------|------------------------|---------------------|
 * | (create)         | create       | awaiting_payment | buyer            | -                                               | -               | (held, status kept)    | order.created       |
 * | awaiting_payment | pay          | in_progress      | buyer (wallet)   | before payment_expires_at (service)             | fund            | order_funded           | order.funded        |
 * | awaiting_payment | expire       | expired          | system           | from payment_expires_at + grace (service)       | -               | (hold ends)            | order.expired       |
 * | in_progress      | deliver      | delivered        | seller           | -                                               | mark_delivered  | -                      | order.delivered     |
 * | in_progress      | dispute      | disputed         | buyer, seller    | -                                               | open_dispute    | -                      | order.disputed      |
 * | in_progress      | refund       | refunded         | seller, buyer, system | buyer: after delivery_deadline (chain) else 403 | refund          | order_refunded         | order.refunded      |
 * | in_progress      | confirm      | completed        | buyer            | -                                               | release         | order_completed        | order.completed     |
 * | delivered        | confirm      | completed        | buyer            | -                                               | release         | order_completed        | order.completed     |
 * | delivered        | auto_release | completed        | system           | from auto_release_at (chain) else 409           | claim           | order_completed        | order.auto_released |
 * | delivered        | dispute      | disputed         | buyer, seller    | before auto_release_at (chain) else 409         | open_dispute    | -                      | order.disputed      |
 * | delivered        | refund       | refunded         | seller, buyer    | buyer: after delivery_deadline if delivered late, before auto_release_at (chain) else 403 | refund | order_refunded | order.refunded |
 * | disputed         | resolve      | resolved         | admin (arbiter)  | -                                               | resolve_dispute | order_resolved_partial | order.resolved      |
 * | disputed         | refund       | refunded         | seller, buyer    | buyer: after delivery_deadline if not delivered by it (chain) else 403 | refund | order_refunded | order.refunded |
 *
 * Agreements (issue 24; rows after the table above in `orderTransitions`, one escrow unit = one milestone):
 * | from                           | action              | to          | who            | needs / timing                         | on chain            | emits                |
 * |--------------------------------|---------------------|-------------|----------------|----------------------------------------|---------------------|----------------------|
 * | delivered                      | request_revision    | in_progress | buyer          | revision_left; before auto_release_at  | request_revision    | revision.requested   |
 * | in_progress                    | propose_extension   | in_progress | seller         | -                                      | - (off chain)       | extension.proposed   |
 * | in_progress                    | accept_extension    | in_progress | buyer          | extension_pending                      | extend_deadline     | extension.accepted   |
 * | in_progress                    | decline_extension   | in_progress | buyer          | extension_pending                      | -                   | extension.declined   |
 * | in_progress                    | expire_extension    | in_progress | system         | extension_expired                      | -                   | extension.expired    |
 * | in_progress/delivered/disputed | propose_settlement  | (same)      | buyer, seller  | -                                      | propose_settlement  | settlement.proposed  |
 * | in_progress/delivered/disputed | accept_settlement   | resolved    | buyer, seller  | settlement_by_other                    | accept_settlement   | settlement.accepted  |
 * | in_progress/delivered/disputed | withdraw_settlement | (same)      | buyer, seller  | settlement_by_self                     | withdraw_settlement | settlement.withdrawn |
 * | in_progress/delivered/disputed | expire_settlement   | (same)      | system         | settlement_expired                     | -                   | settlement.expired   |
 *
 * Settled by agreement = `resolved` with `settled_by: agreement` (decision: not a new status; it is the same
 * outcome as an arbiter's split, reached without one: the same payout arithmetic, the same listing effect, the
 * same reviewability; `settled_by` tells them apart). A settlement may be proposed and accepted during a
 * dispute, and a dispute may be opened while one is pending. A proposal expires after its TTL
 * (ORDER_EXTENSION_PROPOSAL_TTL_SECONDS / ORDER_SETTLEMENT_PROPOSAL_TTL_SECONDS, 3 days): an expired one
 * no longer shows, cannot be accepted (409 proposal-expired) and its `*.expired` event is written once by
 * the service's sweep. Delivering ends a pending extension proposal; closing the escrow ends both.
 * The accepting party names the terms she accepts (`buyer_bps`, `new_deadline`): a proposal replaced
 * meanwhile is refused (409 proposal-changed), never accepted blind.
 *
 * Deadline rule (the escrow program enforces it too, `Order::buyer_may_refund`): once delivery_deadline has
 * passed without an on-time delivery, the buyer may refund alone: a funded order at any time, a late delivery
 * during its review window (before auto_release_at; then auto-release is the seller's), a disputed order at any
 * time (a dispute, whoever opened it, does not stop the deadline clock). A seller who missed the deadline
 * cannot block the refund by delivering late or by opening a dispute (Fiverr: a late order may be cancelled
 * by the buyer; Upwork: the client may still get a refund). Delivered on time, the buyer confirms or disputes.
 *
 * Early release (decision, issue 22): the buyer may confirm an order the seller has not marked delivered
 * (in_progress -> completed by `release`, the same payout as a confirmation after delivery). Upwork lets a
 * client release a milestone before work is submitted ("pay early"; it advises against it: the client
 * loses leverage), and a service may well be delivered outside the marketplace (a call, a session) before
 * the seller marks it. It is the buyer's own money, the seller only gains, and the escrow program has
 * always allowed it (`release` from Funded or Delivered): refusing it would take a program upgrade for no
 * one's protection. The web app puts it behind a warning. The program enforces this table as described
 * in "On chain" below, and tests/localnet.lifecycle-conformance.test.ts proves it row by row.
 *
 * On chain (programs/escrow): each party's own key may sign exactly its rows' instructions, in their
 * from-state, within their `chain` timing: the buyer's wallet (`pay` with the platform's co-signature of
 * the fund terms, `confirm`, `dispute`, `refund` under the deadline rule), the seller's wallet (`deliver`,
 * `dispute`, `refund`), the arbiter (`resolve`); any other (state, action, party) fails with the program's
 * error. A `permissionless` row (`auto_release`, `claim`) may be signed by any key once its timing allows. The platform authority
 * is the service: it signs the system rows and signs for the buyer and the seller when they act through
 * the API (the server checks the caller, the row and its timing first), so the program lets it take any
 * instruction some buyer, seller or system row allows in that state (the buyer's timing binds only the
 * buyer's key), and refuses the others.
 *
 * Timing compares a clock with an order field: `chain` is the cluster's unix time (the escrow program's
 * Clock: what the program itself enforces), `service` the server's clock (payment window). A resolve with
 * buyer_bps = 10000 (a full refund) puts the listing back on sale (`order_resolved_full`). The buyer may
 * review a completed or resolved order once (`review` in allowed_actions, REVIEWABLE_ORDER_STATUSES).
 *
 * completed, resolved, refunded and expired are terminal. Any other action answers 409
 * invalid-state-transition (e.g. dispute on a completed order, confirm during a dispute). A party acting
 * outside its role gets 403 forbidden; a caller who is neither buyer, seller nor admin gets 404 not-found.
 * The spec's example statuses `in_escrow` and `dispute` are aliases of `in_progress` and `disputed`;
 * they are accepted nowhere and never emitted.
 *
 * `escrow_state` mirrors the program: none (no escrow yet / never funded), funded, delivered, disputed,
 * and after the order account is closed: released (completed), refunded, resolved.
 *
 * Money: `amount`/`amount_base_units` is what the buyer pays into escrow (the listing price at order
 * time). `fee_bps` (platform fee snapshot, <= 1000) applies to the seller's payout:
 * fee_base_units = floor(amount_base_units * fee_bps / 10000), seller_receives_base_units = amount - fee.
 * On resolve, the buyer gets floor(amount * buyer_bps / 10000); the rest, minus the fee on it, goes to the
 * seller. Refunds return the full amount; no fee is charged.
 *
 * Payment source: `wallet` (default) — the buyer's wallet signs the fund transaction returned in `payment`;
 * `custodial` (only when the operator enables custody) — the service funds the escrow from the buyer's
 * custodial balance while creating the order, from its hot wallet, with the buyer's deposit address as the
 * on-chain buyer (same program, same lifecycle; refunds and dispute splits come back to that address and are
 * credited to the custodial balance). Custodial orders have `payment: null` and no `pay` action.
 *
 * Times: delivery_deadline = created_at + listing.duration days (absolute, fixed at creation and written
 * into the escrow by `fund`);
 * review_window_seconds (default 259200 = 3 days) starts at delivery: auto_release_at = delivered_at +
 * review window. payment_expires_at = created_at + 15 minutes (default).
 *
 * Racing buyers (decision): a listing is held for an order from its creation, so it is sold at most its
 * `stock` times and nobody pays for a unit that is gone. One open order (awaiting_payment, in_progress,
 * delivered or disputed) per unit of the listing's `capacity` (default 1; an open order also counts against
 * the remaining `stock`): a buyer after the last unit gets 409 listing-unavailable (`held_until`: when the
 * first unpaid hold lapses at the latest) before paying anything, and the listing reads `reserved` with
 * `held_until` while unpaid holds are what fills it (listings contract, "Repeat sales"). The hold of an unpaid order ends when it expires (payment_expires_at + 120 s
 * for a transaction still in flight). Against griefing (holds by buyers who never pay), holds are tied
 * to buyers who can pay and bounded (defaults; ORDER_* settings):
 *   - funds: a wallet order is refused unless the buyer wallet's balances on chain cover it: the token
 *     balance of the order's currency >= the amount plus the buyer wallet's other unpaid orders in it, and
 *     SOL >= network fee + rent of the accounts the fund transaction creates (both read from the RPC);
 *     a custodial order needs the available custodial balance (409 insufficient-funds);
 *   - per buyer: at most 3 unpaid orders (409 too-many-unpaid-orders);
 *   - per client network (IPv4 address / IPv6 /64; API keys are exempt): at most 10 (429 too-many-holds);
 *   - cool-down: a buyer (user, wallet or network) whose wallet order for a listing expired unpaid cannot
 *     order that listing again for an hour (409 hold-cooldown), so a hold cannot be renewed forever;
 *   - shorter windows under pressure: the payment window is 5 minutes instead of 15 when the listing is
 *     contested (an unpaid hold on it lapsed within the cool-down) or the network holds half its limit.
 * Refunded and expired orders free their unit, completed ones (and resolved ones with a seller share) sell it.
 *
 * Milestones (issue 24): an order has 1..10 milestones (`milestones[]`, `current_milestone`); each is its
 * own escrow (one order PDA + vault per funded milestone, escrow id = the milestone's id; milestone 1's id is
 * the order's id). The lifecycle table above is PER MILESTONE: each milestone takes its rows on its own
 * (rows marked `milestone: 'first'` / `'later'` apply to those only): later milestones are created
 * `scheduled`, funded by the buyer (`fund`: the next ones in order, one transaction, one signature), and
 * lapse back to scheduled when unpaid. A one-milestone order is exactly the order described above. An order
 * with several reads an order-level status (awaiting_payment, in_progress, completed, refunded, expired,
 * `ended`: the buyer ended it after a settled milestone) and its listing follows the order: reserved from
 * milestone 1's funding, sold when it completes or ends after a seller payout, else available again.
 * Events: milestone.* per milestone, order.* when the order as a whole changes (order.ended included).
 *
 * Fund transactions: each one is valid until its blockhash expires (`payment.expires_at`, about a
 * minute); POST /orders/{id}/payment (the buyer) or the Solana Pay POST (wallets) hands out a fresh one
 * while the order awaits payment inside its payment window, never afterwards. A fund transaction that
 * lands after its order was closed is refunded to the buyer by the service.
 */
import { z } from 'zod';
import {
  extendApi,
  Base64,
  BaseUnits,
  Bps,
  c,
  CurrencyCode,
  IdempotencyHeaders,
  named,
  namedExtension,
  page,
  PaginationQuery,
  safeText,
  Pubkey,
  Timestamp,
  TxSignature,
  ExplorerUrl,
  Uuid,
} from './common.js';
import { MAX_MILESTONES, PackageKey, type ListingOrderEvent } from './listings.contract.js';
import { access } from './access.js';
import { DISPUTE_LIMITS, DisputeReasonCode } from './disputes.terms.js';
import { bodyProblems, routeErrors } from './problems.js';

export const ORDER_STATUSES = [
  'scheduled',
  'awaiting_payment',
  'in_progress',
  'delivered',
  'completed',
  'disputed',
  'resolved',
  'refunded',
  'expired',
] as const;
export const OrderStatus = z.enum(ORDER_STATUSES);
export type OrderStatus = z.infer<typeof OrderStatus>;

/** Spec example names, documented as aliases; never emitted nor accepted. */
export const orderStatusAliases = { in_escrow: 'in_progress', dispute: 'disputed' } as const;

export const TERMINAL_ORDER_STATUSES = ['completed', 'resolved', 'refunded', 'expired'] as const satisfies readonly OrderStatus[];

/**
 * Statuses of an order as a whole (the Order's `status`): a row status (a one-milestone order's status is
 * its row's), plus `ended`, which only an order with several milestones reaches (the buyer ended it after a
 * settled milestone: the unfunded rest is not bought). A multi-milestone order's status is derived from its
 * milestones (see "Milestones" in the module comment); it is never `scheduled`.
 */
export const ORDER_LEVEL_STATUSES = [...ORDER_STATUSES, 'ended'] as const;
export const OrderLevelStatus = z.enum(ORDER_LEVEL_STATUSES);
export type OrderLevelStatus = z.infer<typeof OrderLevelStatus>;
/** Order-level statuses in which nothing more happens to the order. */
export const TERMINAL_ORDER_LEVEL_STATUSES = [...TERMINAL_ORDER_STATUSES, 'ended'] as const satisfies readonly OrderLevelStatus[];

export const ESCROW_STATES = ['none', 'funded', 'delivered', 'disputed', 'released', 'refunded', 'resolved'] as const;
export const EscrowState = z.enum(ESCROW_STATES);
export type EscrowState = z.infer<typeof EscrowState>;

/** escrow_state for each order status. */
export const escrowStateOf: Record<OrderStatus, EscrowState> = {
  scheduled: 'none',
  awaiting_payment: 'none',
  in_progress: 'funded',
  delivered: 'delivered',
  disputed: 'disputed',
  completed: 'released',
  resolved: 'resolved',
  refunded: 'refunded',
  expired: 'none',
};

export const PaymentSource = z
  .enum(['wallet', 'custodial'])
  .describe(
    'wallet: the buyer\'s wallet signs the fund transaction; custodial: the service funds the escrow from the buyer\'s ' +
      'custodial balance (buyer_wallet is then the buyer\'s deposit address)',
  );
export type PaymentSource = z.infer<typeof PaymentSource>;

/** Actions a caller can take, as listed in `allowed_actions`. */
export const ORDER_ACTIONS = [
  'pay',
  'deliver',
  'confirm',
  'dispute',
  'refund',
  'resolve',
  'review',
  'request_revision',
  'propose_extension',
  'accept_extension',
  'decline_extension',
  'propose_settlement',
  'accept_settlement',
  'withdraw_settlement',
  'fund',
  'end',
] as const;
export const OrderAction = z.enum(ORDER_ACTIONS);
export type OrderAction = z.infer<typeof OrderAction>;

export type OrderActor = 'buyer' | 'seller' | 'admin' | 'system';

/**
 * The escrow program's instructions the service uses (programs/escrow; shown as `transactions[].action`).
 * The server checks at compile time that the program's IDL has each of them.
 */
export const ESCROW_INSTRUCTIONS = [
  'fund',
  'mark_delivered',
  'release',
  'claim',
  'open_dispute',
  'resolve_dispute',
  'refund',
  'request_revision',
  'extend_deadline',
  'propose_settlement',
  'accept_settlement',
  'withdraw_settlement',
] as const;
export type EscrowInstruction = (typeof ESCROW_INSTRUCTIONS)[number];

/**
 * Names of the order events: the orders repository appends the `emits` of each lifecycle transition to the
 * event outbox in the change's transaction, served by GET /events, the SSE stream and webhooks. The
 * agreement events (`revision.*`, `extension.*`, `settlement.*`, issue 24) are order events too (resource
 * `order`, data the Order with its proposals): rows that keep the status (a proposal) emit them as well.
 */
export const ORDER_EVENTS = [
  'order.created',
  'order.funded',
  'order.delivered',
  'order.completed',
  'order.disputed',
  'order.resolved',
  'order.refunded',
  'order.expired',
  'order.auto_released',
  'revision.requested',
  'extension.proposed',
  'extension.accepted',
  'extension.declined',
  'extension.expired',
  'settlement.proposed',
  'settlement.accepted',
  'settlement.withdrawn',
  'settlement.expired',
] as const;
export type OrderEvent = (typeof ORDER_EVENTS)[number];

/**
 * Events of one milestone of an order with several milestones (resource_type `order`, resource_id the
 * order's id; data: the Order with `milestone_index`). The lifecycle table's rows emit the order.* event;
 * on a multi-milestone order's rows the service publishes the milestone.* event of it instead
 * (`MILESTONE_EVENT_OF`), and an order.* event only when the order as a whole changes status
 * (order.funded when milestone 1 is funded, order.completed / refunded / expired when it closes,
 * `order.ended`). The scheduled rows emit milestone.payment_due / milestone.lapsed.
 */
export const MILESTONE_EVENTS = [
  'milestone.payment_due',
  'milestone.lapsed',
  'milestone.funded',
  'milestone.delivered',
  'milestone.released',
  'milestone.disputed',
  'milestone.resolved',
  'milestone.refunded',
] as const;
export type MilestoneEvent = (typeof MILESTONE_EVENTS)[number];

/** Order events that no row of the lifecycle table emits: the order as a whole changed (`order.ended`). */
export const ORDER_LEVEL_EVENTS = ['order.ended'] as const;
export type OrderLevelEvent = (typeof ORDER_LEVEL_EVENTS)[number];

/** The milestone.* event a multi-milestone order's row publishes for the order.* event its row emits. */
export const MILESTONE_EVENT_OF: Partial<Record<OrderEvent, MilestoneEvent>> = {
  'order.funded': 'milestone.funded',
  'order.delivered': 'milestone.delivered',
  'order.completed': 'milestone.released',
  'order.auto_released': 'milestone.released',
  'order.disputed': 'milestone.disputed',
  'order.resolved': 'milestone.resolved',
  'order.refunded': 'milestone.refunded',
};


/**
 * Payment grace, seconds: an unpaid order is expired (and its hold on the listing ends) this long after
 * payment_expires_at, covering a fund transaction issued just before it that lands until its blockhash
 * expires. A listing's `held_until` is its holder's payment_expires_at + this.
 */
export const PAYMENT_GRACE_SECONDS = 120;

/**
 * When a transition may happen: `now` on `clock` compared with the order field `at` (plus the payment
 * grace when `grace` is set: a service setting, 120 s by default, covering a fund transaction issued just
 * before payment_expires_at that lands until its blockhash expires).
 *  - before: now < at (a field that is not set yet, e.g. auto_release_at before delivery, never blocks);
 *  - from:   now >= at;
 *  - after:  now > at (a field that is not set never allows).
 * `late`: the rule also requires that the seller missed delivery_deadline (delivered_at unset or after it);
 * `until`: and now < that field (the second bound of a window, e.g. a late delivery's review window).
 * `clock` chain = the cluster's unix time (the escrow program's Clock sysvar, what the program enforces);
 * service = the server's wall clock. `only`: the rule binds that actor only. `refusal`: the problem a
 * caller gets when the rule refuses (403 forbidden or 409 invalid-state-transition).
 */
export interface OrderTiming {
  clock: 'chain' | 'service';
  at: 'payment_expires_at' | 'delivery_deadline' | 'auto_release_at';
  allowed: 'before' | 'from' | 'after';
  grace?: 'payment';
  /** and the seller missed delivery_deadline: delivered_at is not set, or later than delivery_deadline */
  late?: true;
  /** and now < this field on the same clock (a field that is not set never blocks) */
  until?: 'auto_release_at';
  only?: OrderActor;
  refusal: 'forbidden' | 'invalid-state-transition';
}

/**
 * What a row needs of the order besides its status (issue 24, agreements), checked by the service with the
 * row (`allowed_actions` included):
 *  - revision_left: revisions_used < revisions_included, else 409 revision-limit-reached;
 *  - extension_pending: a pending deadline-extension proposal (409 no-pending-proposal), not expired
 *    (409 proposal-expired; service clock);
 *  - settlement_by_other: a pending settlement proposal (409 no-pending-proposal) that the caller did not make
 *    (403 forbidden: the proposer cannot accept her own), not expired (409 proposal-expired; chain clock,
 *    the program checks it);
 *  - settlement_by_self: a pending settlement proposal made by the caller (403 forbidden otherwise);
 *  - extension_expired / settlement_expired: the system's expiry of a pending proposal past its expires_at.
 */
export type OrderRequirement =
  | 'revision_left'
  | 'extension_pending'
  | 'settlement_by_other'
  | 'settlement_by_self'
  | 'extension_expired'
  | 'settlement_expired';

export interface OrderTransition {
  from: OrderStatus | null;
  action: OrderAction | 'create' | 'expire' | 'auto_release' | 'expire_extension' | 'expire_settlement' | 'schedule' | 'lapse';
  to: OrderStatus;
  /** who may take it (system = the service's own timers) */
  by: readonly OrderActor[];
  timing?: OrderTiming;
  /** only orders paid this way (custodial orders are funded by the service, never by the buyer) */
  paymentSource?: PaymentSource;
  /** escrow program instruction, when the transition happens on chain */
  instruction?: EscrowInstruction;
  /**
   * the program lets any key sign `instruction` (a crank: only the state and the timing are checked);
   * `by` is who takes the transition in the service
   */
  permissionless?: true;
  /** listing transition it causes (an `event` of `listingTransitions`) */
  listing?: ListingOrderEvent;
  /** the listing transition instead, when a resolve returns everything to the buyer (buyer_bps = 10000) */
  listingOnFullRefund?: ListingOrderEvent;
  /** event published when the order takes this transition */
  emits: OrderEvent | MilestoneEvent;
  /** the row applies to the first milestone of an order only, or to the later ones only (absent: any) */
  milestone?: 'first' | 'later';
  /** contract route key that triggers it (system transitions have none) */
  route?: keyof typeof orders;
  /** what the row needs of the order besides its status (OrderRequirement) */
  requires?: OrderRequirement;
  /**
   * `key`: a repeat of this action is answered by its Idempotency-Key (the stored answer), not by the
   * status: the row may keep the status (a proposal) or lead to one another row also reaches. Without it,
   * an action whose target status is already there answers the order, nothing sent (the older rows).
   */
  repeat?: 'key';
  /** remark for readers */
  note?: string;
}

const beforePaymentExpiry: OrderTiming = { clock: 'service', at: 'payment_expires_at', allowed: 'before', refusal: 'invalid-state-transition' };

/** The order lifecycle table (null `from` = creation); see the module comment. */
export const orderTransitions = [
  { from: null, action: 'create', to: 'awaiting_payment', by: ['buyer'], emits: 'order.created', route: 'createOrder', note: 'the listing is held for the order (one open order per unit of its capacity); also by acceptOffer, with a custom offer\'s terms' },
  {
    from: 'awaiting_payment',
    action: 'pay',
    to: 'in_progress',
    by: ['buyer'],
    timing: beforePaymentExpiry,
    paymentSource: 'wallet',
    instruction: 'fund',
    listing: 'order_funded',
    emits: 'order.funded',
    route: 'submitOrderTransaction',
    note: 'also detected when the buyer\'s wallet sends the fund transaction itself (Solana Pay)',
  },
  {
    from: 'awaiting_payment',
    action: 'expire',
    to: 'expired',
    by: ['system'],
    timing: { clock: 'service', at: 'payment_expires_at', allowed: 'from', grace: 'payment', refusal: 'invalid-state-transition' },
    emits: 'order.expired',
    milestone: 'first',
    note: 'the hold on the listing ends',
  },
  {
    from: null,
    action: 'schedule',
    to: 'scheduled',
    by: ['buyer'],
    emits: 'order.created',
    milestone: 'later',
    route: 'createOrder',
    note: 'milestones 2..n of an order are created scheduled with it (no hold, no payment window, no escrow)',
  },
  {
    from: 'scheduled',
    action: 'fund',
    to: 'awaiting_payment',
    by: ['buyer'],
    paymentSource: 'wallet',
    emits: 'milestone.payment_due',
    milestone: 'later',
    route: 'fundOrderMilestones',
    note: 'the next unfunded milestone(s), in order, with a fresh payment window; then the pay row applies',
  },
  {
    from: 'awaiting_payment',
    action: 'lapse',
    to: 'scheduled',
    by: ['system'],
    timing: { clock: 'service', at: 'payment_expires_at', allowed: 'from', grace: 'payment', refusal: 'invalid-state-transition' },
    emits: 'milestone.lapsed',
    milestone: 'later',
    note: 'an unpaid later milestone goes back to scheduled: the buyer may fund it again (the order stays open)',
  },
  { from: 'in_progress', action: 'deliver', to: 'delivered', by: ['seller'], instruction: 'mark_delivered', emits: 'order.delivered', route: 'deliverOrder' },
  { from: 'in_progress', action: 'dispute', to: 'disputed', by: ['buyer', 'seller'], instruction: 'open_dispute', emits: 'order.disputed', route: 'disputeOrder' },
  {
    from: 'in_progress',
    action: 'refund',
    to: 'refunded',
    by: ['seller', 'buyer', 'system'],
    timing: { clock: 'chain', at: 'delivery_deadline', allowed: 'after', only: 'buyer', refusal: 'forbidden' },
    instruction: 'refund',
    listing: 'order_refunded',
    emits: 'order.refunded',
    route: 'refundOrder',
    note: 'system: the service refunds a funded order whose listing another order took meanwhile',
  },
  {
    from: 'in_progress',
    action: 'confirm',
    to: 'completed',
    by: ['buyer'],
    instruction: 'release',
    listing: 'order_completed',
    emits: 'order.completed',
    route: 'confirmOrder',
    note: 'early release: the buyer pays before the seller marked the order delivered (Upwork: "pay early")',
  },
  { from: 'delivered', action: 'confirm', to: 'completed', by: ['buyer'], instruction: 'release', listing: 'order_completed', emits: 'order.completed', route: 'confirmOrder' },
  {
    from: 'delivered',
    action: 'auto_release',
    to: 'completed',
    by: ['system'],
    timing: { clock: 'chain', at: 'auto_release_at', allowed: 'from', refusal: 'invalid-state-transition' },
    instruction: 'claim',
    permissionless: true,
    listing: 'order_completed',
    emits: 'order.auto_released',
    note: 'the service cranks claim; anyone may',
  },
  {
    from: 'delivered',
    action: 'dispute',
    to: 'disputed',
    by: ['buyer', 'seller'],
    timing: { clock: 'chain', at: 'auto_release_at', allowed: 'before', refusal: 'invalid-state-transition' },
    instruction: 'open_dispute',
    emits: 'order.disputed',
    route: 'disputeOrder',
  },
  {
    from: 'delivered',
    action: 'refund',
    to: 'refunded',
    by: ['seller', 'buyer'],
    timing: { clock: 'chain', at: 'delivery_deadline', allowed: 'after', late: true, until: 'auto_release_at', only: 'buyer', refusal: 'forbidden' },
    instruction: 'refund',
    listing: 'order_refunded',
    emits: 'order.refunded',
    route: 'refundOrder',
    note: 'buyer: a late delivery may be refused by a refund during its review window (deadline rule)',
  },
  {
    from: 'disputed',
    action: 'resolve',
    to: 'resolved',
    by: ['admin'],
    instruction: 'resolve_dispute',
    listing: 'order_resolved_partial',
    listingOnFullRefund: 'order_resolved_full',
    emits: 'order.resolved',
    route: 'resolveDispute',
    note: 'any buyer_bps split, signed by the arbiter',
  },
  {
    from: 'disputed',
    action: 'refund',
    to: 'refunded',
    by: ['seller', 'buyer'],
    timing: { clock: 'chain', at: 'delivery_deadline', allowed: 'after', late: true, only: 'buyer', refusal: 'forbidden' },
    instruction: 'refund',
    listing: 'order_refunded',
    emits: 'order.refunded',
    route: 'refundOrder',
    note: 'the seller gives up the dispute; the buyer: a dispute does not stop the deadline clock (deadline rule)',
  },
  // ---- issue 24: revisions, deadline extensions, settlement by agreement (one row per escrow unit = milestone) ----
  {
    from: 'delivered',
    action: 'request_revision',
    to: 'in_progress',
    by: ['buyer'],
    timing: { clock: 'chain', at: 'auto_release_at', allowed: 'before', refusal: 'invalid-state-transition' },
    requires: 'revision_left',
    instruction: 'request_revision',
    emits: 'revision.requested',
    route: 'requestRevision',
    repeat: 'key',
    note: 'the auto-release timer stops (delivered_at cleared); delivery_deadline = max(old, now + max(old - delivered_at, 1 day)), capped by the program',
  },
  { from: 'in_progress', action: 'propose_extension', to: 'in_progress', by: ['seller'], emits: 'extension.proposed', route: 'proposeExtension', repeat: 'key', note: 'off chain; replaces a pending one' },
  {
    from: 'in_progress',
    action: 'accept_extension',
    to: 'in_progress',
    by: ['buyer'],
    requires: 'extension_pending',
    instruction: 'extend_deadline',
    emits: 'extension.accepted',
    route: 'acceptExtension',
    repeat: 'key',
    note: 'the program moves delivery_deadline (and with it the buyer\'s refund right) only with her signature or the platform\'s for her',
  },
  { from: 'in_progress', action: 'decline_extension', to: 'in_progress', by: ['buyer'], requires: 'extension_pending', emits: 'extension.declined', route: 'declineExtension', repeat: 'key', note: 'off chain' },
  { from: 'in_progress', action: 'expire_extension', to: 'in_progress', by: ['system'], requires: 'extension_expired', emits: 'extension.expired', note: 'off chain, once, by the proposal sweep' },
  {
    from: 'in_progress',
    action: 'propose_settlement',
    to: 'in_progress',
    by: ['buyer', 'seller'],
    instruction: 'propose_settlement',
    emits: 'settlement.proposed',
    route: 'proposeSettlement',
    repeat: 'key',
    note: 'replaces a pending proposal (a counter-offer)',
  },
  {
    from: 'in_progress',
    action: 'accept_settlement',
    to: 'resolved',
    by: ['buyer', 'seller'],
    requires: 'settlement_by_other',
    instruction: 'accept_settlement',
    listing: 'order_resolved_partial',
    listingOnFullRefund: 'order_resolved_full',
    emits: 'settlement.accepted',
    route: 'acceptSettlement',
    repeat: 'key',
    note: 'settled_by agreement: the proposed split, the fee on the seller\'s share only (as resolve); no arbiter',
  },
  { from: 'in_progress', action: 'withdraw_settlement', to: 'in_progress', by: ['buyer', 'seller'], requires: 'settlement_by_self', instruction: 'withdraw_settlement', emits: 'settlement.withdrawn', route: 'withdrawSettlement', repeat: 'key' },
  { from: 'in_progress', action: 'expire_settlement', to: 'in_progress', by: ['system'], requires: 'settlement_expired', emits: 'settlement.expired', note: 'off chain, once, by the proposal sweep (the program refuses an expired one anyway)' },
  {
    from: 'delivered',
    action: 'propose_settlement',
    to: 'delivered',
    by: ['buyer', 'seller'],
    instruction: 'propose_settlement',
    emits: 'settlement.proposed',
    route: 'proposeSettlement',
    repeat: 'key',
    note: 'replaces a pending proposal (a counter-offer)',
  },
  {
    from: 'delivered',
    action: 'accept_settlement',
    to: 'resolved',
    by: ['buyer', 'seller'],
    requires: 'settlement_by_other',
    instruction: 'accept_settlement',
    listing: 'order_resolved_partial',
    listingOnFullRefund: 'order_resolved_full',
    emits: 'settlement.accepted',
    route: 'acceptSettlement',
    repeat: 'key',
    note: 'settled_by agreement: the proposed split, the fee on the seller\'s share only (as resolve); no arbiter',
  },
  { from: 'delivered', action: 'withdraw_settlement', to: 'delivered', by: ['buyer', 'seller'], requires: 'settlement_by_self', instruction: 'withdraw_settlement', emits: 'settlement.withdrawn', route: 'withdrawSettlement', repeat: 'key' },
  { from: 'delivered', action: 'expire_settlement', to: 'delivered', by: ['system'], requires: 'settlement_expired', emits: 'settlement.expired', note: 'off chain, once, by the proposal sweep (the program refuses an expired one anyway)' },
  {
    from: 'disputed',
    action: 'propose_settlement',
    to: 'disputed',
    by: ['buyer', 'seller'],
    instruction: 'propose_settlement',
    emits: 'settlement.proposed',
    route: 'proposeSettlement',
    repeat: 'key',
    note: 'replaces a pending proposal (a counter-offer)',
  },
  {
    from: 'disputed',
    action: 'accept_settlement',
    to: 'resolved',
    by: ['buyer', 'seller'],
    requires: 'settlement_by_other',
    instruction: 'accept_settlement',
    listing: 'order_resolved_partial',
    listingOnFullRefund: 'order_resolved_full',
    emits: 'settlement.accepted',
    route: 'acceptSettlement',
    repeat: 'key',
    note: 'settled_by agreement: the proposed split, the fee on the seller\'s share only (as resolve); no arbiter',
  },
  { from: 'disputed', action: 'withdraw_settlement', to: 'disputed', by: ['buyer', 'seller'], requires: 'settlement_by_self', instruction: 'withdraw_settlement', emits: 'settlement.withdrawn', route: 'withdrawSettlement', repeat: 'key' },
  { from: 'disputed', action: 'expire_settlement', to: 'disputed', by: ['system'], requires: 'settlement_expired', emits: 'settlement.expired', note: 'off chain, once, by the proposal sweep (the program refuses an expired one anyway)' },
] as const satisfies readonly OrderTransition[];

/** One row of the order lifecycle table, with its literal types. */
export type OrderTransitionRow = (typeof orderTransitions)[number];

/** Statuses in which the buyer may review (once). */
export const REVIEWABLE_ORDER_STATUSES = ['completed', 'resolved'] as const satisfies readonly OrderStatus[];
/** Order-level statuses in which the buyer may review a multi-milestone order (`ended` only with a seller payout). */
export const REVIEWABLE_ORDER_LEVEL_STATUSES = ['completed', 'resolved', 'ended'] as const satisfies readonly OrderLevelStatus[];

/** The lifecycle table as markdown (the Order schema's description in openapi.json and /docs). */
export function orderTransitionsMarkdown(): string {
  const timing = (t?: OrderTiming) =>
    t
      ? `${t.only ? `${t.only}: ` : ''}${t.allowed} ${t.at}${t.grace ? ' + grace' : ''}` +
        `${t.late ? ' if not delivered by delivery_deadline' : ''}${t.until ? `, before ${t.until}` : ''} (${t.clock} clock; else ${t.refusal})`
      : '';
  const rows = (orderTransitions as readonly OrderTransition[]).map((t) =>
    [
      t.from ?? '(create)',
      t.action,
      t.to,
      t.by.join(', ') + (t.paymentSource ? ` (${t.paymentSource})` : ''),
      [timing(t.timing), t.requires && `needs ${t.requires}`].filter(Boolean).join('; '),
      t.instruction ?? '',
      [t.listing, t.listingOnFullRefund && `${t.listingOnFullRefund} at buyer_bps 10000`].filter(Boolean).join('; '),
      t.emits,
    ].join(' | '),
  );
  return [
    '| from | action | to | who | timing | escrow instruction | listing | emits |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map((r) => `| ${r} |`),
  ].join('\n');
}

export const ChainTransactionStatus = z.enum(['pending', 'confirmed', 'finalized', 'failed']);

export const OrderTransaction = named(
  'OrderTransaction',
  z.object({
    action: z.enum(ESCROW_INSTRUCTIONS).describe('Escrow program instruction'),
    signature: TxSignature,
    explorer_url: ExplorerUrl('the transaction'),
    status: ChainTransactionStatus,
    slot: z.number().int().min(0).nullable(),
    created_at: Timestamp,
  }),
  'An on-chain transaction of the order',
);

export const OrderPayout = named(
  'OrderPayout',
  z.object({
    buyer_base_units: BaseUnits.describe('Returned to the buyer (refund, the buyer\'s share of a dispute split)'),
    seller_base_units: BaseUnits.describe('Paid to the seller'),
    treasury_base_units: BaseUnits.describe('Platform fee (and any surplus swept out of the vault)'),
    verified: z
      .boolean()
      .describe('The program event, the token transfers out of the vault and its balance before closing all agree'),
  }),
  'What left the escrow vault when the order closed, per payee, as the chain recorded it for this order',
);

export const OrderAttention = named(
  'OrderAttention',
  z.object({
    reason: z
      .string()
      .describe('escrow-vanished: the escrow account is gone and no transaction that closed it is known'),
    detail: z.string().describe('What the service read from the chain (vault balance, fund transaction status)'),
    detected_at: Timestamp,
  }),
  'The service found this order\'s escrow in a state it cannot explain; an operator reconciles it',
);

export const OrderResolution = named(
  'OrderResolution',
  z.object({ buyer_bps: Bps.describe('Share of the escrow returned to the buyer, basis points 0..10000') }),
);

/** What a party summary says of a user's reputation (as a seller: reviews rate sellers). */
export const PartyRating = named(
  'PartyRating',
  z.object({
    average: z.number().min(1).max(5).nullable().describe('Mean rating received as a seller, rounded to 2 decimals; null without reviews'),
    review_count: z.number().int().min(0).describe('Reviews received as a seller'),
  }),
);

/**
 * A party of an order as the other party sees it: enough to name them in a list (the full profile is
 * GET /users/{wallet}).
 */
export const OrderParty = named(
  'OrderParty',
  z.object({
    wallet: Pubkey.describe(
      'The party\'s account wallet (its identity; GET /users/{wallet}). For a custodial order\'s buyer this is the ' +
        'user\'s wallet, not buyer_wallet (the deposit address)',
    ),
    display_name: z.string().nullable().describe('The profile\'s display name; null when the user set none'),
    rating: PartyRating,
  }),
  'A buyer or seller of an order: wallet, display name and rating',
);
export type OrderParty = z.infer<typeof OrderParty>;

/** The listing an order bought, as the order shows it (current title and category). */
export const OrderListingSummary = named(
  'OrderListingSummary',
  z.object({
    listing_id: Uuid,
    title: z.string(),
    category_slug: z.string().describe('Category slug (GET /categories)'),
    category_name: z.string().describe('The category\'s display name (the slug when the category is no longer configured)'),
  }),
  'What was bought: the listing\'s title and category',
);
export type OrderListingSummary = z.infer<typeof OrderListingSummary>;

/** Who acts next on an order (`arbiter` = an admin resolving a dispute, `system` = the service's timers). */
export const NEXT_STEP_ACTORS = ['buyer', 'seller', 'arbiter', 'system', 'none'] as const;
/**
 * What happens next on an order, one stable code per situation of the lifecycle table:
 * - pay: the buyer pays (signs the fund transaction) before due_at = payment_expires_at;
 * - confirm_payment: the service is confirming the funding of a custodial order;
 * - expire: the payment window closed unpaid; the service expires the order (the hold lapses) at due_at;
 * - deliver: the seller delivers by due_at = delivery_deadline; after it the buyer may refund;
 * - refund_available: the seller missed delivery_deadline: the buyer may refund now (the seller may still deliver);
 * - confirm_or_dispute: the buyer confirms or disputes before due_at = auto_release_at; then the escrow is released;
 * - auto_release: auto_release_at passed: the service releases the escrow to the seller (anyone may crank it);
 * - arbiter_decides: a dispute waits for the arbiter (an admin) to split the escrow (no deadline); when the seller
 *   did not deliver on time, the buyer may refund from due_at = delivery_deadline (or now, due_at null);
 * - fund_milestone: a milestone (or the order between milestones) waits for the buyer to fund the next one
 *   (POST /orders/{order_id}/milestones/fund), or to end the order; no deadline;
 * - done: the order is closed (completed, resolved, refunded, expired or ended).
 */
export const NEXT_STEP_KINDS = [
  'pay',
  'confirm_payment',
  'expire',
  'deliver',
  'refund_available',
  'confirm_or_dispute',
  'auto_release',
  'arbiter_decides',
  'fund_milestone',
  'done',
] as const;
/** What the service's timers (or the escrow program) let happen once `due_at` passes. */
export const NEXT_STEP_AFTER_DUE = ['hold_lapses', 'auto_release', 'buyer_may_refund'] as const;

export const OrderNextStep = named(
  'OrderNextStep',
  z.object({
    actor: z.enum(NEXT_STEP_ACTORS).describe('Who acts next: buyer, seller, arbiter (an admin, disputes), system (timers), none (closed)'),
    kind: z
      .enum(NEXT_STEP_KINDS)
      .describe(
        'Stable code of the next step: pay, confirm_payment, expire, deliver, refund_available, confirm_or_dispute, ' +
          'auto_release, arbiter_decides, fund_milestone, done (new codes may be added within v1: show a generic line for unknown ones)',
      ),
    due_at: Timestamp.nullable().describe('When the step is due (the deadline that applies), or null when nothing times it'),
    after_due: z
      .enum(NEXT_STEP_AFTER_DUE)
      .nullable()
      .describe(
        'What the timers do once due_at passes: hold_lapses (the unpaid order expires, the listing is free again), ' +
          'auto_release (the escrow is released to the seller), buyer_may_refund (the buyer may take the refund alone); ' +
          'null when due_at is null or nothing happens by itself',
      ),
  }),
  'What happens next on the order: who acts, by when, and what the timers do after that (derived from the lifecycle ' +
    'table and the order\'s deadlines; the same for every caller: allowed_actions says what the caller may do)',
);
export type OrderNextStep = z.infer<typeof OrderNextStep>;

/** The buyer's review of the order's seller, once published (POST /orders/{order_id}/review). */
export const OrderReview = named(
  'OrderReview',
  z.object({
    rating: z.number().int().min(1).max(5),
    text: z.string().describe('0..2000 characters; empty when none was given (as Review.text)'),
    created_at: Timestamp,
  }),
);

/** The package an order bought, as the listing offered it when the order was created (issue 24). */
export const OrderPackage = named(
  'OrderPackage',
  z.object({
    key: PackageKey,
    name: z.string(),
    revisions: z.number().int().min(0).describe('Revisions included in the package'),
    delivery_days: z.number().int().min(1).describe('The package\'s delivery time in days (the sum of its milestones\' days)'),
  }),
);

/** Who may propose a settlement (either party) and who proposed an extension (the seller). */
export const ProposalParty = z.enum(['buyer', 'seller']);

/** A pending deadline extension the seller proposed (issue 24): the buyer accepts or declines it before expires_at. */
export const ExtensionProposal = named(
  'ExtensionProposal',
  z.object({
    proposed_by: z.literal('seller'),
    new_deadline: Timestamp.describe('The delivery deadline the seller asks for (later than delivery_deadline)'),
    message: z.string().nullable().describe('The seller\'s reason, as given'),
    proposed_at: Timestamp,
    expires_at: Timestamp.describe('After it the proposal lapses (service clock; ORDER_EXTENSION_PROPOSAL_TTL_SECONDS after proposed_at)'),
  }),
  'A pending deadline extension: accepted, the escrow program moves delivery_deadline (and the buyer\'s refund right with it)',
);

/** The payout a settlement would make, base units (the resolve arithmetic). */
export const SettlementPreview = named(
  'SettlementPreview',
  z.object({
    buyer_base_units: BaseUnits.describe('floor(amount * buyer_bps / 10000), back to the buyer'),
    seller_base_units: BaseUnits.describe('The rest minus the fee on it'),
    treasury_base_units: BaseUnits.describe('floor((amount - buyer share) * fee_bps / 10000): the fee is charged on the seller\'s share only'),
  }),
);

/** A pending settlement by agreement (issue 24): the other party accepts it (naming the same buyer_bps) before expires_at. */
export const SettlementProposal = named(
  'SettlementProposal',
  z.object({
    proposed_by: ProposalParty,
    buyer_bps: Bps.describe('Share returned to the buyer, basis points (10000 = cancel: everything back to the buyer)'),
    proposed_at: Timestamp,
    expires_at: Timestamp.describe(
      'After it the proposal lapses (chain clock, enforced by the escrow program too; ORDER_SETTLEMENT_PROPOSAL_TTL_SECONDS after proposed_at)',
    ),
    preview: SettlementPreview,
  }),
  'A pending split of the escrow proposed by one party; accepted by the other, the escrow program pays exactly it and closes',
);
// one text for the order level and each milestone: openapi.json has one component per named schema
const extensionProposalDoc =
  'The pending deadline extension, or null (none, expired, answered). On a milestone: that milestone\'s (answer it at ' +
  '/orders/{order_id}/milestones/{index}/extension/...); on the order: the current milestone\'s (as the order routes act on it)';
const settlementProposalDoc =
  'The pending settlement proposal, or null (none, expired, withdrawn, accepted). On a milestone: that milestone\'s (answer it at ' +
  '/orders/{order_id}/milestones/{index}/settlement/...); on the order: the current milestone\'s (as the order routes act on it)';

/**
 * One milestone of an order: its own escrow (one order PDA + vault per funded milestone, escrow id = the
 * milestone's `milestone_id`; milestone 1's is the order's id), its row of the lifecycle table (`status`)
 * and the caller's actions on it (POST /orders/{order_id}/milestones/{index}/{action}).
 */
export const OrderMilestone = named(
  'OrderMilestone',
  z.object({
    index: z.number().int().min(1).max(MAX_MILESTONES).describe('1..milestone count, in the order they are funded'),
    milestone_id: Uuid.describe('Escrow id of the milestone (its 16 bytes seed its order PDA); milestone 1: the order_id'),
    title: z.string().nullable().describe('From the listing\'s, package\'s or offer\'s terms; null for a one-milestone order'),
    status: OrderStatus.describe('The milestone\'s row of the lifecycle table (scheduled: not funded yet, no escrow)'),
    escrow_state: EscrowState,
    amount: z.number().describe('UI amount of this milestone'),
    amount_base_units: BaseUnits,
    delivery_deadline: Timestamp.nullable().describe('Set when the milestone is funded (funding time + its delivery days); null while scheduled'),
    delivery_days: z.number().int().min(1).describe('Days from funding to the delivery deadline'),
    payment_expires_at: Timestamp.nullable().describe('End of its payment window while awaiting payment; null while scheduled'),
    funded_at: Timestamp.nullable(),
    delivered_at: Timestamp.nullable(),
    auto_release_at: Timestamp.nullable(),
    completed_at: Timestamp.nullable(),
    escrow_account_address: Pubkey.describe('Order PDA of this milestone\'s escrow'),
    escrow_account_explorer_url: ExplorerUrl('the milestone\'s escrow account'),
    vault_address: Pubkey,
    revisions_included: z.number().int().min(0),
    revisions_used: z.number().int().min(0),
    extension_proposal: ExtensionProposal.nullable().describe(extensionProposalDoc),
    settlement_proposal: SettlementProposal.nullable().describe(settlementProposalDoc),
    allowed_actions: z.array(OrderAction).describe('The caller\'s actions on this milestone now (the lifecycle table on its row)'),
    next_step: OrderNextStep,
    transactions: z.array(OrderTransaction),
    payout: OrderPayout.nullable().describe('Set when the escrow closed; null while open or never funded'),
  }),
  'One milestone of an order: its escrow, status, deadlines and the caller\'s actions on it',
);
export type OrderMilestone = z.infer<typeof OrderMilestone>;

export const Order = named(
  'Order',
  z.object({
    order_id: Uuid.describe('UUID; its 16 bytes are the on-chain order id'),
    listing_id: Uuid,
    buyer_wallet: Pubkey.describe('The on-chain buyer: the paying wallet, or the buyer\'s deposit address for custodial orders'),
    seller_wallet: Pubkey,
    payment_source: PaymentSource,
    status: OrderLevelStatus.describe(
      'One milestone: the milestone\'s status. Several: derived (awaiting_payment until milestone 1 is funded, in_progress ' +
        'while one is open or more may be funded, completed / refunded / expired when closed, ended when the buyer ended it)',
    ),
    escrow_state: EscrowState,
    escrow_account_address: Pubkey.describe('Order PDA of the escrow program (exists on chain while funded)'),
    escrow_account_explorer_url: ExplorerUrl('the escrow account'),
    vault_address: Pubkey.describe('Associated token account of the order PDA holding the payment'),
    token_mint_address: Pubkey.describe('Mint of the listing token'),
    token_mint_explorer_url: ExplorerUrl('the listing token\'s mint'),
    payment_mint: Pubkey.describe('SPL mint of the payment currency'),
    payment_mint_explorer_url: ExplorerUrl('the payment mint'),
    currency: CurrencyCode,
    amount: z.number().describe('UI amount paid into escrow'),
    amount_base_units: BaseUnits,
    fee_bps: Bps.describe('Platform fee in basis points (snapshot at creation)'),
    fee_base_units: BaseUnits,
    seller_receives_base_units: BaseUnits,
    delivery_deadline: Timestamp.describe('created_at + listing duration days; fixed at creation, written into the escrow'),
    review_window_seconds: z.number().int().min(0).describe('Seconds after delivery before auto-release'),
    auto_release_at: Timestamp.nullable().describe('delivered_at + review window; null until delivered'),
    payment_expires_at: Timestamp,
    created_at: Timestamp,
    funded_at: Timestamp.nullable(),
    delivered_at: Timestamp.nullable(),
    completed_at: Timestamp.nullable().describe('When the order reached a terminal state'),
    disputed_at: Timestamp.nullable(),
    dispute_reason: z.string().nullable(),
    resolution: OrderResolution.nullable(),
    payout: OrderPayout.nullable().describe('Set when the escrow closed; null while open or never funded'),
    attention: OrderAttention.nullable().describe('null unless an operator must look at this order'),
    transactions: z.array(OrderTransaction),
    allowed_actions: z
      .array(OrderAction)
      .describe('Actions the caller may take now: the lifecycle table evaluated for the caller on its clocks, plus review'),
    listing: OrderListingSummary,
    seller: OrderParty,
    buyer: OrderParty,
    next_step: OrderNextStep,
    review: OrderReview.nullable().describe('The buyer\'s review of this order, once published; null before'),
    offer_id: Uuid.nullable().describe('The custom offer the buyer accepted into this order (offers.contract.ts); null for an order of a listing'),
    // issue 24 (helper "packages"): the package bought, frozen at creation
    package: OrderPackage.nullable().describe('The listing package this order bought (copied at creation); null: the listing had none'),
    revisions_included: z.number().int().min(0).describe('Revisions the buyer may request (the package\'s terms, frozen at order time)'),
    revisions_used: z.number().int().min(0).describe('Revisions requested so far'),
    settled_by: z
      .enum(['arbiter', 'agreement'])
      .nullable()
      .describe('For a resolved order: arbiter (the arbiter\'s split of a dispute) or agreement (a settlement both parties agreed); null otherwise'),
    extension_proposal: ExtensionProposal.nullable().describe(extensionProposalDoc),
    settlement_proposal: SettlementProposal.nullable().describe(settlementProposalDoc),
    milestones: z
      .array(OrderMilestone)
      .min(1)
      .max(MAX_MILESTONES)
      .describe('Always at least one; a one-milestone order\'s fields above mirror its milestone 1'),
    current_milestone: z
      .number()
      .int()
      .min(1)
      .nullable()
      .describe('Index of the first milestone that is not settled (the order routes act on it); null once the order is closed'),
    package_name: z.string().nullable().describe('The package the order bought (frozen terms); null without packages'),
  }),
);
export type Order = z.infer<typeof Order>;
extendApi(Order, {
  description: `An order and its place in the lifecycle:\n\n${orderTransitionsMarkdown()}`,
  'x-order-transitions': orderTransitions,
});

export const OrderPayment = named(
  'OrderPayment',
  z.object({
    transaction: Base64.describe(
      'Serialized fund transaction, partially signed by the platform authority (and by the fee sponsor when ' +
        '`sponsored`); fee payer = `fee_payer`. The buyer\'s wallet signs and sends it (or POSTs it to submitOrderTransaction).',
    ),
    fee_payer: Pubkey.describe(
      'Who pays the network fee and the rent of the escrow accounts the transaction creates (its fee payer and ' +
        '`fund_milestone`\'s `rent_payer`): the buyer wallet, or the service\'s fee sponsor when `sponsored`. The rent ' +
        'goes back to it when the escrow closes. Decided once, when the order\'s first fund transaction is issued.',
    ),
    sponsored: z
      .boolean()
      .describe(
        'true: the service\'s fee sponsor pays the fee and the rent (FEE_SPONSORSHIP on, a signed-in buyer\'s own wallet ' +
          'order in a token other than SOL, within the sponsorship limits): the buyer wallet needs no SOL',
      ),
    solana_pay_url: z
      .string()
      .startsWith('solana:')
      .describe(
        'Solana Pay transaction request link: "solana:" + the URL of the solana-pay endpoint, not URL-encoded ' +
          '(it has no query parameters; Solana Pay spec). For a Token-2022 payment mint the Solana Pay 1.2 protocol ' +
          'parameter follows it: `?token-program=TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb` (none for a legacy SPL ' +
          'mint, the draft\'s default). Wallets accept https links only: set PUBLIC_BASE_URL to the https origin of the service',
      ),
    expires_at: Timestamp.describe(
      'Last moment the transaction can land: its blockhash\'s lastValidBlockHeight turned into a time ' +
        'conservatively (350 ms per remaining block, minus 2 s), never after payment_expires_at. For a fresh ' +
        'transaction: POST /orders/{order_id}/payment (the buyer) or the Solana Pay POST (wallets).',
    ),
  }),
);

export const FreshOrderPayment = namedExtension(
  'FreshOrderPayment',
  OrderPayment,
  {
    order_id: Uuid,
    payment_expires_at: Timestamp.describe('End of the payment window: no fund transaction is issued after it'),
  },
  'A fresh fund transaction for an order awaiting payment',
);

/**
 * The 201 of createOrder: the order plus its payment. Component name OrderWithPayment (not
 * CreateOrderResponse, the name generators give the operation's own response type); described in
 * openapi.json as `allOf: [Order, {payment}]`.
 */
export const CreateOrderResponse = namedExtension(
  'OrderWithPayment',
  Order,
  {
    payment: OrderPayment.nullable().describe('The fund transaction to sign (payment_source wallet); null for custodial orders'),
  },
  'An order with the fund transaction its buyer signs',
);
export type CreateOrderResponse = z.infer<typeof CreateOrderResponse>;

export const OrderPage = named('OrderPage', page(Order));

export const CreateOrderBody = named(
  'CreateOrderBody',
  z
    .object({
      listing_id: Uuid,
      buyer_wallet: Pubkey.optional().describe(
        'Buyer when it is not the authenticated user (API-key integrations). A user token may only name its own wallet. ' +
          'Not allowed with payment_source custodial.',
      ),
      payment_source: PaymentSource.optional().describe(
        'wallet (default) or custodial: pay from the custodial balance (custody must be enabled: 404 custody-disabled; ' +
          '409 insufficient-funds when the available balance does not cover the price)',
      ),
      package: PackageKey.optional().describe(
        'The listing package to buy: required when the listing has packages (400 validation-error naming the ' +
          'allowed keys when missing or not offered), not allowed when it has none (400). The order\'s amount, ' +
          'revisions and milestones are the package\'s at creation',
      ),
    })
    .strict(),
);
export type CreateOrderBody = z.infer<typeof CreateOrderBody>;

export const ListOrdersQuery = PaginationQuery.extend({
  role: z.enum(['buyer', 'seller']).optional().describe('Only orders where the caller has this role; both when absent'),
  status: OrderLevelStatus.optional().describe('The order-level status (a multi-milestone order\'s derived status)'),
});
export type ListOrdersQuery = z.infer<typeof ListOrdersQuery>;

export const SubmitOrderTransactionBody = named(
  'SubmitOrderTransactionBody',
  z
    .object({ signed_transaction: Base64.describe('The payment transaction, signed by the buyer') })
    .strict(),
);

export const SolanaPayLabel = named('SolanaPayLabel', z.object({ label: z.string(), icon: z.string().url() }));
export const SolanaPayTransactionBody = named(
  'SolanaPayTransactionBody',
  z.object({ account: Pubkey.describe('The paying wallet') }),
);
export const SolanaPayTransaction = named(
  'SolanaPayTransaction',
  z.object({
    transaction: Base64.describe(
      'Serialized fund transaction, partially signed (platform authority, and the fee payer when sponsored); its fee ' +
        'payer is `feePayer` when present, else `account`',
    ),
    message: z.string().optional(),
    tokenProgram: Pubkey.describe(
      'Solana Pay 1.2 `token-program`: the token program of the payment mint that the transaction\'s instructions use ' +
        '(TokenzQdBNbLqP5VEhdkAS6EPFLC1PHnBqCXEpPxuEb for a Token-2022 mint, TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA ' +
        'for a legacy SPL mint). Named on every answer (the draft\'s default, legacy, applies only when absent)',
    ),
    feePayer: Pubkey.optional().describe(
      'Solana Pay 1.2 `fee-payer`: present when the order\'s fund transaction is sponsored (the service\'s fee payer pays ' +
        'the network fee and the rent, and signed already): the fee payer of `transaction`, never `account`. Absent: ' +
        '`account` pays',
    ),
  }),
);

export const DisputeOrderBody = named(
  'DisputeOrderBody',
  z
    .object({
      reason: safeText(z.string().trim().min(10).max(2000)).describe('Why the order is disputed, 10..2000 characters'),
      reason_code: DisputeReasonCode.optional().describe(
        'The kind of complaint (issue 25, disputes.contract.ts). Absent (clients that send `reason` only): `other`',
      ),
    })
    .strict(),
);
export type DisputeOrderBody = z.infer<typeof DisputeOrderBody>;

export const ResolveDisputeBody = named(
  'ResolveDisputeBody',
  z
    .object({
      buyer_bps: Bps.describe('Share returned to the buyer in basis points: 0 = all to seller, 10000 = full refund'),
      rationale: safeText(z.string().trim().min(DISPUTE_LIMITS.rationaleMinLength).max(DISPUTE_LIMITS.rationaleMaxLength))
        .optional()
        .describe(
          'The written reasons, 20..3800 characters (optional here, required by ruleDispute): when given, both parties receive them ' +
            '(dispute.resolved and a message in the order\'s conversation), as with POST /admin/disputes/{dispute_id}/resolve',
        ),
    })
    .strict(),
);
export type ResolveDisputeBody = z.infer<typeof ResolveDisputeBody>;

export const RequestRevisionBody = named(
  'RequestRevisionBody',
  z
    .object({ message: safeText(z.string().trim().min(1).max(4000)).describe('What to change, 1..4000 characters; posted into the order\'s conversation') })
    .strict(),
);
export type RequestRevisionBody = z.infer<typeof RequestRevisionBody>;

export const ProposeExtensionBody = named(
  'ProposeExtensionBody',
  z
    .object({
      new_deadline: Timestamp.describe('The delivery deadline asked for: later than the current delivery_deadline (400 otherwise)'),
      message: safeText(z.string().trim().min(1).max(2000)).optional().describe('Why, 1..2000 characters'),
    })
    .strict(),
);
export type ProposeExtensionBody = z.infer<typeof ProposeExtensionBody>;

export const AcceptExtensionBody = named(
  'AcceptExtensionBody',
  z
    .object({ new_deadline: Timestamp.describe('The deadline being accepted: must be the pending proposal\'s (409 proposal-changed otherwise)') })
    .strict(),
);
export type AcceptExtensionBody = z.infer<typeof AcceptExtensionBody>;

export const SettlementBody = named(
  'SettlementBody',
  z
    .object({
      buyer_bps: Bps.describe(
        'Share returned to the buyer, basis points 0..10000 (10000 = cancel). Accepting: must be the pending proposal\'s (409 proposal-changed otherwise)',
      ),
    })
    .strict(),
);
export type SettlementBody = z.infer<typeof SettlementBody>;

const OrderIdParams = z.object({ order_id: Uuid });
const MilestoneParams = z.object({
  order_id: Uuid,
  index: z.coerce.number().int().min(1).max(MAX_MILESTONES).describe('Milestone index, 1..10'),
});

/**
 * Most milestones one fund transaction holds: each `fund_milestone` adds 152 bytes, and a legacy
 * transaction's packet is 1232 bytes (measured: programs/escrow/README.md). Fund more in several requests.
 */
export const MAX_MILESTONES_PER_FUND = 4;

export const FundMilestonesBody = named(
  'FundMilestonesBody',
  z
    .object({
      milestones: z
        .array(z.number().int().min(1).max(MAX_MILESTONES))
        .min(1)
        .max(MAX_MILESTONES_PER_FUND)
        .describe('Indexes of the milestones to fund now: the next unfunded ones, in order (e.g. [2] or [2, 3]); at most 4 in one transaction (its size)'),
    })
    .strict(),
);
export type FundMilestonesBody = z.infer<typeof FundMilestonesBody>;

export const MilestonesPayment = namedExtension(
  'MilestonesPayment',
  OrderPayment,
  {
    order_id: Uuid,
    milestones: z.array(z.number().int().min(1)).describe('The milestones this transaction funds (one fund instruction each)'),
    payment_expires_at: Timestamp.describe('End of their payment window: unpaid by then (+ grace) they go back to scheduled'),
  },
  'One fund transaction for one or more milestones of an order (one wallet signature)',
);
const chain = ['chain-unavailable', 'chain-transaction-failed'] as const;
const action = ['forbidden', 'not-found', 'invalid-state-transition', ...chain] as const;

const createOrder = routeErrors(
  access.user('orders:write', {
    money: { capability: 'custodial-payment', unless: { body_field: 'payment_source', absent_or: ['wallet'] } },
  }),
  [
    ...bodyProblems,
    'idempotency-key-missing',
    'forbidden',
    'not-found',
    'listing-unavailable',
    'listing-taken-down',
    'account-suspended',
    'too-many-unpaid-orders',
    'too-many-holds',
    'hold-cooldown',
    'own-listing',
    'idempotency-key-in-use',
    'idempotency-key-reused',
    'custody-disabled',
    'insufficient-funds',
    'sponsorship-limit',
    'sponsorship-budget-exhausted',
    'chain-unavailable',
    'chain-transaction-failed',
  ],
  { actors: ['buyer'], idempotent: true },
);
const listOrders = routeErrors(access.user('orders:read'), []);
const getOrder = routeErrors(access.user('orders:read'), ['not-found'], { actors: ['buyer', 'seller', 'admin'] });
// the buyer's wallet signed this transaction: the signature, not the token, authorises the payment
const submitOrderTransaction = routeErrors(access.user('orders:write'), [...bodyProblems, ...action, 'insufficient-funds'], { actors: ['buyer'] });
const createOrderPayment = routeErrors(access.user('orders:write'), ['forbidden', 'not-found', 'invalid-state-transition', 'insufficient-funds', 'sponsorship-limit', 'sponsorship-budget-exhausted', 'chain-unavailable'], {
  actors: ['buyer'],
});
const getSolanaPayLabel = routeErrors(access.public(), ['not-found']);
const createSolanaPayTransaction = routeErrors(access.public(), [
  ...bodyProblems,
  'forbidden',
  'not-found',
  'invalid-state-transition',
  'sponsorship-limit',
  'sponsorship-budget-exhausted',
  'chain-unavailable',
]);
const deliverOrder = routeErrors(access.user('orders:write'), action, { actors: ['seller'] });
const confirmOrder = routeErrors(access.user('orders:write', { money: { capability: 'escrow-release' } }), [...action, 'token-account-required'], { actors: ['buyer'] });
// a dispute freezes the escrow; only the arbiter (no token) moves it
const disputeOrder = routeErrors(access.user('orders:write'), [...bodyProblems, ...action], { actors: ['buyer', 'seller'] });
const refundOrder = routeErrors(access.user('orders:write', { money: { capability: 'escrow-refund' } }), [...action, 'token-account-required'], { actors: ['seller', 'buyer'] });
// the arbiter role (issue 25); a token only with the operator scope disputes:resolve, while its owner is an arbiter
const resolveDispute = routeErrors(access.role('arbiter', 'disputes:resolve'), [...bodyProblems, ...action], { actors: ['admin'] });
const keyed = ['idempotency-key-missing', 'idempotency-key-in-use', 'idempotency-key-reused'] as const;
const requestRevision = routeErrors(access.user('orders:write'), [...bodyProblems, ...keyed, ...action, 'revision-limit-reached'], { actors: ['buyer'], idempotent: true });
const proposeExtension = routeErrors(access.user('orders:write'), [...bodyProblems, ...keyed, 'forbidden', 'not-found', 'invalid-state-transition'], {
  actors: ['seller'],
  idempotent: true,
});
const acceptExtension = routeErrors(access.user('orders:write'), [...bodyProblems, ...keyed, ...action, 'no-pending-proposal', 'proposal-expired', 'proposal-changed'], {
  actors: ['buyer'],
  idempotent: true,
});
const declineExtension = routeErrors(access.user('orders:write'), [...keyed, 'forbidden', 'not-found', 'invalid-state-transition', 'no-pending-proposal', 'proposal-expired'], {
  actors: ['buyer'],
  idempotent: true,
});
const settlementAccess = access.user('orders:write', { money: { capability: 'escrow-settlement' } });
const proposeSettlement = routeErrors(settlementAccess, [...bodyProblems, ...keyed, ...action], { actors: ['buyer', 'seller'], idempotent: true });
const acceptSettlement = routeErrors(
  settlementAccess,
  [...bodyProblems, ...keyed, ...action, 'no-pending-proposal', 'proposal-expired', 'proposal-changed', 'token-account-required'],
  { actors: ['buyer', 'seller'], idempotent: true },
);
const withdrawSettlement = routeErrors(access.user('orders:write'), [...keyed, ...action, 'no-pending-proposal', 'proposal-expired'], { actors: ['buyer', 'seller'], idempotent: true });
const fundOrderMilestones = routeErrors(
  access.user('orders:write'),
  [...bodyProblems, 'idempotency-key-missing', 'idempotency-key-in-use', 'idempotency-key-reused', ...action, 'milestone-out-of-order', 'insufficient-funds'],
  { actors: ['buyer'], idempotent: true },
);
const deliverMilestone = routeErrors(access.user('orders:write'), action, { actors: ['seller'] });
const confirmMilestone = routeErrors(access.user('orders:write', { money: { capability: 'escrow-release' } }), [...action, 'token-account-required'], { actors: ['buyer'] });
const disputeMilestone = routeErrors(access.user('orders:write'), [...bodyProblems, ...action], { actors: ['buyer', 'seller'] });
const refundMilestone = routeErrors(access.user('orders:write', { money: { capability: 'escrow-refund' } }), [...action, 'token-account-required'], { actors: ['seller', 'buyer'] });
const resolveMilestone = routeErrors(access.role('arbiter', 'disputes:resolve'), [...bodyProblems, ...action], { actors: ['admin'] });
const endOrder = routeErrors(access.user('orders:write'), ['forbidden', 'not-found', 'invalid-state-transition', 'milestone-open'], { actors: ['buyer'] });
const onMilestone = ' On milestone `index` of the order (its own escrow); the order routes without an index act on `current_milestone`.';

const seeTable = ' See the order lifecycle table (the Order schema, `x-order-transitions`).';
const onFundedMilestone =
  ' Any funded milestone, also one funded ahead of the current one (the buyer may fund several at once); 404 not-found for an index the order does not have, 409 invalid-state-transition for a milestone that is not funded (scheduled, awaiting payment) or already settled.';

export const orders = c.router({
  createOrder: {
    method: 'POST',
    path: '/orders',
    headers: IdempotencyHeaders,
    summary: 'Create an order and get the escrow payment transaction',
    description:
      'Any authenticated user (or API key) buys a listing, or one of its packages (`package`: required when the ' +
      'listing has packages, 400 validation-error naming the allowed keys otherwise; 400 when the listing has none); ' +
      'the order\'s amount is the package\'s price and its terms (package, revisions, milestones) are frozen at ' +
      'creation. Requires Idempotency-Key: a replay returns the ' +
      'stored 201 response. The buyer is `buyer_wallet` when given (a user token may only name its own ' +
      'wallet: 403 forbidden), otherwise the caller\'s wallet. The order starts in awaiting_payment and ' +
      'expires (status expired) if not funded by payment_expires_at (15 minutes). The response carries ' +
      '`payment`: the fund transaction (base64, partially signed by the platform authority, fee payer = ' +
      'buyer) to sign and send — or POST to submitOrderTransaction — and a Solana Pay transaction-request ' +
      'link for wallets. With payment_source custodial (custody enabled; else 404 custody-disabled) the ' +
      'service pays instead: it holds the price from the buyer\'s available custodial balance (409 ' +
      'insufficient-funds) and funds the escrow from its hot wallet with the buyer\'s deposit address as ' +
      'on-chain buyer; the 201 carries payment null and the order in_progress (awaiting_payment while the ' +
      'funding transaction is still unconfirmed; 502 chain-transaction-failed when it was rejected: the order ' +
      'is expired and the hold released). The listing is held for the new order (one open order per unit of the listing\'s capacity, each counting against its stock): ' +
      'a later buyer gets 409 listing-unavailable (with `held_until` while the holder has not paid) before paying ' +
      'anything, and the listing reads `reserved` with `held_until` meanwhile. Holds are tied to buyers who can pay ' +
      'and bounded: a wallet order needs the buyer wallet\'s token balance to cover its amount (and the buyer\'s other ' +
      'unpaid orders in that currency) and its SOL the network fee and the rent of the escrow accounts, read on chain ' +
      'at creation (409 insufficient-funds, `balance` token or sol, `needed` and `available` per asset); a buyer may hold at most 3 unpaid orders (409 ' +
      'too-many-unpaid-orders), a client network (IPv4 address or IPv6 /64; API keys excepted) at most 10 (429 ' +
      'too-many-holds, with Retry-After); a buyer whose order for the listing expired unpaid cannot order it again ' +
      'for an hour (409 hold-cooldown, `retry_at`); and the payment window is 5 minutes instead of 15 on a contested ' +
      'listing (an unpaid hold on it lapsed within that hour) or from a network that holds half its limit already ' +
      '(limits: ORDER_* settings). 404 not-found (listing), ' +
      '409 listing-unavailable (not available), 409 own-listing (buyer is the seller), 400 idempotency-key-missing, ' +
      '409 idempotency-key-in-use (the first request is still running: retry after Retry-After), 422 ' +
      'idempotency-key-reused. A request that died (the server crashed) holds its key for at most 10 s; a retry ' +
      'with the key then returns the order that request created (with a fresh payment transaction while it ' +
      'awaits payment) or creates it.',
    body: CreateOrderBody,
    responses: { 201: CreateOrderResponse, ...createOrder.responses },
    metadata: createOrder.metadata,
  },
  listOrders: {
    method: 'GET',
    path: '/orders',
    query: ListOrdersQuery,
    summary: 'List the caller\'s orders',
    description:
      'Orders where the caller is buyer or seller (filter with role), optionally by status; newest first; ' +
      'cursor pagination (limit 1..100, default 20). Each order carries its listing\'s title and category, both ' +
      'parties\' names and ratings and its next step, as GET /orders/{order_id}.',
    responses: { 200: OrderPage, ...listOrders.responses },
    metadata: listOrders.metadata,
  },
  getOrder: {
    method: 'GET',
    path: '/orders/:order_id',
    pathParams: OrderIdParams,
    summary: 'Get an order',
    description:
      'Buyer, seller or admin. Status, escrow state and addresses (escrow_account_address = order PDA, ' +
      'vault_address, token_mint_address), amounts, deadlines, transactions and the caller\'s ' +
      'allowed_actions; what was bought (`listing`), both parties (`seller`, `buyer`: name and rating), what ' +
      'happens next (`next_step`) and the buyer\'s review once published. Other callers get 404 not-found ' +
      '(existence is not revealed).',
    responses: { 200: Order, ...getOrder.responses },
    metadata: getOrder.metadata,
  },
  submitOrderTransaction: {
    method: 'POST',
    path: '/orders/:order_id/transaction',
    pathParams: OrderIdParams,
    summary: 'Submit the signed payment transaction',
    description:
      'Buyer only. Accepts the payment transaction returned by createOrder (or the Solana Pay endpoint) ' +
      'after the buyer signed it; the server checks it is the transaction it issued for this order (400 ' +
      'validation-error otherwise), sends it and waits for confirmation, then returns the order in ' +
      'in_progress. 409 invalid-state-transition unless awaiting_payment; 409 insufficient-funds when the paying ' +
      'wallet cannot cover the amount, fee or rent (checked before sending, and when the cluster refuses it for that; ' +
      '`needed` and `available` per asset); 502 chain-transaction-failed when it fails on chain otherwise (e.g. ' +
      'blockhash expired). Clients that send the ' +
      'transaction themselves need not call this: the service detects the funding.' +
      seeTable,
    body: SubmitOrderTransactionBody,
    responses: { 200: Order, ...submitOrderTransaction.responses },
    metadata: submitOrderTransaction.metadata,
  },
  createOrderPayment: {
    method: 'POST',
    path: '/orders/:order_id/payment',
    pathParams: OrderIdParams,
    summary: 'Get a fresh payment transaction',
    description:
      'Buyer only (403 for the seller or an admin). A new fund transaction for an order awaiting payment, when ' +
      'the one from createOrder expired (`payment.expires_at`, about a minute) or is about to. Same terms, a ' +
      'fresh blockhash; any of them funds the order once. A fee-sponsored order gets the transaction issued last again ' +
      'while it can still land with 20 s to spare (it costs the sponsor a fee once, whoever asks). For an order with milestones whose later milestones await ' +
      'payment (after fundOrderMilestones): a fresh transaction funding all of them. 409 invalid-state-transition unless the order is ' +
      'awaiting_payment, inside its payment window and paid from a wallet (custodial orders are paid by the ' +
      'service); 409 insufficient-funds (`needed`, `available`) when the buyer wallet no longer covers the payment. ' +
      'No body.',
    body: c.noBody(),
    responses: { 200: FreshOrderPayment, ...createOrderPayment.responses },
    metadata: createOrderPayment.metadata,
  },
  getSolanaPayLabel: {
    method: 'GET',
    path: '/orders/:order_id/solana-pay',
    pathParams: OrderIdParams,
    summary: 'Solana Pay transaction request: label',
    description:
      'Public (called by wallets, Solana Pay spec; CORS: any origin): {label, icon} for the order payment; errors carry ' +
      'the Solana Pay 1.2 structured members as on the POST (404 SP_RESOURCE_NOT_FOUND). ' +
      '`icon` is an SVG, PNG or WebP URL (SOLANA_PAY_ICON; by default this service\'s /icon.svg, served as ' +
      'image/svg+xml to any origin).',
    responses: { 200: SolanaPayLabel, ...getSolanaPayLabel.responses },
    metadata: getSolanaPayLabel.metadata,
  },
  createSolanaPayTransaction: {
    method: 'POST',
    path: '/orders/:order_id/solana-pay',
    pathParams: OrderIdParams,
    summary: 'Solana Pay transaction request: transaction',
    description:
      'Public (called by wallets, Solana Pay spec; CORS: any origin). Body {account}: must be the order\'s buyer_wallet (403 ' +
      'forbidden otherwise). Returns a fresh fund transaction (partially signed by the platform authority, ' +
      'fee payer = account unless sponsored: `feePayer`), a message, and the token program of the payment mint ' +
      '(`tokenProgram`, Solana Pay 1.2). 409 invalid-state-transition unless the order is ' +
      'awaiting_payment and not expired. Errors (Solana Pay 1.2 draft, structured errors): problem+json that also carries ' +
      '`code`, `message`, `details` and `retryAfterMs` (429/503): 400 SP_INVALID_REQUEST, 403 SP_UNAUTHORIZED_ACCOUNT, ' +
      '404 SP_RESOURCE_NOT_FOUND, 409 SP_ALREADY_PAID (the order, or the milestones due, are paid or being paid by the ' +
      'service), 409 SP_PRICE_EXPIRED (the payment window closed, or the order expired unpaid: order ' +
      'again), 429 SP_RATE_LIMITED, 500 SP_SERVER_ERROR, 503 SP_MAINTENANCE (chain or database unavailable) or ' +
      'SP_FEE_PAYER_UNAVAILABLE (fee sponsorship refused).',
    body: SolanaPayTransactionBody,
    responses: { 200: SolanaPayTransaction, ...createSolanaPayTransaction.responses },
    metadata: createSolanaPayTransaction.metadata,
  },
  deliverOrder: {
    method: 'POST',
    path: '/orders/:order_id/deliver',
    pathParams: OrderIdParams,
    summary: 'Mark an order delivered',
    description:
      'Seller only (403 forbidden for the buyer). in_progress -> delivered; the service calls mark_delivered ' +
      'on chain, which starts the review window (auto_release_at). No body.' +
      seeTable,
    body: c.noBody(),
    responses: { 200: Order, ...deliverOrder.responses },
    metadata: deliverOrder.metadata,
  },
  confirmOrder: {
    method: 'POST',
    path: '/orders/:order_id/confirm',
    pathParams: OrderIdParams,
    summary: 'Confirm delivery and release the escrow',
    description:
      'Buyer only (403 forbidden for the seller). delivered -> completed, or in_progress -> completed (an early ' +
      'release before the seller marked it delivered); the service calls release on chain: the seller receives ' +
      'amount minus fee, the treasury the fee. No body.' +
      seeTable,
    body: c.noBody(),
    responses: { 200: Order, ...confirmOrder.responses },
    metadata: confirmOrder.metadata,
  },
  disputeOrder: {
    method: 'POST',
    path: '/orders/:order_id/dispute',
    pathParams: OrderIdParams,
    summary: 'Open a dispute',
    description:
      'Buyer or seller. in_progress or delivered (before auto_release_at) -> disputed; reason 10..2000 ' +
      'characters. The service calls open_dispute on chain, which freezes the escrow until an admin ' +
      'resolves it or the seller refunds (or the buyer, when the seller missed delivery_deadline: a ' +
      'dispute does not stop the deadline clock). Other states: 409 invalid-state-transition.' +
      seeTable,
    body: DisputeOrderBody,
    responses: { 200: Order, ...disputeOrder.responses },
    metadata: disputeOrder.metadata,
  },
  refundOrder: {
    method: 'POST',
    path: '/orders/:order_id/refund',
    pathParams: OrderIdParams,
    summary: 'Refund the buyer in full',
    description:
      'The seller from in_progress, delivered or disputed; the buyer once delivery_deadline has passed ' +
      'without an on-time delivery (deadline rule, enforced by the escrow program too): from in_progress, ' +
      'from delivered when the delivery came late (until auto_release_at), from disputed when nothing was ' +
      'delivered on time (403 forbidden otherwise). -> refunded; the full amount returns to the buyer, no ' +
      'fee. No body.' +
      seeTable,
    body: c.noBody(),
    responses: { 200: Order, ...refundOrder.responses },
    metadata: refundOrder.metadata,
  },
  resolveDispute: {
    method: 'POST',
    path: '/orders/:order_id/resolve',
    pathParams: OrderIdParams,
    summary: 'Resolve a dispute (arbiter)',
    description:
      'The arbiter role only (403 forbidden otherwise; the `admin` actor of the lifecycle table is the operator acting ' +
      'as arbiter); a personal access token needs the operator scope `disputes:resolve`. disputed -> resolved with buyer_bps (0..10000): the buyer ' +
      'receives floor(amount * buyer_bps / 10000), the seller the rest minus the fee on it. The service ' +
      'calls resolve_dispute as arbiter.' +
      seeTable,
    body: ResolveDisputeBody,
    responses: { 200: Order, ...resolveDispute.responses },
    metadata: resolveDispute.metadata,
  },
  requestRevision: {
    method: 'POST',
    path: '/orders/:order_id/revision',
    pathParams: OrderIdParams,
    headers: IdempotencyHeaders,
    summary: 'Request a revision',
    description:
      "Buyer only. delivered (before auto_release_at) -> in_progress: the escrow program stops the auto-release timer and moves delivery_deadline to max(current, now + the time the seller had left when delivering, at least 1 day), capped by its max delivery window. `message` is posted into the order's conversation. 409 revision-limit-reached once `revisions_used` = `revisions_included`; 409 invalid-state-transition unless delivered and inside the review window. Requires Idempotency-Key (a retry returns the first answer)." +
      seeTable,
    body: RequestRevisionBody,
    responses: { 200: Order, ...requestRevision.responses },
    metadata: requestRevision.metadata,
  },
  proposeExtension: {
    method: 'POST',
    path: '/orders/:order_id/extension',
    pathParams: OrderIdParams,
    headers: IdempotencyHeaders,
    summary: 'Propose a later delivery deadline',
    description:
      'Seller only, in_progress. Stored off chain (nothing moves until the buyer accepts); replaces a pending proposal; expires after ORDER_EXTENSION_PROPOSAL_TTL_SECONDS (3 days). 400 validation-error unless new_deadline is later than delivery_deadline. Event extension.proposed. Requires Idempotency-Key.' +
      seeTable,
    body: ProposeExtensionBody,
    responses: { 200: Order, ...proposeExtension.responses },
    metadata: proposeExtension.metadata,
  },
  acceptExtension: {
    method: 'POST',
    path: '/orders/:order_id/extension/accept',
    pathParams: OrderIdParams,
    headers: IdempotencyHeaders,
    summary: 'Accept the proposed deadline',
    description:
      "Buyer only, in_progress with a pending extension. `new_deadline` names the deadline accepted (409 proposal-changed when the pending one differs). The service signs extend_deadline for the buyer: the escrow's delivery_deadline (and the buyer's refund right) moves. 409 no-pending-proposal, 409 proposal-expired. Event extension.accepted. Requires Idempotency-Key." +
      seeTable,
    body: AcceptExtensionBody,
    responses: { 200: Order, ...acceptExtension.responses },
    metadata: acceptExtension.metadata,
  },
  declineExtension: {
    method: 'POST',
    path: '/orders/:order_id/extension/decline',
    pathParams: OrderIdParams,
    headers: IdempotencyHeaders,
    summary: 'Decline the proposed deadline',
    description:
      'Buyer only, with a pending extension: it is dropped, the deadline stays. Event extension.declined. Requires Idempotency-Key. No body.' +
      seeTable,
    body: c.noBody(),
    responses: { 200: Order, ...declineExtension.responses },
    metadata: declineExtension.metadata,
  },
  proposeSettlement: {
    method: 'POST',
    path: '/orders/:order_id/settlement',
    pathParams: OrderIdParams,
    headers: IdempotencyHeaders,
    summary: 'Propose a settlement by agreement',
    description:
      'Buyer or seller, while in_progress, delivered or disputed. The split `buyer_bps` (10000 = cancel) is recorded on chain (propose_settlement, expiring after ORDER_SETTLEMENT_PROPOSAL_TTL_SECONDS, 3 days, on the chain clock) and shown as `settlement_proposal` with the payout preview; a new proposal by either party replaces a pending one. A dispute may be opened meanwhile. Event settlement.proposed. Requires Idempotency-Key.' +
      seeTable,
    body: SettlementBody,
    responses: { 200: Order, ...proposeSettlement.responses },
    metadata: proposeSettlement.metadata,
  },
  acceptSettlement: {
    method: 'POST',
    path: '/orders/:order_id/settlement/accept',
    pathParams: OrderIdParams,
    headers: IdempotencyHeaders,
    summary: 'Accept the proposed settlement',
    description:
      'The party that did NOT propose (403 forbidden for the proposer), naming the `buyer_bps` accepted (409 proposal-changed when the pending proposal differs). The service signs accept_settlement: the program pays exactly that split (buyer floor(amount * bps / 10000), the rest minus the fee on it to the seller) and closes the escrow; the order is resolved with settled_by agreement. Works during a dispute. 409 no-pending-proposal, 409 proposal-expired. Event settlement.accepted. Requires Idempotency-Key.' +
      seeTable,
    body: SettlementBody,
    responses: { 200: Order, ...acceptSettlement.responses },
    metadata: acceptSettlement.metadata,
  },
  withdrawSettlement: {
    method: 'POST',
    path: '/orders/:order_id/settlement/withdraw',
    pathParams: OrderIdParams,
    headers: IdempotencyHeaders,
    summary: 'Withdraw your settlement proposal',
    description:
      'The proposer only (403 forbidden for the other party): withdraw_settlement clears it on chain. Event settlement.withdrawn. Requires Idempotency-Key. No body.' +
      seeTable,
    body: c.noBody(),
    responses: { 200: Order, ...withdrawSettlement.responses },
    metadata: withdrawSettlement.metadata,
  },
  requestMilestoneRevision: {
    method: 'POST',
    path: '/orders/:order_id/milestones/:index/revision',
    pathParams: MilestoneParams,
    headers: IdempotencyHeaders,
    summary: 'Request a revision of a milestone',
    description: 'As requestRevision.' + onMilestone + onFundedMilestone + seeTable,
    body: RequestRevisionBody,
    responses: { 200: Order, ...requestRevision.responses },
    metadata: requestRevision.metadata,
  },
  proposeMilestoneExtension: {
    method: 'POST',
    path: '/orders/:order_id/milestones/:index/extension',
    pathParams: MilestoneParams,
    headers: IdempotencyHeaders,
    summary: 'Propose a later delivery deadline for a milestone',
    description:
      'As proposeExtension.' + onMilestone + onFundedMilestone + ' The proposal shows on that milestone (`milestones[].extension_proposal`).' + seeTable,
    body: ProposeExtensionBody,
    responses: { 200: Order, ...proposeExtension.responses },
    metadata: proposeExtension.metadata,
  },
  acceptMilestoneExtension: {
    method: 'POST',
    path: '/orders/:order_id/milestones/:index/extension/accept',
    pathParams: MilestoneParams,
    headers: IdempotencyHeaders,
    summary: 'Accept the proposed deadline of a milestone',
    description: 'As acceptExtension.' + onMilestone + onFundedMilestone + ' Only that milestone\'s escrow deadline moves.' + seeTable,
    body: AcceptExtensionBody,
    responses: { 200: Order, ...acceptExtension.responses },
    metadata: acceptExtension.metadata,
  },
  declineMilestoneExtension: {
    method: 'POST',
    path: '/orders/:order_id/milestones/:index/extension/decline',
    pathParams: MilestoneParams,
    headers: IdempotencyHeaders,
    summary: 'Decline the proposed deadline of a milestone',
    description: 'As declineExtension.' + onMilestone + onFundedMilestone + ' No body.' + seeTable,
    body: c.noBody(),
    responses: { 200: Order, ...declineExtension.responses },
    metadata: declineExtension.metadata,
  },
  proposeMilestoneSettlement: {
    method: 'POST',
    path: '/orders/:order_id/milestones/:index/settlement',
    pathParams: MilestoneParams,
    headers: IdempotencyHeaders,
    summary: 'Propose a settlement of a milestone by agreement',
    description:
      'As proposeSettlement.' + onMilestone + onFundedMilestone + ' The proposal shows on that milestone (`milestones[].settlement_proposal`).' + seeTable,
    body: SettlementBody,
    responses: { 200: Order, ...proposeSettlement.responses },
    metadata: proposeSettlement.metadata,
  },
  acceptMilestoneSettlement: {
    method: 'POST',
    path: '/orders/:order_id/milestones/:index/settlement/accept',
    pathParams: MilestoneParams,
    headers: IdempotencyHeaders,
    summary: 'Accept the proposed settlement of a milestone',
    description:
      'As acceptSettlement.' + onMilestone + onFundedMilestone +
      ' The program pays exactly that split of that milestone\'s escrow and closes it (the milestone is resolved with settled_by agreement); the order goes on with its other milestones and completes when its last one settles.' +
      seeTable,
    body: SettlementBody,
    responses: { 200: Order, ...acceptSettlement.responses },
    metadata: acceptSettlement.metadata,
  },
  withdrawMilestoneSettlement: {
    method: 'POST',
    path: '/orders/:order_id/milestones/:index/settlement/withdraw',
    pathParams: MilestoneParams,
    headers: IdempotencyHeaders,
    summary: 'Withdraw your settlement proposal on a milestone',
    description: 'As withdrawSettlement.' + onMilestone + onFundedMilestone + ' No body.' + seeTable,
    body: c.noBody(),
    responses: { 200: Order, ...withdrawSettlement.responses },
    metadata: withdrawSettlement.metadata,
  },
  fundOrderMilestones: {
    method: 'POST',
    path: '/orders/:order_id/milestones/fund',
    pathParams: OrderIdParams,
    headers: IdempotencyHeaders,
    summary: 'Fund the next milestone(s) of an order',
    description:
      'Buyer only (wallet orders). Body `milestones`: the next unfunded milestones, in order (409 milestone-out-of-order ' +
      'otherwise; 409 invalid-state-transition for a milestone that is not scheduled, while the order is closed or ' +
      'milestone 1 is unpaid, or while milestones asked for earlier still await payment: pay them with a fresh transaction ' +
      'from createOrderPayment, or let them lapse). They go scheduled -> awaiting_payment with a fresh payment window, and the answer is ONE ' +
      'fund transaction with one fund instruction per milestone (its own escrow, escrow id = its milestone_id) for the ' +
      'buyer\'s wallet to sign and send (or POST to submitOrderTransaction). Unpaid by payment_expires_at + grace, they go ' +
      'back to scheduled and may be funded again. Requires Idempotency-Key (a replay returns the stored answer). 409 ' +
      'insufficient-funds when the wallet cannot pay them.' +
      seeTable,
    body: FundMilestonesBody,
    responses: { 200: MilestonesPayment, ...fundOrderMilestones.responses },
    metadata: fundOrderMilestones.metadata,
  },
  deliverMilestone: {
    method: 'POST',
    path: '/orders/:order_id/milestones/:index/deliver',
    pathParams: MilestoneParams,
    summary: 'Mark a milestone delivered',
    description: 'As deliverOrder.' + onMilestone + seeTable,
    body: c.noBody(),
    responses: { 200: Order, ...deliverMilestone.responses },
    metadata: deliverMilestone.metadata,
  },
  confirmMilestone: {
    method: 'POST',
    path: '/orders/:order_id/milestones/:index/confirm',
    pathParams: MilestoneParams,
    summary: 'Confirm a milestone and release its escrow',
    description: 'As confirmOrder.' + onMilestone + ' The order completes when its last milestone settles.' + seeTable,
    body: c.noBody(),
    responses: { 200: Order, ...confirmMilestone.responses },
    metadata: confirmMilestone.metadata,
  },
  disputeMilestone: {
    method: 'POST',
    path: '/orders/:order_id/milestones/:index/dispute',
    pathParams: MilestoneParams,
    summary: 'Open a dispute on a milestone',
    description: 'As disputeOrder.' + onMilestone + seeTable,
    body: DisputeOrderBody,
    responses: { 200: Order, ...disputeMilestone.responses },
    metadata: disputeMilestone.metadata,
  },
  refundMilestone: {
    method: 'POST',
    path: '/orders/:order_id/milestones/:index/refund',
    pathParams: MilestoneParams,
    summary: 'Refund a milestone to the buyer',
    description: 'As refundOrder.' + onMilestone + seeTable,
    body: c.noBody(),
    responses: { 200: Order, ...refundMilestone.responses },
    metadata: refundMilestone.metadata,
  },
  resolveMilestone: {
    method: 'POST',
    path: '/orders/:order_id/milestones/:index/resolve',
    pathParams: MilestoneParams,
    summary: 'Resolve a milestone\'s dispute (arbiter)',
    description: 'As resolveDispute.' + onMilestone + seeTable,
    body: ResolveDisputeBody,
    responses: { 200: Order, ...resolveMilestone.responses },
    metadata: resolveMilestone.metadata,
  },
  endOrder: {
    method: 'POST',
    path: '/orders/:order_id/end',
    pathParams: OrderIdParams,
    summary: 'End an order after a settled milestone',
    description:
      'Buyer only. An order with several milestones ends after any settled milestone: the unfunded rest is not bought ' +
      '(status ended, event order.ended). Only when no milestone is open (409 milestone-open: one is awaiting payment, ' +
      'in progress, delivered or disputed) and at least one settled; 409 invalid-state-transition for a one-milestone or ' +
      'closed order. The listing is sold when a milestone paid the seller, else for sale again. Repeating it returns the ' +
      'order. No body.',
    body: c.noBody(),
    responses: { 200: Order, ...endOrder.responses },
    metadata: endOrder.metadata,
  },
});
