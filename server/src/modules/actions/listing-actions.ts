/**
 * Solana Actions for listings (issue 26 item 1; contract/src/actions.contract.ts): the card a blink client
 * renders for a listing, the buy that answers a fund transaction for the wallet that POSTs, and the chained
 * card after the wallet sent it. No SQL and no chain access here: the listings, orders and auth modules do
 * the work, exactly as for a signed-in buyer:
 *
 *  - card: the listing as anyone may read it (an unlisted listing is unknown: 404), the marketplace icon (a
 *    listing has no image of its own), title, price and currency, delivery time, the seller's reputation;
 *    one button per package, else one Buy button. A listing that cannot be ordered now answers a DISABLED
 *    card whose `error.message` says why (sold, reserved until a time, taken down, seller suspended), never
 *    the moderator's reason nor who holds it.
 *  - buy: the wallet's user row and principal come from the auth module (`principalForWallet`: created as
 *    login creates it, standing checked); its awaiting_payment order for this listing (and package) is
 *    resumed with a fresh fund transaction (`refreshPayment`), else an order is created through the orders
 *    module (`create`: the same checks, holds and limits as POST /orders: unpaid orders per wallet, holds per
 *    network, cool-down, balances). Nobody proved holding `account`, so that order is marked `via_action`
 *    (the principal's `unverifiedWallet`): it counts against the wallet's unpaid ACTION orders and the
 *    network's holds, never against what its owner may order signed in, and its lapse cools down the network
 *    it came from, not the wallet (README "Share a listing as a blink"). The wallet signs and sends the transaction itself; the payment watcher
 *    sees the funded escrow whether or not the chained callback comes. Never fee-sponsored: sponsorship is
 *    for a signed-in buyer (docs/threat-model.md).
 *  - next: for the order's buyer wallet only (403 otherwise), checks the escrow once (`checkPayment`, the
 *    watcher's own step) and answers a completed card linking to the order in the web app.
 */
import type { ActionGetResponse, ActionPostResponse, LinkedAction, NextAction } from '@bazaar/contract';
import { DomainError } from '../../errors.js';
import { formatUiAmount } from '../../lib/money.js';
import type { Principal } from '../auth/index.js';
import type { ListingRecord } from '../listings/index.js';
import type { OrderRecord } from '../orders/orders.types.js';
import type { PaymentInstructions } from '../orders/use-cases/create-and-pay/pay.js';
import { ActionRefusal } from './refusal.js';

/** What the listing actions use of the other modules (composition.ts builds it). */
export interface ListingActionsDeps {
  /** the listing as stored (taken-down and unlisted ones included: the card says why it cannot be bought) */
  listing(id: string): Promise<ListingRecord | null>;
  /** issue 25: is the seller suspended or banned (the listing takes no order then) */
  sellerRestricted(sellerId: string): Promise<boolean>;
  /** decimals of a payment currency (by code); undefined: not accepted any more */
  decimalsOf(code: string): number | undefined;
  /** auth module: the buyer principal of a wallet (user row created as login creates it) */
  principalForWallet(wallet: string): Promise<Principal>;
  /** the orders module, or null when the service runs without the escrow program (503) */
  orders: {
    list(p: Principal, q: { role: 'buyer'; status: 'awaiting_payment'; limit: number }): Promise<{ data: OrderRecord[] }>;
    create(p: Principal, input: { listingId: string; packageKey: string | null; network: string | null; paymentSource: 'wallet' }): Promise<{ order: OrderRecord; payment: PaymentInstructions }>;
    refreshPayment(p: Principal, orderId: string): Promise<{ order: OrderRecord; payment: PaymentInstructions }>;
    /** the stored order row (no access rule: the caller checks the wallet) */
    row(orderId: string): Promise<OrderRecord | null>;
    /** the payment watcher's step: funded on chain -> in_progress */
    checkPayment(order: OrderRecord): Promise<string>;
  } | null;
  /** PUBLIC_BASE_URL, no trailing slash */
  publicBaseUrl: string;
  /** the marketplace icon (SOLANA_PAY_ICON: absolute URL) */
  icon: string;
  now: () => Date;
}

/** The web app's page of a listing as people share it (mapped to its action by /actions.json). */
export const listingPageUrl = (base: string, listingId: string) => `${base}/app/listings/${listingId}`;
/** The web app's page of an order (the hash route the app reads; the buyer signs in there). */
export const orderPageUrl = (base: string, orderId: string) => `${base}/app/#/orders/${orderId}`;
/** The listing's action endpoint (absolute). */
export const listingActionUrl = (base: string, listingId: string) => `${base}/api/actions/listings/${listingId}`;

const timeOf = (d: Date) => `${d.toISOString().slice(11, 16)} UTC`;

/** The listing actions over `deps` (see the module comment). */
export function createListingActions(deps: ListingActionsDeps) {
  const base = deps.publicBaseUrl.replace(/\/+$/, '');

  /** The listing a stranger may see, or 404 (unknown, unlisted). */
  async function visibleListing(listingId: string): Promise<ListingRecord> {
    const l = await deps.listing(listingId);
    if (!l || l.status === 'unlisted') throw new ActionRefusal(404, 'This listing does not exist (or is no longer listed).');
    return l;
  }

  /** Why `l` cannot be ordered now, in words for the buyer; null when it can. */
  async function unavailableReason(l: ListingRecord): Promise<string | null> {
    if (l.takenDown) return 'This listing was taken down by the marketplace\'s moderators and cannot be bought.';
    if (await deps.sellerRestricted(l.sellerId)) return 'The seller\'s account is suspended: this listing takes no orders now.';
    if (l.status === 'sold') return 'Sold: this listing has no units left.';
    if (l.status === 'reserved' || l.heldUntil) {
      return l.heldUntil
        ? `Reserved: another buyer is checking out. It is for sale again if they do not pay by ${timeOf(l.heldUntil)}.`
        : 'Reserved: its open orders fill its capacity; it is for sale again once one of them ends.';
    }
    if (deps.decimalsOf(l.currency) === undefined) return `This marketplace no longer accepts ${l.currency}.`;
    return null;
  }

  const money = (l: ListingRecord, baseUnits: bigint) => `${formatUiAmount(baseUnits, deps.decimalsOf(l.currency) ?? 0)} ${l.currency}`;

  function reputation(l: ListingRecord): string {
    if (l.sellerRating === null || l.sellerReviewCount === 0) return 'Seller: no reviews yet.';
    return `Seller rated ${l.sellerRating.toFixed(1)}/5 from ${l.sellerReviewCount} review${l.sellerReviewCount === 1 ? '' : 's'}.`;
  }

  return {
    /** GET: the card (disabled with the reason when the listing cannot be ordered now). 404 ActionRefusal. */
    async card(listingId: string): Promise<ActionGetResponse> {
      const l = await visibleListing(listingId);
      const href = `/api/actions/listings/${l.id}`;
      const price = l.packages.length ? `from ${money(l, l.priceBaseUnits)}` : money(l, l.priceBaseUnits);
      const days = (n: number) => `${n} day${n === 1 ? '' : 's'}`;
      const description = [
        `${price} · delivery within ${days(l.durationDays)}.`,
        reputation(l),
        'Paid into an on-chain escrow: the seller is paid when you confirm delivery.',
      ].join(' ');
      const reason = await unavailableReason(l);
      const actions: LinkedAction[] = l.packages.length
        ? l.packages.map((p) => ({ type: 'transaction', href: `${href}?package=${p.key}`, label: `${p.name} · ${money(l, p.priceBaseUnits)} · ${days(p.deliveryDays)}` }))
        : [{ type: 'transaction', href, label: `Buy for ${money(l, l.priceBaseUnits)}` }];
      return {
        type: 'action',
        icon: deps.icon,
        title: l.title,
        description,
        label: l.packages.length ? 'Choose a package' : `Buy for ${money(l, l.priceBaseUnits)}`,
        links: { actions },
        ...(reason ? { disabled: true, error: { message: reason } } : {}),
      };
    },

    /**
     * POST: creates (or resumes) the awaiting_payment order of `account` for the listing (package) and
     * returns its fund transaction, chained to `next`. `network`: the client network (per-network holds).
     * Throws ActionRefusal 404 / 409 / 503, DomainError from the orders and auth modules (the HTTP layer
     * answers their status with their detail as `message`).
     */
    async buy(listingId: string, account: string, packageKey: string | null, network: string | null): Promise<ActionPostResponse> {
      const orders = deps.orders;
      if (!orders) throw new ActionRefusal(503, 'This marketplace runs without its escrow program now; buying is unavailable.', 5);
      const l = await visibleListing(listingId);
      if (l.takenDown) throw new ActionRefusal(409, 'This listing was taken down by the marketplace\'s moderators and cannot be bought.');
      if (l.packages.length && !packageKey) throw new ActionRefusal(400, `Choose a package: ${l.packages.map((p) => p.key).join(', ')}.`);
      if (!l.packages.length && packageKey) throw new ActionRefusal(400, 'This listing has no packages.');
      if (packageKey && !l.packages.some((p) => p.key === packageKey)) throw new ActionRefusal(400, `This listing has no package "${packageKey}".`);
      if (account === l.sellerWallet) throw new ActionRefusal(409, 'This is your own listing: a seller cannot buy it.');
      const p = await deps.principalForWallet(account);
      const now = deps.now();
      // resume: the wallet's own unpaid action order of this listing (and package), still in its payment window
      // (never an order its owner created signed in: that one is his to pay from the web app or the API)
      const open = (await orders.list(p, { role: 'buyer', status: 'awaiting_payment', limit: 50 })).data.find(
        (o) => o.viaAction === true && o.listingId === l.id && (o.packageKey ?? null) === packageKey && o.paymentSource === 'wallet' && o.milestoneIndex === 1 && o.paymentExpiresAt > now,
      );
      // never fee-sponsored: `p.unverifiedWallet` (principalForWallet) makes orders/sponsorship.ts refuse it
      const { order, payment } = open ? await orders.refreshPayment(p, open.id) : await orders.create(p, { listingId: l.id, packageKey, network, paymentSource: 'wallet' });
      const what = order.packageName ? ` (${order.packageName})` : order.milestoneCount > 1 ? ` (milestone 1 of ${order.milestoneCount})` : '';
      return {
        type: 'transaction',
        transaction: payment.transaction,
        message: `Pay ${formatUiAmount(order.amount, order.decimals)} ${order.currency} into escrow for "${l.title}"${what}. The seller is paid when you confirm delivery.`,
        links: { next: { type: 'post', href: `/api/actions/listings/${l.id}/next?order_id=${order.id}` } },
      };
    },

    /**
     * The chained POST after the wallet sent the fund transaction: for the order's buyer wallet only (403),
     * checks the escrow once and answers a completed card linking to the order in the web app. 404 for an
     * unknown order or one of another listing.
     */
    async next(listingId: string, orderId: string, account: string): Promise<NextAction> {
      const orders = deps.orders;
      if (!orders) throw new ActionRefusal(503, 'This marketplace runs without its escrow program now.', 5);
      const row = await orders.row(orderId);
      if (!row || row.listingId !== listingId || row.orderId !== row.id) throw new ActionRefusal(404, 'No such order for this listing.');
      if (row.buyerWallet !== account) throw new ActionRefusal(403, 'Only the wallet that pays this order can follow it here.');
      const status = row.status === 'awaiting_payment' ? await orders.checkPayment(row) : row.status;
      const link = orderPageUrl(base, row.id);
      const amount = `${formatUiAmount(row.amount, row.decimals)} ${row.currency}`;
      if (status === 'awaiting_payment') {
        return {
          type: 'completed',
          icon: deps.icon,
          title: 'Payment sent',
          description: `Your payment of ${amount} is on its way into escrow; the marketplace records it as soon as the chain confirms it. Follow the order at ${link} (sign in with this wallet).`,
          label: 'Payment sent',
        };
      }
      if (status === 'expired') {
        return {
          type: 'completed',
          icon: deps.icon,
          title: 'Order expired',
          description: `This order expired before its payment arrived; nothing was taken from your wallet. Open the listing to buy again: ${listingPageUrl(base, row.listingId)}`,
          label: 'Order expired',
          disabled: true,
          error: { message: 'The order expired unpaid.' },
        };
      }
      return {
        type: 'completed',
        icon: deps.icon,
        title: 'Payment in escrow',
        description: `${amount} is held in escrow for your order. The seller is paid when you confirm delivery. Follow the order, chat with the seller and confirm delivery at ${link} (sign in with this wallet).`,
        label: 'Paid into escrow',
      };
    },
  };
}

export type ListingActions = ReturnType<typeof createListingActions>;

