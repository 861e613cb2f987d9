/**
 * Listings: services offered for sale, each backed by a Token-2022 NFT (decimals 0, supply 1, metadata
 * extension pointing at GET /listings/{listing_id}/token-metadata.json) minted to the seller's wallet
 * when the listing is created. The service keypair pays fees and rent and keeps the metadata update
 * authority; the mint authority is revoked after minting.
 *
 * A listing is sold again and again within its `capacity` (orders open at once) and `stock` (orders in
 * all, or unlimited); the defaults (1 and 1) make it a one-off service sold at most once. See "Repeat
 * sales" below.
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
 * The `to` of a system row is what the listing's units give at the defaults (capacity 1, stock 1); with
 * other units the rule `listingStatusOfUnits` decides (derived, never special-cased: a contract test checks
 * every system row against it). `sold` is terminal. Edits (PATCH) are allowed only in `LISTING_EDITABLE_STATUSES` (available, unlisted) and
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
 *
 * Repeat sales (issue 24 item 7). A listing states `capacity` (orders open at once, 1..100, default 1)
 * and `stock` (orders in all, >= 1, or null = unlimited; default 1). Counted per ORDER (never per
 * milestone row): open orders (awaiting_payment, in_progress, delivered, disputed), of which unpaid
 * (awaiting_payment) ones, and sold orders (completed, or resolved with buyer_bps < 10000: the orders
 * that sell today; a refund or a resolve with buyer_bps 10000 returns its unit). A listing READS:
 *   - `sold` once sold orders reach the stock;
 *   - `reserved` while its open orders fill the capacity, or open + sold orders reach the stock (an open
 *     order, paid or not, counts against the remaining stock: nobody pays for a unit that cannot be sold);
 *   - `available` otherwise: it can be ordered now.
 * The stored status follows the PAID orders only (`listingStatusOfUnits` over paid open orders): an unpaid
 * hold never moves it (no event, nothing to undo when it lapses); it reads `reserved` with `held_until` =
 * the earliest lapse of its unpaid holds (payment_expires_at + 120 s) while those holds are what fills it.
 * Each POST /orders takes a unit of capacity under the listing's row lock (one hold per unit: the buyer
 * after the last unit gets 409 listing-unavailable with `held_until`). Lowering the capacity or the stock
 * never cancels an open order (the listing just reads reserved until enough of them end); the stock may not
 * go below the orders sold or open (400 validation-error). The NFT stays the seller's: no sale transfers it.
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
  ExplorerUrl,
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

// --- Repeat sales: capacity and stock (issue 24 item 7; helper "stock") ---

/** Upper bound of `capacity` (orders open at once): bounds what one listing can hold of the holds per network. */
export const LISTING_CAPACITY_MAX = 100;
/** Upper bound of a limited `stock` (orders in all); null = unlimited. */
export const LISTING_STOCK_MAX = 1_000_000;
/** Orders open at once: integer 1..LISTING_CAPACITY_MAX (default 1). */
export const ListingCapacity = z.number().int().min(1).max(LISTING_CAPACITY_MAX);
/** Orders in all: integer 1..LISTING_STOCK_MAX, or null = unlimited (default 1). */
export const ListingStock = z.number().int().min(1).max(LISTING_STOCK_MAX).nullable();
/** The units of a listing at creation when the body names none: today's one-off sale. */
export const DEFAULT_LISTING_UNITS = { capacity: 1, stock: 1 } as const;

/**
 * What a status of a listing is computed from (module comment "Repeat sales"): its capacity and stock, its
 * open orders (`open`, `paid` of them funded) and its sold orders. Counts are of ORDERS.
 */
export interface ListingUnits {
  capacity: number;
  /** null = unlimited */
  stock: number | null;
  /** open orders (awaiting_payment, in_progress, delivered, disputed) */
  open: number;
  /** open orders that are paid (open minus awaiting_payment) */
  paid: number;
  /** completed orders and orders resolved with buyer_bps < 10000 */
  sold: number;
}

/**
 * The status the listing's orders give it (`open` counted as given): sold when `sold` reaches the stock;
 * reserved when `open` fills the capacity or `open + sold` reaches the stock; else available. The stored
 * status is this over PAID open orders (`{ ...u, open: u.paid }`); what a listing reads is this over all
 * open orders (`listingReadStatus`).
 */
export function listingStatusOfUnits(u: Pick<ListingUnits, 'capacity' | 'stock' | 'sold'> & { open: number }): 'available' | 'reserved' | 'sold' {
  if (u.stock !== null && u.sold >= u.stock) return 'sold';
  if (u.open >= u.capacity || (u.stock !== null && u.open + u.sold >= u.stock)) return 'reserved';
  return 'available';
}

/**
 * What a listing reads from its stored status and units: unlisted stays unlisted; a stored sold or
 * reserved (an operator may set them) reads so; otherwise `listingStatusOfUnits` over every open order,
 * unpaid holds included.
 */
export function listingReadStatus(stored: ListingStatus, u: ListingUnits): ListingStatus {
  if (stored === 'unlisted' || stored === 'sold') return stored;
  const byUnits = listingStatusOfUnits(u);
  if (byUnits === 'sold') return 'sold';
  return stored === 'reserved' ? 'reserved' : byUnits;
}

/**
 * The change an order event makes to the listing's units: `paid` open orders and `sold` orders (a funded
 * order turns an unpaid hold into a paid one; a sale ends a paid order and adds a sold one; a refund or a
 * full refund by resolve ends a paid order and returns its unit).
 */
export const LISTING_ORDER_EVENT_UNITS = {
  order_funded: { paid: 1, sold: 0 },
  order_completed: { paid: -1, sold: 1 },
  order_resolved_partial: { paid: -1, sold: 1 },
  order_resolved_full: { paid: -1, sold: 0 },
  order_refunded: { paid: -1, sold: 0 },
} as const satisfies Record<ListingOrderEvent, { paid: number; sold: number }>;

/**
 * How an order event moves a listing's stored status, from its units AFTER the event (`after`; the
 * event's own order is counted at least once, so the rule holds even when the counts lag): `to` =
 * `listingStatusOfUnits` over the paid orders after it, `from` = the same before it (the event undone).
 * At the defaults every system row of `listingTransitions` is exactly this move.
 */
export function listingMoveOnOrderEvent(event: ListingOrderEvent, after: Pick<ListingUnits, 'capacity' | 'stock' | 'paid' | 'sold'>): {
  from: 'available' | 'reserved' | 'sold';
  to: 'available' | 'reserved' | 'sold';
} {
  const d = LISTING_ORDER_EVENT_UNITS[event];
  const paid = Math.max(after.paid, d.paid > 0 ? d.paid : 0);
  const sold = Math.max(after.sold, d.sold);
  const units = { capacity: after.capacity, stock: after.stock };
  return {
    from: listingStatusOfUnits({ ...units, open: Math.max(0, paid - d.paid), sold: Math.max(0, sold - d.sold) }),
    to: listingStatusOfUnits({ ...units, open: paid, sold }),
  };
}
// --- end repeat sales ---

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
/** Largest number of milestones of an order, a package or a listing without packages. */
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
    explorer_url: ExplorerUrl('the mint transaction'),
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

/**
 * A moderator's takedown of a listing (issue 25, moderation.contract.ts): orthogonal to the status, which keeps
 * following the listing's orders (so its open orders settle and its counts stay right). A taken-down listing is
 * shown only to its seller and operators (404 for everyone else, absent from lists and search) and cannot be
 * ordered (409 listing-taken-down).
 */
export const ListingTakedown = named(
  'ListingTakedown',
  z.object({
    taken_down_at: Timestamp,
    reason: z.string().describe('The moderator\'s reason, as the seller is told it (event listing.taken_down)'),
    appealed_at: Timestamp.nullable().describe('When the seller appealed (once per takedown); null: not yet'),
    appeal: z.string().nullable().describe('The seller\'s appeal text; null: not appealed'),
  }),
  'A moderator took the listing down: why, and the seller\'s appeal',
);
export type ListingTakedown = z.infer<typeof ListingTakedown>;

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
    currency_mint_explorer_url: ExplorerUrl('the currency\'s mint'),
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
      'available (can be ordered now), reserved (its open orders fill `capacity`, or with the sold ones reach `stock`: ' +
        'unpaid holds until `held_until`, or funded orders), sold (sold orders reached `stock`), unlisted',
    ),
    held_until: Timestamp.nullable().describe(
      'While unpaid orders hold the listing (status `reserved`, and its paid orders alone would leave a unit): when the ' +
        'first of those holds lapses at the latest (the order\'s payment window + 120 s; sooner when it is paid or ' +
        'expires). null otherwise',
    ),
    // --- repeat sales (capacity and stock) ---
    capacity: ListingCapacity.describe('Orders open at once (1..100; default 1)'),
    stock: ListingStock.describe('Orders in all (>= 1), or null = unlimited (default 1: sold once)'),
    open_orders: z.number().int().min(0).describe(
      'Orders open now (awaiting_payment, in_progress, delivered, disputed), each order counted once; the listing ' +
        'reads reserved while they fill `capacity`',
    ),
    sold_count: z.number().int().min(0).describe('Orders sold: completed, or resolved with buyer_bps < 10000 (a refund returns the unit)'),
    remaining: z.number().int().min(0).nullable().describe(
      'Units that can still be ordered: stock - sold_count - open_orders (an open order, paid or not, counts against ' +
        'the stock), never below 0; null when the stock is unlimited',
    ),
    // --- end repeat sales ---
    taken_down: ListingTakedown.nullable().describe(
      'issue 25: set while a moderator has taken the listing down (only its seller and operators then see it); null otherwise',
    ),
    token_mint_address: Pubkey.describe('Mint of the listing\'s Token-2022 NFT'),
    token_mint_explorer_url: ExplorerUrl('the listing\'s NFT mint'),
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
      // --- repeat sales (capacity and stock) ---
      capacity: ListingCapacity.optional().describe('Orders open at once, 1..100 (default 1)'),
      stock: ListingStock.optional().describe('Orders in all, 1..1000000, or null = unlimited (default 1: sold once)'),
      // --- end repeat sales ---
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
      // --- repeat sales (capacity and stock) ---
      capacity: ListingCapacity.optional().describe(
        'Orders open at once, 1..100; lowering it below the open orders cancels none (the listing reads reserved until enough end)',
      ),
      stock: ListingStock.optional().describe(
        'Orders in all, or null = unlimited; not below sold_count + open_orders (400 validation-error, code below_committed)',
      ),
      // --- end repeat sales ---
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
  [...bodyProblems, 'idempotency-key-in-use', 'idempotency-key-reused', 'account-suspended', 'chain-unavailable', 'chain-transaction-failed'],
  { idempotent: 'optional' },
);
const getListing = routeErrors(access.user('listings:read', { public_marketplace: true }), ['not-found']);
const listListings = routeErrors(access.user('listings:read', { public_marketplace: true }), []);
const updateListing = routeErrors(
  access.user('listings:write'),
  [...bodyProblems, 'forbidden', 'not-found', 'invalid-state-transition', 'account-suspended', 'chain-unavailable', 'chain-transaction-failed'],
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
      'delivery time in whole days 1..365; capacity = orders open at once 1..100 (default 1), stock = orders in ' +
      'all >= 1 or null = unlimited (default 1: the listing is sold once). Instead of price and duration, up to 3 `packages` (basic, standard, ' +
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
      'duration, packages (the whole set, or null to remove them), milestones, capacity, stock, and status available <-> unlisted. ' +
      'The package and milestone rules of POST /listings apply to the result (price and duration cannot be set ' +
      'while the listing has packages: they follow the cheapest package; a new price needs milestones that sum ' +
      'to it). Allowed only while the listing is available or ' +
      'unlisted (its stored status: paid orders do not fill it); reserved or sold listings answer 409 ' +
      'invalid-state-transition, except that a reserved one may change its capacity and stock alone (e.g. take more ' +
      'orders at once). Capacity and stock changes cancel no open order; the stock may not go below sold_count + ' +
      'open_orders (400 validation-error, code below_committed); the status then follows them (listing.reserved / ' +
      'listing.sold / listing.updated). The currency cannot change. A title ' +
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
