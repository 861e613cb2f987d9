/**
 * `orderTermsOf` (server/src/modules/listings/order-terms.ts, issue 24): the frozen terms an order buys
 * from a listing or one of its packages, and the 400s of a package choice that does not fit.
 */
import { describe, expect, it } from 'vitest';
import { DomainError } from '../server/src/errors.js';
import { orderTermsOf, termsDeliveryDays, type ListingTermsSource } from '../server/src/modules/listings/order-terms.js';
import { cheapestPackage } from '../server/src/modules/listings/listings.packages.js';
import type { ListingPackage } from '../server/src/modules/listings/listings.types.js';

const pkg = (key: ListingPackage['key'], price: bigint, over: Partial<ListingPackage> = {}): ListingPackage => ({
  key,
  name: `${key} name`,
  priceBaseUnits: price,
  deliveryDays: 4,
  revisions: 2,
  description: 'd',
  milestones: null,
  ...over,
});

const plain: ListingTermsSource = { priceBaseUnits: 25_000_000n, durationDays: 3, packages: [], milestones: null };

function refusal(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (e) {
    if (e instanceof DomainError) return e;
    throw e;
  }
  throw new Error('no refusal');
}

describe('orderTermsOf', () => {
  it('a listing without packages or milestones: one milestone of its price and duration, no revisions', () => {
    expect(orderTermsOf(plain)).toEqual({
      packageKey: null,
      packageName: null,
      priceBaseUnits: 25_000_000n,
      revisionsIncluded: 0,
      milestones: [{ title: null, amountBaseUnits: 25_000_000n, deliveryDays: 3 }],
    });
    expect(orderTermsOf(plain, null)).toEqual(orderTermsOf(plain));
  });

  it('a listing with listing-level milestones: those milestones', () => {
    const l = { ...plain, milestones: [{ title: 'A', amountBaseUnits: 5_000_000n, deliveryDays: 1 }, { title: 'B', amountBaseUnits: 20_000_000n, deliveryDays: 2 }] };
    const t = orderTermsOf(l);
    expect(t.milestones).toEqual(l.milestones);
    expect(termsDeliveryDays(t)).toBe(3);
  });

  it('a package: its price, name, revisions; one milestone of its price and days, or its own milestones', () => {
    const l: ListingTermsSource = {
      ...plain,
      priceBaseUnits: 10n,
      packages: [
        pkg('basic', 10n),
        pkg('premium', 30n, { revisions: 7, deliveryDays: 5, milestones: [{ title: 'x', amountBaseUnits: 12n, deliveryDays: 2 }, { title: 'y', amountBaseUnits: 18n, deliveryDays: 3 }] }),
      ],
    };
    expect(orderTermsOf(l, 'basic')).toEqual({
      packageKey: 'basic',
      packageName: 'basic name',
      priceBaseUnits: 10n,
      revisionsIncluded: 2,
      milestones: [{ title: null, amountBaseUnits: 10n, deliveryDays: 4 }],
    });
    const premium = orderTermsOf(l, 'premium');
    expect(premium).toMatchObject({ packageKey: 'premium', priceBaseUnits: 30n, revisionsIncluded: 7 });
    expect(premium.milestones.map((m) => m.amountBaseUnits)).toEqual([12n, 18n]);
    expect(termsDeliveryDays(premium)).toBe(5);
  });

  it('copies: changing the listing afterwards does not change terms already taken', () => {
    const p = pkg('basic', 10n, { milestones: [{ title: 'x', amountBaseUnits: 10n, deliveryDays: 4 }] });
    const l: ListingTermsSource = { ...plain, packages: [p] };
    const t = orderTermsOf(l, 'basic');
    p.milestones![0]!.amountBaseUnits = 99n;
    p.name = 'renamed';
    expect(t.milestones[0]!.amountBaseUnits).toBe(10n);
    expect(t.packageName).toBe('basic name');
  });

  it('400 validation-error at body.package: missing, unknown, or given for a listing without packages; allowed keys named', () => {
    const l: ListingTermsSource = { ...plain, packages: [pkg('basic', 10n), pkg('standard', 20n)] };
    const missing = refusal(() => orderTermsOf(l));
    expect(missing.slug).toBe('validation-error');
    expect(missing.extensions).toMatchObject({ allowed_packages: ['basic', 'standard'], errors: [{ path: 'body.package', code: 'package_required' }] });
    const unknown = refusal(() => orderTermsOf(l, 'premium'));
    expect(unknown.extensions).toMatchObject({ errors: [{ path: 'body.package', code: 'unknown_package', message: 'must be one of basic, standard' }] });
    const none = refusal(() => orderTermsOf(plain, 'basic'));
    expect(none.extensions).toMatchObject({ allowed_packages: [], errors: [{ code: 'no_packages' }] });
  });

  it('never sells inconsistent terms: milestones that do not sum to the price throw (a bug, not a 400)', () => {
    const l: ListingTermsSource = { ...plain, packages: [pkg('basic', 10n, { milestones: [{ title: 'x', amountBaseUnits: 9n, deliveryDays: 4 }] })] };
    expect(() => orderTermsOf(l, 'basic')).toThrow(/inconsistent/);
  });
});

describe('cheapestPackage', () => {
  it('the lowest price; ties go to the first key in basic, standard, premium order; null without packages', () => {
    expect(cheapestPackage([])).toBeNull();
    expect(cheapestPackage([pkg('premium', 5n), pkg('basic', 7n)])?.key).toBe('premium');
    expect(cheapestPackage([pkg('premium', 5n), pkg('standard', 5n)])?.key).toBe('standard');
  });
});
