/**
 * Listings module types and the ports it needs (storage, chain, configuration).
 * Amounts are u64 base units (bigint); the UI number is derived for display only.
 */
import type { Chain } from '../../chain/types.js';

export const LISTING_STATUSES = ['available', 'reserved', 'sold', 'unlisted'] as const;
export type ListingStatus = (typeof LISTING_STATUSES)[number];

export interface ListingRecord {
  id: string;
  sellerId: string;
  sellerWallet: string;
  title: string;
  description: string;
  priceBaseUnits: bigint;
  currency: string;
  category: string;
  durationDays: number;
  status: ListingStatus;
  tokenMint: string;
  mintSignature: string;
  mintSlot: number;
  metadataUri: string;
  createdAt: Date;
  updatedAt: Date;
  /** seller reputation, read with the listing (null average without reviews) */
  sellerRating: number | null;
  sellerReviewCount: number;
}

export type NewListing = Omit<ListingRecord, 'createdAt' | 'updatedAt' | 'sellerRating' | 'sellerReviewCount'>;

export type ListingPatch = Partial<
  Pick<ListingRecord, 'title' | 'description' | 'priceBaseUnits' | 'category' | 'durationDays' | 'status'>
>;

/** Keyset position of the newest-first listing order: (created_at, id) of the last row. */
export interface NewestKey {
  createdAt: Date;
  id: string;
}

export interface ListListingsFilter {
  sellerWallet?: string;
  /** statuses visible to everyone (unlisted never belongs here) */
  statuses: readonly ListingStatus[];
  category?: string;
  /** also include the unlisted listings of this user (the caller, when they are the seller) */
  unlistedVisibleTo?: string | null;
  limit: number;
  after?: NewestKey;
}

export interface ListingsRepo {
  insert(listing: NewListing): Promise<ListingRecord>;
  get(id: string): Promise<ListingRecord | null>;
  /** newest first, keyset (created_at, id) */
  list(filter: ListListingsFilter): Promise<ListingRecord[]>;
  /** conditional update: applies only while the status is one of `expected`; null otherwise */
  updateIf(id: string, expected: readonly ListingStatus[], patch: ListingPatch): Promise<ListingRecord | null>;
}

export interface CurrencyConfig {
  code: string;
  mint: string;
  decimals: number;
}

export interface CategoryConfig {
  slug: string;
  name: string;
}

export interface ListingsConfig {
  currencies: readonly CurrencyConfig[];
  categories: readonly CategoryConfig[];
  /** e.g. https://api.bazaar.dev (no trailing slash); token metadata URIs are built from it */
  publicBaseUrl: string;
}

/** Who is calling (from the auth middleware's principal). */
export interface Viewer {
  userId: string;
  wallet: string;
  role?: 'user' | 'admin';
}

export interface ListingsDeps {
  repo: ListingsRepo;
  chain: Pick<Chain, 'mintListingToken' | 'updateListingToken'>;
  config: ListingsConfig;
  log?: { warn(obj: object, msg?: string): void; error(obj: object, msg?: string): void };
  /** listing id generator (tests may fix it) */
  newId?: () => string;
}
