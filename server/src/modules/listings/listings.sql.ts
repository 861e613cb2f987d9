/**
 * The one SQL read of listings shared by the listings and marketplace repositories: a page of ids
 * with their sort keys (built by the caller, already ordered and limited) is joined with the seller's
 * wallet here, so per-row joins run for the page only, never for every match. The seller's reputation
 * is read from the listing row itself (seller_rating / seller_review_count, kept current by triggers on
 * reviews: migration 20261123130707_search_scale), not aggregated over reviews per read.
 *
 * Holds: a listing an unpaid order holds (orders.status = 'awaiting_payment' for it: at most one, the
 * orders module's `createHeld` guarantees it) reads `reserved` with `held_until` = that order's
 * payment_expires_at + the payment grace, while its stored status stays `available` (the orders contract:
 * the hold ends by itself when the order expires, so there is nothing to undo). This is the one read of
 * the orders table outside the orders module, and what the status filters of both repositories use
 * (`listingStatusIn`), so a filter returns what the listings read.
 */
import { PAYMENT_GRACE_SECONDS } from '@bazaar/contract';
import { Prisma } from '../../generated/prisma/client.js';
import { parseStoredMilestones, parseStoredPackages } from './listings.packages.js';
import type { ListingRecord, ListingStatus } from './listings.types.js';

/** An unpaid order holds listing `l` (the `l` alias of the enclosing query). */
const HELD = Prisma.sql`EXISTS (SELECT 1 FROM orders o WHERE o.listing_id = l.id AND o.status = 'awaiting_payment')`;

/**
 * SQL condition over the alias `l`: the listing READS one of `statuses` (see the header: `available`
 * excludes held listings, `reserved` includes them). Empty list: false.
 */
export function listingStatusIn(statuses: readonly ListingStatus[]): Prisma.Sql {
  const parts: Prisma.Sql[] = [];
  const plain = statuses.filter((s) => s !== 'available' && s !== 'reserved');
  if (plain.length > 0) parts.push(plain.length === 1 ? Prisma.sql`l.status = ${plain[0]!}` : Prisma.sql`l.status IN (${Prisma.join(plain)})`);
  const available = statuses.includes('available');
  const reserved = statuses.includes('reserved');
  if (available && reserved) parts.push(Prisma.sql`l.status IN ('available', 'reserved')`);
  else if (available) parts.push(Prisma.sql`(l.status = 'available' AND NOT ${HELD})`);
  else if (reserved) parts.push(Prisma.sql`(l.status = 'reserved' OR (l.status = 'available' AND ${HELD}))`);
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
  /** an unpaid order's hold: its payment_expires_at + grace (null: not held) */
  held_until: Date | null;
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
           CASE WHEN l.status = 'available' THEN hold.until + ${Prisma.raw(`interval '${PAYMENT_GRACE_SECONDS} seconds'`)} END AS held_until
           ${keys}
      FROM (${page}) AS page
      JOIN listings l ON l.id = page.id
      JOIN users u ON u.id = l.seller_id
      LEFT JOIN LATERAL (
        SELECT max(o.payment_expires_at) AS until FROM orders o WHERE o.listing_id = l.id AND o.status = 'awaiting_payment'
      ) hold ON true
     ORDER BY ${orderBy}`;
}

export function toListingRecord(r: ListingRow): ListingRecord {
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
    status: r.status as ListingStatus,
    tokenMint: r.token_mint_address ?? '',
    mintSignature: r.mint_signature ?? '',
    mintSlot: r.mint_slot === null ? 0 : Number(r.mint_slot),
    metadataUri: r.metadata_uri ?? '',
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    sellerRating: r.seller_rating === null ? null : Number(r.seller_rating),
    sellerReviewCount: Number(r.seller_review_count),
    heldUntil: r.held_until ? new Date(r.held_until) : null,
  };
}
