/**
 * Users: profiles by id (the caller) or wallet (public), with statistics and reputation read from the
 * modules that own them (listings, orders, reviews, tips) through their read ports. The wallet is the
 * identity and never changes.
 */
import type { PublicUser, UpdateMeBody, User as UserDto } from '@bazaar/contract';
import type { User } from '../../db/client.js';
import { DomainError } from '../../errors.js';
import { toUiNumber } from '../../lib/money.js';
import { rolesOfUser } from '../auth/index.js';
import type { UsersRepo } from './users.repo.js';

/**
 * What a profile's statistics are read from, one port per owning module, given at construction
 * (composition.ts passes `listingsReadPort`, `ordersReadPort` and the reviews module).
 */
export interface UserStatsPorts {
  /** listings module: the seller's listings, all and `available` */
  listings: { sellerStats(sellerId: string): Promise<{ listingsCount: number; activeListingsCount: number }> };
  /** orders module: completed sales and purchases, the sales volume per currency in base units (decimal strings) */
  orders: {
    userStats(userId: string): Promise<{
      completedSales: number;
      completedPurchases: number;
      salesVolume: Array<{ currency: string; amountBaseUnits: string; decimals: number }>;
    }>;
  };
  /** tips module: the confirmed tips a seller received, per currency in base units (decimal strings); absent: none */
  tips?: { receivedBySeller(sellerId: string): Promise<Array<{ currency: string; amountBaseUnits: string; decimals: number }>> };
  /** reviews module: the reputation of the seller with this wallet (average rounded to 2 decimals, null without reviews) */
  reviews: { reputation(sellerWallet: string): Promise<PublicUser['reputation']> };
}

export interface UsersDeps extends UserStatsPorts {
  repo: UsersRepo;
  /** decimals per currency code (fallback when an order row lacks them) */
  decimalsOf: (currency: string) => number | undefined;
  custodyEnabled: boolean;
}

export function createUsersService(deps: UsersDeps) {
  const { repo } = deps;

  /**
   * The public profile of `u`. `isNew`: the row was created by the request at hand (a first login), so no
   * listing, order, review or tip can reference it yet: the statistics are zero without reading them
   * (issue 28: four modules' reads, six statements, saved on every first login).
   */
  async function publicView(u: User, isNew = false): Promise<PublicUser> {
    const [listings, orders, reputation, tips] = isNew
      ? [
          { listingsCount: 0, activeListingsCount: 0 },
          { completedSales: 0, completedPurchases: 0, salesVolume: [] },
          { average: null, count: 0, distribution: { '1': 0, '2': 0, '3': 0, '4': 0, '5': 0 } },
          [],
        ]
      : await Promise.all([
          deps.listings.sellerStats(u.id),
          deps.orders.userStats(u.id),
          deps.reviews.reputation(u.wallet),
          deps.tips?.receivedBySeller(u.id) ?? [],
        ]);
    const amounts = (v: { currency: string; amountBaseUnits: string; decimals: number }) => {
      const decimals = v.decimals || deps.decimalsOf(v.currency) || 0;
      return { currency: v.currency, amount_base_units: v.amountBaseUnits, amount: toUiNumber(BigInt(v.amountBaseUnits), decimals) };
    };
    return {
      user_id: u.id,
      wallet: u.wallet,
      display_name: u.displayName,
      bio: u.bio,
      avatar_url: u.avatarUrl,
      created_at: u.createdAt.toISOString(),
      stats: {
        listings_count: listings.listingsCount,
        active_listings_count: listings.activeListingsCount,
        completed_sales: orders.completedSales,
        completed_purchases: orders.completedPurchases,
        sales_volume: orders.salesVolume.map(amounts),
        tips_received: tips.map(amounts),
      },
      reputation,
    };
  }

  /** The caller's own profile (GET /user/me, the login response); `isNew` as in publicView. */
  async function privateView(u: User, isNew = false): Promise<UserDto> {
    return {
      ...(await publicView(u, isNew)),
      roles: rolesOfUser(u),
      // deprecated (issue 25), kept for clients that read it: admin iff roles holds admin
      role: rolesOfUser(u).includes('admin') ? 'admin' : 'user',
      updated_at: u.updatedAt.toISOString(),
      last_login_at: u.lastLoginAt ? u.lastLoginAt.toISOString() : null,
      custody_enabled: deps.custodyEnabled,
    };
  }

  const notFound = (what: string) => new DomainError('not-found', `No user ${what}.`);

  return {
    privateView,
    publicView,
    async getMe(userId: string): Promise<UserDto> {
      const u = await repo.findById(userId);
      if (!u) throw notFound(`with id ${userId}`);
      return privateView(u);
    },
    async updateMe(userId: string, patch: UpdateMeBody): Promise<UserDto> {
      const data: { displayName?: string | null; bio?: string | null; avatarUrl?: string | null } = {};
      if (patch.display_name !== undefined) data.displayName = patch.display_name;
      if (patch.bio !== undefined) data.bio = patch.bio;
      if (patch.avatar_url !== undefined) data.avatarUrl = patch.avatar_url;
      const u = Object.keys(data).length ? await repo.update(userId, data) : await repo.findById(userId);
      if (!u) throw notFound(`with id ${userId}`);
      return privateView(u);
    },
    async getByWallet(wallet: string): Promise<PublicUser> {
      const u = await repo.findByWallet(wallet);
      if (!u) throw notFound(`has logged in with wallet ${wallet}`);
      return publicView(u);
    },
  };
}

export type UsersService = ReturnType<typeof createUsersService>;
