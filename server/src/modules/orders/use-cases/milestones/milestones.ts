/**
 * Use case "milestones" (issue 24): what the buyer and the seller do to one milestone of an order with
 * several, as steps on top of the other use cases (no pipeline of its own):
 *
 *   fund (POST /orders/{id}/milestones/fund, buyer, wallet orders):
 *     1. check: the order is open, milestone 1 is paid, the named milestones are the next unfunded ones
 *        in order (409 milestone-out-of-order), each scheduled (409 invalid-state-transition), the table's
 *        `fund` row allows it (wallet orders only), the wallet can pay them (409 insufficient-funds);
 *     2. record: one transaction moves them scheduled -> awaiting_payment with a fresh payment window and
 *        their delivery deadlines (funding time + their delivery days), milestone.payment_due each
 *        (`repo.requestMilestonePayment`). Compensation: none needed: an unpaid milestone lapses back to
 *        scheduled when its window closes (the table's `lapse` row, the payment watcher), and may be
 *        funded again;
 *     3. issue: ONE fund transaction with one `fund` instruction per milestone (escrow id = the milestone's
 *        id; `fund_milestone` once the program has it), signed by the buyer's wallet once. The payment
 *        watcher, POST /orders/{id}/transaction and the Solana Pay POST then see each escrow (pay.ts).
 *     Custodial orders never get here: a multi-milestone order is a wallet order (create-order.ts).
 *   act (POST /orders/{id}/milestones/{index}/{deliver|confirm|dispute|refund|resolve}): the table's row
 *     on that milestone's row through the record-before-send pipeline (act-on-chain/actions.ts).
 *   end (POST /orders/{id}/end, buyer): when no milestone is open and one settled, ended_at on every row
 *     and order.ended in one transaction (`repo.endOrder`), then the listing follows the order.
 */
import { DomainError } from '../../../../errors.js';
import { endRefusal, orderClosed, orderStatusOf } from '../../milestones.js';
import { type ChainAction, refusal } from '../../order-state.js';
import { orderErrors } from '../../orders.errors.js';
import type { OrderRecord } from '../../orders.types.js';
import type { ActOnChain } from '../act-on-chain/actions.js';
import type { PayOrder } from '../create-and-pay/pay.js';
import { type OrdersContext, type PrincipalLike, applyListingEffect, assertWalletCanFund, clocks, fundTerms, roleOf } from '../context.js';
import type { ReadAndPresent } from '../read-and-present.js';

/** What POST /orders/{id}/milestones/fund answers (contract MilestonesPayment). */
export interface MilestonesPayment {
  order: OrderRecord;
  milestones: number[];
  transaction: string;
  solana_pay_url: string;
  /** min(the transaction's validity, payment_expires_at) */
  expires_at: Date;
  payment_expires_at: Date;
}

export function milestones(
  c: OrdersContext,
  deps: { read: Pick<ReadAndPresent, 'get'>; pay: Pick<PayOrder, 'issueMilestonesTransaction' | 'solanaPayUrl'>; actions: Pick<ActOnChain, 'actOnRow'> },
) {
  /** The order (first row) and all its rows, for a caller who may see it (404 otherwise). */
  async function rowsOf(p: PrincipalLike, orderId: string): Promise<{ order: OrderRecord; rows: OrderRecord[] }> {
    const order = await deps.read.get(p, orderId);
    const rows = order.milestoneCount > 1 ? ((await c.repo.milestonesOf([order.orderId])).get(order.orderId) ?? [order]) : [order];
    return { order, rows };
  }

  /** POST /orders/{id}/milestones/fund. See the file comment; `indexes` as the body names them. */
  async function fund(p: PrincipalLike, orderId: string, indexes: number[]): Promise<MilestonesPayment> {
    const { order, rows } = await rowsOf(p, orderId);
    if (roleOf(order, p) !== 'buyer') throw orderErrors.forbidden('Only the buyer funds the milestones of an order.');
    const status = orderStatusOf(rows);
    if (rows.length < 2 || orderClosed(status) || status === 'awaiting_payment') {
      throw orderErrors.invalidTransition(orderId, order.status, 'fund', rows.length < 2
        ? `Order ${orderId} has one milestone: pay it with POST /orders/${orderId}/payment.`
        : `Cannot fund milestones of order ${orderId} while it is ${status}.`);
    }
    // milestones asked for earlier and not paid yet come first: pay them (POST /orders/{id}/payment gives a fresh
    // transaction) or let them lapse back to scheduled
    const waiting = rows.filter((r) => r.milestoneIndex > 1 && r.status === 'awaiting_payment').map((r) => r.milestoneIndex);
    if (waiting.length) {
      throw orderErrors.invalidTransition(orderId, order.status, 'fund', `Milestone ${waiting.join(', ')} of order ${orderId} awaits payment: pay it (POST /orders/${orderId}/payment) or let it lapse first.`);
    }
    const named = new Set(indexes);
    if (named.size !== indexes.length) throw milestoneOutOfOrder(orderId, indexes, null, 'a milestone is named twice');
    // a named milestone that is not scheduled (funded, settled, or awaiting its payment already)
    for (const i of indexes) {
      const row = rows.find((r) => r.milestoneIndex === i);
      if (!row) throw orderErrors.notFound(`${orderId} milestone ${i}`);
      if (row.status !== 'scheduled') throw orderErrors.invalidTransition(row.id, row.status, 'fund', `Milestone ${i} of order ${orderId} is ${row.status}, not scheduled.`);
    }
    // the next unfunded ones, in order
    const scheduled = rows.filter((r) => r.status === 'scheduled').map((r) => r.milestoneIndex).sort((a, b) => a - b);
    const next = scheduled[0]!;
    const wanted = scheduled.slice(0, indexes.length);
    if (indexes.some((i, k) => i !== wanted[k])) throw milestoneOutOfOrder(orderId, indexes, next, `fund milestone ${next} first`);
    const chosen = indexes.map((i) => rows.find((r) => r.milestoneIndex === i)!);
    const at = await clocks(c, false);
    for (const r of chosen) {
      const refused = refusal(r, 'buyer', 'fund', at);
      if (refused) throw refused;
    }
    // step 1: the wallet can pay them (their amount together; the fee and rent of one escrow each)
    const chainNow = await c.escrow.chainNow();
    const ttl = c.settings.paymentTtlSeconds;
    const deliveryDeadlines = new Map(chosen.map((r) => [r.milestoneIndex, chainNow + (r.deliveryDays ?? 1) * 86_400]));
    const terms = chosen.map((r) => ({ ...fundTerms(r), deliveryDeadline: deliveryDeadlines.get(r.milestoneIndex)!, expiresAt: chainNow + ttl }));
    const total = terms.reduce((s, t) => s + t.amount, 0n);
    await assertWalletCanFund(c, { ...terms[0]!, amount: total }, { code: order.currency, decimals: order.decimals });
    // step 2: record
    const paymentExpiresAt = new Date(c.now().getTime() + ttl * 1000);
    const moved = await c.repo.requestMilestonePayment(order.orderId, indexes, { paymentExpiresAt, fundExpiresAt: chainNow + ttl, deliveryDeadlines });
    if (!moved) throw orderErrors.invalidTransition(orderId, order.status, 'fund', `The milestones of order ${orderId} changed meanwhile; read the order and retry.`);
    // step 3: issue
    const fresh = (await c.repo.milestonesOf([order.orderId])).get(order.orderId)!.filter((r) => named.has(r.milestoneIndex));
    const issued = await deps.pay.issueMilestonesTransaction(fresh);
    return {
      order,
      milestones: indexes,
      transaction: issued.transaction,
      solana_pay_url: deps.pay.solanaPayUrl(order.orderId, order.currency),
      expires_at: new Date(Math.min(paymentExpiresAt.getTime(), issued.validUntil.getTime())),
      payment_expires_at: paymentExpiresAt,
    };
  }

  /** A chain action on milestone `index` of the order (404 for an index the order does not have). */
  async function act(p: PrincipalLike, orderId: string, index: number, action: ChainAction, params: Record<string, unknown> | null): Promise<OrderRecord> {
    const { rows } = await rowsOf(p, orderId);
    const row = rows.find((r) => r.milestoneIndex === index);
    if (!row) throw orderErrors.notFound(`${orderId} milestone ${index}`);
    return deps.actions.actOnRow(p, row, action, params);
  }

  /** POST /orders/{id}/end (buyer). Repeating it answers the ended order. */
  async function end(p: PrincipalLike, orderId: string): Promise<OrderRecord> {
    const { order, rows } = await rowsOf(p, orderId);
    if (roleOf(order, p) !== 'buyer') throw orderErrors.forbidden('Only the buyer ends an order.');
    if (rows.some((r) => r.endedAt)) return order;
    const refused = endRefusal(rows);
    if (refused && 'open' in refused) throw milestoneOpen(orderId, refused.open);
    if (refused) throw orderErrors.invalidTransition(orderId, order.status, 'end', `Cannot end order ${orderId}: ${refused.invalid}.`);
    const result = await c.mutex.run(order.orderId, () => c.repo.endOrder(order.orderId, c.now()));
    if ('open' in result) throw milestoneOpen(orderId, result.open);
    const after = (await c.repo.get(order.orderId))!;
    if ('ended' in result) {
      c.log.info({ order_id: orderId }, 'order ended by the buyer');
      await applyListingEffect(c, after);
    }
    return after;
  }

  return {
    fund,
    end,
    deliver: (p: PrincipalLike, orderId: string, index: number) => act(p, orderId, index, 'deliver', null),
    confirm: (p: PrincipalLike, orderId: string, index: number) => act(p, orderId, index, 'confirm', null),
    dispute: (p: PrincipalLike, orderId: string, index: number, reason: string) => act(p, orderId, index, 'dispute', { reason }),
    refund: (p: PrincipalLike, orderId: string, index: number) => act(p, orderId, index, 'refund', null),
    /** 400 validation-error unless `buyerBps` is an integer 0..10000 */
    resolve(p: PrincipalLike, orderId: string, index: number, buyerBps: number): Promise<OrderRecord> {
      if (!Number.isInteger(buyerBps) || buyerBps < 0 || buyerBps > 10_000) {
        throw new DomainError('validation-error', 'buyer_bps must be an integer 0..10000', {
          errors: [{ path: 'body.buyer_bps', message: 'must be an integer 0..10000', code: 'invalid_bps' }],
        });
      }
      return act(p, orderId, index, 'resolve', { buyer_bps: buyerBps });
    },
  };
}

/** 409 milestone-out-of-order (`next`: the first milestone that may be funded). */
function milestoneOutOfOrder(orderId: string, named: number[], next: number | null, why: string): DomainError {
  return new DomainError('milestone-out-of-order', `Milestones [${named.join(', ')}] of order ${orderId} cannot be funded: ${why}.`, {
    next,
    milestones: named,
  });
}

/** 409 milestone-open (`open`: the milestones that are open). */
function milestoneOpen(orderId: string, open: number[]): DomainError {
  return new DomainError('milestone-open', `Order ${orderId} cannot end while milestone ${open.join(', ')} is open: settle it first.`, { open });
}

export type Milestones = ReturnType<typeof milestones>;
