/**
 * Use case "deadline extension" (issue 24 item 3), on one escrow unit (milestone) in progress:
 *  - propose (seller): off chain only (nothing moves until the buyer consents): stored on the order row
 *    with expires_at = now + ORDER_EXTENSION_PROPOSAL_TTL_SECONDS (service clock), replacing a pending one;
 *    the new deadline must be later than the current one (400 validation-error). Event extension.proposed.
 *  - accept (buyer, naming the deadline she accepts: 409 proposal-changed when the pending one differs):
 *    `extend_deadline` through the record-before-send pipeline: the program moves delivery_deadline, and
 *    with it the buyer's refund right, only with her consent. Event extension.accepted.
 *  - decline (buyer): off chain; the proposal is dropped. Event extension.declined.
 * Each is a row of the contract's lifecycle table (`requires: extension_pending` for accept and decline:
 * 409 no-pending-proposal / proposal-expired). Off-chain writes are conditional on the status and on the
 * pending proposal read (its proposed_at): a concurrent change makes them retry the checks, never overwrite.
 */
import { DomainError } from '../../../../errors.js';
import { needsChainClock, refusal } from '../../order-state.js';
import type { OrderRecord } from '../../orders.types.js';
import { type OrdersContext, type PrincipalLike, clocks } from '../context.js';
import type { ReadAndPresent } from '../read-and-present.js';
import type { PerformLocked } from '../act-on-chain/record-before-send.js';
import { partyFor } from './party.js';

export function extensions(c: OrdersContext, deps: { read: Pick<ReadAndPresent, 'get'>; perform: PerformLocked }) {
  /** An off-chain row (`propose_extension` / `decline_extension`) on the fresh order, under its mutex. */
  async function offChain(
    p: PrincipalLike,
    orderId: string,
    index: number | undefined,
    action: 'propose_extension' | 'decline_extension',
    patchOf: (o: OrderRecord, now: Date) => Partial<OrderRecord>,
  ): Promise<OrderRecord> {
    const { order: row, role } = await partyFor(c, deps.read, p, orderId, action, index);
    const id = row.id; // the milestone's row (the current one without an index)
    return c.mutex.run(id, async () => {
      for (let attempt = 0; ; attempt++) {
        const o = (await c.repo.get(id))!;
        const at = await clocks(c, needsChainClock(o.status, role, action));
        const refused = refusal(o, role, action, at);
        if (refused) throw refused;
        const patch = patchOf(o, new Date(at.serviceMs));
        if (await c.repo.updateIf(id, o.status, { ...patch, transition: action }, { extensionProposedAt: o.extension?.proposedAt ?? null })) {
          return (await c.repo.get(id))!;
        }
        // another process changed the order meanwhile: check again on what it is now
        if (attempt >= 3) throw new DomainError('conflict', `Order ${orderId} changed meanwhile; retry.`);
      }
    });
  }

  // `index` on each: the milestone (POST /orders/{id}/milestones/{index}/extension...; 404 for one the order
  // lacks, 409 invalid-state-transition for one not in progress); absent: the current milestone
  return {
    /** Seller: propose `newDeadline` (unix seconds, later than the milestone's current delivery_deadline). */
    propose(p: PrincipalLike, orderId: string, newDeadline: number, message: string | null, index?: number): Promise<OrderRecord> {
      return offChain(p, orderId, index, 'propose_extension', (o, now) => {
        if (!(newDeadline > o.deliveryDeadline)) {
          throw new DomainError('validation-error', `new_deadline must be later than the current delivery deadline (${new Date(o.deliveryDeadline * 1000).toISOString()}).`, {
            errors: [{ path: 'body.new_deadline', message: 'must be later than delivery_deadline', code: 'not_after_deadline' }],
          });
        }
        const expiresAt = new Date(now.getTime() + c.settings.extensionProposalTtlSeconds * 1000);
        return { extension: { newDeadline, message: message?.trim() || null, proposedAt: now, expiresAt } };
      });
    },
    /** Buyer: accept the pending proposal, naming its deadline (unix seconds). */
    async accept(p: PrincipalLike, orderId: string, newDeadline: number, index?: number): Promise<OrderRecord> {
      const { order: row, role } = await partyFor(c, deps.read, p, orderId, 'accept_extension', index);
      return c.mutex.run(row.id, () =>
        deps.perform(row.id, role, 'accept_extension', { new_deadline: newDeadline }, (o) =>
          o.extension && o.extension.newDeadline !== newDeadline
            ? new DomainError('proposal-changed', `The pending extension asks for ${new Date(o.extension.newDeadline * 1000).toISOString()}, not ${new Date(newDeadline * 1000).toISOString()}.`, {
                pending: { new_deadline: new Date(o.extension.newDeadline * 1000).toISOString() },
              })
            : null,
        ),
      );
    },
    /** Buyer: decline the pending proposal. */
    decline(p: PrincipalLike, orderId: string, index?: number): Promise<OrderRecord> {
      return offChain(p, orderId, index, 'decline_extension', () => ({ extension: null }));
    },
  };
}

export type Extensions = ReturnType<typeof extensions>;
