/**
 * Order state machine: the contract's `orderTransitions` table (contract/src/orders.contract.ts)
 * turned into guards. Nothing here restates the table; only the service-side vocabulary is added:
 *
 *  - `ChainAction`: transitions performed by an escrow instruction the service signs
 *    (deliver, confirm, auto_release, dispute, resolve, refund); `pay` is signed by the buyer.
 *  - `Instruction`: the escrow instruction behind each (stored on ChainIntent rows and shown as
 *    `transactions[].action`).
 *
 * Guard order in the service: caller role (403 forbidden; strangers 404), then source state
 * (409 invalid-state-transition), then the transition's timing condition.
 */
import {
  type OrderAction as ApiOrderAction,
  type OrderActor,
  type OrderStatus,
  type OrderTransition,
  ORDER_STATUSES,
  TERMINAL_ORDER_STATUSES,
  escrowStateOf,
  orderTransitions,
} from '@bazaar/contract';

export { ORDER_STATUSES, escrowStateOf, orderTransitions };
export type { OrderStatus, OrderActor, OrderTransition, ApiOrderAction };

export type TransitionAction = OrderTransition['action'];
export type ChainAction = 'deliver' | 'confirm' | 'auto_release' | 'dispute' | 'resolve' | 'refund';
export type Instruction = NonNullable<OrderTransition['instruction']>;
export type OrderRole = OrderActor;

export const CHAIN_ACTIONS: readonly ChainAction[] = ['deliver', 'confirm', 'auto_release', 'dispute', 'resolve', 'refund'];

/** Escrow instruction of each chain action (from the table). */
export const actionInstruction: Readonly<Record<ChainAction, Instruction>> = {
  deliver: 'mark_delivered',
  confirm: 'release',
  auto_release: 'claim',
  dispute: 'open_dispute',
  resolve: 'resolve_dispute',
  refund: 'refund',
};

export const instructionAction: Readonly<Partial<Record<Instruction, ChainAction>>> = Object.fromEntries(
  Object.entries(actionInstruction).map(([a, i]) => [i, a]),
) as Partial<Record<Instruction, ChainAction>>;

/** Escrow account state after each instruction; null = the account is closed (terminal). */
export const instructionEscrowState: Readonly<Record<Instruction, 'funded' | 'delivered' | 'disputed' | null>> = {
  fund: 'funded',
  mark_delivered: 'delivered',
  open_dispute: 'disputed',
  release: null,
  claim: null,
  resolve_dispute: null,
  refund: null,
};

const TERMINAL: ReadonlySet<OrderStatus> = new Set(TERMINAL_ORDER_STATUSES);

export function isTerminal(status: OrderStatus): boolean {
  return TERMINAL.has(status);
}

/** The table row for `action` from `status`, if any. */
export function findTransition(status: OrderStatus, action: TransitionAction): OrderTransition | undefined {
  return orderTransitions.find((t) => t.from === status && t.action === action);
}

/** Status an action leads to (the same from every source state in the table). */
export function targetStatus(action: TransitionAction): OrderStatus {
  const t = orderTransitions.find((r) => r.action === action);
  if (!t) throw new Error(`no transition for ${action}`);
  return t.to;
}

/** Any row lets `role` do `action` (from some state)? Used for the 403 check before the state check. */
export function roleMayEver(role: OrderRole, action: TransitionAction): boolean {
  return orderTransitions.some((t) => t.action === action && t.by.includes(role));
}

export function canTransition(status: OrderStatus, action: TransitionAction, role?: OrderRole): boolean {
  const t = findTransition(status, action);
  return !!t && (role === undefined || t.by.includes(role));
}

/**
 * `allowed_actions` for a caller: table rows from the current status whose actors include the role,
 * with the time conditions evaluated (`now` in unix seconds) and `review` for the buyer of a
 * completed/resolved order that has no review yet (`reviewed` unknown = offered).
 */
export function allowedActions(
  o: { status: OrderStatus; deliveryDeadline: number; autoReleaseAt: Date | null; paymentExpiresAt: Date },
  role: OrderRole | null,
  nowSeconds: number,
  reviewed = false,
): ApiOrderAction[] {
  if (!role) return [];
  const out: ApiOrderAction[] = [];
  for (const t of orderTransitions) {
    if (t.from !== o.status || !t.by.includes(role)) continue;
    if (t.action === 'create' || t.action === 'expire' || t.action === 'auto_release') continue;
    if (t.action === 'pay' && o.paymentExpiresAt.getTime() <= nowSeconds * 1000) continue;
    if (t.action === 'refund' && role === 'buyer' && nowSeconds <= o.deliveryDeadline) continue;
    if (t.action === 'dispute' && o.status === 'delivered' && o.autoReleaseAt && nowSeconds * 1000 >= o.autoReleaseAt.getTime()) continue;
    if (!out.includes(t.action as ApiOrderAction)) out.push(t.action as ApiOrderAction);
  }
  if (role === 'buyer' && (o.status === 'completed' || o.status === 'resolved') && !reviewed) out.push('review');
  return out;
}
