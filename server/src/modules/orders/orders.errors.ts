import { DomainError } from '../../errors.js';
import { type OrderStatus, invalidTransition } from './order-state.js';

/** Order errors in the contract's problem vocabulary (contract/src/problems.ts). */
export const orderErrors = {
  /** strangers get 404 too: an order's existence is not disclosed to non-participants */
  notFound: (orderId: string) => new DomainError('not-found', `Order ${orderId} not found.`),
  listingNotFound: (listingId: string) => new DomainError('not-found', `Listing ${listingId} not found.`),
  forbidden: (detail: string) => new DomainError('forbidden', detail),
  invalidTransition,
  ownListing: () => new DomainError('own-listing', 'A seller cannot order their own listing.'),
  /** issue 25: a moderator took the listing down; orders created before settle as usual */
  listingTakenDown: (listingId: string) => new DomainError('listing-taken-down', `Listing ${listingId} was taken down by a moderator: it cannot be ordered.`),
  listingUnavailable: (status: string) =>
    new DomainError('listing-unavailable', `The listing is not available for purchase (status ${status}).`),
  /**
   * another buyer's open order holds the listing; `held_until` (an ISO 8601 extension member, for clients
   * to show in the user's time zone) is when an unpaid hold lapses at the latest. The detail says it in
   * words relative to `now` ("in at most 15 minutes"), without a raw timestamp.
   */
  listingHeld: (holderStatus: OrderStatus, paymentExpiresAt: Date, graceSeconds: number, now: Date = new Date()) => {
    const unpaid = holderStatus === 'awaiting_payment';
    const until = new Date(paymentExpiresAt.getTime() + graceSeconds * 1000);
    const minutes = Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 60_000));
    return new DomainError(
      'listing-unavailable',
      unpaid
        ? `The listing is reserved for another buyer until they pay or their payment window closes, in at most ${minutes} minute${minutes === 1 ? '' : 's'} (held_until); it may be available again then.`
        : 'The listing is reserved by another buyer\'s paid order.',
      { listing_status: 'reserved', ...(unpaid ? { held_until: until.toISOString() } : {}) },
    );
  },
  tooManyUnpaid: (unpaid: number, limit: number) =>
    new DomainError(
      'too-many-unpaid-orders',
      `You have ${unpaid} unpaid orders (the limit is ${limit}): pay one or let it expire before ordering more.`,
      { unpaid_orders: unpaid, limit },
    ),
  /**
   * 429 too-many-holds: the client network holds `holds` unpaid orders (limit `limit`); `retryAfterSeconds`
   * until the earliest of them lapses at the latest.
   */
  tooManyHolds: (holds: number, limit: number, retryAfterSeconds: number) => {
    const e = new DomainError(
      'too-many-holds',
      `Your network already holds ${holds} unpaid orders (the limit is ${limit}): pay one or let it expire before ordering more.`,
      { holds, limit },
    );
    e.retryAfterSeconds = retryAfterSeconds;
    return e;
  },
  /** 409 hold-cooldown: the same buyer let an order for this listing expire unpaid; again from `until` */
  holdCooldown: (until: Date, now: Date) => {
    const e = new DomainError(
      'hold-cooldown',
      `An order of yours for this listing expired unpaid: you can order it again from ${until.toISOString()}.`,
      { retry_at: until.toISOString() },
    );
    e.retryAfterSeconds = Math.max(1, Math.ceil((until.getTime() - now.getTime()) / 1000));
    return e;
  },
  // 409 insufficient-funds of a wallet order: wallet-funds.ts insufficientFunds
  actionInProgress: (orderId: string, action: string) =>
    new DomainError('conflict', `An on-chain ${action} for order ${orderId} is still in flight; retry shortly.`, {
      in_flight_action: action,
    }),
  fundMismatch: (detail: string) =>
    new DomainError('validation-error', `signed_transaction is not this order's fund transaction: ${detail}`, {
      errors: [{ path: 'body.signed_transaction', message: detail, code: 'fund_transaction_mismatch' }],
    }),
  notFundedOnChain: (orderId: string) =>
    new DomainError('chain-transaction-failed', `The fund transaction of order ${orderId} did not create the escrow.`),
};
