/**
 * Use case "request a revision" (issue 24 item 2): the buyer of a delivered escrow unit (milestone) sends
 * it back to work. Table row delivered -request_revision-> in_progress (buyer, before auto_release_at on the
 * chain clock, needs revisions_used < revisions_included: 409 revision-limit-reached), through the
 * record-before-send pipeline: the escrow program's `request_revision` stops the auto-release timer
 * (delivered_at cleared) and moves delivery_deadline (its rule: max(old, now + max(time left at delivery,
 * 1 day)), capped by its max delivery window; the service stores what the account shows), and counts the
 * revision on chain; the order row counts it too (`revisions_used`, in the intent's transaction, with the
 * `revision.requested` event).
 *
 * The buyer's message is posted into the order's conversation (chat module) once the revision is confirmed
 * (best effort: a chat failure never undoes the revision; it is logged). A retry is answered by the
 * route's Idempotency-Key, never by the status (a second revision is a second request).
 */
import { DomainError } from '../../../../errors.js';
import type { OrderRecord } from '../../orders.types.js';
import type { OrdersContext, PrincipalLike } from '../context.js';
import type { ReadAndPresent } from '../read-and-present.js';
import type { PerformLocked } from '../act-on-chain/record-before-send.js';
import { partyFor } from './party.js';

export function revisions(c: OrdersContext, deps: { read: Pick<ReadAndPresent, 'get'>; perform: PerformLocked }) {
  return {
    /**
     * 400 validation-error for an empty message; 404/403/409 as the table says; 409 revision-limit-reached.
     * `index`: the milestone (POST /orders/{id}/milestones/{index}/revision; 404 for one the order lacks);
     * absent: the current milestone.
     */
    async requestRevision(p: PrincipalLike, orderId: string, message: string, index?: number): Promise<OrderRecord> {
      const text = message.trim();
      if (!text) throw new DomainError('validation-error', 'message must not be empty', { errors: [{ path: 'body.message', message: 'required', code: 'too_small' }] });
      const { order: row, role } = await partyFor(c, deps.read, p, orderId, 'request_revision', index);
      const after = await c.mutex.run(row.id, () => deps.perform(row.id, role, 'request_revision', null));
      if (c.chat) {
        await c.chat.postOrderMessage(p, row.orderId, `Revision requested${row.milestoneCount > 1 ? ` (milestone ${row.milestoneIndex})` : ''}: ${text}`).catch((err) => c.log.warn({ err, order_id: orderId }, 'revision message not posted to the conversation'));
      }
      return after;
    },
  };
}

export type Revisions = ReturnType<typeof revisions>;
