/**
 * Storage of the moderation module (issue 25): the `reports` table, and the standing columns of `users`
 * (restriction, restricted_until, moderation_reason, moderated_at), which only this module writes.
 * Takedowns live on the listing row and are written by the listings module (listings.moderation.ts).
 */
import { randomUUID } from 'node:crypto';
import type { ReportReason, ReportTargetType, UserStandingEvent } from '@bazaar/contract';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { Prisma } from '../../generated/prisma/client.js';
import { appendAudit } from '../audit/index.js';
import { appendEvents, notifyAppended } from '../events/index.js';
import { presentStanding, type StandingRow } from './moderation.standing.js';

export interface ReportRecord {
  id: string;
  reporterId: string;
  targetType: ReportTargetType;
  targetId: string;
  targetWallet: string;
  reason: ReportReason;
  text: string;
  status: 'open' | 'dismissed' | 'actioned';
  createdAt: Date;
}

/** A target with open reports (the queue). */
export interface ReportGroupRecord {
  targetType: ReportTargetType;
  targetId: string;
  targetWallet: string;
  listingTitle: string | null;
  restricted: boolean;
  count: number;
  reasons: Record<string, number>;
  oldest: Date;
  latest: Date;
  reports: Array<{ id: string; reporterWallet: string; reason: ReportReason; text: string; createdAt: Date }>;
}

export type NewReportOutcome =
  | { created: ReportRecord }
  | { exists: string }
  /** the reporter's reports in the last 24 h reached the limit; `oldestAt` is the oldest of them */
  | { limited: { oldestAt: Date } };

export interface UserTarget {
  id: string;
  wallet: string;
}

/** A standing decision: the columns written, and the event. */
export interface StandingChange {
  restriction: 'suspended' | 'banned' | null;
  until: Date | null;
  reason: string;
  at: Date;
  event: UserStandingEvent;
}

const isUniqueViolation = (err: unknown) =>
  (err as { code?: string }).code === 'P2002' || /unique|duplicate key/i.test(String((err as Error)?.message ?? ''));

export function createModerationRepo(db: PrismaClient) {
  /** Close the open reports of a target as `status` with the moderator's reason; returns how many. */
  async function closeOpen(
    tx: Pick<Prisma.TransactionClient, '$executeRaw'>,
    targetType: ReportTargetType,
    targetId: string,
    status: 'dismissed' | 'actioned',
    resolution: string,
    by: string,
    at: Date,
  ): Promise<number> {
    return tx.$executeRaw`
      UPDATE reports SET status = ${status}, open_slot = NULL, resolved_at = ${at}, resolution = ${resolution}, resolved_by = ${by}
       WHERE target_type = ${targetType} AND target_id = ${targetId}::uuid AND status = 'open'`;
  }

  return {
    closeOpen,

    userByWallet: (wallet: string): Promise<UserTarget | null> => db.user.findUnique({ where: { wallet }, select: { id: true, wallet: true } }),

    /**
     * Insert a report in one transaction that locks the reporter's user row (her reports serialize: the
     * daily bound and the one-open-report rule cannot be raced past): an open report of the same target
     * answers `exists`, `limit` reports since `since` answer `limited`.
     */
    async createReport(
      r: Omit<ReportRecord, 'id' | 'status' | 'createdAt'>,
      o: { since: Date; limit: number; at: Date },
    ): Promise<NewReportOutcome> {
      try {
        return await db.$transaction(async (tx) => {
          await tx.$queryRaw`SELECT id FROM users WHERE id = ${r.reporterId}::uuid FOR UPDATE`;
          const open = await tx.report.findFirst({
            where: { reporterId: r.reporterId, targetType: r.targetType, targetId: r.targetId, status: 'open' },
            select: { id: true },
          });
          if (open) return { exists: open.id };
          const recent = await tx.report.aggregate({
            where: { reporterId: r.reporterId, createdAt: { gt: o.since } },
            _count: { _all: true },
            _min: { createdAt: true },
          });
          if (recent._count._all >= o.limit) return { limited: { oldestAt: recent._min.createdAt ?? o.at } };
          const id = randomUUID();
          await tx.report.create({
            data: { id, reporterId: r.reporterId, targetType: r.targetType, targetId: r.targetId, reason: r.reason, text: r.text, createdAt: o.at },
          });
          return { created: { ...r, id, status: 'open' as const, createdAt: o.at } };
        });
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
        const open = await db.report.findFirst({
          where: { reporterId: r.reporterId, targetType: r.targetType, targetId: r.targetId, status: 'open' },
          select: { id: true },
        });
        if (open) return { exists: open.id };
        throw err;
      }
    },

    /**
     * Targets with open reports, oldest open report first (ties: target type, then id), after the keyset
     * `after`; `limit` groups, each with its counts per reason and its `shown` oldest open reports.
     */
    async queue(o: { targetType?: ReportTargetType; after?: { oldest: Date; targetType: string; targetId: string }; limit: number; shown: number }): Promise<ReportGroupRecord[]> {
      const where: Prisma.Sql[] = [Prisma.sql`status = 'open'`];
      if (o.targetType) where.push(Prisma.sql`target_type = ${o.targetType}`);
      const after = o.after
        ? Prisma.sql`WHERE (g.oldest, g.target_type, g.target_id) > (${o.after.oldest}::timestamptz, ${o.after.targetType}, ${o.after.targetId}::uuid)`
        : Prisma.empty;
      const groups = await db.$queryRaw<
        Array<{ target_type: ReportTargetType; target_id: string; n: number; oldest: Date; latest: Date; wallet: string | null; title: string | null; restricted: boolean | null }>
      >`
        WITH g AS (
          SELECT target_type, target_id, count(*)::int AS n, min(created_at) AS oldest, max(created_at) AS latest
            FROM reports WHERE ${Prisma.join(where, ' AND ')}
           GROUP BY target_type, target_id
        )
        SELECT g.target_type, g.target_id::text AS target_id, g.n, g.oldest, g.latest,
               coalesce(lu.wallet, u.wallet) AS wallet, l.title,
               CASE WHEN g.target_type = 'listing' THEN l.taken_down_at IS NOT NULL
                    ELSE (u.restriction = 'banned' OR (u.restriction = 'suspended' AND (u.restricted_until IS NULL OR u.restricted_until > now()))) END AS restricted
          FROM g
          LEFT JOIN listings l ON g.target_type = 'listing' AND l.id = g.target_id
          LEFT JOIN users lu ON lu.id = l.seller_id
          LEFT JOIN users u ON g.target_type = 'user' AND u.id = g.target_id
          ${after}
         ORDER BY g.oldest, g.target_type, g.target_id
         LIMIT ${o.limit}`;
      if (groups.length === 0) return [];
      const ids = groups.map((g) => g.target_id);
      const [reasons, shown] = await Promise.all([
        db.$queryRaw<Array<{ target_id: string; reason: string; n: number }>>`
          SELECT target_id::text AS target_id, reason, count(*)::int AS n FROM reports
           WHERE status = 'open' AND target_id = ANY(${ids}::uuid[]) GROUP BY target_id, reason`,
        db.$queryRaw<Array<{ id: string; target_id: string; wallet: string; reason: ReportReason; text: string; created_at: Date }>>`
          SELECT r.id::text AS id, r.target_id::text AS target_id, u.wallet, r.reason, r.text, r.created_at
            FROM (SELECT *, row_number() OVER (PARTITION BY target_type, target_id ORDER BY created_at, id) AS k
                    FROM reports WHERE status = 'open' AND target_id = ANY(${ids}::uuid[])) r
            JOIN users u ON u.id = r.reporter_id
           WHERE r.k <= ${o.shown}
           ORDER BY r.created_at, r.id`,
      ]);
      return groups.map((g) => ({
        targetType: g.target_type,
        targetId: g.target_id,
        targetWallet: g.wallet ?? '',
        listingTitle: g.target_type === 'listing' ? g.title : null,
        restricted: Boolean(g.restricted),
        count: Number(g.n),
        reasons: Object.fromEntries(reasons.filter((r) => r.target_id === g.target_id).map((r) => [r.reason, Number(r.n)])),
        oldest: new Date(g.oldest),
        latest: new Date(g.latest),
        reports: shown
          .filter((r) => r.target_id === g.target_id)
          .map((r) => ({ id: r.id, reporterWallet: r.wallet, reason: r.reason, text: r.text, createdAt: new Date(r.created_at) })),
      }));
    },

    /**
     * Dismiss the open reports of a target; returns how many. A dismissal that closed reports is an operator
     * action without an event: it appends its audit entry (`reports.dismissed`) in the same transaction.
     */
    dismiss(targetType: ReportTargetType, targetId: string, reason: string, by: string, at: Date): Promise<number> {
      return db.$transaction(async (tx) => {
        const n = await closeOpen(tx, targetType, targetId, 'dismissed', reason, by, at);
        if (n > 0) {
          await appendAudit(tx, {
            action: 'reports.dismissed',
            resourceType: targetType,
            resourceId: targetId,
            before: { open_reports: n },
            after: { open_reports: 0, reason },
          });
        }
        return n;
      });
    },

    /**
     * Write a standing decision on user `userId` (locked), close her open reports as actioned when she is
     * restricted, and append the user.* event (audience: the user) in one transaction. Returns the row
     * after, or null for an unknown user.
     */
    async changeStanding(userId: string, c: StandingChange, by: string): Promise<StandingRow | null> {
      const row = await db.$transaction(async (tx) => {
        const locked = await tx.$queryRaw<Array<{ id: string }>>`SELECT id FROM users WHERE id = ${userId}::uuid FOR UPDATE`;
        if (locked.length === 0) return null;
        const after = await tx.user.update({
          where: { id: userId },
          data: { restriction: c.restriction, restrictedUntil: c.until, moderationReason: c.reason, moderatedAt: c.at },
          select: { wallet: true, restriction: true, restrictedUntil: true, moderationReason: true, moderatedAt: true },
        });
        if (c.restriction) await closeOpen(tx, 'user', userId, 'actioned', c.reason, by, c.at);
        await appendEvents(tx, [
          { type: c.event, resourceType: 'user', resourceId: userId, audience: [userId], data: presentStanding(after, c.at) },
        ]);
        return after;
      });
      if (row) notifyAppended();
      return row;
    },

    /** The standing columns of user `userId` (null: unknown). */
    standingOf: (userId: string): Promise<StandingRow | null> =>
      db.user.findUnique({
        where: { id: userId },
        select: { wallet: true, restriction: true, restrictedUntil: true, moderationReason: true, moderatedAt: true },
      }),
  };
}

export type ModerationRepo = ReturnType<typeof createModerationRepo>;
