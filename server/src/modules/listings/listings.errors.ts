import { DomainError } from '../../errors.js';
import type { ListingStatus } from './listings.types.js';

export interface FieldError {
  path: string;
  message: string;
  code: string;
}

/** Listing errors in the contract's problem vocabulary (contract/src/problems.ts). */
export const listingErrors = {
  /** one 400 with every field error of the request */
  validation: (errors: FieldError[]) =>
    new DomainError('validation-error', errors.map((e) => `${e.path} ${e.message}`).join('; '), { errors }),
  /** unknown, or unlisted and the caller is not its seller: existence is not disclosed */
  notFound: (listingId: string) => new DomainError('not-found', `Listing ${listingId} not found.`),
  notSeller: (listingId: string) =>
    new DomainError('forbidden', `Only the seller of listing ${listingId} may change it.`),
  invalidTransition: (listingId: string, from: ListingStatus, to: ListingStatus | 'updated') =>
    new DomainError(
      'invalid-state-transition',
      to === 'updated'
        ? `Listing ${listingId} is ${from}; only available or unlisted listings can be changed.`
        : `Listing ${listingId} cannot move from ${from} to ${to}.`,
      { listing_status: from, ...(to === 'updated' ? {} : { requested_status: to }) },
    ),
  unavailable: (listingId: string, status: ListingStatus) =>
    new DomainError('listing-unavailable', `Listing ${listingId} is not available (status ${status}).`, {
      listing_status: status,
    }),
};
