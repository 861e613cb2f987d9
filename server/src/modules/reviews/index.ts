/**
 * Reviews module wiring:
 *
 *   const reviews = createReviewsModule({ db, orders: ordersReadPort(db) });
 *   createExpressEndpoints(contract.reviews, reviewsHandlers(reviews.http), router);
 *   createOrdersModule({ ..., hasReview: reviews.hasReview });
 */
import type { PrismaClient } from '../../generated/prisma/client.js';
import { createReviewsRepo } from './reviews.repo.js';
import { createReviewsService } from './reviews.service.js';
import type { ReviewOrdersPort } from './reviews.types.js';

export { createReviewsService } from './reviews.service.js';
export type { ReviewsService } from './reviews.service.js';
export { createReviewsRepo } from './reviews.repo.js';
export { presentReview } from './reviews.presenter.js';
export type * from './reviews.types.js';

/** `orders`: the orders module's read port (reviews read no orders table of their own) */
export function createReviewsModule(o: { db: PrismaClient; orders: ReviewOrdersPort }) {
  const repo = createReviewsRepo(o.db);
  const service = createReviewsService({ repo, orders: o.orders });
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
