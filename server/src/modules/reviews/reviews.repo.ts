/**
 * Reviews storage (Prisma): the reviews table only (orders are read through the orders module's port,
 * see reviews.types.ts ReviewOrdersPort). Queries only: the rules live in reviews.service.ts. The insert appends
 * review.created (to the reviewer and the seller) in its transaction (modules/events/outbox.ts).
 */
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { appendEvents, notifyAppended } from '../events/index.js';
import { presentReview } from './reviews.presenter.js';
import type { NewReview, RatingSummary, ReviewRecord, ReviewsRepo } from './reviews.types.js';

interface ReviewRow {
  id: string;
  order_id: string;
  listing_id: string;
  reviewer_id: string;
  reviewer_wallet: string;
  seller_id: string;
  seller_wallet: string;
  rating: number;
  text: string;
  created_at: Date;
}

const toRecord = (r: ReviewRow): ReviewRecord => ({
  id: r.id,
  orderId: r.order_id,
  listingId: r.listing_id,
  reviewerId: r.reviewer_id,
  reviewerWallet: r.reviewer_wallet,
  sellerId: r.seller_id,
  sellerWallet: r.seller_wallet,
  rating: Number(r.rating),
  text: r.text,
  createdAt: new Date(r.created_at),
});

const SELECT = Prisma.sql`
  SELECT r.id::text AS id, r.order_id::text AS order_id, r.listing_id::text AS listing_id,
         r.reviewer_id::text AS reviewer_id, ru.wallet AS reviewer_wallet,
         r.seller_id::text AS seller_id, su.wallet AS seller_wallet, r.rating, r.text, r.created_at
    FROM reviews r
    JOIN users ru ON ru.id = r.reviewer_id
    JOIN users su ON su.id = r.seller_id`;

const isUniqueViolation = (e: unknown) =>
  (e as { code?: string }).code === 'P2002' ||
  /unique constraint|duplicate key/i.test(e instanceof Error ? e.message : String(e));

export function createReviewsRepo(db: PrismaClient): ReviewsRepo {
  return {
    async insert(review: NewReview) {
      let record: ReviewRecord;
      try {
        record = await db.$transaction(async (tx) => {
          await tx.review.create({
            data: {
              id: review.id,
              orderId: review.orderId,
              reviewerId: review.reviewerId,
              sellerId: review.sellerId,
              listingId: review.listingId,
              rating: review.rating,
              text: review.text,
            },
          });
          const rows = await tx.$queryRaw<ReviewRow[]>`${SELECT} WHERE r.id = ${review.id}::uuid`;
          const r = toRecord(rows[0]!);
          await appendEvents(tx, [
            { type: 'review.created', resourceType: 'review', resourceId: r.id, audience: [r.reviewerId, r.sellerId], data: presentReview(r) },
          ]);
          return r;
        });
      } catch (e) {
        if (isUniqueViolation(e)) return null;
        throw e;
      }
      notifyAppended();
      return record;
    },

    async listForSeller(sellerWallet: string, limit: number, after?: { createdAt: Date; id: string }) {
      const keyset = after
        ? Prisma.sql`AND (r.created_at, r.id) < (${after.createdAt.toISOString()}::timestamptz, ${after.id}::uuid)`
        : Prisma.empty;
      const rows = await db.$queryRaw<ReviewRow[]>`
        ${SELECT}
         WHERE r.seller_id IN (SELECT id FROM users WHERE wallet = ${sellerWallet}) ${keyset}
         ORDER BY r.created_at DESC, r.id DESC
         LIMIT ${limit}`;
      return rows.map(toRecord);
    },

    async hasReview(orderId: string) {
      return (await db.review.count({ where: { orderId } })) > 0;
    },

    async summaryForSeller(sellerWallet: string): Promise<RatingSummary> {
      const rows = await db.$queryRaw<Array<{ rating: number; n: number }>>`
        SELECT r.rating::int AS rating, count(*)::int AS n
          FROM reviews r
         WHERE r.seller_id IN (SELECT id FROM users WHERE wallet = ${sellerWallet})
         GROUP BY r.rating`;
      const distribution = { '1': 0, '2': 0, '3': 0, '4': 0, '5': 0 };
      let count = 0;
      let sum = 0;
      for (const r of rows) {
        const key = String(r.rating) as keyof typeof distribution;
        if (key in distribution) distribution[key] = Number(r.n);
        count += Number(r.n);
        sum += Number(r.rating) * Number(r.n);
      }
      return { average: count > 0 ? Math.round((sum / count) * 100) / 100 : null, count, distribution };
    },
  };
}
