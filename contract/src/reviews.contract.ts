/**
 * Reviews: the buyer of an order rates the seller once, after the order is completed or resolved.
 * Reviews are public within the API and feed the seller's reputation (average, count, distribution).
 */
import { z } from 'zod';
import { c, named, page, PaginationQuery, Pubkey, safeText, Timestamp, Uuid } from './common.js';
import { access } from './access.js';
import { bodyProblems, routeErrors } from './problems.js';
import { Reputation } from './users.contract.js';

/** Integer stars 1..5. */
export const Rating = z.number().int().min(1).max(5);
export const ReviewText = safeText(z.string().trim().max(2000));

export const Review = named(
  'Review',
  z.object({
    review_id: Uuid,
    order_id: Uuid,
    listing_id: Uuid,
    reviewer_wallet: Pubkey.describe('The buyer'),
    seller_wallet: Pubkey,
    rating: z.number().int().min(1).max(5),
    text: z.string().describe('0..2000 characters; empty when none was given'),
    created_at: Timestamp,
  }),
);
export type Review = z.infer<typeof Review>;

export const CreateReviewBody = named(
  'CreateReviewBody',
  z
    .object({
      rating: Rating.describe('Integer 1..5'),
      text: ReviewText.optional().describe('0..2000 characters (trimmed); defaults to empty'),
    })
    .strict(),
);
export type CreateReviewBody = z.infer<typeof CreateReviewBody>;

export const SellerReviewPage = named(
  'SellerReviewPage',
  page(Review).extend({ summary: Reputation }),
  'A page of reviews (newest first) and the seller\'s overall reputation',
);

const createReview = routeErrors(access.user('reviews:write'), [...bodyProblems, 'forbidden', 'not-found', 'review-not-allowed'], {
  actors: ['buyer'],
});
const listSellerReviews = routeErrors(access.user('listings:read'), []);

export const reviews = c.router({
  createReview: {
    method: 'POST',
    path: '/orders/:order_id/review',
    pathParams: z.object({ order_id: Uuid }),
    summary: 'Review the seller of an order',
    description:
      'Buyer only (403 forbidden for the seller; 404 for others). rating: integer 1..5; text: 0..2000 ' +
      'characters, optional. Allowed once per order when the order is completed or resolved; otherwise 409 ' +
      'review-not-allowed. Reviews cannot be edited. Returns 201 with the review.',
    body: CreateReviewBody,
    responses: { 201: Review, ...createReview.responses },
    metadata: createReview.metadata,
  },
  listSellerReviews: {
    method: 'GET',
    path: '/users/:seller_wallet/reviews',
    pathParams: z.object({ seller_wallet: Pubkey }),
    query: PaginationQuery,
    summary: 'List reviews of a seller',
    description:
      'Reviews received by the seller with this wallet, newest first, cursor pagination (limit 1..100, ' +
      'default 20), plus `summary` (average, count, distribution over all reviews). A wallet without ' +
      'reviews (or unknown) gives an empty page, not 404.',
    responses: { 200: SellerReviewPage, ...listSellerReviews.responses },
    metadata: listSellerReviews.metadata,
  },
});
