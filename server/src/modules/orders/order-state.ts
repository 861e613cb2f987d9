/**
 * The contract's order lifecycle table (`orderTransitions`, contract/src/orders.contract.ts) as the
 * service's guards. Nothing here restates a row: the escrow instruction of an action, the account state
 * an instruction leaves, the listing effect of a status, the timing rules and `allowed_actions` are all
 * read from the table.
 *
 * Vocabulary added on the service side:
 *  - `ChainAction`: an action the service performs by signing its escrow instruction (every row with an
 *    instruction except `pay`, whose `fund` the buyer signs);
 *  - `Clocks`: the two clocks timing rules use, read once per decision: `chainSeconds` (unix seconds of
 *    the cluster's Clock sysvar, what the escrow program enforces) and `serviceMs` (the server's clock).
 *
 * Guard order in the service: caller role (403 forbidden; strangers 404), then source state (409
 * invalid-state-transition), then the row's payment source and timing rule (its `refusal` problem).
 */
import {
  type EscrowInstruction,
  type ListingOrderEvent,
  type MilestoneEvent,
  type OrderAction as ApiOrderAction,
  type OrderActor,
  type OrderEvent,
  type OrderRequirement,
  type OrderStatus,
  type OrderTiming,
  type OrderTransition,
  type OrderTransitionRow,
  ORDER_ACTIONS,
  ORDER_STATUSES,
  REVIEWABLE_ORDER_STATUSES,
  TERMINAL_ORDER_STATUSES,
  escrowStateOf,
  orderTransitions,
} from '@bazaar/contract';
import { DomainError } from '../../errors.js';

export type { OrderStatus, OrderTransition };
export type OrderRole = OrderActor;
export type TransitionAction = OrderTransition['action'];
/** An escrow instruction (the table's `instruction` column; the IDL has each, see chain/escrow.ts). */
export type Instruction = EscrowInstruction;
/** Actions the service signs on chain (deliver, confirm, auto_release, dispute, resolve, refund). */
export type ChainAction = Exclude<Extract<OrderTransitionRow, { instruction: string }>['action'], 'pay'>;
/** Instructions the service signs: all but `fund`. */
export type ServiceInstruction = Exclude<Instruction, 'fund'>;
type TerminalStatus = (typeof TERMINAL_ORDER_STATUSES)[number];
/** Instructions that close the escrow (their rows end in a terminal status): release, claim, refund, resolve_dispute. */
export type TerminalInstruction = Extract<OrderTransitionRow, { to: TerminalStatus; instruction: string }>['instruction'];

const rows: readonly OrderTransition[] = orderTransitions;
const TERMINAL: ReadonlySet<OrderStatus> = new Set(TERMINAL_ORDER_STATUSES);

/**
 * Statuses that are not terminal, but `scheduled`: a row in one of them holds a unit of its listing's capacity.
 * A scheduled milestone holds nothing itself: its order's listing stays reserved (stored status) from
 * milestone 1's funding until the order closes (milestones.ts).
 */
export const OPEN_ORDER_STATUSES: readonly OrderStatus[] = ORDER_STATUSES.filter((s) => !TERMINAL.has(s) && s !== 'scheduled');

export function isTerminal(status: OrderStatus): boolean {
  return TERMINAL.has(status);
}

/** Escrow instruction of each chain action (one per action: the contract tests check it). */
export const actionInstruction = Object.fromEntries(
  rows.filter((t) => t.instruction && t.action !== 'pay').map((t) => [t.action, t.instruction]),
) as Readonly<Record<ChainAction, ServiceInstruction>>;

/** The chain action behind each instruction the service signs. */
export const instructionAction = Object.fromEntries(Object.entries(actionInstruction).map(([a, i]) => [i, a])) as Readonly<
  Record<ServiceInstruction, ChainAction>
>;

/**
 * Escrow account state after each instruction (the status it leads to, as the program holds it); null =
 * closed. Instructions that keep the account's state (propose/withdraw_settlement, extend_deadline) have
 * none: their landing cannot be read from the state, only from their signature.
 */
export const instructionEscrowState = Object.fromEntries(
  rows
    .filter((t) => t.instruction && !(rows.some((r) => r.instruction === t.instruction && r.from === r.to)))
    .map((t) => {
      const state = escrowStateOf[t.to];
      return [t.instruction, state === 'funded' || state === 'delivered' || state === 'disputed' ? state : null];
    }),
) as Readonly<Partial<Record<Instruction, 'funded' | 'delivered' | 'disputed' | null>>>;

/** Whether a row of `action` moves the listing (its `listing` column): the listing effect follows such moves only. */
export function actionMovesListing(action: TransitionAction): boolean {
  return rows.some((t) => t.action === action && !!t.listing);
}

/** Whether `action` changes the order's status (false for the rows that keep it: proposals, extensions). */
export function changesStatus(action: TransitionAction): boolean {
  return rows.some((t) => t.action === action && t.from !== t.to);
}

/**
 * Whether a repeat of `action` is answered by its Idempotency-Key rather than by the status (the table's
 * `repeat: 'key'`): the record-before-send pipeline then never treats the status as "already done".
 */
export function repeatByKey(action: TransitionAction): boolean {
  return rows.some((t) => t.action === action && t.repeat === 'key');
}

/** The status `action` leads to from `status` (the row's `to`), else `targetStatus(action)`. */
export function targetFrom(status: OrderStatus, action: TransitionAction): OrderStatus {
  return findTransition(status, action)?.to ?? targetStatus(action);
}

/** Whether an instruction closes the order's escrow account (a terminal instruction). */
export function closesEscrow(ix: Instruction): ix is TerminalInstruction {
  return instructionEscrowState[ix] === null;
}

/** The table row for `action` from `status`, if any. */
export function findTransition(status: OrderStatus, action: TransitionAction): OrderTransition | undefined {
  return rows.find((t) => t.from === status && t.action === action);
}

/**
 * The event the lifecycle table emits when an order goes `from` -> `to` by `action` (the `emits` column
 * of that row; without `action`, the first row from -> to; no such row: the row into `to` by `action`, else
 * the first into `to`). `from` null = creation. null: the status did not change.
 */
export function orderEventFor(from: OrderStatus | null, to: OrderStatus, action?: TransitionAction): OrderEvent | MilestoneEvent | null {
  const candidates = rows.filter((t) => t.from === from && t.to === to);
  // a status the table reaches only from elsewhere (an order converging to what the chain shows after a
  // party acted directly): the event of the action, else of any row into that status
  const into = rows.filter((t) => t.to === to && from !== to);
  const row =
    (action && candidates.find((t) => t.action === action)) || candidates[0] || (action && into.find((t) => t.action === action)) || into[0];
  return row ? row.emits : null;
}

/** Status an action leads to (the same from every source state in the table). */
export function targetStatus(action: TransitionAction): OrderStatus {
  const t = rows.find((r) => r.action === action);
  if (!t) throw new Error(`no transition for ${action}`);
  return t.to;
}

/** Any row lets `role` do `action` (from some state)? Used for the 403 check before the state check. */
export function roleMayEver(role: OrderRole, action: TransitionAction): boolean {
  return rows.some((t) => t.action === action && t.by.includes(role));
}

/**
 * The listing transition that follows an order reaching `status` (the `listing` column of the rows into
 * it; `listingOnFullRefund` when a resolve returned everything to the buyer). null: the listing stays.
 */
export function listingEventAfter(o: { status: OrderStatus; buyerBps: number | null }): ListingOrderEvent | null {
  const row = rows.find((t) => t.to === o.status && t.listing);
  if (!row) return null;
  return o.buyerBps === 10_000 && row.listingOnFullRefund ? row.listingOnFullRefund : row.listing!;
}

/** The two clocks of the timing rules, read at one moment: cluster unix seconds and the service's ms. */
export interface Clocks {
  chainSeconds: number;
  serviceMs: number;
}

/** The order fields a timing rule reads. */
export interface TimedOrder {
  id: string;
  status: OrderStatus;
  paymentSource: 'wallet' | 'custodial';
  paymentExpiresAt: Date;
  /** unix seconds */
  deliveryDeadline: number;
  /** when the seller delivered, on the chain clock (the escrow's delivered_at); null while not delivered */
  deliveredAt: Date | null;
  autoReleaseAt: Date | null;
  /** the row's milestone (rows with a `milestone` column apply to the first or the later ones only); absent: 1 */
  milestoneIndex?: number;
  /** agreements (issue 24); absent on records that predate them = none */
  revisionsIncluded?: number;
  revisionsUsed?: number;
  /** the pending deadline extension (expiresAt on the service clock) */
  extension?: { newDeadline: number; expiresAt: Date } | null;
  /** the pending settlement proposal (expiresAt on the chain clock, as the program holds it) */
  settlement?: { proposedBy: 'buyer' | 'seller'; buyerBps: number; expiresAt: Date } | null;
}

/**
 * Why the row's requirement (the contract's `requires`, OrderRequirement) refuses `role` on `o` now; null
 * when it holds. Extension expiry reads the service clock, settlement expiry the chain clock (the program's).
 */
export function requirementRefusal(o: TimedOrder, role: OrderRole, req: OrderRequirement, clocks: Clocks): DomainError | null {
  const none = (what: string) => new DomainError('no-pending-proposal', `Order ${o.id} has no pending ${what} proposal.`);
  const expired = (what: string, at: Date) =>
    new DomainError('proposal-expired', `The ${what} proposal on order ${o.id} expired at ${at.toISOString()}.`, { expires_at: at.toISOString() });
  switch (req) {
    case 'revision_left': {
      const included = o.revisionsIncluded ?? 0;
      const used = o.revisionsUsed ?? 0;
      return used < included
        ? null
        : new DomainError('revision-limit-reached', `Order ${o.id} includes ${included} revision(s), all requested.`, { revisions_included: included, revisions_used: used });
    }
    case 'extension_pending':
      if (!o.extension) return none('extension');
      return clocks.serviceMs >= o.extension.expiresAt.getTime() ? expired('extension', o.extension.expiresAt) : null;
    case 'extension_expired':
      return o.extension && clocks.serviceMs >= o.extension.expiresAt.getTime() ? null : none('expired extension');
    case 'settlement_by_other':
    case 'settlement_by_self': {
      if (!o.settlement) return none('settlement');
      const mine = o.settlement.proposedBy === role;
      if (req === 'settlement_by_other' && mine) return new DomainError('forbidden', 'The proposer cannot accept her own settlement proposal; the other party accepts it.');
      if (req === 'settlement_by_self' && !mine) return new DomainError('forbidden', 'Only the proposer may withdraw a settlement proposal.');
      return clocks.chainSeconds * 1000 >= o.settlement.expiresAt.getTime() ? expired('settlement', o.settlement.expiresAt) : null;
    }
    case 'settlement_expired':
      return o.settlement && clocks.chainSeconds * 1000 >= o.settlement.expiresAt.getTime() ? null : none('expired settlement');
  }
}

function deadlineMs(o: TimedOrder, at: OrderTiming['at']): number | null {
  switch (at) {
    case 'payment_expires_at':
      return o.paymentExpiresAt.getTime();
    case 'delivery_deadline':
      return o.deliveryDeadline * 1000;
    case 'auto_release_at':
      return o.autoReleaseAt?.getTime() ?? null;
  }
}

/** Does the timing rule bind this actor? */
export function timingBinds(t: OrderTiming | undefined, role: OrderRole): t is OrderTiming {
  return !!t && (!t.only || t.only === role);
}

/** The seller missed delivery_deadline: not delivered, or delivered after it (the contract's `late`). */
export function deliveredLate(o: TimedOrder): boolean {
  return o.deliveredAt === null || o.deliveredAt.getTime() > o.deliveryDeadline * 1000;
}

/**
 * Timing rule `t` for `role` on `clocks` (`graceSeconds`: the payment grace, for rules with grace): the
 * clock against `at`, and when the rule says so, a missed delivery deadline (`late`) and now < `until`.
 */
export function timingAllows(t: OrderTiming | undefined, role: OrderRole, o: TimedOrder, clocks: Clocks, graceSeconds = 0): boolean {
  if (!timingBinds(t, role)) return true;
  const base = deadlineMs(o, t.at);
  const now = t.clock === 'chain' ? clocks.chainSeconds * 1000 : clocks.serviceMs;
  if (t.late && !deliveredLate(o)) return false;
  if (t.until) {
    const end = deadlineMs(o, t.until);
    if (end !== null && now >= end) return false;
  }
  if (base === null) return t.allowed === 'before';
  const at = base + (t.grace ? graceSeconds * 1000 : 0);
  return t.allowed === 'before' ? now < at : t.allowed === 'from' ? now >= at : now > at;
}

/** 409 invalid-state-transition for `action` on an order in `status`. */
export function invalidTransition(orderId: string, status: OrderStatus, action: TransitionAction, detail?: string): DomainError {
  return new DomainError('invalid-state-transition', detail ?? `Cannot ${action} order ${orderId} in status ${status}.`, {
    order_status: status,
    action,
  });
}

/**
 * Why the table refuses `action` by `role` on `o` now, as the problem to answer; null when it allows
 * it. Checks the source state, the actor, the payment source and the timing rule, in that order.
 */
export function refusal(o: TimedOrder, role: OrderRole, action: TransitionAction, clocks: Clocks, graceSeconds = 0): DomainError | null {
  const row = findTransition(o.status, action);
  if (!row) return invalidTransition(o.id, o.status, action);
  const later = (o.milestoneIndex ?? 1) > 1;
  if ((row.milestone === 'first' && later) || (row.milestone === 'later' && !later)) {
    return invalidTransition(o.id, o.status, action, `${action} applies to ${row.milestone === 'first' ? 'the first milestone' : 'later milestones'} only.`);
  }
  if (!row.by.includes(role)) return new DomainError('forbidden', `The ${role} of an order may not ${action} it while it is ${o.status}.`);
  if (row.paymentSource && o.paymentSource !== row.paymentSource) {
    return invalidTransition(o.id, o.status, action, `Order ${o.id} is paid from the custodial balance by the service.`);
  }
  const t = row.timing;
  if (timingBinds(t, role) && !timingAllows(t, role, o, clocks, graceSeconds)) {
    const at = deadlineMs(o, t.at);
    const end = t.until ? deadlineMs(o, t.until) : null;
    const when =
      (at === null ? `once its ${t.at} is set` : `${t.allowed} its ${t.at} (${new Date(at).toISOString()})`) +
      (t.late ? ' when it was not delivered by then' : '') +
      (t.until && end !== null ? ` and before its ${t.until} (${new Date(end).toISOString()})` : '');
    const detail = `The ${role === 'system' ? 'service' : role} may ${action} order ${o.id} only ${when}.`;
    return t.refusal === 'forbidden' ? new DomainError('forbidden', detail) : invalidTransition(o.id, o.status, action, detail);
  }
  return row.requires ? requirementRefusal(o, role, row.requires, clocks) : null;
}

/** Whether any timing rule `role` could meet from this status reads the chain clock (so it must be read). */
export function needsChainClock(status: OrderStatus, role: OrderRole | null, action?: TransitionAction): boolean {
  return rows.some(
    (t) =>
      t.from === status &&
      (!action || t.action === action) &&
      ((t.timing?.clock === 'chain' && (!role || timingBinds(t.timing, role))) || (t.requires?.startsWith('settlement') ?? false)),
  );
}

// the agreement actions (issue 24) are the caller's actions too: their rows' `requires` (revision_left,
// extension_pending, settlement_by_other/self) are checked by `refusal` like any rule
const API_ACTIONS: ReadonlySet<string> = new Set<ApiOrderAction>([
  'pay',
  'fund',
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
]);

/**
 * `allowed_actions` for a caller: the table rows from the current status that `refusal` lets the role
 * take now (same rules, same clocks), plus `review` for the buyer of a reviewable order that has no
 * review yet (REVIEWABLE_ORDER_STATUSES).
 */
export function allowedActions(o: TimedOrder, role: OrderRole | null, clocks: Clocks, reviewed = false): ApiOrderAction[] {
  if (!role) return [];
  const out: ApiOrderAction[] = [];
  for (const t of rows) {
    if (t.from !== o.status || !API_ACTIONS.has(t.action) || out.includes(t.action as ApiOrderAction)) continue;
    if (!refusal(o, role, t.action, clocks)) out.push(t.action as ApiOrderAction);
  }
  if (role === 'buyer' && (REVIEWABLE_ORDER_STATUSES as readonly OrderStatus[]).includes(o.status) && !reviewed) out.push('review');
  return out;
}

export { escrowStateOf, REVIEWABLE_ORDER_STATUSES };
