/** SQL aggregates for the user profile: stats (listings, orders) and reputation (reviews). */
import type { PrismaClient } from '../../db/client.js';

export interface UserAggregates {
  listingsCount: number;
  activeListingsCount: number;
  completedSales: number;
  completedPurchases: number;
  salesVolume: Array<{ currency: string; amountBaseUnits: string; decimals: number }>;
  ratings: Record<1 | 2 | 3 | 4 | 5, number>;
}

export function createUsersRepo(db: PrismaClient) {
  return {
    findById: (id: string) => db.user.findUnique({ where: { id } }),
    findByWallet: (wallet: string) => db.user.findUnique({ where: { wallet } }),
    update: (id: string, data: { displayName?: string | null; bio?: string | null; avatarUrl?: string | null }) =>
      db.user.update({ where: { id }, data }),

    async aggregates(userId: string): Promise<UserAggregates> {
      const [counts, volume, ratings] = await Promise.all([
        db.$queryRaw<Array<{ listings: number; active: number; sales: number; purchases: number }>>`
          SELECT
            (SELECT count(*)::int FROM listings WHERE seller_id = ${userId}::uuid) AS listings,
            (SELECT count(*)::int FROM listings WHERE seller_id = ${userId}::uuid AND status = 'available') AS active,
            (SELECT count(*)::int FROM orders WHERE seller_id = ${userId}::uuid AND status = 'completed') AS sales,
            (SELECT count(*)::int FROM orders WHERE buyer_id = ${userId}::uuid AND status = 'completed') AS purchases`,
        db.$queryRaw<Array<{ currency: string; total: string; decimals: number }>>`
          SELECT currency, sum(amount_base_units)::text AS total, max(decimals)::int AS decimals
          FROM orders WHERE seller_id = ${userId}::uuid AND status = 'completed'
          GROUP BY currency ORDER BY currency`,
        db.$queryRaw<Array<{ rating: number; n: number }>>`
          SELECT rating::int AS rating, count(*)::int AS n FROM reviews WHERE seller_id = ${userId}::uuid GROUP BY rating`,
      ]);
      const c = counts[0] ?? { listings: 0, active: 0, sales: 0, purchases: 0 };
      const dist = { 1: 0, 2: 0, 3: 0, 4: 0, 5: 0 } as UserAggregates['ratings'];
      for (const r of ratings) if (r.rating >= 1 && r.rating <= 5) dist[r.rating as 1] = Number(r.n);
      return {
        listingsCount: Number(c.listings),
        activeListingsCount: Number(c.active),
        completedSales: Number(c.sales),
        completedPurchases: Number(c.purchases),
        salesVolume: volume.map((v) => ({ currency: v.currency, amountBaseUnits: v.total, decimals: Number(v.decimals) })),
        ratings: dist,
      };
    },
  };
}

export type UsersRepo = ReturnType<typeof createUsersRepo>;
