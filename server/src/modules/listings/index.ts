/**
 * Listings module wiring:
 *
 *   const listings = createListingsModule({ db, chain, config: { currencies, categories, publicBaseUrl }, log });
 *   createExpressEndpoints(contract.listings, listingsHandlers(listings.http), router);
 *   createOrdersModule({ ..., listings: listings.port });   // get / applyOrderEvent (listingTransitions)
 *   await listings.start();   // recovery pass at start-up, then every recoveryIntervalMs
 *   await listings.stop();
 */
import type { PrismaClient } from '../../generated/prisma/client.js';
import { DomainError } from '../../errors.js';
import { createListingsRepo, sellerListingStats } from './listings.repo.js';
import { presentListing } from './listings.presenter.js';
import { ListingsRecovery } from './listings.recovery.js';
import { createListingModerationStore } from './listings.moderation.js';
import { createListingsService, listingsPort } from './listings.service.js';
import type { ListingsChain, ListingsConfig, ListingsDeps, ListingsHooks, ListingsRepo } from './listings.types.js';
import { withSystemActor } from '../../lib/request-context.js';
import type { ReadDb } from '../../db/read-routing.js';

export { createListingsService, listingsPort, listingVisibleTo, tokenName, metadataUri, TOKEN_SYMBOL } from './listings.service.js';
export type { ListingsService } from './listings.service.js';
export { createListingsRepo } from './listings.repo.js';
export { ListingsRecovery, type RecoveryOutcome } from './listings.recovery.js';
export { presentListing } from './listings.presenter.js';
export { listingErrors, type FieldError } from './listings.errors.js';
/** the listing row query and mapping the marketplace module's search reuses */
export { listingStatusIn, selectListings, toListingRecord, type ListingRow } from './listings.sql.js';
export type * from './listings.types.js';
/** issue 24: the frozen terms an order buys (seam for orders and offers) */
export { orderTermsOf, termsDeliveryDays, type OrderTerms, type ListingTermsSource } from './order-terms.js';
export { cheapestPackage } from './listings.packages.js';
/** issue 25: takedowns stored on the listing row (the moderation module decides) */
export { createListingModerationStore, type ListingModerationStore, type ListingModerationRefusal } from './listings.moderation.js';

/**
 * The listings module's read port for other modules (users: a seller's listing counts), built from the
 * database alone.
 */
export function listingsReadPort(db: PrismaClient) {
  return { sellerStats: (sellerId: string) => sellerListingStats(db, sellerId) };
}

/** Default period of the recovery pass (milliseconds). */
export const DEFAULT_RECOVERY_INTERVAL_MS = 30_000;

export interface ListingsModuleOptions {
  db: PrismaClient;
  /** where the public reads (GET /listings, GET /listings/{id}) go (db/read-routing.ts); default `db` */
  readDb?: ReadDb;
  /** null: the service runs without a chain (every chain step answers 503 chain-unavailable) */
  chain: ListingsChain | null;
  config: ListingsConfig;
  log?: ListingsDeps['log'];
  /** recovery pass period in ms (default 30 000); 0 = only the start-up pass */
  recoveryIntervalMs?: number;
  /** the service's SOL budget (modules/budget): mints and renames are charged to it */
  budget?: ListingsDeps['budget'];
  /** issue 25: the moderation module's standing port */
  standing?: ListingsDeps['standing'];
  /** test seams */
  repo?: ListingsRepo;
  hooks?: ListingsHooks;
}

/** A ListingsChain for a service without a Solana connection: every call is 503 chain-unavailable. */
function noChain(): ListingsChain {
  const fail = async (): Promise<never> => {
    throw new DomainError('chain-unavailable', 'The service runs without a Solana connection.');
  };
  return { mintListingToken: fail, updateListingToken: fail, readListingMint: fail, transactionOutcome: fail };
}

export function createListingsModule(o: ListingsModuleOptions) {
  const repo = o.repo ?? createListingsRepo(o.db, (l) => presentListing(l, o.config), o.readDb);
  const service = createListingsService({ repo, chain: o.chain ?? noChain(), config: o.config, log: o.log, hooks: o.hooks, budget: o.budget, standing: o.standing });
  const recovery = new ListingsRecovery({ repo, steps: service.steps, log: o.log });
  const intervalMs = o.recoveryIntervalMs ?? DEFAULT_RECOVERY_INTERVAL_MS;
  return {
    service,
    repo,
    recovery,
    port: listingsPort(service),
    /** issue 25: takedown, restore and appeal of a listing (the moderation module's port) */
    moderation: createListingModerationStore(o.db, (l) => presentListing(l, o.config)),
    http: { service, config: o.config },
    /** start-up recovery pass (awaited), then the periodic one */
    async start() {
      if (o.chain) {
        await withSystemActor('listing-recovery', () => recovery.runOnce()).catch((err) => o.log?.error({ err }, 'start-up listing recovery failed'));
        recovery.start(intervalMs);
      }
    },
    async stop() {
      await recovery.stop();
    },
  };
}

export type ListingsModule = ReturnType<typeof createListingsModule>;
