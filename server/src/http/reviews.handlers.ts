/**
 * ts-rest handlers of `contract.reviews`: review an order, list a seller's reviews.
 * Rules live in modules/reviews; errors are DomainErrors (problem+json in one place).
 */
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import type { ReviewsService } from '../modules/reviews/index.js';
import { presentReview } from '../modules/reviews/index.js';
import { userOf } from './listings.handlers.js';

export interface ReviewsHttpDeps {
  service: ReviewsService;
}

export { presentReview };

export function reviewsHandlers(deps: ReviewsHttpDeps) {
  const s = initServer();
  const { service } = deps;

  return s.router(contract.reviews, {
    createReview: async ({ params, body, req }) => ({
      status: 201 as const,
      body: presentReview(await service.create(params.order_id, userOf(req), body)),
    }),
    listSellerReviews: async ({ params, query }) => {
      const page = await service.listForSeller(params.seller_wallet, { limit: query.limit, cursor: query.cursor });
      return {
        status: 200 as const,
        body: { data: page.items.map(presentReview), next_cursor: page.nextCursor, summary: page.summary },
      };
    },
  });
}
