/**
 * INTERIM (helper "milestones", issue 24): the seam of design note section 3. The helper "packages" owns
 * this file (packages, listing-level milestones, validation); this version only gives what a listing
 * without packages and milestones gives: one milestone of its price and duration, no revisions. The
 * integrator keeps the packages helper's version.
 */
import { DomainError } from '../../errors.js';
import type { ListingRecord } from './listings.types.js';

/** Frozen terms of an order: what the buyer buys (base units of the listing's currency). */
export interface OrderTerms {
  packageKey: string | null;
  packageName: string | null;
  priceBaseUnits: bigint;
  revisionsIncluded: number;
  /** 1..10, amounts sum to priceBaseUnits; deliveryDays counted from the funding of that milestone */
  milestones: { title: string | null; amountBaseUnits: bigint; deliveryDays: number }[];
}

/**
 * The terms an order of `listing` (and package `packageKey`) freezes. Throws 400 validation-error for a
 * package the listing does not offer (this interim version: any package key).
 */
export function orderTermsOf(listing: Pick<ListingRecord, 'priceBaseUnits' | 'durationDays'>, packageKey?: string | null): OrderTerms {
  if (packageKey) {
    throw new DomainError('validation-error', `This listing offers no package ${packageKey}.`, {
      errors: [{ path: 'body.package', message: 'the listing has no packages', code: 'unknown_package' }],
    });
  }
  return {
    packageKey: null,
    packageName: null,
    priceBaseUnits: listing.priceBaseUnits,
    revisionsIncluded: 0,
    milestones: [{ title: null, amountBaseUnits: listing.priceBaseUnits, deliveryDays: Math.max(1, listing.durationDays) }],
  };
}
