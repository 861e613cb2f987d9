/**
 * Marketplace: search and browse listings, listings similar to one, and the configured categories and
 * currencies.
 * Categories and currencies are runtime configuration of the server; these routes expose them so
 * clients can validate input before creating listings.
 */
import { z } from 'zod';
import { c, CategorySlug, CurrencyCode, ExplorerUrl, named, PaginationQuery, Pubkey, queryNumber, safeText, Uuid } from './common.js';
import { LISTING_STATUSES, ListingPage } from './listings.contract.js';
import { access } from './access.js';
import { routeErrors } from './problems.js';

export const SEARCH_SORTS = ['relevance', 'price_asc', 'price_desc', 'rating', 'newest'] as const;
export const SearchSort = z.enum(SEARCH_SORTS);

const MinMaxPrice = queryNumber(z.number({ invalid_type_error: 'must be a decimal number' }).nonnegative().finite());

export const SearchListingsQuery = PaginationQuery.extend({
  query: safeText(z.string().trim().min(1).max(200)).optional().describe('Full-text query over title and description'),
  min_price: MinMaxPrice.optional().describe(
    'Inclusive lower bound of price (a listing with packages: its cheapest package\'s), UI units of the listing currency',
  ),
  max_price: MinMaxPrice.optional().describe(
    'Inclusive upper bound of price (a listing with packages: its cheapest package\'s), UI units of the listing currency',
  ),
  category: CategorySlug.optional(),
  currency: CurrencyCode.optional(),
  seller_wallet: Pubkey.optional(),
  sort: SearchSort.default('relevance').describe(
    'relevance (text rank; newest when no query), price_asc, price_desc, rating (seller reputation average, ' +
      'unrated last), newest',
  ),
});
export type SearchListingsQuery = z.infer<typeof SearchListingsQuery>;

export const MarketplaceListingsQuery = PaginationQuery.extend({
  category: CategorySlug.optional(),
  status: z
    .enum(['active', ...LISTING_STATUSES.filter((s) => s !== 'unlisted')] as ['active', 'available', 'reserved', 'sold'])
    .default('active')
    .describe('active (= available, the default), available, reserved (held by an unpaid order, or funded) or sold'),
});
export type MarketplaceListingsQuery = z.infer<typeof MarketplaceListingsQuery>;

export const Category = named(
  'Category',
  z.object({
    slug: CategorySlug,
    name: z.string(),
    listing_count: z.number().int().min(0).describe('Number of available listings in the category (listings held by unpaid orders included)'),
  }),
);
export const CategoryList = named('CategoryList', z.object({ data: z.array(Category) }));

export const Currency = named(
  'Currency',
  z.object({
    code: CurrencyCode,
    mint: Pubkey.describe('SPL mint (wrapped SOL So11111111111111111111111111111111111111112 for SOL)'),
    mint_explorer_url: ExplorerUrl('the mint'),
    decimals: z.number().int().min(0).max(18),
  }),
);
export const CurrencyList = named('CurrencyList', z.object({ data: z.array(Currency) }));

const searchListings = routeErrors(access.user('listings:read', { public_marketplace: true }), []);
const listMarketplaceListings = routeErrors(access.user('listings:read', { public_marketplace: true }), []);
const listCategories = routeErrors(access.user('listings:read', { public_marketplace: true }), []);
const listCurrencies = routeErrors(access.user('listings:read', { public_marketplace: true }), []);
const listSimilarListings = routeErrors(access.user('listings:read', { public_marketplace: true }), ['not-found']);

export const marketplace = c.router({
  searchListings: {
    method: 'GET',
    path: '/marketplace/search',
    query: SearchListingsQuery,
    summary: 'Search listings',
    description:
      'Searches available listings only (a listing held by an unpaid order reads reserved and is left out until the hold ends). `query` matches title and description (1..200 characters, web ' +
      'search syntax: quoted phrases, `or`, `-word`); a word of 4+ letters that no listing title contains is ' +
      'also tried corrected to the nearest title word (1 edit for up to 5 letters, 2 beyond: "desgin" finds ' +
      '"design"). min_price/max_price compare the price in each listing\'s own currency (for a listing with ' +
      'packages, its `price`: the cheapest package\'s; combine with ' +
      '`currency` for meaningful bounds; min_price > max_price is 400). sort: relevance (default; newest when ' +
      'no query: the 1,000 newest matching listings ranked by text rank, so at most 50 pages of 20), ' +
      'price_asc, price_desc (UI price across currencies; the cheapest package\'s for a listing with packages), rating (seller reputation average, then review ' +
      'count, unrated last), newest. Every page costs the same whatever its depth (keyset cursors). Cursors ' +
      'are bound to the filters and sort they were issued for (400 validation-error otherwise).',
    responses: { 200: ListingPage, ...searchListings.responses },
    metadata: searchListings.metadata,
  },
  listMarketplaceListings: {
    method: 'GET',
    path: '/marketplace/listings',
    query: MarketplaceListingsQuery,
    summary: 'Browse marketplace listings',
    description:
      'Listings by category and status, newest first. status defaults to active (= available); unlisted ' +
      'listings are never shown here.',
    responses: { 200: ListingPage, ...listMarketplaceListings.responses },
    metadata: listMarketplaceListings.metadata,
  },
  listCategories: {
    method: 'GET',
    path: '/categories',
    summary: 'List categories with counts',
    description:
      'All configured categories with the number of available listings in each, in configured order ' +
      '(exact counts kept by the database as listings change, not counted per call).',
    responses: { 200: CategoryList, ...listCategories.responses },
    metadata: listCategories.metadata,
  },
  listCurrencies: {
    method: 'GET',
    path: '/currencies',
    summary: 'List payment currencies',
    description:
      'The configured payment currencies with their SPL mint and decimals (USDC 6 and SOL 9 by default; SOL ' +
      'is paid as wrapped SOL). Prices may have at most `decimals` decimal places.',
    responses: { 200: CurrencyList, ...listCurrencies.responses },
    metadata: listCurrencies.metadata,
  },
  listSimilarListings: {
    method: 'GET',
    path: '/listings/:listing_id/similar',
    pathParams: z.object({ listing_id: Uuid }),
    query: PaginationQuery,
    summary: 'Listings similar to a listing',
    description:
      'Available listings in the same category as the listing, the listing itself left out, newest first (the ' +
      'order search uses without a query); cursor pagination (limit 1..100, default 20; a cursor is bound to the ' +
      'listing it was issued for). The listing itself may be in any status, but must be visible to the caller: ' +
      'an unlisted listing answers 404 not-found to everyone but its seller and admins, as GET /listings/{listing_id}.',
    responses: { 200: ListingPage, ...listSimilarListings.responses },
    metadata: listSimilarListings.metadata,
  },
});

export type Category = z.infer<typeof Category>;
export type Currency = z.infer<typeof Currency>;
