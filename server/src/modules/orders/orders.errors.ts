import { DomainError } from '../../errors.js';
import type { OrderStatus, TransitionAction } from './order-state.js';

/** Order errors in the contract's problem vocabulary (contract/src/problems.ts). */
export const orderErrors = {
  /** strangers get 404 too: an order's existence is not disclosed to non-participants */
  notFound: (orderId: string) => new DomainError('not-found', `Order ${orderId} not found.`),
  listingNotFound: (listingId: string) => new DomainError('not-found', `Listing ${listingId} not found.`),
  forbidden: (detail: string) => new DomainError('forbidden', detail),
  invalidTransition: (orderId: string, status: OrderStatus, action: TransitionAction) =>
    new DomainError('invalid-state-transition', `Cannot ${action} order ${orderId} in status ${status}.`, {
      order_status: status,
      action,
    }),
  ownListing: () => new DomainError('own-listing', 'A seller cannot order their own listing.'),
  listingUnavailable: (status: string) =>
    new DomainError('listing-unavailable', `The listing is not available for purchase (status ${status}).`),
  actionInProgress: (orderId: string, action: string) =>
    new DomainError('conflict', `An on-chain ${action} for order ${orderId} is still in flight; retry shortly.`, {
      in_flight_action: action,
    }),
  fundMismatch: (detail: string) =>
    new DomainError('validation-error', `signed_transaction is not this order's fund transaction: ${detail}`, {
      errors: [{ path: 'body.signed_transaction', message: detail, code: 'fund_transaction_mismatch' }],
    }),
  paymentExpired: (orderId: string) =>
    new DomainError('invalid-state-transition', `The payment window of order ${orderId} has closed.`, {
      order_status: 'awaiting_payment',
      action: 'fund',
    }),
  notFundedOnChain: (orderId: string) =>
    new DomainError('chain-transaction-failed', `The fund transaction of order ${orderId} did not create the escrow.`),
};
