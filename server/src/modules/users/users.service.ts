/**
 * Users: profiles by id (the caller) or wallet (public), with statistics and reputation computed
 * from listings, orders and reviews. The wallet is the identity and never changes.
 */
import type { PublicUser, UpdateMeBody, User as UserDto } from '@bazaar/contract';
import type { User } from '../../db/client.js';
import { DomainError } from '../../errors.js';
import { toUiNumber } from '../../lib/money.js';
import type { UserAggregates, UsersRepo } from './users.repo.js';

export interface UsersDeps {
  repo: UsersRepo;
  /** decimals per currency code (fallback when an order row lacks them) */
  decimalsOf: (currency: string) => number | undefined;
  custodyEnabled: boolean;
}

export function reputationOf(ratings: UserAggregates['ratings']) {
  const count = ratings[1] + ratings[2] + ratings[3] + ratings[4] + ratings[5];
  const sum = ratings[1] + 2 * ratings[2] + 3 * ratings[3] + 4 * ratings[4] + 5 * ratings[5];
  return {
    average: count ? Math.round((sum / count) * 100) / 100 : null,
    count,
    distribution: { '1': ratings[1], '2': ratings[2], '3': ratings[3], '4': ratings[4], '5': ratings[5] },
  };
}

export function createUsersService(deps: UsersDeps) {
  const { repo } = deps;

  async function publicView(u: User): Promise<PublicUser> {
    const a = await repo.aggregates(u.id);
    return {
      user_id: u.id,
      wallet: u.wallet,
      display_name: u.displayName,
      bio: u.bio,
      avatar_url: u.avatarUrl,
      created_at: u.createdAt.toISOString(),
      stats: {
        listings_count: a.listingsCount,
        active_listings_count: a.activeListingsCount,
        completed_sales: a.completedSales,
        completed_purchases: a.completedPurchases,
        sales_volume: a.salesVolume.map((v) => {
          const decimals = v.decimals || deps.decimalsOf(v.currency) || 0;
          return { currency: v.currency, amount_base_units: v.amountBaseUnits, amount: toUiNumber(BigInt(v.amountBaseUnits), decimals) };
        }),
      },
      reputation: reputationOf(a.ratings),
    };
  }

  async function privateView(u: User): Promise<UserDto> {
    return {
      ...(await publicView(u)),
      role: u.role === 'admin' ? 'admin' : 'user',
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
