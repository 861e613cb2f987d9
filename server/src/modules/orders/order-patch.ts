/**
 * What a confirmed escrow instruction does to the order row, shared by the service (normal path) and
 * the reconciler (after a crash): one place decides the resulting status and timestamps.
 */
import { type ServiceInstruction, type TerminalInstruction, closesEscrow, instructionAction, targetFrom } from './order-state.js';
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
  const bps = ix === 'refund' ? 10_000 : ix === 'resolve_dispute' || ix === 'accept_settlement' ? (buyerBps ?? 0) : 0;
  const split = ix === 'refund' ? { buyer: order.amount, seller: 0n, treasury: 0n } : splitOf(order.amount, order.feeBps, bps);
  return { ...split, buyerTokenAccount: null, verified: false };
}

/**
 * The program's split of `amount` base units at `buyerBps` (programs/escrow payout.rs, u128 floor; the
 * resolve and settlement arithmetic): buyer floor(amount * bps / 10000), treasury floor(rest * fee_bps /
 * 10000), the seller the rest: the fee is charged on the seller's share only.
 */
export function splitOf(amount: bigint, feeBps: number, buyerBps: number): { buyer: bigint; seller: bigint; treasury: bigint } {
  const buyer = (amount * BigInt(buyerBps)) / 10_000n;
  const rest = amount - buyer;
  const treasury = (rest * BigInt(feeBps)) / 10_000n;
  return { buyer, seller: rest - treasury, treasury };
}

/** The program's revision rule (i24-design section 5): max(old, now + max(old - delivered_at, MIN_REVISION_SECONDS)). */
export const MIN_REVISION_SECONDS = 86_400;
export function deadlineAfterRevision(deadline: number, deliveredAt: number | null, now: number): number {
  const left = deliveredAt === null ? 0 : Math.max(deadline - deliveredAt, 0);
  return Math.max(deadline, now + Math.max(left, MIN_REVISION_SECONDS));
}

export function patchForInstruction(
  ix: ServiceInstruction,
  order: OrderRecord,
  params: Record<string, unknown> | null,
  signature: string | null,
  chain: { view?: EscrowOrderView | null; nowSeconds: number; settlement?: OrderSettlement | null },
): OrderPatch {
  const status = targetFrom(order.status, instructionAction[ix]);
  const base: OrderPatch = { status, transition: instructionAction[ix], ...(signature ? { lastSignature: signature } : {}) };
  if (chain.settlement) base.payout = chain.settlement.payout;
  // closing the escrow ends any pending proposal
  if (closesEscrow(ix)) Object.assign(base, { extension: null, settlement: null });
  const now = new Date(chain.nowSeconds * 1000);
  const num = (k: string) => (typeof params?.[k] === 'number' ? (params[k] as number) : null);
  switch (ix) {
    case 'mark_delivered': {
      const deliveredAt = chain.view?.deliveredAt ?? chain.nowSeconds;
      const reviewWindow = chain.view?.reviewWindow || order.reviewWindow;
      return {
        ...base,
        deliveredAt: new Date(deliveredAt * 1000),
        autoReleaseAt: new Date((deliveredAt + reviewWindow) * 1000),
        // delivering ends a pending extension request (issue 24)
        extension: null,
      };
    }
    case 'request_revision': {
      // the program's new deadline when the account was read back, else its rule (without the program's cap)
      const deliveredAt = order.deliveredAt ? Math.floor(order.deliveredAt.getTime() / 1000) : null;
      const deadline = chain.view?.state === 'funded' ? chain.view.deliveryDeadline : deadlineAfterRevision(order.deliveryDeadline, deliveredAt, chain.nowSeconds);
      return { ...base, deliveredAt: null, autoReleaseAt: null, deliveryDeadline: deadline, revisionsUsed: order.revisionsUsed + 1 };
    }
    case 'extend_deadline':
      return { ...base, deliveryDeadline: num('new_deadline') ?? order.deliveryDeadline, extension: null };
    case 'propose_settlement': {
      const by = params?.proposed_by === 'seller' ? 'seller' : 'buyer';
      return {
        ...base,
        settlement: { proposedBy: by, buyerBps: num('buyer_bps') ?? 0, proposedAt: now, expiresAt: new Date((num('expires_at') ?? chain.nowSeconds) * 1000) },
      };
    }
    case 'withdraw_settlement':
      return { ...base, settlement: null };
    case 'accept_settlement':
      return {
        ...base,
        completedAt: now,
        settledBy: 'agreement',
        buyerBps: chain.settlement?.buyerBps ?? num('buyer_bps') ?? order.settlement?.buyerBps ?? null,
      };
    case 'open_dispute':
      return {
        ...base,
        disputedAt: chain.view?.disputedAt ? new Date(chain.view.disputedAt * 1000) : now,
        disputeReason: typeof params?.reason === 'string' ? params.reason : order.disputeReason,
        disputedBy: params?.by === 'seller' ? 'seller' : params?.by === 'buyer' ? 'buyer' : order.disputedBy,
        // a dispute ends a pending extension request (extend_deadline is an in-progress row); a settlement may still be agreed
        extension: null,
      };
    case 'resolve_dispute':
      return {
        ...base,
        settledBy: 'arbiter',
        completedAt: now,
        buyerBps: chain.settlement?.buyerBps ?? (typeof params?.buyer_bps === 'number' ? params.buyer_bps : order.buyerBps),
      };
    case 'release':
    case 'claim':
    case 'refund':
      return { ...base, completedAt: now };
  }
}
