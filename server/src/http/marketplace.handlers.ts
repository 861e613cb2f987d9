/**
 * ts-rest handlers of `contract.marketplace`: search, browse, similar listings, categories, currencies.
 * Rules live in modules/marketplace; errors are DomainErrors (problem+json in one place).
 */
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import { presentListing } from '../modules/listings/index.js';
import type { ListingsConfig } from '../modules/listings/index.js';
import type { MarketplaceService } from '../modules/marketplace/index.js';
import { viewerOf } from './listings.handlers.js';

export interface MarketplaceHttpDeps {
  service: MarketplaceService;
  config: Pick<ListingsConfig, 'currencies' | 'categories'>;
}

export function marketplaceHandlers(deps: MarketplaceHttpDeps) {
  const s = initServer();
  const { service, config } = deps;
  const page = (p: Awaited<ReturnType<MarketplaceService['search']>>) => ({
    data: p.items.map((l) => presentListing(l, config)),
    next_cursor: p.nextCursor,
  });

  return s.router(contract.marketplace, {
    searchListings: async ({ query }) => ({
      status: 200 as const,
      body: page(
        await service.search({
          query: query.query,
          minPrice: query.min_price,
          maxPrice: query.max_price,
          category: query.category,
          currency: query.currency,
          sellerWallet: query.seller_wallet,
          sort: query.sort,
          limit: query.limit,
          cursor: query.cursor,
        }),
      ),
    }),
    listMarketplaceListings: async ({ query }) => ({
      status: 200 as const,
      body: page(await service.browse({ category: query.category, status: query.status, limit: query.limit, cursor: query.cursor })),
    }),
    listCategories: async () => ({ status: 200 as const, body: { data: await service.categories() } }),
    listCurrencies: async () => ({ status: 200 as const, body: { data: service.currencies() } }),
    listSimilarListings: async ({ params, query, req }) => ({
      status: 200 as const,
      body: page(await service.similar(params.listing_id, viewerOf(req), { limit: query.limit, cursor: query.cursor })),
    }),
  });
}
