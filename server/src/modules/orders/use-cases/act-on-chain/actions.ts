/**
 * Use case "act on chain": the parties' escrow actions (deliver, confirm, dispute, refund, resolve)
 * and the service's own claim of due orders, each one run of the record-before-send pipeline
 * (./record-before-send.ts) under the order's mutex. A new escrow action (e.g. a milestone's own
 * deliver/confirm) is a new row of the contract's lifecycle table plus a function here calling `act`.
 *
 * Milestones (issue 24): an action acts on one row (one milestone's escrow). The order routes act on the
 * order's `current_milestone` (a one-milestone order: its one row, as before); the milestone routes name
 * the row (`actOnMilestone`, use-cases/milestones).
 */
import { DomainError } from '../../../../errors.js';
import { type ChainAction, type OrderStatus, findTransition, needsChainClock, refusal, roleMayEver } from '../../order-state.js';
import { orderErrors } from '../../orders.errors.js';
import type { OrderRecord } from '../../orders.types.js';
import { type OrdersContext, type PrincipalLike, clocks, currentRow, roleOf } from '../context.js';
import type { ReadAndPresent } from '../read-and-present.js';
import type { PerformLocked } from './record-before-send.js';

export function actOnChain(c: OrdersContext, deps: { read: Pick<ReadAndPresent, 'get'>; perform: PerformLocked }) {
  /** Role checks (404 strangers, 403 a role that may not), then the pipeline under the order's mutex. */
  async function act(p: PrincipalLike, orderId: string, action: ChainAction, params: Record<string, unknown> | null): Promise<OrderRecord> {
    const order = await deps.read.get(p, orderId); // 404 for strangers
    return actOnRow(p, await currentRow(c, order), action, params);
  }

  /** `act` on one row (a milestone) of an order the caller may see. */
  async function actOnRow(p: PrincipalLike, order: OrderRecord, action: ChainAction, params: Record<string, unknown> | null): Promise<OrderRecord> {
    const orderId = order.id;
    const role = roleOf(order, p)!;
    // 403 when the role never does this, or when this state allows it to another role only
    const row = findTransition(order.status, action);
    if (!roleMayEver(role, action) || (row && !row.by.includes(role))) {
      throw orderErrors.forbidden(`The ${role} of an order may not ${action} it${row ? ` while it is ${order.status}` : ''}.`);
    }
    const withBy = action === 'dispute' ? { ...params, by: role } : params;
    return c.mutex.run(orderId, () => deps.perform(orderId, role, action, withBy));
  }

  /** Crank: claim one delivered order whose review window is over (anyone may claim on chain). */
  function claim(orderId: string): Promise<OrderRecord> {
    return c.mutex.run(orderId, () => deps.perform(orderId, 'system', 'auto_release', null));
  }

  return {
    actOnRow,
    deliver: (p: PrincipalLike, orderId: string) => act(p, orderId, 'deliver', null),
    confirm: (p: PrincipalLike, orderId: string) => act(p, orderId, 'confirm', null),
    dispute: (p: PrincipalLike, orderId: string, reason: string) => act(p, orderId, 'dispute', { reason }),
    refund: (p: PrincipalLike, orderId: string) => act(p, orderId, 'refund', null),
    /** 400 validation-error unless `buyerBps` is an integer 0..10000 (the buyer's share, basis points) */
    resolve(p: PrincipalLike, orderId: string, buyerBps: number): Promise<OrderRecord> {
      if (!Number.isInteger(buyerBps) || buyerBps < 0 || buyerBps > 10_000) {
        throw new DomainError('validation-error', 'buyer_bps must be an integer 0..10000', {
          errors: [{ path: 'body.buyer_bps', message: 'must be an integer 0..10000', code: 'invalid_bps' }],
        });
      }
      return act(p, orderId, 'resolve', { buyer_bps: buyerBps });
    },
    claim,
    /** Due claims: orders the table lets the service auto-release now (delivered, auto_release_at passed on the chain clock). */
    async claimDue(limit = 50): Promise<string[]> {
      const from = findTransition('delivered', 'auto_release')!.from as OrderStatus;
      const at = await clocks(c, needsChainClock(from, 'system', 'auto_release'));
      const claimed: string[] = [];
      for (const o of await c.repo.listByStatus(from, limit)) {
        if (refusal(o, 'system', 'auto_release', at)) continue;
        try {
          const after = await claim(o.id);
          if (after.status === 'completed') claimed.push(o.id);
        } catch (err) {
          c.log.warn({ err, order_id: o.id }, 'auto-release claim failed');
        }
      }
      return claimed;
    },
  };
}

export type ActOnChain = ReturnType<typeof actOnChain>;
