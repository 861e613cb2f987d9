import { DomainError } from '../../errors.js';

/** Review errors in the contract's problem vocabulary (contract/src/problems.ts). */
export const reviewErrors = {
  /** unknown order, or the caller is neither its buyer nor its seller (existence not disclosed) */
  orderNotFound: (orderId: string) => new DomainError('not-found', `Order ${orderId} not found.`),
  notBuyer: (orderId: string) => new DomainError('forbidden', `Only the buyer of order ${orderId} may review it.`),
  notReviewable: (orderId: string, status: string) =>
    new DomainError(
      'review-not-allowed',
      `Order ${orderId} is ${status}; a review is allowed once the order is completed or resolved.`,
      { order_status: status },
    ),
  /**
   * the order was reviewed already: `order_status` (completed / resolved: a status notReviewable never has) tells
   * it from notReviewable; not `reason`, which the contract's Problem reserves for login-failed's SIWS field
   */
  alreadyReviewed: (orderId: string, status: string) =>
    new DomainError('review-not-allowed', `Order ${orderId} has already been reviewed.`, { order_status: status }),
  invalidRating: () =>
    new DomainError('validation-error', 'body.rating must be an integer from 1 to 5', {
      errors: [{ path: 'body.rating', message: 'must be an integer from 1 to 5', code: 'invalid_rating' }],
    }),
};
