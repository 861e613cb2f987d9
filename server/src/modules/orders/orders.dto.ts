/**
 * OrderRecord (+ its view: chain intents, listing, parties, review; the caller's allowed actions and the
 * next step) -> the contract's `Order` JSON.
 *
 * Milestones (issue 24): an order is its rows (one per milestone). A one-milestone order is its one row,
 * every field as before, plus `milestones` = [that row] and `current_milestone`. An order with several
 * milestones shows, at the order level: its derived status (milestones.ts), the sum of the amounts, fee and
 * payouts, milestone 1's escrow addresses, payment window and funding time, the deadlines and dispute of
 * the current milestone (or the last one once closed), every milestone's transactions, and the caller's
 * actions on the current milestone plus `end`.
 */
import type { Order, OrderAction, OrderLevelStatus, OrderMilestone, OrderNextStep } from '@bazaar/contract';
import { toUiNumber } from '../../lib/money.js';
import { currentMilestone, orderStatusOf } from './milestones.js';
import { type Clocks, escrowStateOf } from './order-state.js';
import { splitOf } from './order-patch.js';
import type { OrderView } from './order-view.js';
import type { OrderRecord } from './orders.types.js';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** What the caller sees of one milestone row besides the row: its allowed actions and next step. */
export interface MilestonePresentation {
  allowed: OrderAction[];
  next: OrderNextStep;
}

/**
 * The milestone actions of an order-level allowed_actions (review and end are the order's): the escrow
 * actions and the agreements (revision, extension, settlement), which act on one milestone's escrow.
 */
const MILESTONE_ACTIONS: ReadonlySet<OrderAction> = new Set<OrderAction>([
  'pay',
  'fund',
  'deliver',
  'confirm',
  'dispute',
  'refund',
  'resolve',
  'request_revision',
  'propose_extension',
  'accept_extension',
  'decline_extension',
  'propose_settlement',
  'accept_settlement',
  'withdraw_settlement',
]);

function transactionsOf(view: OrderView): Order['transactions'] {
  return view.intents
    .filter((i) => i.signature)
    .map((i) => ({
      action: i.action,
      signature: i.signature!,
      status: i.status === 'confirmed' ? ('confirmed' as const) : i.status === 'failed' ? ('failed' as const) : ('pending' as const),
      slot: i.slot,
      created_at: i.createdAt.toISOString(),
    }));
}

/**
 * The pending proposals of one row (escrow unit), as the contract shows them: each until it expires
 * (extension: service clock; settlement: chain clock, what the program enforces) and while the escrow is
 * open (an extension while in progress only). `clocks` absent: the wall clock for both.
 */
function proposalsOf(o: OrderRecord, clocks?: Clocks): Pick<OrderMilestone, 'extension_proposal' | 'settlement_proposal'> {
  const nowMs = clocks?.serviceMs ?? Date.now();
  const chainMs = clocks ? clocks.chainSeconds * 1000 : nowMs;
  const open = o.status === 'in_progress' || o.status === 'delivered' || o.status === 'disputed';
  const ext = open && o.status === 'in_progress' && o.extension && o.extension.expiresAt.getTime() > nowMs ? o.extension : null;
  const set = open && o.settlement && o.settlement.expiresAt.getTime() > chainMs ? o.settlement : null;
  const preview = set ? splitOf(o.amount, o.feeBps, set.buyerBps) : null;
  return {
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

/** One row as the contract's OrderMilestone (`clocks`: those of the caller's allowed actions, for its proposals). */
export function toMilestoneDto(o: OrderRecord, view: OrderView, p: MilestonePresentation, clocks?: Clocks): OrderMilestone {
  const scheduled = o.status === 'scheduled';
  return {
    index: o.milestoneIndex,
    milestone_id: o.id,
    title: o.milestoneTitle,
    status: o.status,
    escrow_state: escrowStateOf[o.status],
    amount: toUiNumber(o.amount, o.decimals),
    amount_base_units: o.amount.toString(),
    delivery_deadline: scheduled ? null : new Date(o.deliveryDeadline * 1000).toISOString(),
    delivery_days: o.deliveryDays ?? Math.max(1, Math.round((o.deliveryDeadline - Math.floor(o.createdAt.getTime() / 1000)) / 86_400)),
    payment_expires_at: scheduled ? null : o.paymentExpiresAt.toISOString(),
    funded_at: iso(o.fundedAt),
    delivered_at: iso(o.deliveredAt),
    auto_release_at: iso(o.autoReleaseAt),
    completed_at: iso(o.completedAt),
    escrow_account_address: o.escrowAddress,
    vault_address: o.vaultAddress,
    revisions_included: o.revisionsIncluded,
    revisions_used: o.revisionsUsed,
    ...proposalsOf(o, clocks),
    allowed_actions: p.allowed.filter((a) => MILESTONE_ACTIONS.has(a)),
    next_step: p.next,
    transactions: transactionsOf(view),
    payout: o.payout
      ? {
          buyer_base_units: o.payout.buyer.toString(),
          seller_base_units: o.payout.seller.toString(),
          treasury_base_units: o.payout.treasury.toString(),
          verified: o.payout.verified,
        }
      : null,
  };
}

/** The rows of a multi-milestone order, with each row's view and presentation (OrdersService.present). */
export interface MilestoneRows {
  rows: readonly OrderRecord[];
  views: ReadonlyMap<string, OrderView>;
  presentations: ReadonlyMap<string, MilestonePresentation>;
  /** order-level actions of the caller besides the current milestone's (`end`, `review`) */
  orderActions: OrderAction[];
}

/**
 * `view`: the order's read model (order-view.ts); `allowed`: the caller's allowed_actions
 * (OrdersService.present evaluates the lifecycle table); `nextStep`: nextStepOf on the same clocks.
 * `multi`: the order's rows when it has several milestones (`o` is then its first row).
 */
export function toOrderDto(o: OrderRecord, view: OrderView, allowed: OrderAction[], nextStep: OrderNextStep, clocks?: Clocks, multi?: MilestoneRows): Order {
  if (multi && multi.rows.length > 1) return multiDto(o, view, multi, clocks);
  const fee = (o.amount * BigInt(o.feeBps)) / 10_000n;
  const transactions = transactionsOf(view);
  return {
    order_id: o.orderId,
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
    transactions,
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
    // the order-level proposals are the current milestone's (multiDto: `o` is that row), every milestone's own are in `milestones`
    ...proposalsOf(o, clocks),
    milestones: [toMilestoneDto(o, view, { allowed, next: nextStep }, clocks)],
    current_milestone: currentMilestone([o]),
    package_name: o.packageName,
  };
}

function multiDto(first: OrderRecord, firstView: OrderView, m: MilestoneRows, clocks?: Clocks): Order {
  const rows = [...m.rows].sort((a, b) => a.milestoneIndex - b.milestoneIndex);
  const status: OrderLevelStatus = orderStatusOf(rows);
  const current = currentMilestone(rows);
  const focus = rows.find((r) => r.milestoneIndex === current) ?? [...rows].reverse().find((r) => r.status !== 'scheduled') ?? rows[0]!;
  const focusView = m.views.get(focus.id) ?? firstView;
  const none: MilestonePresentation = { allowed: [], next: { actor: 'none', kind: 'done', due_at: null, after_due: null } };
  const focusP = current === null ? none : (m.presentations.get(focus.id) ?? none);
  const base = toOrderDto(focus, focusView, focusP.allowed, focusP.next, clocks);
  const amount = rows.reduce((s, r) => s + r.amount, 0n);
  const fee = rows.reduce((s, r) => s + (r.amount * BigInt(r.feeBps)) / 10_000n, 0n);
  const payouts = rows.filter((r) => r.payout);
  const closed = current === null;
  const sum = (f: (r: OrderRecord) => bigint) => payouts.reduce((s, r) => s + f(r), 0n).toString();
  return {
    ...base,
    order_id: first.orderId,
    status,
    escrow_account_address: first.escrowAddress,
    vault_address: first.vaultAddress,
    amount: toUiNumber(amount, first.decimals),
    amount_base_units: amount.toString(),
    fee_bps: first.feeBps,
    fee_base_units: fee.toString(),
    seller_receives_base_units: (amount - fee).toString(),
    payment_expires_at: first.paymentExpiresAt.toISOString(),
    created_at: first.createdAt.toISOString(),
    funded_at: iso(first.fundedAt),
    completed_at: closed ? iso(first.endedAt ?? rows.reduce<Date | null>((d, r) => (r.completedAt && (!d || r.completedAt > d) ? r.completedAt : d), null)) : null,
    payout: closed && payouts.length
      ? {
          buyer_base_units: sum((r) => r.payout!.buyer),
          seller_base_units: sum((r) => r.payout!.seller),
          treasury_base_units: sum((r) => r.payout!.treasury),
          verified: payouts.every((r) => r.payout!.verified),
        }
      : null,
    attention: rows.find((r) => r.attention)?.attention
      ? (() => {
          const a = rows.find((r) => r.attention)!.attention!;
          return { reason: a.reason, detail: a.detail, detected_at: a.at.toISOString() };
        })()
      : null,
    transactions: rows
      .flatMap((r) => transactionsOf(m.views.get(r.id) ?? firstView))
      .sort((a, b) => a.created_at.localeCompare(b.created_at)),
    allowed_actions: [...focusP.allowed.filter((a) => MILESTONE_ACTIONS.has(a)), ...m.orderActions],
    review: firstView.review ? { rating: firstView.review.rating, text: firstView.review.text, created_at: firstView.review.createdAt.toISOString() } : null,
    milestones: rows.map((r) => toMilestoneDto(r, m.views.get(r.id) ?? firstView, m.presentations.get(r.id) ?? none, clocks)),
    current_milestone: current,
    package_name: first.packageName,
  };
}
