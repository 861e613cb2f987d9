/**
 * What a confirmed escrow instruction does to the order row, shared by the service (normal path) and
 * the reconciler (after a crash): one place decides the resulting status and timestamps.
 */
import { type Instruction, instructionAction, targetStatus } from './order-state.js';
import type { EscrowOrderView, OrderPatch, OrderRecord } from './orders.types.js';

export function patchForInstruction(
  ix: Exclude<Instruction, 'fund'>,
  order: OrderRecord,
  params: Record<string, unknown> | null,
  signature: string | null,
  chain: { view?: EscrowOrderView | null; nowSeconds: number },
): OrderPatch {
  const status = targetStatus(instructionAction[ix]!);
  const base: OrderPatch = { status, ...(signature ? { lastSignature: signature } : {}) };
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
        buyerBps: typeof params?.buyer_bps === 'number' ? params.buyer_bps : order.buyerBps,
      };
    case 'release':
    case 'claim':
    case 'refund':
      return { ...base, completedAt: now };
  }
}

/** Listing status that follows an order outcome (null = leave the listing alone). */
export function listingEffect(
  status: OrderRecord['status'],
  buyerBps: number | null,
): 'reserve' | 'markSold' | 'release' | null {
  switch (status) {
    case 'in_progress':
      return 'reserve';
    case 'completed':
      return 'markSold';
    case 'refunded':
    case 'expired':
      return 'release';
    case 'resolved':
      // a full refund to the buyer puts the listing back on sale; any split counts as a sale
      return buyerBps === 10_000 ? 'release' : 'markSold';
    default:
      return null;
  }
}
