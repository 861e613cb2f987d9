/**
 * Offer errors in the contract's problem vocabulary (contract/src/problems.ts). Field errors of a new
 * offer are 400 validation-error with `errors[]` (path, message, code).
 */
import type { OfferStatus } from '@bazaar/contract';
import { DomainError } from '../../errors.js';

export interface FieldError {
  path: string;
  message: string;
  code: string;
}

export const offerErrors = {
  /** unknown, or the caller is neither its seller nor its buyer (existence not disclosed) */
  notFound: (what: string) => new DomainError('not-found', `${what} not found.`),
  /** the buyer of a conversation tries to send an offer (only its seller sells) */
  notSeller: () => new DomainError('forbidden', 'Only the seller of the conversation sends offers.'),
  /** the seller tries to accept or decline her own offer, or the buyer to withdraw it */
  wrongParty: (action: 'accept' | 'decline' | 'withdraw') =>
    new DomainError('forbidden', action === 'withdraw' ? 'Only the seller who sent the offer withdraws it.' : `Only the buyer may ${action} an offer.`),
  needsUser: () => new DomainError('forbidden', 'Offers need a user credential.'),
  validation: (errors: FieldError[]) => new DomainError('validation-error', errors.map((e) => `${e.path} ${e.message}`).join('; '), { errors }),
  /** 409 by the offer's status: offer-expired, or offer-not-pending with `offer_status` */
  notPending: (id: string, status: OfferStatus, orderId: string | null) =>
    status === 'expired'
      ? new DomainError('offer-expired', `Offer ${id} expired before it was accepted.`, { offer_status: status })
      : new DomainError('offer-not-pending', `Offer ${id} is ${status}.`, { offer_status: status, ...(orderId ? { order_id: orderId } : {}) }),
};
