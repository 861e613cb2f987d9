/**
 * Marketplace module wiring (search, browse, categories, currencies):
 *
 *   const marketplace = createMarketplaceModule({ db, config: { currencies, categories } });
 *   createExpressEndpoints(contract.marketplace, marketplaceHandlers(marketplace.http), router);
 */
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { ListingsConfig } from '../listings/index.js';
import { createMarketplaceRepo } from './marketplace.repo.js';
import { createMarketplaceService } from './marketplace.service.js';
import type { ReadDb } from '../../db/read-routing.js';

export { createMarketplaceService, splitQuery } from './marketplace.service.js';
export type { MarketplaceService } from './marketplace.service.js';
export { createMarketplaceRepo, buildSearch, detectSearchIndex, RUM_INDEX } from './marketplace.repo.js';
export type { SearchIndex } from './marketplace.repo.js';
export type * from './marketplace.types.js';

/** `readDb`: where the public reads go (db/read-routing.ts); default: `db`. */
export function createMarketplaceModule(o: { db: PrismaClient; readDb?: ReadDb; config: Pick<ListingsConfig, 'currencies' | 'categories'> }) {
  const repo = createMarketplaceRepo(o.db, o.readDb);
  const service = createMarketplaceService({ repo, config: o.config });
  return { service, repo, http: { service, config: o.config } };
}
