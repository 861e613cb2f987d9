/**
 * Listings module types and the ports it needs (storage, chain, configuration).
 * Amounts are u64 base units (bigint); the UI number is derived for display only.
 */
import type { ListingStatus, PackageKey } from '@bazaar/contract';
import type { Chain, CurrencyInfo, ListingMintAttempt, TxAttempt, TxResult } from '../../chain/types.js';
import type { Log } from '../../lib/log.js';
import type { AccessPrincipal } from '../auth/index.js';
import type { NewEvent } from '../events/index.js';

export type { ListingStatus, PackageKey };

/**
 * A milestone of a package or of a listing without packages (issue 24): a part of the price the buyer
 * funds into its own escrow; `deliveryDays` counted from the funding of that milestone.
 */
export interface ListingMilestone {
  title: string;
  /** base units of the listing's currency, > 0 */
  amountBaseUnits: bigint;
  deliveryDays: number;
}

/**
 * A package of a listing (issue 24; contract `ListingPackage`). `milestones` (1..10, amounts summing to
 * `priceBaseUnits`, delivery days to `deliveryDays`) or null: the package is paid as one milestone.
 */
export interface ListingPackage {
  key: PackageKey;
  name: string;
  /** base units of the listing's currency, > 0 */
  priceBaseUnits: bigint;
  deliveryDays: number;
  /** revisions included, 0..20 */
  revisions: number;
  description: string;
  milestones: ListingMilestone[] | null;
}

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
  /**
   * 0..3 packages in key order (basic, standard, premium). When there are any, `priceBaseUnits` and
   * `durationDays` are the cheapest package's (stored in the same row write: search filters and sorts on
   * the price column), see `cheapestPackage`.
   */
  packages: ListingPackage[];
  /** listing-level milestones (listings without packages only); null: one milestone of the whole price */
  milestones: ListingMilestone[] | null;
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
  /**
   * While an unpaid order holds the (stored `available`) listing: when that hold lapses at the latest
   * (payment_expires_at + grace); the listing then reads `reserved`. null otherwise.
   */
  heldUntil: Date | null;
  // --- repeat sales (capacity and stock) ---
  /** orders open at once (1..LISTING_CAPACITY_MAX) */
  capacity: number;
  /** orders in all; null = unlimited */
  stock: number | null;
  /** open orders, unpaid ones among them, and sold ones (the orders trigger keeps them; SQL order_listing_weight) */
  openOrders: number;
  unpaidOrders: number;
  soldCount: number;
  // --- end repeat sales ---
  /**
   * issue 25: a moderator's takedown (a mark beside the status; the status keeps following the orders), with
   * the seller's one appeal; null or absent: not taken down. Only its seller and operators see such a listing.
   */
  takenDown?: ListingTakedownRecord | null;
}

/** A takedown of a listing (issue 25, modules/moderation decides, this module stores it on the listing row). */
export interface ListingTakedownRecord {
  at: Date;
  reason: string;
  appealedAt: Date | null;
  appeal: string | null;
}

/** The counts the orders trigger keeps (never written by this module). */
type OrderCounts = 'openOrders' | 'unpaidOrders' | 'soldCount';

export type NewListing = Omit<ListingRecord, 'createdAt' | 'updatedAt' | 'sellerRating' | 'sellerReviewCount' | 'heldUntil' | OrderCounts>;

/** A listing as recorded before its token exists: everything but the token columns. */
export type ListingDraft = Omit<NewListing, 'tokenMint' | 'mintSignature' | 'mintSlot'>;

/**
 * Chain intents of the listings module (table chain_intents, order_id null; see README.md):
 *  - `mint_listing`: the listing's token mint; the listing row is written once the token exists;
 *  - `update_listing_token`: one on-chain metadata update (the token name follows the title).
 * An intent is written after signing and before the first send; `sent` = open (its outcome may be
 * unknown), `confirmed` = settled, `failed` = the attempt can never land and nothing was stored.
 */
export type ListingIntentAction = 'mint_listing' | 'update_listing_token';
export type ListingIntentStatus = 'sent' | 'confirmed' | 'failed';

export interface ListingIntent {
  id: string;
  action: ListingIntentAction;
  status: ListingIntentStatus;
  listingId: string;
  /** the latest attempt's signature (base58) and blockhash expiry (block height) */
  signature: string | null;
  lastValidBlockHeight: number | null;
  /** mint_listing: the mint address (deterministic per listing id) */
  mint: string | null;
  /** mint_listing: the listing to store once the token exists */
  draft: ListingDraft | null;
  /** mint_listing: sha256 of (seller, create request); an identical create resumes the open intent */
  fingerprint: string | null;
  /** update_listing_token: the token name the attempt sets */
  name: string | null;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A rename that reached the database (`applyRename`): the listing, null (not editable), or the intent was closed meanwhile. */
export type RenameApplied = ListingRecord | null | 'intent-closed';

export type ListingPatch = Partial<
  Pick<ListingRecord, 'title' | 'description' | 'priceBaseUnits' | 'category' | 'durationDays' | 'status' | 'packages' | 'milestones' | 'capacity' | 'stock'>
>;

/** Another module's transaction a listing move joins (orders' `TxScope`): the Prisma transaction client, and the events to append at its end. */
export interface ListingTxScope {
  tx: unknown;
  events: NewEvent[];
}

/** A listing's stored status and units as locked by `moveByUnits` (its row lock held). */
export interface LockedUnits {
  status: ListingStatus;
  capacity: number;
  stock: number | null;
  open: number;
  unpaid: number;
  sold: number;
}

/** Thrown by `updateIf` when a stock change would fall below the orders sold or open (checked under the row lock). */
export class StockBelowCommitted extends Error {
  constructor(readonly committed: number) {
    super(`stock below the ${committed} orders sold or open`);
  }
}

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
  /** issue 25: also include the taken-down listings of this user (her own, among `statuses`) */
  takenDownVisibleTo?: string | null;
  limit: number;
  after?: NewestKey;
}

export interface ListingsRepo {
  get(id: string): Promise<ListingRecord | null>;
  /** newest first, keyset (created_at, id) */
  list(filter: ListListingsFilter): Promise<ListingRecord[]>;
  /**
   * conditional update: applies only while the status is one of `expected`; null otherwise. When the patch
   * changes capacity or stock (or relists), the stored status is re-derived from the units in the same
   * transaction; a stock below the orders sold + open throws StockBelowCommitted.
   */
  updateIf(id: string, expected: readonly ListingStatus[], patch: ListingPatch): Promise<ListingRecord | null>;
  /**
   * One transaction: lock the listing row, read its stored status and units, ask `decide`; when it names a
   * status other than the stored one, store it and append its event. Returns decide's verdict; null when the
   * listing does not exist. `scope`: inside the caller's transaction instead (issue 28: an order's funding
   * and its listing's move are one transaction), the event pushed to `scope.events` for the caller to append.
   */
  moveByUnits<T extends { to: ListingStatus | null }>(id: string, decide: (current: LockedUnits) => T, scope?: ListingTxScope): Promise<T | null>;

  // --- chain intents (record before send; README.md "Crash safety") ---
  /** Insert the `sent` mint intent of a first attempt (after signing, before the send). */
  recordMint(draft: ListingDraft, fingerprint: string, attempt: ListingMintAttempt): Promise<ListingIntent>;
  /** The open mint intent with this request fingerprint (oldest), if any. */
  findOpenMint(fingerprint: string): Promise<ListingIntent | null>;
  /** The newest mint intent with this request fingerprint that did not fail (open or confirmed), if any. */
  findMintByFingerprint(fingerprint: string): Promise<ListingIntent | null>;
  /** Compare-and-set: record a new attempt on an open intent whose signature is still `expected`; false otherwise. */
  replaceAttempt(intentId: string, expected: string | null, attempt: TxAttempt & { mint?: string }): Promise<boolean>;
  /** One transaction: insert the listing (kept when it already exists) and mark the intent confirmed. */
  finishMint(intentId: string, listing: NewListing): Promise<ListingRecord>;
  /** Mark an open intent failed while its signature is still `expected`; false otherwise. */
  failIntent(intentId: string, expected: string | null, error: string): Promise<boolean>;
  /** Insert the `sent` intent of a token-name update (after signing, before the send). */
  recordRename(listingId: string, name: string, attempt: TxAttempt): Promise<ListingIntent>;
  /**
   * One transaction: lock the rename intent (it must still be open: 'intent-closed' otherwise), then
   * the conditional update (null when the status is not one of `expected`).
   */
  applyRename(intentId: string, listingId: string, expected: readonly ListingStatus[], patch: ListingPatch): Promise<RenameApplied>;
  /** One transaction: confirm the open intents among `ids` only while the listing's title is still `title`. */
  confirmRenames(ids: readonly string[], listingId: string, title: string): Promise<boolean>;
  getIntent(id: string): Promise<ListingIntent | null>;
  /** open (`sent`) intents of this module, oldest first */
  listOpenIntents(limit: number): Promise<ListingIntent[]>;
}

/** Test seams: crash points between a chain step and its database write (a throw = the process died there). */
export interface ListingsHooks {
  /** after the mint transaction is confirmed, before the listing row is written */
  afterMint?: (info: { listingId: string; mint: string; tx: TxResult }) => Promise<void> | void;
  /** after a rename's token update is confirmed, before the new title is written */
  afterTokenUpdate?: (info: { listingId: string; name: string; tx: TxResult }) => Promise<void> | void;
}

export interface CategoryConfig {
  slug: string;
  name: string;
}

export interface ListingsConfig {
  currencies: readonly CurrencyInfo[];
  categories: readonly CategoryConfig[];
  /** e.g. https://api.bazaar.dev (no trailing slash); token metadata URIs are built from it */
  publicBaseUrl: string;
  /**
   * lowest price per currency code, UI amount as decimal text (LISTING_MIN_PRICE): the platform fee of an
   * order at that price covers the network fees the service pays for the order (docs/threat-model.md#who-pays-for-what-on-chain)
   */
  minPrice?: Readonly<Record<string, string>>;
}

/** Who is calling (from the auth middleware's principal): a user, with its wallet. */
export interface Viewer extends AccessPrincipal {
  userId: string;
  wallet: string;
}

/** The chain calls the listings module makes (server/src/chain/types.ts). */
export type ListingsChain = Pick<Chain, 'mintListingToken' | 'updateListingToken' | 'readListingMint' | 'transactionOutcome'>;

export interface ListingsDeps {
  repo: ListingsRepo;
  chain: ListingsChain;
  config: ListingsConfig;
  log?: Log;
  /** listing id generator (tests may fix it) */
  newId?: () => string;
  hooks?: ListingsHooks;
  /**
   * The service's SOL budget (modules/budget): a new mint and a token rename are charged before they are
   * signed (per-account and per-IP daily caps: 429; daily budget spent: 503). Absent: nothing is counted.
   */
  budget?: ListingsBudget;
  /** issue 25 (modules/moderation): a suspended or banned account neither creates nor edits a listing (403 account-suspended) */
  standing?: { assertMayTrade(userId: string): Promise<void> };
}

/** What the listings module needs of the budget module (`ChainBudget.charge`). */
export interface ListingsBudget {
  charge(c: { action: 'listing_mint' | 'listing_rename'; lamports: number; userId?: string | null; ip?: string | null }): Promise<void>;
}
