/**
 * Reviews module wiring:
 *
 *   const reviews = createReviewsModule({ db });
 *   createExpressEndpoints(contract.reviews, reviewsHandlers(reviews.http), router);
 *   createOrdersModule({ ..., hasReview: reviews.hasReview });
 */
import type { PrismaClient } from '../../generated/prisma/client.js';
import { createReviewsRepo } from './reviews.repo.js';
import { createReviewsService } from './reviews.service.js';

export { createReviewsService } from './reviews.service.js';
export type { ReviewsService } from './reviews.service.js';
export { createReviewsRepo } from './reviews.repo.js';
export { presentReview } from './reviews.presenter.js';
export type * from './reviews.types.js';

export function createReviewsModule(o: { db: PrismaClient }) {
  const repo = createReviewsRepo(o.db);
  const service = createReviewsService({ repo });
  return {
    service,
    repo,
    /** whether the order already has its review (orders hide the `review` action then) */
    hasReview: (orderId: string) => repo.hasReview(orderId),
    /** a seller's reputation (users module: GET /user/me, GET /users/{wallet}) */
    reputation: (sellerWallet: string) => repo.summaryForSeller(sellerWallet),
    http: { service },
  };
}
