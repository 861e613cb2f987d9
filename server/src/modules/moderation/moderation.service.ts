/**
 * Moderation rules (issue 25; contract/src/moderation.contract.ts and README.md): reports, the moderators'
 * queue, takedowns with one appeal, and account standing. Handlers stay thin; storage is in
 * moderation.repo.ts (reports, standing) and in the listings module (takedowns on the listing row).
 */
import {
  QUEUE_REPORTS_SHOWN,
  REPORT_DAILY_LIMIT,
  type AccountStanding,
  type CreateReportBody,
  type ReportTargetType,
} from '@bazaar/contract';
import type { OperatorRole } from '@bazaar/contract';
import { DomainError } from '../../errors.js';
import { hasRole } from '../auth/index.js';
import { cursorKey, decodeCursor, encodeCursor, invalidCursor, type CursorSpec, type Page } from '../../lib/cursor.js';
import type { ListingModerationRefusal, ListingModerationStore, ListingRecord, Viewer } from '../listings/index.js';
import { listingVisibleTo } from '../listings/index.js';
import type { ModerationRepo, ReportGroupRecord, ReportRecord } from './moderation.repo.js';
import { presentStanding, restrictionAt, type StandingPort } from './moderation.standing.js';

const DAY_MS = 86_400_000;

/** Who acts: the request's principal (auth module) as far as moderation reads it. */
export interface Actor {
  kind: string;
  userId: string | null;
  wallet: string | null;
  isAdmin: boolean;
  /** operator roles (issue 25): a moderator reads what she moderates */
  roles?: readonly OperatorRole[];
  apiKeyId?: string | null;
}

/** `user:<id>` or `api_key:<id>`: who took a decision (reports.resolved_by). */
export function actorId(a: Actor): string {
  return a.userId ? `user:${a.userId}` : `api_key:${a.apiKeyId ?? 'unknown'}`;
}

export interface ModerationDeps {
  repo: ModerationRepo;
  listings: ListingModerationStore;
  standing: StandingPort;
  now: () => Date;
}

const notFound = (what: string) => new DomainError('not-found', `${what} not found.`);

function listingRefusal(r: ListingModerationRefusal, listingId: string): DomainError {
  switch (r) {
    case 'not-found':
    case 'not-seller':
      return notFound(`Listing ${listingId}`);
    case 'already-taken-down':
      return new DomainError('invalid-state-transition', `Listing ${listingId} is taken down already.`);
    case 'not-taken-down':
      return new DomainError('invalid-state-transition', `Listing ${listingId} is not taken down.`);
    case 'already-appealed':
      return new DomainError('already-appealed', `The takedown of listing ${listingId} was appealed already: one appeal per takedown.`);
  }
}

export function createModerationService(deps: ModerationDeps) {
  const { repo, listings, standing, now } = deps;

  const queueSpec = (targetType?: ReportTargetType): CursorSpec => ({
    sort: 'oldest_report',
    filters: { target_type: targetType },
    keys: [cursorKey.timestamp, (v) => v === 'listing' || v === 'user'],
  });

  /** The user a moderator acts on, by wallet: 404 when unknown; 403 for oneself. */
  async function targetUser(actor: Actor, wallet: string) {
    const u = await repo.userByWallet(wallet);
    if (!u) throw notFound(`User ${wallet}`);
    if (u.id === actor.userId) throw new DomainError('forbidden', 'A moderator does not act on her own account.');
    return u;
  }

  async function decideStanding(actor: Actor, wallet: string, c: { restriction: 'suspended' | 'banned' | null; until: Date | null; reason: string; event: 'user.suspended' | 'user.banned' | 'user.reinstated' }) {
    const u = await targetUser(actor, wallet);
    const at = now();
    if (c.restriction === null) {
      const cur = await repo.standingOf(u.id);
      if (!cur || !restrictionAt(cur, at)) throw new DomainError('invalid-state-transition', `The account ${wallet} is not suspended or banned.`);
    }
    const row = await repo.changeStanding(u.id, { ...c, at }, actorId(actor));
    if (!row) throw notFound(`User ${wallet}`);
    return presentStanding(row, at);
  }

  return {
    /**
     * A signed-in user reports a listing (one she can see) or a user. Errors: 403 account-suspended (the
     * reporter), 404 not-found (target), 403 forbidden (herself or her own listing), 409 report-exists (an
     * open report of hers on the target: `report_id`), 429 rate-limited (REPORT_DAILY_LIMIT in 24 h; Retry-After).
     */
    async report(reporter: Viewer, body: CreateReportBody): Promise<ReportRecord> {
      await standing.assertMayTrade(reporter.userId);
      let target: { type: ReportTargetType; id: string; wallet: string };
      if (body.target_type === 'listing') {
        const l: ListingRecord | null = await listings.get(body.listing_id);
        if (!l || !listingVisibleTo(l, reporter)) throw notFound(`Listing ${body.listing_id}`);
        if (l.sellerId === reporter.userId) throw new DomainError('forbidden', 'You cannot report your own listing.');
        target = { type: 'listing', id: l.id, wallet: l.sellerWallet };
      } else {
        const u = await repo.userByWallet(body.wallet);
        if (!u) throw notFound(`User ${body.wallet}`);
        if (u.id === reporter.userId) throw new DomainError('forbidden', 'You cannot report yourself.');
        target = { type: 'user', id: u.id, wallet: u.wallet };
      }
      const at = now();
      const out = await repo.createReport(
        { reporterId: reporter.userId, targetType: target.type, targetId: target.id, targetWallet: target.wallet, reason: body.reason, text: body.text ?? '' },
        { since: new Date(at.getTime() - DAY_MS), limit: REPORT_DAILY_LIMIT, at },
      );
      if ('exists' in out) {
        throw new DomainError('report-exists', 'You already reported this and your report is still open: a moderator will look at it.', { report_id: out.exists });
      }
      if ('limited' in out) {
        const e = new DomainError('rate-limited', `At most ${REPORT_DAILY_LIMIT} reports in any 24 hours.`);
        e.retryAfterSeconds = Math.max(1, Math.ceil((out.limited.oldestAt.getTime() + DAY_MS - at.getTime()) / 1000));
        throw e;
      }
      return out.created;
    },

    /** The moderators' queue: targets with open reports, oldest open report first; cursor pages. */
    async queue(input: { targetType?: ReportTargetType; limit: number; cursor?: string }): Promise<Page<ReportGroupRecord>> {
      const spec = queueSpec(input.targetType);
      const c = input.cursor ? decodeCursor(input.cursor, spec) : undefined;
      if (c && typeof c.keys[1] !== 'string') throw invalidCursor('malformed sort key');
      const rows = await repo.queue({
        targetType: input.targetType,
        after: c ? { oldest: new Date(c.keys[0] as string), targetType: c.keys[1] as string, targetId: c.id } : undefined,
        limit: input.limit + 1,
        shown: QUEUE_REPORTS_SHOWN,
      });
      const items = rows.slice(0, input.limit);
      const last = items[items.length - 1];
      const nextCursor = rows.length > input.limit && last ? encodeCursor(spec, [last.oldest.toISOString(), last.targetType], last.targetId) : null;
      return { items, nextCursor };
    },

    /** Dismiss a target's open reports with the moderator's reason; 404 when it has none. */
    async dismiss(actor: Actor, targetType: ReportTargetType, targetId: string, reason: string): Promise<number> {
      const n = await repo.dismiss(targetType, targetId, reason, actorId(actor), now());
      if (n === 0) throw notFound(`Open reports of ${targetType} ${targetId}`);
      return n;
    },

    /** Take a listing down (its open reports become actioned); 404, 409 invalid-state-transition when down already. */
    async takeDown(actor: Actor, listingId: string, reason: string): Promise<ListingRecord> {
      const at = now();
      const r = await listings.takeDown(listingId, reason, at, async (tx) => {
        await repo.closeOpen(tx, 'listing', listingId, 'actioned', reason, actorId(actor), at);
      });
      if (typeof r === 'string') throw listingRefusal(r, listingId);
      return r;
    },

    /** Lift a takedown; 404, 409 invalid-state-transition when the listing is not taken down. */
    async restore(_actor: Actor, listingId: string, reason: string): Promise<ListingRecord> {
      const r = await listings.restore(listingId, reason, now());
      if (typeof r === 'string') throw listingRefusal(r, listingId);
      return r;
    },

    /** The seller appeals a takedown once; 404 for anyone else, 409 already-appealed / invalid-state-transition. */
    async appeal(seller: Viewer, listingId: string, text: string): Promise<ListingRecord> {
      const r = await listings.appeal(listingId, seller.userId, text, now());
      if (typeof r === 'string') {
        // an operator who is not the seller may see the listing: she is told it is not hers
        if (r === 'not-seller' && (seller.isAdmin || hasRole(seller, 'moderator'))) throw new DomainError('forbidden', 'Only the listing\'s seller appeals its takedown.');
        throw listingRefusal(r, listingId);
      }
      return r;
    },

    /** Suspend until `until` (in the future) or indefinitely. */
    async suspend(actor: Actor, wallet: string, reason: string, until: Date | null): Promise<AccountStanding> {
      if (until && until <= now()) {
        throw new DomainError('validation-error', '`until` must be in the future.', {
          errors: [{ path: 'body.until', message: 'must be in the future', code: 'in_the_past' }],
        });
      }
      return decideStanding(actor, wallet, { restriction: 'suspended', until, reason, event: 'user.suspended' });
    },

    ban: (actor: Actor, wallet: string, reason: string) => decideStanding(actor, wallet, { restriction: 'banned', until: null, reason, event: 'user.banned' }),

    reinstate: (actor: Actor, wallet: string, reason: string) => decideStanding(actor, wallet, { restriction: null, until: null, reason, event: 'user.reinstated' }),
  };
}

export type ModerationService = ReturnType<typeof createModerationService>;
