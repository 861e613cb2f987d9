/**
 * Listings: services offered for sale, each backed by a Token-2022 NFT (decimals 0, supply 1, metadata
 * extension pointing at GET /listings/{listing_id}/token-metadata.json) minted to the seller's wallet
 * when the listing is created. The service keypair pays fees and rent and keeps the metadata update
 * authority; the mint authority is revoked after minting.
 *
 * A listing is a one-off service: it is sold at most once.
 *
 * Packages and milestones (issue 24). A listing may offer up to 3 packages, one per key `basic`,
 * `standard`, `premium` (any subset; stored and returned in that order): each with a name, a price in the
 * listing's currency, delivery days, included revisions (0..20), a description and optionally 1..10
 * milestones. A listing without packages may instead define listing-level milestones. Rules (400
 * validation-error, one `errors` entry per broken rule, paths like `body.packages.1.milestones.0.amount`):
 * - at most 3 packages, keys unique; milestones 1..10 per package (or per listing);
 * - every price and milestone amount > 0 with at most the currency's decimals, and at least
 *   LISTING_MIN_PRICE (each milestone is an escrow of its own, whose fee pays its network fees);
 * - milestone amounts sum EXACTLY to the price (package price, or the listing price), in base units;
 *   milestone delivery_days (each counted from the funding of that milestone) sum to the package's
 *   delivery_days (or the listing's `duration`);
 * - with packages, `price` and `duration` are not sent: the listing's `price` / `price_base_units` and
 *   `duration` are the CHEAPEST package's (ties: the first of basic, standard, premium), so clients that
 *   know nothing of packages keep reading a price ("from" price), and search filters and sorts on it;
 *   listing-level `milestones` are not allowed next to packages (the packages carry their own).
 * An order names the package it buys (`POST /orders` `package`); its price, revisions and milestones are
 * copied into the order when it is created: later edits of the listing never change an order.
 *
 * Listing state table (`listingTransitions`, published in openapi.json as `x-listing-transitions` of the
 * Listing schema; the server moves listings only along it):
 *
 * | from      | event                  | to        | who    | emits            | when                                           |
 * |-----------|------------------------|-----------|--------|------------------|------------------------------------------------|
 * | (create)  | create                 | available | seller | listing.created  | POST /listings (once its token exists)         |
 * | available | unlist                 | unlisted  | seller | listing.updated  | PATCH status=unlisted                          |
 * | unlisted  | relist                 | available | seller | listing.updated  | PATCH status=available                         |
 * | available | order_funded           | reserved  | system | listing.reserved | an order for it is funded (escrow paid)        |
 * | reserved  | order_completed        | sold      | system | listing.sold     | that order completes (confirm / auto-release)  |
 * | reserved  | order_resolved_partial | sold      | system | listing.sold     | that order is resolved with buyer_bps < 10000  |
 * | reserved  | order_resolved_full    | available | system | listing.updated  | that order is resolved with buyer_bps = 10000  |
 * | reserved  | order_refunded         | available | system | listing.updated  | that order is refunded                         |
 *
 * `sold` is terminal. Edits (PATCH) are allowed only in `LISTING_EDITABLE_STATUSES` (available, unlisted) and
 * emit listing.updated. `active` (spec wording) is accepted as a filter value meaning `available`; it is
 * never emitted. The `order_*` events are the `listing` column of the order lifecycle table
 * (`orderTransitions`).
 *
 * Holds: an unpaid order holds its listing from its creation (see the orders contract). The stored state
 * stays `available` (no transition, no event: the hold ends by itself when the order expires), but the
 * listing READS `reserved` with `held_until` (when the hold lapses at the latest: the order's payment
 * window + 120 s) for as long as the hold lasts, and the `status` filters follow what the listing reads:
 * `available` = can be ordered now (search shows only these), `reserved` = held or funded. A funded
 * order's reservation has no end time (`held_until` null).
 */
import { z } from 'zod';
import {
  BaseUnits,
  c,
  CategorySlug,
  CurrencyCode,
  extendApi,
  named,
  OptionalIdempotencyHeaders,
  page,
  PaginationQuery,
  Pubkey,
  safeText,
  Timestamp,
  TxSignature,
  UiAmount,
  Uuid,
} from './common.js';
import { access } from './access.js';
import { bodyProblems, routeErrors } from './problems.js';

export const LISTING_STATUSES = ['available', 'reserved', 'sold', 'unlisted'] as const;
export const ListingStatus = z.enum(LISTING_STATUSES);
export type ListingStatus = z.infer<typeof ListingStatus>;

/** Who moves a listing: its seller (HTTP) or the service following one of the listing's orders. */
export type ListingActor = 'seller' | 'system';

/**
 * Names of the listing events: the listings repository appends the `emits` of each transition (and
 * listing.updated for an edit) to the event outbox in the change's transaction, served by GET /events, the
 * SSE stream and webhooks (event-types.ts).
 */
export const LISTING_EVENTS = ['listing.created', 'listing.updated', 'listing.reserved', 'listing.sold'] as const;
export type ListingEvent = (typeof LISTING_EVENTS)[number];

export interface ListingTransition {
  from: ListingStatus | null;
  /** what happens (unique per row): seller moves, or the `listing` effect of an order transition */
  event: string;
  to: ListingStatus;
  by: ListingActor;
  /** event published when the listing takes this transition */
  emits: ListingEvent;
}

/** The listing state table (null `from` = creation); see the module comment. */
export const listingTransitions = [
  { from: null, event: 'create', to: 'available', by: 'seller', emits: 'listing.created' },
  { from: 'available', event: 'unlist', to: 'unlisted', by: 'seller', emits: 'listing.updated' },
  { from: 'unlisted', event: 'relist', to: 'available', by: 'seller', emits: 'listing.updated' },
  { from: 'available', event: 'order_funded', to: 'reserved', by: 'system', emits: 'listing.reserved' },
  { from: 'reserved', event: 'order_completed', to: 'sold', by: 'system', emits: 'listing.sold' },
  { from: 'reserved', event: 'order_resolved_partial', to: 'sold', by: 'system', emits: 'listing.sold' },
  { from: 'reserved', event: 'order_resolved_full', to: 'available', by: 'system', emits: 'listing.updated' },
  { from: 'reserved', event: 'order_refunded', to: 'available', by: 'system', emits: 'listing.updated' },
] as const satisfies readonly ListingTransition[];

/** A listing event the order lifecycle causes (the `listing` column of `orderTransitions`). */
export type ListingOrderEvent = Extract<(typeof listingTransitions)[number], { by: 'system' }>['event'];

/** Statuses in which the seller may edit a listing (PATCH); reserved and sold listings answer 409. */
export const LISTING_EDITABLE_STATUSES = ['available', 'unlisted'] as const satisfies readonly ListingStatus[];

export const ListingTitle = safeText(z.string().trim().min(3).max(120));
export const ListingDescription = safeText(z.string().trim().min(1).max(5000));
/** Estimated delivery time in whole days. */
export const DurationDays = z.number().int().min(1).max(365);

/** Package keys, in the order packages are stored and returned. */
export const PACKAGE_KEYS = ['basic', 'standard', 'premium'] as const;
export const PackageKey = z.enum(PACKAGE_KEYS);
export type PackageKey = z.infer<typeof PackageKey>;
/** At most this many packages per listing (one per key). */
export const MAX_PACKAGES = PACKAGE_KEYS.length;
/** Milestones per package (or per listing without packages). */
export const MAX_MILESTONES = 10;
/** Revisions a package may include. */
export const MAX_PACKAGE_REVISIONS = 20;

export const PackageName = safeText(z.string().trim().min(1).max(60));
export const PackageDescription = safeText(z.string().trim().min(1).max(1000));
export const MilestoneTitle = safeText(z.string().trim().min(1).max(120));

export const ListingMilestoneInput = named(
  'ListingMilestoneInput',
  z
    .object({
      title: MilestoneTitle.describe('1..120 characters (trimmed)'),
      amount: UiAmount.describe('> 0, UI units of the listing\'s currency; the amounts of all milestones sum to the price'),
      delivery_days: DurationDays.describe('Days to deliver this milestone, counted from its funding (1..365)'),
    })
    .strict(),
  'A milestone of a package or listing: a part of the price paid into its own escrow when the buyer funds it',
);
export type ListingMilestoneInput = z.infer<typeof ListingMilestoneInput>;

export const ListingMilestones = z.array(ListingMilestoneInput).min(1).max(MAX_MILESTONES);

export const ListingPackageInput = named(
  'ListingPackageInput',
  z
    .object({
      key: PackageKey,
      name: PackageName.describe('1..60 characters (trimmed), e.g. "Logo + brand sheet"'),
      price: UiAmount.describe('> 0, UI units of the listing\'s currency, at most its decimals'),
      delivery_days: DurationDays.describe('Whole days 1..365; with milestones, the sum of their delivery_days'),
      revisions: z.number().int().min(0).max(MAX_PACKAGE_REVISIONS).describe('Revisions included (0..20)'),
      description: PackageDescription.describe('1..1000 characters (trimmed): what the package includes'),
      milestones: ListingMilestones.optional().describe('1..10 milestones whose amounts sum to the price'),
    })
    .strict(),
  'A package of a listing as the seller sends it',
);
export type ListingPackageInput = z.infer<typeof ListingPackageInput>;

export const ListingPackagesInput = z.array(ListingPackageInput).min(1).max(MAX_PACKAGES);

export const ListingMilestone = named(
  'ListingMilestone',
  z.object({
    title: z.string(),
    amount: z.number().describe('UI units of the listing\'s currency'),
    amount_base_units: BaseUnits,
    delivery_days: z.number().int().describe('Days to deliver, counted from the funding of this milestone'),
  }),
);
export type ListingMilestone = z.infer<typeof ListingMilestone>;

export const ListingPackage = named(
  'ListingPackage',
  z.object({
    key: PackageKey,
    name: z.string(),
    price: z.number().describe('UI units of the listing\'s currency'),
    price_base_units: BaseUnits,
    delivery_days: z.number().int(),
    revisions: z.number().int().min(0).max(MAX_PACKAGE_REVISIONS).describe('Revisions included'),
    description: z.string(),
    milestones: z.array(ListingMilestone).nullable().describe('null: the package is paid as one milestone'),
  }),
);
export type ListingPackage = z.infer<typeof ListingPackage>;

export const MintTransaction = named(
  'MintTransaction',
  z.object({
    signature: TxSignature,
    slot: z.number().int().min(0),
    explorer_url: z.string().url().optional().describe('Block explorer link when the cluster has one'),
  }),
  'The transaction that minted the listing token',
);

export const ListingMetadata = named(
  'ListingMetadata',
  z.object({
    token_standard: z.literal('token-2022'),
    metadata_uri: z.string().url().describe('URL of the off-chain JSON (GET /listings/{listing_id}/token-metadata.json)'),
    name: z.string().max(32).describe('On-chain token name (title truncated to 32 characters)'),
    symbol: z.string().max(10).describe('On-chain token symbol ("BZR")'),
    category_name: z.string().optional(),
    seller_rating: z.number().min(1).max(5).nullable().optional().describe('Seller reputation average, null without reviews'),
    seller_review_count: z.number().int().min(0).optional(),
  }),
  'Token and display metadata of a listing',
);

export const Listing = named(
  'Listing',
  z.object({
    listing_id: Uuid,
    seller_wallet: Pubkey,
    title: z.string(),
    description: z.string(),
    price: z.number().describe('Price in UI units of `currency`; with packages, the cheapest package\'s price'),
    price_base_units: BaseUnits,
    currency: CurrencyCode,
    currency_mint: Pubkey.describe('SPL mint of the currency (wrapped SOL for SOL)'),
    category: CategorySlug,
    duration: z.number().int().describe('Estimated delivery time in days (1..365); with packages, the cheapest package\'s'),
    packages: z
      .array(ListingPackage)
      .describe('0..3 packages in key order (basic, standard, premium); empty: the listing is bought at `price`'),
    milestones: z
      .array(ListingMilestone)
      .nullable()
      .describe('Listing-level milestones (listings without packages only); null: one milestone of the whole price'),
    status: ListingStatus.describe(
      'available, reserved (an unpaid order holds it until `held_until`, or a funded order reserves it), sold, unlisted',
    ),
    held_until: Timestamp.nullable().describe(
      'While an unpaid order holds the listing (status `reserved`): when that hold lapses at the latest (the ' +
        'order\'s payment window + 120 s; sooner when the order is paid or expires). null otherwise',
    ),
    token_mint_address: Pubkey.describe('Mint of the listing\'s Token-2022 NFT'),
    mint_transaction: MintTransaction,
    metadata: ListingMetadata,
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
);
export type Listing = z.infer<typeof Listing>;
extendApi(Listing, { 'x-listing-transitions': listingTransitions });

export const ListingPage = named('ListingPage', page(Listing));

export const CreateListingBody = named(
  'CreateListingBody',
  z
    .object({
      title: ListingTitle.describe('3..120 characters (trimmed)'),
      description: ListingDescription.describe('1..5000 characters (trimmed)'),
      price: UiAmount.optional().describe(
        '> 0, in UI units, at most the currency\'s decimals (6 for USDC, 9 for SOL). Required without `packages`; ' +
          'not allowed with them (the listing\'s price is then the cheapest package\'s)',
      ),
      currency: CurrencyCode,
      category: CategorySlug,
      duration: DurationDays.optional().describe(
        'Estimated delivery time, whole days 1..365. Required without `packages`; not allowed with them',
      ),
      packages: ListingPackagesInput.optional().describe('1..3 packages with distinct keys'),
      milestones: ListingMilestones.optional().describe(
        'Listings without packages: 1..10 milestones whose amounts sum to `price` and delivery_days to `duration`',
      ),
    })
    .strict(),
);
export type CreateListingBody = z.infer<typeof CreateListingBody>;

export const UpdateListingBody = extendApi(
  z
    .object({
      title: ListingTitle.optional(),
      description: ListingDescription.optional(),
      price: UiAmount.optional(),
      category: CategorySlug.optional(),
      duration: DurationDays.optional(),
      packages: ListingPackagesInput.nullable()
        .optional()
        .describe('Replaces every package (1..3); null removes them (price and duration stay those of the cheapest)'),
      milestones: ListingMilestones.nullable()
        .optional()
        .describe('Replaces the listing-level milestones (listings without packages); null removes them'),
      status: z.enum(['available', 'unlisted']).optional().describe('Relist (available) or unlist'),
    })
    .strict()
    .refine((b) => Object.keys(b).length > 0, { message: 'at least one field is required' }),
  { title: 'UpdateListingBody', minProperties: 1 },
);
export type UpdateListingBody = z.infer<typeof UpdateListingBody>;

export const ListListingsQuery = PaginationQuery.extend({
  seller_wallet: Pubkey.optional(),
  status: z
    .enum(['active', ...LISTING_STATUSES])
    .optional()
    .describe(
      'active = available (can be ordered now: not held by an unpaid order); reserved = held or funded. unlisted is ' +
        'only returned to the seller themself',
    ),
  category: CategorySlug.optional(),
});
export type ListListingsQuery = z.infer<typeof ListListingsQuery>;

export const TokenMetadataAttribute = z.object({
  trait_type: z.string(),
  value: z.union([z.string(), z.number()]),
});

export const TokenMetadataJson = named(
  'TokenMetadataJson',
  z.object({
    name: z.string(),
    symbol: z.string(),
    description: z.string(),
    image: z.string().url().optional(),
    external_url: z.string().url(),
    attributes: z.array(TokenMetadataAttribute),
  }),
  'Metaplex-style off-chain token metadata JSON',
);

const ListingIdParams = z.object({ listing_id: Uuid });

const createListing = routeErrors(
  access.user('listings:write'),
  [...bodyProblems, 'idempotency-key-in-use', 'idempotency-key-reused', 'chain-unavailable', 'chain-transaction-failed'],
  { idempotent: 'optional' },
);
const getListing = routeErrors(access.user('listings:read', { public_marketplace: true }), ['not-found']);
const listListings = routeErrors(access.user('listings:read', { public_marketplace: true }), []);
const updateListing = routeErrors(
  access.user('listings:write'),
  [...bodyProblems, 'forbidden', 'not-found', 'invalid-state-transition', 'chain-unavailable', 'chain-transaction-failed'],
  { actors: ['seller'] },
);
const getListingTokenMetadata = routeErrors(access.public(), ['not-found']);

export const listings = c.router({
  createListing: {
    method: 'POST',
    path: '/listings',
    summary: 'Create a listing and mint its token',
    description:
      'Any authenticated user; the caller becomes the seller. title 3..120 and description 1..5000 characters ' +
      '(trimmed); price > 0 in UI units with at most the currency\'s decimals; currency and category must be ' +
      'configured (GET /currencies, GET /categories), otherwise 400 validation-error; duration = estimated ' +
      'delivery time in whole days 1..365. Instead of price and duration, up to 3 `packages` (basic, standard, ' +
      'premium: name, price, delivery_days, revisions 0..20, description, optional milestones); the listing\'s ' +
      'price and duration are then the cheapest package\'s. Milestones (1..10, of a package or of a listing ' +
      'without packages) sum exactly to the price and their delivery_days to the delivery time; every amount ' +
      'is > 0 with at most the currency\'s decimals (400 validation-error naming each broken rule). The service mints a Token-2022 NFT to the seller\'s wallet and ' +
      'returns 201 with status `available`, `token_mint_address` and `mint_transaction` {signature, slot}. ' +
      'The mint is recorded before it is sent and the listing is stored once the token exists, so a failure in ' +
      'between is recovered, never lost: 503 chain-unavailable / 502 chain-transaction-failed without ' +
      '`listing_id` = nothing was minted or stored; 503 WITH `listing_id` and `token_mint_address` (and ' +
      'Retry-After) = the mint was sent (chain-unavailable: its outcome is not known yet) or done (the database ' +
      'could not store the listing yet). Then repeat the same request (same body): while that mint is ' +
      'unfinished an identical create resumes it and returns 201 with that listing once its token exists; ' +
      'it never mints a second token. Without a repeat the service finishes it by itself (start-up and every ' +
      '30 s): the listing appears if its token landed, and is dropped (404) if the mint can never land. A ' +
      'listing is never visible (GET, lists, search) before its token exists. An optional Idempotency-Key ' +
      'makes any retry safe, also after a 201 whose response was lost: the same key and body return the ' +
      'first response (one listing, one token).',
    headers: OptionalIdempotencyHeaders,
    body: CreateListingBody,
    responses: { 201: Listing, ...createListing.responses },
    metadata: createListing.metadata,
  },
  getListing: {
    method: 'GET',
    path: '/listings/:listing_id',
    pathParams: ListingIdParams,
    summary: 'Get a listing',
    description:
      'The listing with status and metadata. Unlisted listings are visible only to their seller and admins; ' +
      'others get 404 not-found.',
    responses: { 200: Listing, ...getListing.responses },
    metadata: getListing.metadata,
  },
  listListings: {
    method: 'GET',
    path: '/listings',
    query: ListListingsQuery,
    summary: 'List listings',
    description:
      'Filter by seller_wallet, status (active = available) and category; newest first; cursor pagination ' +
      '(limit 1..100, default 20). Without `status`, all statuses except unlisted are returned; unlisted ' +
      'listings are returned only when the caller is their seller.',
    responses: { 200: ListingPage, ...listListings.responses },
    metadata: listListings.metadata,
  },
  updateListing: {
    method: 'PATCH',
    path: '/listings/:listing_id',
    pathParams: ListingIdParams,
    summary: 'Update a listing',
    description:
      'Seller only (403 forbidden for others). Partial update of title, description, price, category, ' +
      'duration, packages (the whole set, or null to remove them), milestones, and status available <-> unlisted. ' +
      'The package and milestone rules of POST /listings apply to the result (price and duration cannot be set ' +
      'while the listing has packages: they follow the cheapest package; a new price needs milestones that sum ' +
      'to it). Allowed only while the listing is available or unlisted; ' +
      'reserved or sold listings answer 409 invalid-state-transition. The currency cannot change. A title ' +
      'change also updates the token\'s on-chain name, first: if that fails (502/503), or the listing cannot be ' +
      'stored afterwards (503), nothing is changed and the service puts the on-chain name back to the stored ' +
      'title by itself (start-up and every 30 s); repeating the request is safe. Orders already created keep ' +
      'their amount, package, revisions and milestones (copied at creation).',
    body: UpdateListingBody,
    responses: { 200: Listing, ...updateListing.responses },
    metadata: updateListing.metadata,
  },
  getListingTokenMetadata: {
    method: 'GET',
    path: '/listings/:listing_id/token-metadata.json',
    pathParams: ListingIdParams,
    summary: 'Off-chain token metadata JSON of a listing',
    description:
      'Public (wallets and explorers fetch it without credentials): the JSON the listing token\'s metadata ' +
      '`uri` points at, with only what a wallet shows for the token: name (the title, cut to the on-chain name), ' +
      'symbol, a fixed description naming the marketplace and `external_url` (the listing\'s URL), and the ' +
      'category as the one attribute. The listing\'s description, price and seller are served by the listing ' +
      'routes only. An unlisted listing answers 404 not-found.',
    responses: { 200: TokenMetadataJson, ...getListingTokenMetadata.responses },
    metadata: getListingTokenMetadata.metadata,
  },
});
