/**
 * What every agreement use case does first (issue 24): the caller's role on the order (404 for strangers,
 * 403 for a role no row of `action` lets act, or that the current state's row does not), as the parties'
 * escrow actions do (../act-on-chain/actions.ts). The rest (state, timing, requirement) is the table's
 * `refusal`, evaluated on the fresh order under the order's mutex.
 */
import { type OrderRole, type TransitionAction, findTransition, roleMayEver } from '../../order-state.js';
import { orderErrors } from '../../orders.errors.js';
import type { OrderRecord } from '../../orders.types.js';
import { type OrdersContext, type PrincipalLike, currentRow, milestoneRow, roleOf } from '../context.js';
import type { ReadAndPresent } from '../read-and-present.js';

/**
 * The row the agreement acts on and the caller's role, or the refusal (404 stranger, 403 role).
 * `index` absent (the order routes): the order's current milestone, as the escrow actions (a one-milestone
 * order's one row). `index` given (POST /orders/{id}/milestones/{index}/...): that milestone, current or
 * funded ahead of it (404 not-found for an index the order does not have; an unfunded one is refused by
 * the table: 409 invalid-state-transition). Callers run the action on `order.id` (that milestone's
 * escrow), never on the order id they were given.
 */
export async function partyFor(
  c: Pick<OrdersContext, 'repo'>,
  read: Pick<ReadAndPresent, 'get'>,
  p: PrincipalLike,
  orderId: string,
  action: TransitionAction,
  index?: number,
): Promise<{ order: OrderRecord; role: OrderRole }> {
  const visible = await read.get(p, orderId); // 404 for strangers
  const order = index === undefined ? await currentRow(c, visible) : await milestoneRow(c, visible, index);
  const role = roleOf(order, p)!;
  const row = findTransition(order.status, action);
  if (!roleMayEver(role, action) || (row && !row.by.includes(role))) {
    throw orderErrors.forbidden(`The ${role} of an order may not ${action.replace('_', ' ')} it${row ? ` while it is ${order.status}` : ''}.`);
  }
  return { order, role };
}
