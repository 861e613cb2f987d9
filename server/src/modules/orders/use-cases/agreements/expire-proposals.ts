/**
 * Use case "expire proposals" (issue 24): the sweep the auto-release crank runs on each pass. A pending
 * extension past its expires_at (service clock) or settlement past its expires_at (chain clock: what the
 * program enforces) is cleared by the table's system row (`expire_extension` / `expire_settlement`), with
 * its `*.expired` event, in one conditional write (status and the same proposal still pending): the event
 * is written once whatever the number of replicas sweeping. Reads never wait for the sweep: an expired
 * proposal is not shown (orders.dto.ts) and cannot be accepted (409 proposal-expired) from its expires_at on.
 * The settlement proposal stays in the escrow account, harmless: the program refuses to accept it expired.
 * The sweep reads rows, so it covers every milestone's proposals (current or funded ahead), as the
 * per-milestone routes make them.
 */
import { refusal } from '../../order-state.js';
import type { OrdersContext } from '../context.js';

export function expireProposals(c: OrdersContext) {
  /** One pass: the events written, as `<order id>:<event>`. */
  return async function expire(limit = 50): Promise<string[]> {
    const serviceMs = c.now().getTime();
    const chainSeconds = await c.escrow.chainNow().catch(() => null);
    const at = { serviceMs, chainSeconds: chainSeconds ?? Number.NEGATIVE_INFINITY };
    const done: string[] = [];
    for (const o of await c.repo.listExpiredProposals(new Date(serviceMs), new Date(chainSeconds === null ? 0 : chainSeconds * 1000), limit)) {
      await c.mutex.run(o.id, async () => {
        const fresh = await c.repo.get(o.id);
        if (!fresh) return;
        if (!refusal(fresh, 'system', 'expire_extension', at)) {
          const ok = await c.repo.updateIf(fresh.id, fresh.status, { extension: null, transition: 'expire_extension' }, { extensionProposedAt: fresh.extension!.proposedAt });
          if (ok) done.push(`${fresh.id}:extension.expired`);
        }
        if (chainSeconds !== null && !refusal(fresh, 'system', 'expire_settlement', at)) {
          const now = (await c.repo.get(o.id))!;
          const ok = await c.repo.updateIf(now.id, now.status, { settlement: null, transition: 'expire_settlement' }, { settlementProposedAt: fresh.settlement!.proposedAt });
          if (ok) done.push(`${fresh.id}:settlement.expired`);
        }
      }).catch((err) => c.log.warn({ err, order_id: o.id }, 'proposal expiry failed'));
    }
    return done;
  };
}
