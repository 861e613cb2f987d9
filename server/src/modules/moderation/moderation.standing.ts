/**
 * An account's standing (issue 25): active, suspended (until a time, or indefinitely) or banned, stored on
 * the user row (`restriction`, `restricted_until`, `moderation_reason`, `moderated_at`; written by this
 * module only). `standingPort(db)` is what the other modules ask before they list or order, and what login
 * asks: it reads the row on every call (no cache), so a suspension takes effect at the next request of every
 * session, personal access token and API key of the user, and a suspension whose `until` passed reads active
 * without any job running.
 */
import type { AccountStanding } from '@bazaar/contract';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { DomainError } from '../../errors.js';

/** What a user row says about standing (the columns of migration 20261126203000_moderation). */
export interface StandingRow {
  wallet: string;
  restriction: string | null;
  restrictedUntil: Date | null;
  moderationReason: string | null;
  moderatedAt: Date | null;
}

/** The restriction in force at `now`: null when active (never restricted, reinstated, or the suspension ran out). */
export function restrictionAt(row: StandingRow, now: Date): { status: 'suspended' | 'banned'; until: Date | null } | null {
  if (row.restriction === 'banned') return { status: 'banned', until: null };
  if (row.restriction === 'suspended' && (row.restrictedUntil === null || row.restrictedUntil > now)) {
    return { status: 'suspended', until: row.restrictedUntil };
  }
  return null;
}

/** The contract's AccountStanding of `row` at `now`. */
export function presentStanding(row: StandingRow, now: Date): AccountStanding {
  const r = restrictionAt(row, now);
  return {
    wallet: row.wallet,
    status: r?.status ?? 'active',
    until: r?.until ? r.until.toISOString() : null,
    reason: row.moderationReason,
    decided_at: row.moderatedAt ? row.moderatedAt.toISOString() : null,
  };
}

/** 403 account-suspended with `account_status` and `until` (null: indefinitely or banned). */
export function accountSuspended(r: { status: 'suspended' | 'banned'; until: Date | null }): DomainError {
  const detail =
    r.status === 'banned'
      ? 'A moderator banned this account: it cannot log in, list, order or report. Its open orders still settle.'
      : `A moderator suspended this account ${r.until ? `until ${r.until.toISOString()}` : 'until further notice'}: it cannot log in, list, order or report. Its open orders still settle.`;
  return new DomainError('account-suspended', detail, { account_status: r.status, until: r.until ? r.until.toISOString() : null });
}

const standingSelect = { wallet: true, restriction: true, restrictedUntil: true, moderationReason: true, moderatedAt: true } as const;

/**
 * The port other modules hold (listings, offers, orders, auth): `assertMayTrade(userId)` throws 403
 * account-suspended for a suspended or banned account (an unknown user passes: the caller refuses it
 * otherwise); `assertMayLogIn(wallet)` the same by wallet, for SIWS verify (and says whether the wallet has a user
 * row, so login presents a new user without reading statistics it cannot have); `isRestricted(userId)` for the
 * orders module's check of a listing's seller (a restricted seller takes no new order: 409 listing-unavailable).
 */
export function standingPort(db: PrismaClient, now: () => Date = () => new Date()) {
  const check = (row: StandingRow | null) => {
    const r = row ? restrictionAt(row, now()) : null;
    if (r) throw accountSuspended(r);
  };
  return {
    async assertMayTrade(userId: string): Promise<void> {
      check(await db.user.findUnique({ where: { id: userId }, select: standingSelect }));
    },
    /** Returns whether the wallet has a user row (false: it never logged in nor ordered through an action). */
    async assertMayLogIn(wallet: string): Promise<boolean> {
      const row = await db.user.findUnique({ where: { wallet }, select: standingSelect });
      check(row);
      return row !== null;
    },
    /**
     * An order's two parties in ONE read (issue 28: statements per order): throws 403 account-suspended as
     * `assertMayTrade(buyerId)` does; else whether the seller (null: none) is restricted, as `isRestricted`.
     */
    async assertMayOrderFrom(buyerId: string, sellerId: string | null): Promise<{ sellerRestricted: boolean }> {
      const rows = await db.user.findMany({ where: { id: { in: sellerId && sellerId !== buyerId ? [buyerId, sellerId] : [buyerId] } }, select: { id: true, ...standingSelect } });
      check(rows.find((r) => r.id === buyerId) ?? null);
      const seller = sellerId ? rows.find((r) => r.id === sellerId) : undefined;
      return { sellerRestricted: seller !== undefined && restrictionAt(seller, now()) !== null };
    },
    /** Whether the account is suspended or banned now (false for an unknown user). */
    async isRestricted(userId: string): Promise<boolean> {
      const row = await db.user.findUnique({ where: { id: userId }, select: standingSelect });
      return row !== null && restrictionAt(row, now()) !== null;
    },
  };
}

export type StandingPort = ReturnType<typeof standingPort>;
