/**
 * What a confirmed escrow instruction does to the order row, shared by the service (normal path) and
 * the reconciler (after a crash): one place decides the resulting status and timestamps.
 */
import { type ServiceInstruction, type TerminalInstruction, instructionAction, targetStatus } from './order-state.js';
import type { EscrowOrderView, OrderPatch, OrderPayout, OrderRecord, OrderSettlement } from './orders.types.js';

/**
 * What the program pays out of an order's vault for a terminal instruction the SERVICE sent and saw
 * confirmed (one instruction, for this order only), when the transaction itself cannot be read back:
 * the program's split (programs/escrow payout.rs, u128 floor): buyer floor(amount * bps / 10000),
 * fee floor((amount - buyer) * fee_bps / 10000), seller the rest. Any surplus swept out of the vault
 * is not counted (never credit what is not known to have arrived). `verified` false.
 */
export function formulaPayout(
  ix: TerminalInstruction,
  order: Pick<OrderRecord, 'amount' | 'feeBps' | 'buyerWallet'>,
  buyerBps: number | null,
): OrderPayout {
  const bps = ix === 'refund' ? 10_000 : ix === 'resolve_dispute' ? (buyerBps ?? 0) : 0;
  const buyer = (order.amount * BigInt(bps)) / 10_000n;
  const rest = order.amount - buyer;
  const treasury = ix === 'refund' ? 0n : (rest * BigInt(order.feeBps)) / 10_000n;
  return { buyer, seller: rest - treasury, treasury, buyerTokenAccount: null, verified: false };
}

export function patchForInstruction(
  ix: ServiceInstruction,
  order: OrderRecord,
  params: Record<string, unknown> | null,
  signature: string | null,
  chain: { view?: EscrowOrderView | null; nowSeconds: number; settlement?: OrderSettlement | null },
): OrderPatch {
  const status = targetStatus(instructionAction[ix]);
  const base: OrderPatch = { status, transition: instructionAction[ix], ...(signature ? { lastSignature: signature } : {}) };
  if (chain.settlement) base.payout = chain.settlement.payout;
  const now = new Date(chain.nowSeconds * 1000);
  switch (ix) {
    case 'mark_delivered': {
      const deliveredAt = chain.view?.deliveredAt ?? chain.nowSeconds;
      const reviewWindow = chain.view?.reviewWindow || order.reviewWindow;
      return {
        ...base,
        deliveredAt: new Date(deliveredAt * 1000),
        autoReleaseAt: new Date((deliveredAt + reviewWindow) * 1000),
      };
    }
    case 'open_dispute':
      return {
        ...base,
        disputedAt: chain.view?.disputedAt ? new Date(chain.view.disputedAt * 1000) : now,
        disputeReason: typeof params?.reason === 'string' ? params.reason : order.disputeReason,
        disputedBy: params?.by === 'seller' ? 'seller' : params?.by === 'buyer' ? 'buyer' : order.disputedBy,
      };
    case 'resolve_dispute':
      return {
        ...base,
        completedAt: now,
        buyerBps: chain.settlement?.buyerBps ?? (typeof params?.buyer_bps === 'number' ? params.buyer_bps : order.buyerBps),
      };
    case 'release':
    case 'claim':
    case 'refund':
      return { ...base, completedAt: now };
  }
}
