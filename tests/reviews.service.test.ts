/**
 * Reviews service rules with an in-memory repository and orders port (no HTTP, no database).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { DomainError } from '../server/src/errors.js';
import { createReviewsService, type ReviewsService } from '../server/src/modules/reviews/reviews.service.js';
import type { NewReview, RatingSummary, ReviewableOrder, ReviewOrdersPort, ReviewRecord, ReviewsRepo } from '../server/src/modules/reviews/reviews.types.js';

/** The orders module's port, in memory. */
class MemoryOrders implements ReviewOrdersPort {
  orders = new Map<string, ReviewableOrder>();
  async get(id: string) {
    return this.orders.get(id) ?? null;
  }
}

class MemoryReviewsRepo implements ReviewsRepo {
  reviews: ReviewRecord[] = [];
  /** the account wallet of each user id (the Prisma repo joins users) */
  constructor(private readonly wallets: Map<string, string>) {}
  async insert(r: NewReview) {
    if (this.reviews.some((x) => x.orderId === r.orderId)) return null;
    const rec = { ...r, reviewerWallet: this.wallets.get(r.reviewerId)!, sellerWallet: this.wallets.get(r.sellerId)!, createdAt: new Date(Date.now() + this.reviews.length) };
    this.reviews.push(rec);
    return rec;
  }
  async listForSeller(wallet: string, limit: number, after?: { createdAt: Date; id: string }) {
    return this.reviews
      .filter((r) => r.sellerWallet === wallet)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : -1))
      .filter((r) => !after || r.createdAt < after.createdAt || (r.createdAt.getTime() === after.createdAt.getTime() && r.id < after.id))
      .slice(0, limit);
  }
  async hasReview(orderId: string) {
    return this.reviews.some((r) => r.orderId === orderId);
  }
  async summaryForSeller(wallet: string): Promise<RatingSummary> {
    const mine = this.reviews.filter((r) => r.sellerWallet === wallet);
    const distribution = { '1': 0, '2': 0, '3': 0, '4': 0, '5': 0 };
    for (const r of mine) distribution[String(r.rating) as keyof typeof distribution] += 1;
    const avg = mine.length ? Math.round((mine.reduce((s, r) => s + r.rating, 0) / mine.length) * 100) / 100 : null;
    return { average: avg, count: mine.length, distribution };
  }
}

const buyer = { userId: 'buyer', wallet: 'BuyerWallet1111111111111111111111111111111' };
const seller = { userId: 'seller', wallet: 'SellerWallet111111111111111111111111111111' };
const stranger = { userId: 'stranger', wallet: 'Stranger11111111111111111111111111111111111' };
const orderId = '11111111-1111-4111-8111-111111111111';

async function slugOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof DomainError) return e.slug;
    throw e;
  }
  throw new Error('expected a DomainError');
}

let repo: MemoryReviewsRepo;
let orders: MemoryOrders;
let svc: ReviewsService;
function order(status: string, id = orderId) {
  orders.orders.set(id, {
    id,
    listingId: '22222222-2222-4222-8222-222222222222',
    status,
    buyerId: buyer.userId,
    sellerId: seller.userId,
  });
}
beforeEach(() => {
  repo = new MemoryReviewsRepo(new Map([buyer, seller, stranger].map((u) => [u.userId, u.wallet])));
  orders = new MemoryOrders();
  svc = createReviewsService({ repo, orders });
});

describe('reviewing an order', () => {
  it('the buyer reviews a completed order once', async () => {
    order('completed');
    const r = await svc.create(orderId, buyer, { rating: 5, text: '  great work  ' });
    expect(r).toMatchObject({ rating: 5, text: 'great work', sellerWallet: seller.wallet, reviewerWallet: buyer.wallet });
    expect(await slugOf(svc.create(orderId, buyer, { rating: 4 }))).toBe('review-not-allowed');
  });

  it('resolved orders are reviewable too; other statuses are not', async () => {
    order('resolved');
    await svc.create(orderId, buyer, { rating: 2 });
    for (const status of ['awaiting_payment', 'in_progress', 'delivered', 'disputed', 'refunded', 'expired']) {
      const id = `3333333${status.length}-3333-4333-8333-333333333333`.slice(0, 36);
      order(status, id);
      expect(await slugOf(svc.create(id, buyer, { rating: 3 }))).toBe('review-not-allowed');
    }
  });

  it('the seller gets 403, strangers 404, unknown orders 404', async () => {
    order('completed');
    expect(await slugOf(svc.create(orderId, seller, { rating: 5 }))).toBe('forbidden');
    expect(await slugOf(svc.create(orderId, stranger, { rating: 5 }))).toBe('not-found');
    expect(await slugOf(svc.create('99999999-9999-4999-8999-999999999999', buyer, { rating: 5 }))).toBe('not-found');
  });

  it('ratings must be integers 1..5', async () => {
    order('completed');
    for (const rating of [0, 6, 2.5, Number.NaN]) {
      expect(await slugOf(svc.create(orderId, buyer, { rating }))).toBe('validation-error');
    }
    expect(repo.reviews).toHaveLength(0);
  });
});

describe("a seller's reviews", () => {
  it('an unknown wallet has an empty page and a zero summary', async () => {
    const page = await svc.listForSeller('Nobody1111111111111111111111111111111111111', { limit: 20 });
    expect(page).toEqual({ items: [], nextCursor: null, summary: { average: null, count: 0, distribution: { '1': 0, '2': 0, '3': 0, '4': 0, '5': 0 } } });
  });
});
