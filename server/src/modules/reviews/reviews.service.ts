/**
 * Reviews: the buyer of an order rates its seller once, when the order is completed or resolved
 * (contract REVIEWABLE_ORDER_STATUSES). The seller gets 403, anyone else 404 (an order's existence
 * is not disclosed to non-participants). Reading a seller's reviews never 404s: an unknown wallet
 * has an empty page and a zero summary.
 */
import { randomUUID } from 'node:crypto';
import { REVIEWABLE_ORDER_STATUSES } from '@bazaar/contract';
import { cursorKey, decodeCursor, encodeCursor, type CursorSpec } from '../../lib/cursor.js';
import { reviewErrors } from './reviews.errors.js';
import type { RatingSummary, ReviewOrdersPort, ReviewRecord, ReviewsRepo } from './reviews.types.js';

export const REVIEW_TEXT_MAX = 2000;

export interface ReviewsDeps {
  repo: ReviewsRepo;
  /** the orders module's read port (the order reviewed: its parties and status) */
  orders: ReviewOrdersPort;
  newId?: () => string;
}

export interface Reviewer {
  userId: string;
  wallet: string;
}

export function createReviewsService(deps: ReviewsDeps) {
  const { repo, orders } = deps;
  const newId = deps.newId ?? randomUUID;

  return {
    async create(orderId: string, actor: Reviewer, input: { rating: number; text?: string }): Promise<ReviewRecord> {
      // The contract validates these too; the service keeps the rule for every caller.
      if (!Number.isInteger(input.rating) || input.rating < 1 || input.rating > 5) throw reviewErrors.invalidRating();
      const order = await orders.get(orderId);
      if (!order) throw reviewErrors.orderNotFound(orderId);
      if (order.buyerId !== actor.userId) {
        if (order.sellerId === actor.userId) throw reviewErrors.notBuyer(orderId);
        throw reviewErrors.orderNotFound(orderId);
      }
      if (!(REVIEWABLE_ORDER_STATUSES as readonly string[]).includes(order.status)) throw reviewErrors.notReviewable(orderId, order.status);
      const review = await repo.insert({
        id: newId(),
        orderId: order.id,
        listingId: order.listingId,
        reviewerId: order.buyerId,
        sellerId: order.sellerId,
        rating: input.rating,
        text: (input.text ?? '').trim().slice(0, REVIEW_TEXT_MAX),
      });
      if (!review) throw reviewErrors.alreadyReviewed(orderId, order.status);
      return review;
    },

    async listForSeller(
      sellerWallet: string,
      page: { limit: number; cursor?: string },
    ): Promise<{ items: ReviewRecord[]; nextCursor: string | null; summary: RatingSummary }> {
      const spec: CursorSpec = { sort: 'newest', filters: { seller: sellerWallet }, keys: [cursorKey.timestamp] };
      const after = page.cursor ? decodeCursor(page.cursor, spec) : undefined;
      const [rows, summary] = await Promise.all([
        repo.listForSeller(
          sellerWallet,
          page.limit + 1,
          after ? { createdAt: new Date(after.keys[0] as string), id: after.id } : undefined,
        ),
        repo.summaryForSeller(sellerWallet),
      ]);
      const items = rows.slice(0, page.limit);
      const last = items[items.length - 1];
      const nextCursor = rows.length > page.limit && last ? encodeCursor(spec, [last.createdAt.toISOString()], last.id) : null;
      return { items, nextCursor, summary };
    },
  };
}

export type ReviewsService = ReturnType<typeof createReviewsService>;
