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

/** What the service writes; the wallets of the record are the reviewer's and seller's accounts, read back by the repo. */
export type NewReview = Omit<ReviewRecord, 'createdAt' | 'reviewerWallet' | 'sellerWallet'>;

/**
 * The order facts a review needs: who bought from whom, and the status. No wallet on purpose: the
 * order's buyer wallet is the wallet that paid (for a custodial order, the buyer's deposit address),
 * while a review names the reviewer's and the seller's account wallets.
 */
export interface ReviewableOrder {
  id: string;
  listingId: string;
  /** contract OrderStatus */
  status: string;
  buyerId: string;
  sellerId: string;
}

/**
 * The reviews module's read port into the orders module (`ordersReadPort` of modules/orders), given
 * at construction: reviews never read the orders table themselves.
 */
export interface ReviewOrdersPort {
  /** the order, or null when there is none with this id */
  get(orderId: string): Promise<ReviewableOrder | null>;
}

export interface RatingSummary {
  /** mean rating rounded to 2 decimals; null without reviews */
  average: number | null;
  count: number;
  distribution: { '1': number; '2': number; '3': number; '4': number; '5': number };
}

export interface ReviewsRepo {
  /** inserts the review; returns null when the order already has one (unique order id) */
  insert(review: NewReview): Promise<ReviewRecord | null>;
  /** reviews received by the seller with this wallet, newest first, keyset (created_at, id) */
  listForSeller(sellerWallet: string, limit: number, after?: { createdAt: Date; id: string }): Promise<ReviewRecord[]>;
  summaryForSeller(sellerWallet: string): Promise<RatingSummary>;
  hasReview(orderId: string): Promise<boolean>;
}
