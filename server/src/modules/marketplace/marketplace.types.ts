/**
 * Marketplace (search and browse) types and its storage port.
 */
import type { CursorValue } from '../../lib/cursor.js';
import type { ListingRecord, ListingStatus } from '../listings/index.js';

export type SearchSort = 'relevance' | 'price_asc' | 'price_desc' | 'rating' | 'newest';

/** Price bounds of one currency in base units (inclusive); a listing matches the bounds of its currency. */
export interface PriceBounds {
  currency: string;
  /** decimals of the currency: the UI price is price_base_units / 10^decimals */
  decimals: number;
  min?: bigint;
  max?: bigint;
}

export interface SearchCriteria {
  /** websearch text (already trimmed, 1..200 chars) */
  text?: string;
  /**
   * `text` with its unknown words replaced by their typo corrections (service: correctTypos), when any
   * was found: a listing matches `text` OR `correctedText` (both websearch syntax, same exclusions)
   */
  correctedText?: string;
  statuses: readonly ListingStatus[];
  category?: string;
  currency?: string;
  sellerWallet?: string;
  /** leave this listing out (similar listings: the listing they are similar to) */
  excludeId?: string;
  /** one entry per configured currency (or just the filtered one) when a price bound is given */
  price?: PriceBounds[];
  /** decimals per configured currency, to order by UI price across currencies */
  decimals: ReadonlyArray<{ currency: string; decimals: number }>;
  sort: SearchSort;
  /** fetch size (page size + 1) */
  limit: number;
  /** keyset position: sort key values + id of the last row of the previous page */
  after?: { keys: CursorValue[]; id: string };
}

export interface SearchRow {
  listing: ListingRecord;
  /** the sort key values of the row, as stored in cursors */
  keys: CursorValue[];
}

/** A title word near an unknown query word (trigram distance), for typo correction. */
export interface WordCandidate {
  /** the query word (lower case) that is not a title word */
  input: string;
  /** a title word near it */
  word: string;
  /** pg_trgm similarity(word, input), 0..1 */
  similarity: number;
}

export interface MarketplaceRepo {
  /** the full-text index search uses: 'rum' or 'gin' (marketplace.repo.ts SearchIndex; detected once) */
  searchIndex(): Promise<'rum' | 'gin'>;
  search(c: SearchCriteria): Promise<SearchRow[]>;
  /** one listing as the listings read it (hold included), null when unknown */
  get(id: string): Promise<ListingRecord | null>;
  /**
   * For each of `words` (lower case) that is not a word of any listing title (table search_words), up
   * to `perWord` title words nearest to it by trigram distance; known words yield nothing.
   */
  wordCandidates(words: readonly string[], perWord: number): Promise<WordCandidate[]>;
  /** number of listings in `status` per category slug (categories without listings absent) */
  countByCategory(status: ListingStatus): Promise<Map<string, number>>;
}
