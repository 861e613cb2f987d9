/**
 * OrderRecord (+ its view: chain intents, listing, parties, review; the caller's allowed actions and the
 * next step) -> the contract's `Order` JSON.
 */
import type { Order, OrderAction, OrderNextStep } from '@bazaar/contract';
import { toUiNumber } from '../../lib/money.js';
import { type Clocks, escrowStateOf } from './order-state.js';
import { splitOf } from './order-patch.js';
import type { OrderView } from './order-view.js';
import type { OrderRecord } from './orders.types.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/**
 * `view`: the order's read model (order-view.ts); `allowed`: the caller's allowed_actions
 * (OrdersService.present evaluates the lifecycle table); `nextStep`: nextStepOf on the same clocks.
 */
export function toOrderDto(o: OrderRecord, view: OrderView, allowed: OrderAction[], nextStep: OrderNextStep, clocks?: Clocks): Order {
  const intents = view.intents;
  // pending proposals show until they expire (extension: service clock; settlement: chain clock) and while the escrow is open
  const nowMs = clocks?.serviceMs ?? Date.now();
  const chainMs = clocks ? clocks.chainSeconds * 1000 : nowMs;
  const open = o.status === 'in_progress' || o.status === 'delivered' || o.status === 'disputed';
  const ext = open && o.status === 'in_progress' && o.extension && o.extension.expiresAt.getTime() > nowMs ? o.extension : null;
  const set = open && o.settlement && o.settlement.expiresAt.getTime() > chainMs ? o.settlement : null;
  const preview = set ? splitOf(o.amount, o.feeBps, set.buyerBps) : null;
  const fee = (o.amount * BigInt(o.feeBps)) / 10_000n;
  return {
    order_id: o.id,
    listing_id: o.listingId,
    buyer_wallet: o.buyerWallet,
    seller_wallet: o.sellerWallet,
    payment_source: o.paymentSource,
    status: o.status,
    escrow_state: escrowStateOf[o.status],
    escrow_account_address: o.escrowAddress,
    vault_address: o.vaultAddress,
    token_mint_address: o.tokenMint ?? o.mint,
    payment_mint: o.mint,
    currency: o.currency,
    amount: toUiNumber(o.amount, o.decimals),
    amount_base_units: o.amount.toString(),
    fee_bps: o.feeBps,
    fee_base_units: fee.toString(),
    seller_receives_base_units: (o.amount - fee).toString(),
    delivery_deadline: new Date(o.deliveryDeadline * 1000).toISOString(),
    review_window_seconds: o.reviewWindow,
    auto_release_at: iso(o.autoReleaseAt),
    payment_expires_at: o.paymentExpiresAt.toISOString(),
    created_at: o.createdAt.toISOString(),
    funded_at: iso(o.fundedAt),
    delivered_at: iso(o.deliveredAt),
    completed_at: iso(o.completedAt),
    disputed_at: iso(o.disputedAt),
    dispute_reason: o.disputeReason,
    resolution: o.buyerBps === null ? null : { buyer_bps: o.buyerBps },
    payout: o.payout
      ? {
          buyer_base_units: o.payout.buyer.toString(),
          seller_base_units: o.payout.seller.toString(),
          treasury_base_units: o.payout.treasury.toString(),
          verified: o.payout.verified,
        }
      : null,
    attention: o.attention ? { reason: o.attention.reason, detail: o.attention.detail, detected_at: o.attention.at.toISOString() } : null,
    transactions: intents
      .filter((i) => i.signature)
      .map((i) => ({
        action: i.action,
        signature: i.signature!,
        status: i.status === 'confirmed' ? ('confirmed' as const) : i.status === 'failed' ? ('failed' as const) : ('pending' as const),
        slot: i.slot,
        created_at: i.createdAt.toISOString(),
      })),
    allowed_actions: allowed,
    listing: view.listing,
    seller: view.seller,
    buyer: view.buyer,
    next_step: nextStep,
    review: view.review ? { rating: view.review.rating, text: view.review.text, created_at: view.review.createdAt.toISOString() } : null,
    offer_id: o.offerId ?? null,
    // issue 24 (helper "packages"): the package bought, as frozen at creation
    package: o.packageKey
      ? {
          key: o.packageKey as 'basic' | 'standard' | 'premium',
          name: o.packageName ?? o.packageKey,
          revisions: o.revisionsIncluded ?? 0,
          delivery_days: o.packageDeliveryDays ?? 1,
        }
      : null,
    revisions_included: o.revisionsIncluded,
    revisions_used: o.revisionsUsed,
    settled_by: o.status === 'resolved' ? (o.settledBy ?? 'arbiter') : null,
    extension_proposal: ext
      ? {
          proposed_by: 'seller',
          new_deadline: new Date(ext.newDeadline * 1000).toISOString(),
          message: ext.message,
          proposed_at: ext.proposedAt.toISOString(),
          expires_at: ext.expiresAt.toISOString(),
        }
      : null,
    settlement_proposal:
      set && preview
        ? {
            proposed_by: set.proposedBy,
            buyer_bps: set.buyerBps,
            proposed_at: set.proposedAt.toISOString(),
            expires_at: set.expiresAt.toISOString(),
            preview: { buyer_base_units: preview.buyer.toString(), seller_base_units: preview.seller.toString(), treasury_base_units: preview.treasury.toString() },
          }
        : null,
  };
}
