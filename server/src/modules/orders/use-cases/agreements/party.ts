/**
 * What every agreement use case does first (issue 24): the caller's role on the order (404 for strangers,
 * 403 for a role no row of `action` lets act, or that the current state's row does not), as the parties'
 * escrow actions do (../act-on-chain/actions.ts). The rest (state, timing, requirement) is the table's
 * `refusal`, evaluated on the fresh order under the order's mutex.
 */
import { type OrderRole, type TransitionAction, findTransition, roleMayEver } from '../../order-state.js';
import { orderErrors } from '../../orders.errors.js';
import type { OrderRecord } from '../../orders.types.js';
import { currentMilestone } from '../../milestones.js';
import { type OrdersContext, type PrincipalLike, roleOf } from '../context.js';
import type { ReadAndPresent } from '../read-and-present.js';

/**
 * The row an agreement acts on and the caller's role, or the refusal (404 stranger, 403 role). The row is
 * the order's current milestone (milestones, issue 24: the first not settled, else the last funded one);
 * a one-milestone order's row is the order itself. Use its `id` (the milestone's escrow id) for the
 * mutex and the pipeline; `orderId` stays the order's (its conversation).
 */
export async function partyFor(
  c: Pick<OrdersContext, 'repo'>,
  read: Pick<ReadAndPresent, 'get'>,
  p: PrincipalLike,
  orderId: string,
  action: TransitionAction,
): Promise<{ order: OrderRecord; role: OrderRole }> {
  const first = await read.get(p, orderId); // 404 for strangers
  let order = first;
  if (first.milestoneCount > 1) {
    const rows = (await c.repo.milestonesOf([first.orderId])).get(first.orderId) ?? [first];
    const current = currentMilestone(rows);
    order = rows.find((r) => r.milestoneIndex === current) ?? [...rows].reverse().find((r) => r.status !== 'scheduled') ?? first;
  }
  const role = roleOf(order, p)!;
  const row = findTransition(order.status, action);
  if (!roleMayEver(role, action) || (row && !row.by.includes(role))) {
    throw orderErrors.forbidden(`The ${role} of an order may not ${action.replace('_', ' ')} it${row ? ` while it is ${order.status}` : ''}.`);
  }
  return { order, role };
}
