/**
 * The one SQL read of listings shared by the listings and marketplace repositories: a page of ids
 * with their sort keys (built by the caller, already ordered and limited) is joined with the seller's
 * wallet here, so per-row joins run for the page only, never for every match. The seller's reputation
 * is read from the listing row itself (seller_rating / seller_review_count, kept current by triggers on
 * reviews: migration 20261123130707_search_scale), not aggregated over reviews per read.
 *
 * Reads (capacity and stock, contract `listingReadStatus`): the orders trigger keeps each listing's
 * open_orders, unpaid_orders and sold_count in the transaction of every order change (migration
 * 20261126155400_listing_capacity_stock, SQL function order_listing_weight: the one place an order's
 * weight on its listing is decided), so what a listing reads is a condition over its own row: `sold` once sold_count reaches the
 * stock, `reserved` while open orders (unpaid holds included) fill the capacity or, with the sold ones,
 * reach the stock; else `available`. A stored sold / reserved / unlisted reads so. The status filters of
 * both repositories use `listingStatusIn`, so a filter returns what the listings read, in one statement
 * over the listings indexes (no read of orders). `held_until` (the earliest lapse of the unpaid holds:
 * payment_expires_at + grace) is read for the page only, the one read of the orders table outside the
 * orders module.
 */
import { listingReadStatus, listingStatusOfUnits, PAYMENT_GRACE_SECONDS } from '@bazaar/contract';
import { Prisma } from '../../generated/prisma/client.js';
import { parseStoredMilestones, parseStoredPackages } from './listings.packages.js';
import type { ListingRecord, ListingStatus } from './listings.types.js';

/** The listing `l` (alias of the enclosing query) is sold out: its sold orders reached its stock. */
const SOLD_OUT = Prisma.sql`(l.stock IS NOT NULL AND l.sold_count >= l.stock)`;
/** Its open orders fill its capacity, or with the sold ones reach its stock (contract `listingStatusOfUnits`). */
const FULL = Prisma.sql`(l.open_orders >= l.capacity OR (l.stock IS NOT NULL AND l.open_orders + l.sold_count >= l.stock))`;

/**
 * SQL condition over the alias `l`: the listing READS one of `statuses` (contract `listingReadStatus`:
 * `available` excludes full and sold-out listings, `reserved` includes full ones). Empty list: false.
 */
export function listingStatusIn(statuses: readonly ListingStatus[]): Prisma.Sql {
  return Prisma.sql`(l.taken_down_at IS NULL AND ${statusIn(statuses)})`;
}

/**
 * issue 25: a taken-down listing is in no public list or search: `listingStatusIn` (what everyone sees) excludes
 * it; its seller's own lists add it back with `takenDownOf`.
 */
export function takenDownOf(sellerId: string, statuses: readonly ListingStatus[]): Prisma.Sql {
  return Prisma.sql`(l.taken_down_at IS NOT NULL AND l.seller_id = ${sellerId}::uuid AND ${statusIn(statuses)})`;
}

function statusIn(statuses: readonly ListingStatus[]): Prisma.Sql {
  const parts: Prisma.Sql[] = [];
  if (statuses.includes('unlisted')) parts.push(Prisma.sql`l.status = 'unlisted'`);
  const available = statuses.includes('available');
  const reserved = statuses.includes('reserved');
  const sold = statuses.includes('sold');
  if (available && reserved && sold) parts.push(Prisma.sql`l.status IN ('available', 'reserved', 'sold')`);
  else {
    if (sold) parts.push(Prisma.sql`(l.status = 'sold' OR (l.status IN ('available', 'reserved') AND ${SOLD_OUT}))`);
    if (available && reserved) parts.push(Prisma.sql`(l.status IN ('available', 'reserved') AND NOT ${SOLD_OUT})`);
    else if (available) parts.push(Prisma.sql`(l.status = 'available' AND NOT ${FULL})`);
    else if (reserved) parts.push(Prisma.sql`((l.status = 'reserved' OR (l.status = 'available' AND ${FULL})) AND NOT ${SOLD_OUT})`);
  }
  if (parts.length === 0) return Prisma.sql`false`;
  return parts.length === 1 ? parts[0]! : Prisma.sql`(${Prisma.join(parts, ' OR ')})`;
}

/** Raw row of `selectListings`. */
export interface ListingRow {
  id: string;
  seller_id: string;
  seller_wallet: string;
  title: string;
  description: string;
  price_base_units: string;
  currency: string;
  category: string;
  duration_days: number;
  /** JSONB (listings.packages.ts: stored form) */
  packages: unknown;
  /** JSONB or null */
  milestones: unknown;
  status: string;
  token_mint_address: string | null;
  mint_signature: string | null;
  mint_slot: string | null;
  metadata_uri: string | null;
  created_at: Date;
  updated_at: Date;
  seller_rating: number | null;
  seller_review_count: number;
  /** the earliest lapse of the listing's unpaid holds: payment_expires_at + grace (null: none) */
  held_until: Date | null;
  capacity: number;
  stock: number | null;
  open_orders: number;
  unpaid_orders: number;
  sold_count: number;
  taken_down_at: Date | null;
  taken_down_reason: string | null;
  appealed_at: Date | null;
  appeal_text: string | null;
  /**
   * The page's sort key values as its cursor stores them (text, null for a NULL key), in sort order;
   * present only when the page yields `cursor_keys` (`selectListings(..., { cursorKeys: true })`).
   */
  cursor_keys?: Array<string | null>;
}

/**
 * `page` is a subquery yielding `id` (uuid), the columns `orderBy` (the ORDER BY over `page.*` that keeps
 * its order) reads, and with `cursorKeys` a `cursor_keys text[]` column: the row's sort key values as its
 * cursor stores them, passed through as `ListingRow.cursor_keys`.
 */
export function selectListings(page: Prisma.Sql, orderBy: Prisma.Sql, o: { cursorKeys?: boolean } = {}): Prisma.Sql {
  const keys = o.cursorKeys ? Prisma.sql`, page.cursor_keys` : Prisma.empty;
  return Prisma.sql`
    SELECT l.id::text AS id, l.seller_id::text AS seller_id, u.wallet AS seller_wallet, l.title, l.description,
           l.price_base_units::text AS price_base_units, l.currency, l.category, l.duration_days, l.packages, l.milestones, l.status,
           l.token_mint_address, l.mint_signature, l.mint_slot::text AS mint_slot, l.metadata_uri,
           l.created_at, l.updated_at,
           CASE WHEN l.seller_review_count > 0 THEN l.seller_rating::float8 END AS seller_rating,
           l.seller_review_count AS seller_review_count,
           CASE WHEN l.status = 'available' THEN hold.until + ${Prisma.raw(`interval '${PAYMENT_GRACE_SECONDS} seconds'`)} END AS held_until,
           l.capacity, l.stock, l.open_orders, l.unpaid_orders, l.sold_count,
           l.taken_down_at, l.taken_down_reason, l.appealed_at, l.appeal_text
           ${keys}
      FROM (${page}) AS page
      JOIN listings l ON l.id = page.id
      JOIN users u ON u.id = l.seller_id
      LEFT JOIN LATERAL (
        SELECT min(o.payment_expires_at) AS until FROM orders o WHERE o.listing_id = l.id AND o.status = 'awaiting_payment'
      ) hold ON true
     ORDER BY ${orderBy}`;
}

/**
 * When unpaid holds are what makes listing `r` read reserved (its paid orders alone would leave a unit):
 * the earliest of their lapses; null otherwise (the contract's `held_until`).
 */
function heldUntilOf(r: ListingRow, status: ListingStatus): Date | null {
  if (!r.held_until || r.unpaid_orders === 0 || status !== 'available') return null;
  const units = { capacity: Number(r.capacity), stock: r.stock === null ? null : Number(r.stock), sold: Number(r.sold_count) };
  const open = Number(r.open_orders);
  const reads = listingReadStatus(status, { ...units, open, paid: open - Number(r.unpaid_orders) });
  const paidAlone = listingStatusOfUnits({ ...units, open: open - Number(r.unpaid_orders) });
  return reads === 'reserved' && paidAlone === 'available' ? new Date(r.held_until) : null;
}

export function toListingRecord(r: ListingRow): ListingRecord {
  const status = r.status as ListingStatus;
  return {
    id: r.id,
    sellerId: r.seller_id,
    sellerWallet: r.seller_wallet,
    title: r.title,
    description: r.description,
    priceBaseUnits: BigInt(r.price_base_units),
    currency: r.currency,
    category: r.category,
    durationDays: Number(r.duration_days),
    packages: parseStoredPackages(typeof r.packages === 'string' ? JSON.parse(r.packages) : r.packages),
    milestones: parseStoredMilestones(typeof r.milestones === 'string' ? JSON.parse(r.milestones) : r.milestones),
    status,
    tokenMint: r.token_mint_address ?? '',
    mintSignature: r.mint_signature ?? '',
    mintSlot: r.mint_slot === null ? 0 : Number(r.mint_slot),
    metadataUri: r.metadata_uri ?? '',
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    sellerRating: r.seller_rating === null ? null : Number(r.seller_rating),
    sellerReviewCount: Number(r.seller_review_count),
    heldUntil: heldUntilOf(r, status),
    capacity: Number(r.capacity),
    stock: r.stock === null ? null : Number(r.stock),
    openOrders: Number(r.open_orders),
    unpaidOrders: Number(r.unpaid_orders),
    soldCount: Number(r.sold_count),
    takenDown:
      r.taken_down_at === null || r.taken_down_at === undefined
        ? null
        : {
            at: new Date(r.taken_down_at),
            reason: r.taken_down_reason ?? '',
            appealedAt: r.appealed_at ? new Date(r.appealed_at) : null,
            appeal: r.appeal_text ?? null,
          },
  };
}
