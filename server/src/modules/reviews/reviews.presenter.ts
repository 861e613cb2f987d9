/**
 * ReviewRecord -> the contract's `Review` JSON (the HTTP answer and the data of review.created).
 */
import type { Review } from '@bazaar/contract';
import type { ReviewRecord } from './reviews.types.js';

export function presentReview(r: ReviewRecord): Review {
  return {
    review_id: r.id,
    order_id: r.orderId,
    listing_id: r.listingId,
    reviewer_wallet: r.reviewerWallet,
    seller_wallet: r.sellerWallet,
    rating: r.rating,
    text: r.text,
    created_at: r.createdAt.toISOString(),
  };
}

