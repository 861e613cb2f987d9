/**
 * Reviews module types and its storage port. A review belongs to one order (unique), is written by
 * the order's buyer and rates the order's seller.
 */
export interface ReviewRecord {
  id: string;
  orderId: string;
  listingId: string;
  reviewerId: string;
  reviewerWallet: string;
  sellerId: string;
  sellerWallet: string;
  rating: number;
  text: string;
  createdAt: Date;
}

export type NewReview = Omit<ReviewRecord, 'createdAt'>;

/** The order facts a review needs. */
export interface ReviewableOrder {
  id: string;
  listingId: string;
  status: string;
  buyerId: string;
  buyerWallet: string;
  sellerId: string;
  sellerWallet: string;
}

export interface RatingSummary {
  /** mean rating rounded to 2 decimals; null without reviews */
  average: number | null;
  count: number;
  distribution: { '1': number; '2': number; '3': number; '4': number; '5': number };
}

export interface ReviewsRepo {
  getOrder(orderId: string): Promise<ReviewableOrder | null>;
  /** inserts the review; returns null when the order already has one (unique order id) */
  insert(review: NewReview): Promise<ReviewRecord | null>;
  /** reviews received by the seller with this wallet, newest first, keyset (created_at, id) */
  listForSeller(sellerWallet: string, limit: number, after?: { createdAt: Date; id: string }): Promise<ReviewRecord[]>;
  summaryForSeller(sellerWallet: string): Promise<RatingSummary>;
  hasReview(orderId: string): Promise<boolean>;
}
