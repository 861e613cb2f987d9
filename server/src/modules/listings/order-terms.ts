/**
 * The terms an order buys, taken from its listing (issue 24 design, section 3: the seam used by orders,
 * offers and the web app). The orders module copies them into the order when it is created, so a later
 * edit of the listing (its packages, price, milestones) never changes an order.
 */
import { DomainError } from '../../errors.js';
import type { ListingRecord } from './listings.types.js';

/** Frozen terms of an order: what the buyer buys (base units of the listing's currency). */
export interface OrderTerms {
  packageKey: string | null;
  packageName: string | null;
  priceBaseUnits: bigint;
  revisionsIncluded: number;
  milestones: { title: string | null; amountBaseUnits: bigint; deliveryDays: number }[]; // 1..10, sum = price
}

/** What `orderTermsOf` reads of a listing (a `ListingRecord` fits; so does the orders module's listing view). */
export type ListingTermsSource = Pick<ListingRecord, 'priceBaseUnits' | 'durationDays' | 'packages' | 'milestones'>;

/** The 400 of a package choice that does not fit the listing (path `body.package`, RFC 9457 validation-error). */
function packageError(message: string, code: string, allowed: readonly string[]): DomainError {
  return new DomainError('validation-error', `body.package ${message}`, {
    errors: [{ path: 'body.package', message, code }],
    allowed_packages: [...allowed],
  });
}

/**
 * The terms of buying `listing`, or its package `packageKey`:
 * - a listing with packages: `packageKey` is required and must be one of its keys; the terms are that
 *   package's price, name, revisions and milestones (one milestone of the whole price and the package's
 *   delivery days when it has none);
 * - a listing without packages: `packageKey` must be absent; one milestone of the listing's price and
 *   duration (or its listing-level milestones), revisions 0.
 * Milestones always number 1..10 and sum to `priceBaseUnits` (the listing module's rules guarantee it;
 * this function asserts it: a broken listing is never sold).
 * Throws DomainError 400 validation-error at `body.package` (codes `package_required`, `unknown_package`,
 * `no_packages`) with `allowed_packages` (the listing's keys, in key order).
 */
export function orderTermsOf(listing: ListingTermsSource, packageKey?: string | null): OrderTerms {
  const keys = listing.packages.map((p) => p.key);
  let terms: OrderTerms;
  if (keys.length === 0) {
    if (packageKey !== undefined && packageKey !== null) {
      throw packageError('not allowed: this listing has no packages', 'no_packages', keys);
    }
    terms = {
      packageKey: null,
      packageName: null,
      priceBaseUnits: listing.priceBaseUnits,
      revisionsIncluded: 0,
      milestones: listing.milestones
        ? listing.milestones.map((m) => ({ title: m.title, amountBaseUnits: m.amountBaseUnits, deliveryDays: m.deliveryDays }))
        : [{ title: null, amountBaseUnits: listing.priceBaseUnits, deliveryDays: listing.durationDays }],
    };
  } else {
    if (packageKey === undefined || packageKey === null) {
      throw packageError(`is required: this listing offers the packages ${keys.join(', ')}`, 'package_required', keys);
    }
    const p = listing.packages.find((x) => x.key === packageKey);
    if (!p) throw packageError(`must be one of ${keys.join(', ')}`, 'unknown_package', keys);
    terms = {
      packageKey: p.key,
      packageName: p.name,
      priceBaseUnits: p.priceBaseUnits,
      revisionsIncluded: p.revisions,
      milestones: p.milestones
        ? p.milestones.map((m) => ({ title: m.title, amountBaseUnits: m.amountBaseUnits, deliveryDays: m.deliveryDays }))
        : [{ title: null, amountBaseUnits: p.priceBaseUnits, deliveryDays: p.deliveryDays }],
    };
  }
  const sum = terms.milestones.reduce((s, m) => s + m.amountBaseUnits, 0n);
  if (terms.milestones.length < 1 || terms.milestones.length > 10 || sum !== terms.priceBaseUnits) {
    throw new Error(`listing terms are inconsistent: ${terms.milestones.length} milestones summing to ${sum}, price ${terms.priceBaseUnits}`);
  }
  return terms;
}

/** The delivery time of `terms` in days: the sum of its milestones' (each counted from its funding). */
export function termsDeliveryDays(terms: Pick<OrderTerms, 'milestones'>): number {
  return terms.milestones.reduce((s, m) => s + m.deliveryDays, 0);
}

