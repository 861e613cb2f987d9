/**
 * Use case "settlement by agreement" (issue 24 item 4), on one funded escrow unit (milestone: in progress,
 * delivered or disputed), each step through the record-before-send pipeline:
 *  - propose (buyer or seller): `propose_settlement(buyer_bps, expires_at, proposed_by)` records the split on
 *    chain (expires_at = chain now + ORDER_SETTLEMENT_PROPOSAL_TTL_SECONDS, which the program checks) and
 *    on the order row; a new proposal by either party replaces a pending one. Event settlement.proposed.
 *  - accept (the OTHER party, naming the buyer_bps she accepts: 409 proposal-changed when the pending one
 *    differs; the proposer gets 403): `accept_settlement(buyer_bps)`: the program pays exactly that split
 *    (the buyer floor(amount * bps / 10000), the seller the rest minus the fee on it) and closes the escrow;
 *    the row ends `resolved` with settled_by agreement and the payout read back from the chain. Works
 *    during a dispute. Event settlement.accepted.
 *  - withdraw (the proposer): `withdraw_settlement`. Event settlement.withdrawn.
 * A retry is answered by the route's Idempotency-Key; a crash between the chain and the database is healed
 * by the reconciler from the intent (its params carry the instruction's arguments).
 */
import { DomainError } from '../../../../errors.js';
import type { OrderRecord } from '../../orders.types.js';
import type { OrdersContext, PrincipalLike } from '../context.js';
import type { ReadAndPresent } from '../read-and-present.js';
import type { PerformLocked } from '../act-on-chain/record-before-send.js';
import { partyFor } from './party.js';

/** 400 validation-error unless `bps` is an integer 0..10000. */
function assertBps(bps: number): void {
  if (!Number.isInteger(bps) || bps < 0 || bps > 10_000) {
    throw new DomainError('validation-error', 'buyer_bps must be an integer 0..10000', {
      errors: [{ path: 'body.buyer_bps', message: 'must be an integer 0..10000', code: 'invalid_bps' }],
    });
  }
}

export function settlements(c: OrdersContext, deps: { read: Pick<ReadAndPresent, 'get'>; perform: PerformLocked }) {
  // `index` on each: the milestone (POST /orders/{id}/milestones/{index}/settlement...; 404 for one the order
  // lacks, 409 invalid-state-transition for one not funded or closed); absent: the current milestone. The
  // program pays the split of that milestone's escrow only; the order goes on with its other milestones.
  return {
    /** Buyer or seller: propose `buyerBps` (basis points returned to the buyer; 10000 = cancel). */
    async propose(p: PrincipalLike, orderId: string, buyerBps: number, index?: number): Promise<OrderRecord> {
      assertBps(buyerBps);
      const { order: row, role } = await partyFor(c, deps.read, p, orderId, 'propose_settlement', index);
      const expiresAt = (await c.escrow.chainNow()) + c.settings.settlementProposalTtlSeconds;
      return c.mutex.run(row.id, () => deps.perform(row.id, role, 'propose_settlement', { buyer_bps: buyerBps, expires_at: expiresAt, proposed_by: role }));
    },
    /** The other party: accept the pending proposal, naming its buyer_bps. */
    async accept(p: PrincipalLike, orderId: string, buyerBps: number, index?: number): Promise<OrderRecord> {
      assertBps(buyerBps);
      const { order: row, role } = await partyFor(c, deps.read, p, orderId, 'accept_settlement', index);
      return c.mutex.run(row.id, () =>
        deps.perform(row.id, role, 'accept_settlement', { buyer_bps: buyerBps }, (o) =>
          o.settlement && o.settlement.buyerBps !== buyerBps
            ? new DomainError('proposal-changed', `The pending settlement returns ${o.settlement.buyerBps} bps to the buyer, not ${buyerBps}: nothing was accepted.`, {
                pending: { buyer_bps: o.settlement.buyerBps, proposed_by: o.settlement.proposedBy },
              })
            : null,
        ),
      );
    },
    /** The proposer: withdraw the pending proposal. */
    async withdraw(p: PrincipalLike, orderId: string, index?: number): Promise<OrderRecord> {
      const { order: row, role } = await partyFor(c, deps.read, p, orderId, 'withdraw_settlement', index);
      return c.mutex.run(row.id, () => deps.perform(row.id, role, 'withdraw_settlement', null));
    },
  };
}

export type Settlements = ReturnType<typeof settlements>;
