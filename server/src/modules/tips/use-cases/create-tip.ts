/**
 * Use case "tip the seller" (POST /orders/{order_id}/tips). Steps:
 *  1. the order, visible to the caller (404), whose buyer the caller is (403);
 *  2. eligibility (../eligibility.ts: 409 tip-not-allowed `not_paid_out` / `custodial`);
 *  3. the amount: base units of the order's currency (400 too_many_decimals / not_positive), at most
 *     TIP_MAX_PERCENT_OF_ORDER % of the order's amount (409 `above_maximum`);
 *  4. build the unsigned transaction (nothing is signed or sent: no compensation needed);
 *  5. insert the pending tip under the per-order cap (409 `too_many_pending`). A crash between 4 and 5
 *     leaves nothing; after 5 the tip expires with its transaction's blockhash if never sent.
 * Idempotency: the HTTP layer's Idempotency-Key store returns the first 201 for a replay.
 */
import { MAX_PENDING_TIPS_PER_ORDER } from '@bazaar/contract';
import { formatUiAmount, toBaseUnits } from '../../../lib/money.js';
import { tipRefusal } from '../eligibility.js';
import { tipErrors } from '../tips.errors.js';
import type { IssuedTipTransaction, TipRecord } from '../tips.types.js';
import { type TipsCaller, type TipsContext, roleOn, visibleOrder } from './context.js';

export function createTip(c: TipsContext) {
  return {
    async create(p: TipsCaller, orderId: string, input: { amount: number | string }): Promise<{ tip: TipRecord; payment: IssuedTipTransaction }> {
      const order = await visibleOrder(c, p, orderId);
      if (roleOn(order, p) !== 'buyer') throw tipErrors.notBuyer();
      const refused = tipRefusal(order);
      if (refused) throw tipErrors.refused(refused, order.id, order.milestones.map((m) => m.status).join(', '));
      const parsed = toBaseUnits(input.amount, order.decimals);
      if (!parsed.ok) throw tipErrors.invalidAmount(parsed.code, parsed.message);
      const maxBaseUnits = (order.amount * BigInt(Math.round(c.settings.maxPercentOfOrder * 100))) / 10_000n;
      if (parsed.value > maxBaseUnits) {
        throw tipErrors.aboveMaximum({ amount: formatUiAmount(maxBaseUnits, order.decimals), baseUnits: maxBaseUnits, currency: order.currency, percent: c.settings.maxPercentOfOrder });
      }
      const id = c.newId();
      const payment = await c.chain.buildTipTransaction({ tipId: id, buyer: order.buyerWallet, seller: order.sellerWallet, mint: order.mint, decimals: order.decimals, amount: parsed.value });
      const tip = await c.repo.createPending(
        {
          id,
          orderId: order.id,
          buyerId: order.buyerId,
          sellerId: order.sellerId,
          buyerWallet: order.buyerWallet,
          sellerWallet: order.sellerWallet,
          currency: order.currency,
          mint: order.mint,
          decimals: order.decimals,
          amount: parsed.value,
          sourceTokenAccount: payment.sourceTokenAccount,
          destinationTokenAccount: payment.destinationTokenAccount,
          message: payment.message,
          blockhash: payment.blockhash,
          lastValidBlockHeight: payment.lastValidBlockHeight,
          validUntil: payment.validUntil,
        },
        MAX_PENDING_TIPS_PER_ORDER,
      );
      if (!tip) throw tipErrors.tooManyPending(order.id, MAX_PENDING_TIPS_PER_ORDER);
      c.log?.info({ tip_id: tip.id, order_id: order.id, amount: tip.amount.toString() }, 'tip issued');
      return { tip, payment };
    },
  };
}
