/**
 * Listings module wiring:
 *
 *   const listings = createListingsModule({ db, chain, config: { currencies, categories, publicBaseUrl }, log });
 *   createExpressEndpoints(contract.listings, listingsHandlers(listings.http), router);
 *   createOrdersModule({ ..., listings: listings.port });   // reserve / release / markSold / get
 */
import type { PrismaClient } from '../../generated/prisma/client.js';
import { createListingsRepo } from './listings.repo.js';
import { createListingsService, listingsPort } from './listings.service.js';
import type { ListingsConfig, ListingsDeps, ListingsRepo } from './listings.types.js';

export { createListingsService, listingsPort, tokenName, metadataUri, TOKEN_SYMBOL } from './listings.service.js';
export type { ListingsService } from './listings.service.js';
export { createListingsRepo } from './listings.repo.js';
export { presentListing } from './listings.presenter.js';
export type * from './listings.types.js';

export interface ListingsModuleOptions {
  db: PrismaClient;
  chain: ListingsDeps['chain'];
  config: ListingsConfig;
  log?: ListingsDeps['log'];
  /** test seam */
  repo?: ListingsRepo;
}

export function createListingsModule(o: ListingsModuleOptions) {
  const repo = o.repo ?? createListingsRepo(o.db);
  const service = createListingsService({ repo, chain: o.chain, config: o.config, log: o.log });
  return { service, repo, port: listingsPort(service), http: { service, config: o.config } };
}
