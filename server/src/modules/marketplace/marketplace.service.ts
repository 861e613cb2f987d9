/**
 * Marketplace: search and browse listings, categories with counts, currencies.
 *
 * Rules:
 * - Search shows available listings only; browse shows one status (default active = available);
 *   unlisted listings are never shown here.
 * - Text: full-text (`websearch_to_tsquery` over the listing's tsvector). Typo tolerance: a query word
 *   of TYPO_MIN_LENGTH+ characters that is no listing title's word is replaced by the nearest title word
 *   within TYPO_MAX_EDITS edits (correctTypos); a listing then matches the text OR its corrected form.
 * - Relevance: ts_rank over the newest RELEVANCE_CANDIDATES (1 000) matches (the repo; a bounded
 *   candidate set: docs/search-design.md).
 * - Price bounds are UI amounts compared with each listing's price in its own currency: per
 *   currency the bound becomes base units exactly (min rounds up, max rounds down), so a bound with
 *   more decimals than a currency has is never refused, just applied exactly. min > max is 400.
 * - Price sorts order by the UI price (base units / 10^decimals of the listing's currency); with a
 *   `currency` filter that is the same order as base units, which the repo then uses directly.
 * - Every sort is a keyset on (sort key..., id); cursors are bound to the sort and the filters.
 * - Similar listings: the available listings of the listing's category but itself, in the search's order
 *   without a query (newest first); the listing must be visible to the caller (listings' rule).
 */
import { cursorKey, decodeCursor, encodeCursor, type CursorSpec, type Page } from '../../lib/cursor.js';
import { toBaseUnitsBound } from '../../lib/money.js';
import { listingErrors, listingVisibleTo, type FieldError } from '../listings/index.js';
import type { ListingRecord, ListingsConfig, ListingStatus, Viewer } from '../listings/index.js';
import type { MarketplaceRepo, PriceBounds, SearchCriteria, SearchSort } from './marketplace.types.js';

/** query words shorter than this are never corrected (too many near neighbours) */
export const TYPO_MIN_LENGTH = 4;
/** at most this many query words are looked up for corrections */
export const TYPO_MAX_WORDS = 8;
/** nearest title words (by trigram distance) considered per unknown word */
export const TYPO_CANDIDATES = 8;

/** edits (insert, delete, substitute, swap two adjacent letters) allowed for a word of `length` letters */
export const typoMaxEdits = (length: number) => (length <= 5 ? 1 : 2);

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions), in code points. */
export function editDistance(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  const d: number[][] = Array.from({ length: x.length + 1 }, (_, i) => [i, ...Array<number>(y.length).fill(0)]);
  for (let j = 1; j <= y.length; j++) d[0]![j] = j;
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[x.length]![y.length]!;
}

/** The lower-case words of the positive part of websearch text that typo correction may look up. */
export function typoWords(text: string): string[] {
  const fuzzy = splitQuery(text).fuzzy ?? '';
  const words = fuzzy.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].filter((w) => [...w].length >= TYPO_MIN_LENGTH && w.length <= 64).slice(0, TYPO_MAX_WORDS);
}

/**
 * Split websearch text into the words a typo match may use and the excluded words:
 * `"logo design" -mascot or brand` -> fuzzy "logo design brand", excluded "mascot" (as websearch text "a or b").
 */
export function splitQuery(text: string): { fuzzy?: string; excluded?: string } {
  const words = text.replace(/"/g, ' ').split(/\s+/).filter(Boolean);
  const fuzzy = words.filter((w) => !w.startsWith('-') && w.toLowerCase() !== 'or').join(' ');
  const excluded = words.filter((w) => w.startsWith('-') && w.length > 1).map((w) => w.slice(1)).join(' or ');
  return { fuzzy: fuzzy || undefined, excluded: excluded || undefined };
}

export interface SearchInput {
  query?: string;
  minPrice?: number;
  maxPrice?: number;
  category?: string;
  currency?: string;
  sellerWallet?: string;
  sort?: SearchSort;
  limit: number;
  cursor?: string;
}

export interface BrowseInput {
  category?: string;
  /** active = available */
  status?: 'active' | 'available' | 'reserved' | 'sold';
  limit: number;
  cursor?: string;
}


export interface MarketplaceDeps {
  repo: MarketplaceRepo;
  config: Pick<ListingsConfig, 'currencies' | 'categories'>;
}

/** Cursor key kinds per sort (see the repo for the SQL expressions behind them). */
function keySpec(sort: SearchSort): CursorSpec['keys'] {
  switch (sort) {
    case 'relevance':
      return [cursorKey.decimal];
    case 'price_asc':
    case 'price_desc':
      return [cursorKey.decimal]; // base units or exact UI price (see the repo)
    case 'rating':
      return [cursorKey.decimal, cursorKey.uint];
    case 'newest':
      return [cursorKey.timestamp];
  }
}

export function createMarketplaceService(deps: MarketplaceDeps) {
  const { repo, config } = deps;

  function checkFilters(input: { category?: string; currency?: string }, errors: FieldError[]) {
    if (input.category !== undefined && !config.categories.some((c) => c.slug === input.category)) {
      errors.push({
        path: 'query.category',
        message: `must be one of ${config.categories.map((c) => c.slug).join(', ')}`,
        code: 'unknown_category',
      });
    }
    if (input.currency !== undefined && !config.currencies.some((c) => c.code === input.currency)) {
      errors.push({
        path: 'query.currency',
        message: `must be one of ${config.currencies.map((c) => c.code).join(', ')}`,
        code: 'unknown_currency',
      });
    }
  }

  async function run(criteria: Omit<SearchCriteria, 'after' | 'limit' | 'decimals'>, filters: Record<string, unknown>, limit: number, cursor?: string): Promise<Page<ListingRecord>> {
    const spec: CursorSpec = { sort: criteria.sort, filters, keys: keySpec(criteria.sort) };
    const after = cursor ? decodeCursor(cursor, spec) : undefined;
    const rows = await repo.search({
      ...criteria,
      decimals: config.currencies.map((c) => ({ currency: c.code, decimals: c.decimals })),
      limit: limit + 1,
      after,
    });
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      items: page.map((r) => r.listing),
      nextCursor: rows.length > limit && last ? encodeCursor(spec, last.keys, last.listing.id) : null,
    };
  }

  /**
   * `text` with each unknown word (not a word of any listing title) replaced by the nearest title word
   * within typoMaxEdits(length) edits (fewest edits, then highest trigram similarity, then alphabetical);
   * undefined when nothing was replaced. "desgin" -> "design", "logo desgin" -> "logo design".
   */
  async function correctTypos(text: string): Promise<string | undefined> {
    const words = typoWords(text);
    if (words.length === 0) return undefined;
    const candidates = await repo.wordCandidates(words, TYPO_CANDIDATES);
    const best = new Map<string, { word: string; edits: number; similarity: number }>();
    for (const c of candidates) {
      const edits = editDistance(c.input, c.word);
      if (edits === 0 || edits > typoMaxEdits([...c.input].length)) continue;
      const cur = best.get(c.input);
      const better =
        !cur ||
        edits < cur.edits ||
        (edits === cur.edits && (c.similarity > cur.similarity || (c.similarity === cur.similarity && c.word < cur.word)));
      if (better) best.set(c.input, { word: c.word, edits, similarity: c.similarity });
    }
    if (best.size === 0) return undefined;
    let corrected = text;
    for (const [input, { word }] of best) {
      const escaped = input.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      corrected = corrected.replace(new RegExp(`(?<![\\p{L}\\p{N}])${escaped}(?![\\p{L}\\p{N}])`, 'giu'), word);
    }
    return corrected === text ? undefined : corrected;
  }

  return {
    correctTypos,

    async search(input: SearchInput): Promise<Page<ListingRecord>> {
      const errors: FieldError[] = [];
      checkFilters(input, errors);
      if (input.minPrice !== undefined && input.maxPrice !== undefined && input.minPrice > input.maxPrice) {
        errors.push({ path: 'query.min_price', message: 'must not be greater than max_price', code: 'min_greater_than_max' });
      }
      if (errors.length > 0) throw listingErrors.validation(errors);

      let price: PriceBounds[] | undefined;
      if (input.minPrice !== undefined || input.maxPrice !== undefined) {
        price = config.currencies
          .filter((c) => input.currency === undefined || c.code === input.currency)
          .map((c) => ({
            currency: c.code,
            decimals: c.decimals,
            min: input.minPrice !== undefined ? (toBaseUnitsBound(input.minPrice, c.decimals, 'min') ?? undefined) : undefined,
            max: input.maxPrice !== undefined ? (toBaseUnitsBound(input.maxPrice, c.decimals, 'max') ?? undefined) : undefined,
          }));
      }
      const text = input.query?.trim() || undefined;
      const requested = input.sort ?? 'relevance';
      const sort: SearchSort = requested === 'relevance' && !text ? 'newest' : requested;
      const filters = {
        q: text,
        min: input.minPrice,
        max: input.maxPrice,
        category: input.category,
        currency: input.currency,
        seller: input.sellerWallet,
      };
      const correctedText = text ? await correctTypos(text) : undefined;
      return run(
        { text, ...(correctedText ? { correctedText } : {}), statuses: ['available'], category: input.category, currency: input.currency, sellerWallet: input.sellerWallet, price, sort },
        filters,
        input.limit,
        input.cursor,
      );
    },

    async browse(input: BrowseInput): Promise<Page<ListingRecord>> {
      const errors: FieldError[] = [];
      checkFilters(input, errors);
      if (errors.length > 0) throw listingErrors.validation(errors);
      const status: ListingStatus = !input.status || input.status === 'active' ? 'available' : input.status;
      return run(
        { statuses: [status], category: input.category, sort: 'newest' },
        { category: input.category, status },
        input.limit,
        input.cursor,
      );
    },

    /**
     * Listings similar to `listingId`: available, in its category, itself left out, newest first (search
     * without a query). 404 not-found when the listing does not exist or is not visible to `viewer`
     * (unlisted: its seller and admins only). Cursors are bound to the listing.
     */
    async similar(listingId: string, viewer: Viewer | null, page: { limit: number; cursor?: string }): Promise<Page<ListingRecord>> {
      const listing = await repo.get(listingId);
      if (!listing || !listingVisibleTo(listing, viewer)) throw listingErrors.notFound(listingId);
      return run(
        { statuses: ['available'], category: listing.category, excludeId: listing.id, sort: 'newest' },
        { similar_to: listing.id },
        page.limit,
        page.cursor,
      );
    },

    /** Every configured category, in configured order, with its number of available listings. */
    async categories() {
      const counts = await repo.countByCategory('available');
      return config.categories.map((c) => ({ slug: c.slug, name: c.name, listing_count: counts.get(c.slug) ?? 0 }));
    },

    currencies() {
      return config.currencies.map((c) => ({ code: c.code, mint: c.mint, decimals: c.decimals }));
    },
  };
}

export type MarketplaceService = ReturnType<typeof createMarketplaceService>;
