/**
 * INTERIM (issue 24, helper "offers"): the smallest version of the order-terms seam of
 * /work/notes/i24-design.md section 3, written so that custom offers can create orders with frozen
 * terms. The helper "packages" owns this file: the integrator replaces it with theirs (same names,
 * same shapes). Nothing here reads packages yet: `orderTermsOf` gives the one milestone of a listing.
 */
import { DomainError } from '../../errors.js';

/** Frozen terms of an order: what the buyer buys (base units of the listing's currency). */
export interface OrderTerms {
  packageKey: string | null;
  packageName: string | null;
  /** the order's price, base units; equals the sum of the milestones' amounts */
  priceBaseUnits: bigint;
  /** revisions the buyer may request (0..20) */
  revisionsIncluded: number;
  /** 1..10 milestones, amounts summing to `priceBaseUnits`; delivery days counted from funding */
  milestones: { title: string | null; amountBaseUnits: bigint; deliveryDays: number }[];
}

/**
 * The terms of a listing bought as it stands: one milestone of its price and duration, no revisions.
 * INTERIM: packages are not read (a package key throws 400 validation-error: no packages yet).
 */
export function orderTermsOf(listing: { priceBaseUnits: bigint; durationDays: number }, packageKey?: string | null): OrderTerms {
  if (packageKey) {
    throw new DomainError('validation-error', 'This listing offers no packages.', {
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

/** Checks the invariants of `terms` (1..10 milestones, positive amounts, sum = price); throws Error when broken (a bug, not input). */
export function assertTermsConsistent(terms: OrderTerms): void {
  const n = terms.milestones.length;
  if (n < 1 || n > 10) throw new Error(`order terms: ${n} milestones (1..10)`);
  const sum = terms.milestones.reduce((s, m) => s + m.amountBaseUnits, 0n);
  if (sum !== terms.priceBaseUnits || terms.milestones.some((m) => m.amountBaseUnits <= 0n || m.deliveryDays < 1)) {
    throw new Error('order terms: milestone amounts must be positive and sum to the price');
  }
}
