/**
 * Packages and milestones of a listing (issue 24): the request rules beyond the contract's schema, the
 * stored JSON form, and which package is the cheapest.
 *
 * Storage: two JSONB columns of `listings` (`packages`, `milestones`) rather than a table. A listing has
 * at most 3 packages of at most 10 milestones, always read and written whole with the listing (the
 * listing read, the event payload, the order's terms), never queried by their fields: the one field
 * search needs, the cheapest price, lives in the listing's own indexed `price_base_units` column,
 * written in the same UPDATE/INSERT as the packages (so it can never disagree with them, and search stays
 * one index range). A table would add a join (or a second query) to every listing read and a
 * multi-row replace to every edit, for no query that needs it. The JSON is validated by zod on the way
 * in (the service's rules below) and on the way out (`parseStoredPackages`: a row that does not parse is
 * a bug, and fails loudly instead of selling wrong terms).
 *
 * Rules (contract: listings.contract.ts module comment): at most 3 packages with distinct keys; 1..10
 * milestones; every price and amount > 0 with at most the currency's decimals and at least the
 * currency's LISTING_MIN_PRICE; milestone amounts sum exactly to the price (base units) and their
 * delivery days to the package's delivery days (or the listing's duration).
 */
import { PACKAGE_KEYS, type ListingMilestoneInput, type ListingPackageInput, type PackageKey } from '@bazaar/contract';
import { z } from 'zod';
import { formatUiAmount } from '../../lib/money.js';
import type { FieldError } from './listings.errors.js';
import type { ListingMilestone, ListingPackage } from './listings.types.js';

/** A UI amount -> base units, or undefined after pushing its field error at `path` (service's checkPrice). */
export type AmountCheck = (value: number, path: string) => bigint | undefined;

const keyRank = (k: PackageKey) => PACKAGE_KEYS.indexOf(k);

/** The cheapest package (ties: the first in key order basic, standard, premium); null without packages. */
export function cheapestPackage(packages: readonly ListingPackage[]): ListingPackage | null {
  let best: ListingPackage | null = null;
  for (const p of [...packages].sort((a, b) => keyRank(a.key) - keyRank(b.key))) {
    if (!best || p.priceBaseUnits < best.priceBaseUnits) best = p;
  }
  return best;
}

/** Milestones of a request (already schema-valid) -> domain, each amount checked at `${path}.${i}.amount`. */
export function parseMilestones(input: readonly ListingMilestoneInput[], path: string, amount: AmountCheck, errors: FieldError[]): ListingMilestone[] | undefined {
  const out: ListingMilestone[] = [];
  let ok = true;
  input.forEach((m, i) => {
    const base = amount(m.amount, `${path}.${i}.amount`);
    if (base === undefined) ok = false;
    else out.push({ title: m.title, amountBaseUnits: base, deliveryDays: m.delivery_days });
  });
  return ok ? out : undefined;
}

/**
 * The milestones' amounts sum to `priceBaseUnits` exactly (code `milestones_sum_mismatch`) and their
 * delivery days to `deliveryDays` (code `milestones_days_mismatch`); errors at `path`.
 */
export function checkMilestoneSums(
  milestones: readonly ListingMilestone[],
  target: { priceBaseUnits: bigint; deliveryDays: number; decimals: number; currency: string; priceLabel: string; daysLabel: string },
  path: string,
  errors: FieldError[],
): void {
  const sum = milestones.reduce((s, m) => s + m.amountBaseUnits, 0n);
  if (sum !== target.priceBaseUnits) {
    const ui = (v: bigint) => `${formatUiAmount(v, target.decimals)} ${target.currency}`;
    errors.push({
      path,
      message: `milestone amounts sum to ${ui(sum)} (${sum} base units), not the ${target.priceLabel} ${ui(target.priceBaseUnits)} (${target.priceBaseUnits} base units)`,
      code: 'milestones_sum_mismatch',
    });
  }
  const days = milestones.reduce((s, m) => s + m.deliveryDays, 0);
  if (days !== target.deliveryDays) {
    errors.push({
      path,
      message: `milestone delivery_days sum to ${days}, not the ${target.daysLabel} ${target.deliveryDays}`,
      code: 'milestones_days_mismatch',
    });
  }
}

/**
 * Packages of a request (already schema-valid: 1..3, each 0..20 revisions, 1..10 milestones) -> domain,
 * in key order; undefined when any rule is broken (errors pushed at `body.packages...`, indexes as sent).
 */
export function parsePackages(
  input: readonly ListingPackageInput[],
  currency: { code: string; decimals: number },
  amount: AmountCheck,
  errors: FieldError[],
): ListingPackage[] | undefined {
  const before = errors.length;
  const seen = new Map<string, number>();
  const out: ListingPackage[] = [];
  input.forEach((p, i) => {
    const path = `body.packages.${i}`;
    const first = seen.get(p.key);
    if (first !== undefined) {
      errors.push({ path: `${path}.key`, message: `duplicate package key ${p.key} (also packages.${first})`, code: 'duplicate_package_key' });
    } else {
      seen.set(p.key, i);
    }
    const price = amount(p.price, `${path}.price`);
    const milestones = p.milestones ? parseMilestones(p.milestones, `${path}.milestones`, amount, errors) : null;
    if (price === undefined || milestones === undefined) return;
    if (milestones) {
      checkMilestoneSums(
        milestones,
        { priceBaseUnits: price, deliveryDays: p.delivery_days, decimals: currency.decimals, currency: currency.code, priceLabel: 'package price', daysLabel: 'package delivery_days' },
        `${path}.milestones`,
        errors,
      );
    }
    out.push({
      key: p.key,
      name: p.name,
      priceBaseUnits: price,
      deliveryDays: p.delivery_days,
      revisions: p.revisions,
      description: p.description,
      milestones,
    });
  });
  if (errors.length > before) return undefined;
  return out.sort((a, b) => keyRank(a.key) - keyRank(b.key));
}

// --- stored form (JSONB) -------------------------------------------------------------------------

const BaseUnitsText = z.string().regex(/^[1-9][0-9]{0,19}$/);
const StoredMilestone = z.object({ title: z.string(), amount_base_units: BaseUnitsText, delivery_days: z.number().int().min(1) }).strict();
const StoredMilestones = z.array(StoredMilestone).min(1).max(10);
const StoredPackage = z
  .object({
    key: z.enum(PACKAGE_KEYS),
    name: z.string(),
    price_base_units: BaseUnitsText,
    delivery_days: z.number().int().min(1),
    revisions: z.number().int().min(0).max(20),
    description: z.string(),
    milestones: StoredMilestones.nullable(),
  })
  .strict();
const StoredPackages = z.array(StoredPackage).max(3);

export type StoredMilestoneJson = z.infer<typeof StoredMilestone>;
export type StoredPackageJson = z.infer<typeof StoredPackage>;

const milestoneToJson = (m: ListingMilestone): StoredMilestoneJson => ({
  title: m.title,
  amount_base_units: m.amountBaseUnits.toString(),
  delivery_days: m.deliveryDays,
});
const milestoneFromJson = (m: StoredMilestoneJson): ListingMilestone => ({
  title: m.title,
  amountBaseUnits: BigInt(m.amount_base_units),
  deliveryDays: m.delivery_days,
});

/** Domain packages -> the JSON stored in listings.packages (base units as decimal text). */
export function packagesToJson(packages: readonly ListingPackage[]): StoredPackageJson[] {
  return packages.map((p) => ({
    key: p.key,
    name: p.name,
    price_base_units: p.priceBaseUnits.toString(),
    delivery_days: p.deliveryDays,
    revisions: p.revisions,
    description: p.description,
    milestones: p.milestones ? p.milestones.map(milestoneToJson) : null,
  }));
}

/** Domain milestones -> the JSON stored in listings.milestones (null stays null). */
export function milestonesToJson(milestones: readonly ListingMilestone[] | null): StoredMilestoneJson[] | null {
  return milestones ? milestones.map(milestoneToJson) : null;
}

/** listings.packages JSON -> domain; throws (a stored row that does not parse is a bug, never sold). */
export function parseStoredPackages(json: unknown): ListingPackage[] {
  return StoredPackages.parse(json ?? []).map((p) => ({
    key: p.key,
    name: p.name,
    priceBaseUnits: BigInt(p.price_base_units),
    deliveryDays: p.delivery_days,
    revisions: p.revisions,
    description: p.description,
    milestones: p.milestones ? p.milestones.map(milestoneFromJson) : null,
  }));
}

/** listings.milestones JSON -> domain (null: none); throws on a malformed row. */
export function parseStoredMilestones(json: unknown): ListingMilestone[] | null {
  return json === null || json === undefined ? null : StoredMilestones.parse(json).map(milestoneFromJson);
}
