/**
 * Use case "recover and reconcile", the stray-escrow part (the reconciler of open intents and drift
 * is ../escrow-reconciler.ts, given to this use case): re-funded closed orders. A fund transaction
 * issued for an order stays valid for its blockhash's lifetime, so it can land after the order was
 * closed (refunded, expired, ...); the escrow then holds the buyer's money while the order says
 * otherwise. Steps per order: settle an open stray refund first (reconciler), else record a refund
 * intent, send it on a blockhash none of the order's earlier transactions used (record before send),
 * confirm it; the order keeps its status and shows the refund among its transactions.
 */
import { DomainError } from '../../../errors.js';
import { AttemptSuperseded, recordAttempt } from '../../../chain/recorded-send.js';
import { type EscrowReconciler, isStrayRefund } from '../escrow-reconciler.js';
import { isTerminal } from '../order-state.js';
import { orderErrors } from '../orders.errors.js';
import type { OrderRecord, TxResult } from '../orders.types.js';
import { lifetimeOf } from './act-on-chain/record-before-send.js';
import type { OrdersContext } from './context.js';

/** How long after the validUntil of its last fund transaction a closed order is checked for an escrow. */
const STRAY_ESCROW_MARGIN_SECONDS = 600;

export function refundStrayEscrows(c: OrdersContext, deps: { reconciler: EscrowReconciler }) {
  /**
   * One stray escrow refund (caller holds the order's mutex); true when a stray refund was confirmed now:
   * sent and confirmed here, or sent earlier (its confirmation lost) and confirmed by reconciling it here.
   */
  async function refundStray(orderId: string): Promise<boolean> {
    const { repo } = c;
    const open = await repo.openIntentFor(orderId);
    if (open) return (await deps.reconciler.reconcileIntent(open)) === 'confirmed' && isStrayRefund(open);
    const order = (await repo.get(orderId))!;
    if (!isTerminal(order.status)) return false;
    const intent = await repo.beginIntent(orderId, order.status, 'refund', { reason: 'stray-escrow' });
    if (!intent) return false;
    // the refund that closed the order is this very instruction: built on the same blockhash it would be
    // that transaction again (same signature), which the chain drops and the intent cannot record
    const sent = new Set((await repo.listIntents(orderId)).flatMap((i) => (i.signature ? [i.signature] : [])));
    const o = {
      onSigned: recordAttempt(`order ${orderId} stray refund`, (a) => repo.markIntentSent(intent.id, a.signature, lifetimeOf(a))),
      distinctFrom: sent,
    };
    let tx: TxResult;
    try {
      tx = await c.escrow.send('refund', orderId, o);
    } catch (err) {
      if (err instanceof AttemptSuperseded) throw orderErrors.actionInProgress(orderId, 'refund');
      if (err instanceof DomainError && err.slug === 'chain-transaction-failed') await repo.failIntent(intent.id, err.message);
      throw err;
    }
    await repo.confirmIntent(intent.id, tx.signature, tx.slot, orderId, order.status, {});
    c.log.warn({ order_id: orderId, status: order.status, signature: tx.signature }, 'escrow re-funded after the order closed: refunded to the buyer');
    return true;
  }

  /**
   * For every terminal order with a fund transaction issued that may still land (its validUntil less
   * than 10 min ago: validUntil is conservative, and even 4 s slots end a blockhash's 150 blocks well
   * inside that), an existing escrow account is refunded to the buyer (the platform authority may refund
   * any open escrow). Every such order is checked on each pass, read in pages of `limit`. Returns the
   * order ids refunded.
   */
  return async function refundStrayEscrowsPass(limit = 50): Promise<string[]> {
    const since = new Date(c.now().getTime() - STRAY_ESCROW_MARGIN_SECONDS * 1000);
    const out: string[] = [];
    const candidates: OrderRecord[] = [];
    for (let page = await c.repo.listClosedFundableSince(since, limit); ; ) {
      candidates.push(...page);
      if (page.length < limit) break;
      page = await c.repo.listClosedFundableSince(since, limit, page[page.length - 1]!.id);
    }
    for (const order of candidates) {
      try {
        // a stray refund already sent (its confirmation was lost) is finished first: the escrow may be
        // gone already, and the refund is reported by the pass that confirms it
        if (!(await c.repo.openIntentFor(order.id))) {
          const view = await c.escrow.fetchOrder(order.id);
          if (!view) continue;
          if (order.paymentSource !== 'wallet') {
            c.log.error({ order_id: order.id, status: order.status }, 'escrow of a closed custodial order exists; not refunded automatically');
            continue;
          }
        }
        if (await c.mutex.run(order.id, () => refundStray(order.id))) out.push(order.id);
      } catch (err) {
        c.log.warn({ err, order_id: order.id }, 'stray escrow refund failed');
      }
    }
    return out;
  };
}
