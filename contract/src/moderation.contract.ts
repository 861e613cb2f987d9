/**
 * Moderation (issue 25 part 2): reports by users, the moderators' queue, takedowns of listings with one
 * appeal, and suspensions and bans of accounts. Every decision carries a reason, which the affected user
 * receives in an event.
 *
 * Reports. Any signed-in user reports a listing or a user (`POST /reports`): a reason from
 * `REPORT_REASONS` and 0..2000 characters of text. One OPEN report per reporter and target (a repeat answers
 * 409 report-exists naming the open one: a report is a signal to a moderator, a second copy adds nothing, and
 * the text of the first is not silently replaced); once a moderator acted on it or dismissed it, the same
 * reporter may report the target again. Reporting oneself or one's own listing is 403 forbidden. A reporter
 * files at most `REPORT_DAILY_LIMIT` reports in any 24 hours (then 429 rate-limited with Retry-After): a
 * bound per user, so that nobody floods the queue. A suspended or banned account cannot report (403
 * account-suspended). Reports decide nothing: a takedown or a suspension is always a moderator's act, never
 * a count of reports (so a competitor's reports cannot take a listing down; docs/threat-model.md).
 *
 * Queue (`GET /moderation/reports`): open reports grouped by target, the target whose oldest open report is
 * oldest first, with the count per target and per reason and the target's oldest reports; cursor pagination.
 * A moderator dismisses a target's open reports with a reason (`POST /moderation/reports/{target_type}/{target_id}/dismiss`);
 * a takedown of a listing, or a suspension or ban of a user, closes that target's open reports as actioned.
 *
 * Takedown. A moderator takes a listing down (`POST /moderation/listings/{id}/takedown`, reason): it leaves
 * search and every list, answers 404 to everyone but its seller and operators (the buyers of its open orders
 * read their orders, which carry their own frozen terms), and cannot be ordered (409 listing-taken-down: POST
 * /orders, every package, custom offers sent or accepted). Its open orders settle as usual: funded escrow is
 * delivered, released, refunded, disputed and auto-released like any other. A takedown is not a status of the
 * listing lifecycle (`listingTransitions`): the status keeps following the listing's orders, and the takedown
 * is a separate mark (`Listing.taken_down`) that restore clears, so a restored listing reads what its orders
 * give it. The seller is told why (event `listing.taken_down`, audience the seller) and may appeal once per
 * takedown (`POST /listings/{id}/appeal`, text: event `listing.appealed`; a second appeal 409
 * already-appealed). Restore (`POST /moderation/listings/{id}/restore`, reason) emits `listing.restored`.
 *
 * Accounts. A moderator suspends an account until a time or indefinitely, bans it, or reinstates it, each with
 * a reason (events `user.suspended`, `user.banned`, `user.reinstated`, audience the user). A suspended or
 * banned account cannot log in (403 account-suspended with `until`), and its existing sessions, personal
 * access tokens and API keys are refused at once (the next request) for what lists or orders: create or edit
 * a listing, send or accept an offer, create an order, report. Everything else keeps working: reads (its
 * orders, its events, its balance), and whatever settles its open orders (deliver, confirm, dispute, chat,
 * withdraw): money owed to it is still paid, by its counterparty's actions and by the background loops
 * (auto-release, reconciliation), which never look at standing. Its listings take no new order meanwhile (409
 * listing-unavailable; they stay in search). A suspension ends by itself at `until`.
 *
 * Routes under /moderation are for holders of the moderator role (issue 25 roles); a personal access token only
 * with the operator scope `moderation:write` while its owner is a moderator.
 */
import { z } from 'zod';
import { c, named, page, PaginationQuery, Pubkey, safeText, Timestamp, Uuid } from './common.js';
import { access } from './access.js';
import { Listing } from './listings.contract.js';
import { bodyProblems, routeErrors } from './problems.js';

/** Why a user reports a target (fixed list, as marketplaces offer: Etsy, eBay, Fiverr). */
export const REPORT_REASONS = {
  spam: 'spam, or a duplicate or misleading listing',
  scam: 'scam or fraud: asks for payment outside the escrow, fake delivery, stolen identity',
  prohibited: 'a prohibited service or content (illegal, dangerous, adult where not allowed)',
  intellectual_property: 'infringes a copyright or trademark',
  harassment: 'harassment, hate or threats',
  other: 'something else: say what in `text`',
} as const;
export type ReportReason = keyof typeof REPORT_REASONS;
export const ReportReason = z.enum(Object.keys(REPORT_REASONS) as [ReportReason, ...ReportReason[]]).describe(
  Object.entries(REPORT_REASONS)
    .map(([k, v]) => `\`${k}\`: ${v}`)
    .join('; '),
);

/** Reports one user may file in any 24 hours (then 429 rate-limited). */
export const REPORT_DAILY_LIMIT = 20;
/** How many of a target's open reports the queue shows with it (oldest first); `report_count` counts them all. */
export const QUEUE_REPORTS_SHOWN = 10;

export const REPORT_TARGET_TYPES = ['listing', 'user'] as const;
export const ReportTargetType = z.enum(REPORT_TARGET_TYPES);
export type ReportTargetType = z.infer<typeof ReportTargetType>;

export const REPORT_STATUSES = ['open', 'dismissed', 'actioned'] as const;
export const ReportStatus = z
  .enum(REPORT_STATUSES)
  .describe('open (waiting for a moderator), dismissed (a moderator found nothing to act on), actioned (the target was taken down, suspended or banned)');

/** The text of a decision: why (1..1000 characters, trimmed); the affected user receives it. */
export const DecisionReason = safeText(z.string().trim().min(1).max(1000));

export const Report = named(
  'Report',
  z.object({
    report_id: Uuid,
    target_type: ReportTargetType,
    target_id: Uuid.describe('The listing id, or the reported user\'s id'),
    target_wallet: Pubkey.describe('The listing\'s seller, or the reported user'),
    reason: ReportReason,
    text: z.string().describe('0..2000 characters; empty when none was given'),
    status: ReportStatus,
    created_at: Timestamp,
  }),
  'A report of a listing or a user, as its reporter sees it',
);
export type Report = z.infer<typeof Report>;

export const CreateReportBody = named(
  'CreateReportBody',
  z.discriminatedUnion('target_type', [
    z
      .object({
        target_type: z.literal('listing'),
        listing_id: Uuid,
        reason: ReportReason,
        text: safeText(z.string().trim().max(2000)).optional().describe('0..2000 characters (trimmed); defaults to empty'),
      })
      .strict(),
    z
      .object({
        target_type: z.literal('user'),
        wallet: Pubkey.describe('The reported user\'s wallet'),
        reason: ReportReason,
        text: safeText(z.string().trim().max(2000)).optional().describe('0..2000 characters (trimmed); defaults to empty'),
      })
      .strict(),
  ]),
  'What is reported (a listing by id, a user by wallet) and why',
);
export type CreateReportBody = z.infer<typeof CreateReportBody>;

/** One report in the moderators' queue: with its reporter. */
export const QueuedReport = named(
  'QueuedReport',
  z.object({
    report_id: Uuid,
    reporter_wallet: Pubkey,
    reason: ReportReason,
    text: z.string(),
    created_at: Timestamp,
  }),
);

/** A target with open reports, as the queue lists it. */
export const ReportGroup = named(
  'ReportGroup',
  z.object({
    target_type: ReportTargetType,
    target_id: Uuid.describe('The listing id, or the reported user\'s id (the dismiss route takes it)'),
    target_wallet: Pubkey.describe('The listing\'s seller, or the reported user'),
    listing_title: z.string().nullable().describe('The listing\'s title; null for a user'),
    taken_down: z.boolean().describe('listing: taken down now; user: suspended or banned now'),
    report_count: z.number().int().min(1).describe('Open reports of the target'),
    reasons: z.record(z.string(), z.number().int().min(1)).describe('Open reports per reason (reasons with none are absent)'),
    oldest_report_at: Timestamp.describe('The oldest open report: the queue\'s order'),
    latest_report_at: Timestamp,
    reports: z.array(QueuedReport).describe(`The target's oldest open reports, at most ${QUEUE_REPORTS_SHOWN}`),
  }),
  'A reported target with its open reports',
);
export type ReportGroup = z.infer<typeof ReportGroup>;

export const ReportQueuePage = named('ReportQueuePage', page(ReportGroup), 'Targets with open reports, oldest first');

export const ReportQueueQuery = PaginationQuery.extend({
  target_type: ReportTargetType.optional().describe('Only listings, or only users'),
});

export const DecisionBody = named('DecisionBody', z.object({ reason: DecisionReason.describe('Why (1..1000 characters); the affected user receives it') }).strict());

export const DismissResult = named(
  'DismissResult',
  z.object({ dismissed: z.number().int().min(0).describe('Open reports of the target now dismissed') }),
);

export const AppealBody = named(
  'AppealBody',
  z.object({ text: safeText(z.string().trim().min(1).max(2000)).describe('The seller\'s appeal, 1..2000 characters') }).strict(),
);

export const ACCOUNT_STATUSES = ['active', 'suspended', 'banned'] as const;
export const AccountStatus = z.enum(ACCOUNT_STATUSES);

/** A user's standing with the moderators: the data of the user.* events and the answer of the account routes. */
export const AccountStanding = named(
  'AccountStanding',
  z.object({
    wallet: Pubkey,
    status: AccountStatus.describe('active, suspended (until `until`, or indefinitely) or banned'),
    until: Timestamp.nullable().describe('When a suspension ends; null: indefinitely, banned, or active'),
    reason: z.string().nullable().describe('The moderator\'s reason for the last decision (reinstatement included)'),
    decided_at: Timestamp.nullable().describe('When that decision was taken; null: never moderated'),
  }),
  'A user\'s standing: active, suspended or banned, and why',
);
export type AccountStanding = z.infer<typeof AccountStanding>;

export const SuspendBody = named(
  'SuspendBody',
  z
    .object({
      reason: DecisionReason.describe('Why (1..1000 characters); the user receives it'),
      until: Timestamp.optional().describe('When the suspension ends by itself (in the future); omitted: until reinstated'),
    })
    .strict(),
);

/** listing.* events of moderation: the listing's `taken_down` carries the reason and the appeal. */
export const LISTING_MODERATION_EVENTS = ['listing.taken_down', 'listing.restored', 'listing.appealed'] as const;
export type ListingModerationEvent = (typeof LISTING_MODERATION_EVENTS)[number];
/** user.* events (resource `user`, id the user's id; data AccountStanding), audience the user. */
export const USER_STANDING_EVENTS = ['user.suspended', 'user.banned', 'user.reinstated'] as const;
export type UserStandingEvent = (typeof USER_STANDING_EVENTS)[number];

const targetParams = z.object({ target_type: ReportTargetType, target_id: Uuid });
const listingParams = z.object({ listing_id: Uuid });
const walletParams = z.object({ wallet: Pubkey });

const createReport = routeErrors(access.user('moderation:report'), [...bodyProblems, 'not-found', 'forbidden', 'report-exists', 'account-suspended']);
const queue = routeErrors(access.role('moderator', 'moderation:write'), ['forbidden'], { actors: ['moderator'] });
const dismiss = routeErrors(access.role('moderator', 'moderation:write'), [...bodyProblems, 'forbidden', 'not-found'], { actors: ['moderator'] });
const takedown = routeErrors(access.role('moderator', 'moderation:write'), [...bodyProblems, 'forbidden', 'not-found', 'invalid-state-transition'], { actors: ['moderator'] });
const restore = routeErrors(access.role('moderator', 'moderation:write'), [...bodyProblems, 'forbidden', 'not-found', 'invalid-state-transition'], { actors: ['moderator'] });
const appeal = routeErrors(access.user('listings:write'), [...bodyProblems, 'forbidden', 'not-found', 'invalid-state-transition', 'already-appealed'], {
  actors: ['seller'],
});
const suspend = routeErrors(access.role('moderator', 'moderation:write'), [...bodyProblems, 'forbidden', 'not-found'], { actors: ['moderator'] });
const ban = routeErrors(access.role('moderator', 'moderation:write'), [...bodyProblems, 'forbidden', 'not-found'], { actors: ['moderator'] });
const reinstate = routeErrors(access.role('moderator', 'moderation:write'), [...bodyProblems, 'forbidden', 'not-found', 'invalid-state-transition'], { actors: ['moderator'] });

export const moderation = c.router({
  createReport: {
    method: 'POST',
    path: '/reports',
    body: CreateReportBody,
    summary: 'Report a listing or a user to the moderators',
    description:
      'Any signed-in user (a personal access token needs `moderation:report`). A listing by `listing_id` (one the caller ' +
      'can see, else 404) or a user by `wallet` (404 when unknown); `reason` from the fixed list, `text` 0..2000 ' +
      'characters. 201 with the report. One open report per reporter and target: a repeat is 409 report-exists ' +
      `(\`report_id\`). Oneself or one's own listing: 403 forbidden. At most ${REPORT_DAILY_LIMIT} reports in any 24 hours ` +
      '(then 429 rate-limited, Retry-After). A suspended or banned account: 403 account-suspended. A report decides ' +
      'nothing by itself: moderators act.',
    responses: { 201: Report, ...createReport.responses },
    metadata: createReport.metadata,
  },
  listReportQueue: {
    method: 'GET',
    path: '/moderation/reports',
    query: ReportQueueQuery,
    summary: 'The moderators\' queue: open reports by target, oldest first',
    description:
      'Moderators only (403 forbidden otherwise; never a personal access token). Targets with open reports, the one whose ' +
      'oldest open report is oldest first, with counts per target and per reason and its oldest open reports ' +
      `(at most ${QUEUE_REPORTS_SHOWN}). Cursor pagination (limit 1..100, default 20); \`target_type\` filters.`,
    responses: { 200: ReportQueuePage, ...queue.responses },
    metadata: queue.metadata,
  },
  dismissReports: {
    method: 'POST',
    path: '/moderation/reports/:target_type/:target_id/dismiss',
    pathParams: targetParams,
    body: DecisionBody,
    summary: 'Dismiss a target\'s open reports',
    description:
      'Moderators only. Every open report of the target becomes `dismissed` with the reason; 200 with how many. 404 ' +
      'when the target has no open report.',
    responses: { 200: DismissResult, ...dismiss.responses },
    metadata: dismiss.metadata,
  },
  takeDownListing: {
    method: 'POST',
    path: '/moderation/listings/:listing_id/takedown',
    pathParams: listingParams,
    body: DecisionBody,
    summary: 'Take a listing down',
    description:
      'Moderators only. The listing leaves search and every list, answers 404 to everyone but its seller and operators, ' +
      'and cannot be ordered (409 listing-taken-down); its open orders settle as usual. Its open reports become ' +
      'actioned. Event `listing.taken_down` (to the seller) with the reason in `taken_down`. 200 with the listing; 409 ' +
      'invalid-state-transition when it is taken down already.',
    responses: { 200: Listing, ...takedown.responses },
    metadata: takedown.metadata,
  },
  restoreListing: {
    method: 'POST',
    path: '/moderation/listings/:listing_id/restore',
    pathParams: listingParams,
    body: DecisionBody,
    summary: 'Restore a taken-down listing',
    description:
      'Moderators only. The takedown is lifted: the listing is visible and can be ordered again, reading the status its ' +
      'orders give it. Event `listing.restored` (to the seller). 200 with the listing; 409 invalid-state-transition when ' +
      'it is not taken down.',
    responses: { 200: Listing, ...restore.responses },
    metadata: restore.metadata,
  },
  appealTakedown: {
    method: 'POST',
    path: '/listings/:listing_id/appeal',
    pathParams: listingParams,
    body: AppealBody,
    summary: 'Appeal the takedown of one\'s listing',
    description:
      'The listing\'s seller only (404 for others: they cannot see it). Once per takedown: a second appeal is 409 ' +
      'already-appealed; a listing that is not taken down 409 invalid-state-transition. Event `listing.appealed` ' +
      '(moderators see every event). 200 with the listing, its `taken_down.appeal` set.',
    responses: { 200: Listing, ...appeal.responses },
    metadata: appeal.metadata,
  },
  suspendUser: {
    method: 'POST',
    path: '/moderation/users/:wallet/suspend',
    pathParams: walletParams,
    body: SuspendBody,
    summary: 'Suspend an account (until a time, or indefinitely)',
    description:
      'Moderators only; not oneself (403). The account cannot log in, list, order or report until `until` (omitted: until ' +
      'reinstated); its credentials are refused for those at once; its open orders settle and it is still paid. Its open ' +
      'reports become actioned. Event `user.suspended` (to the user). 200 with the standing. A new suspension or a ban ' +
      'replaces the current one.',
    responses: { 200: AccountStanding, ...suspend.responses },
    metadata: suspend.metadata,
  },
  banUser: {
    method: 'POST',
    path: '/moderation/users/:wallet/ban',
    pathParams: walletParams,
    body: DecisionBody,
    summary: 'Ban an account',
    description:
      'Moderators only; not oneself (403). As an indefinite suspension, recorded as a ban. Event `user.banned` (to the ' +
      'user). 200 with the standing.',
    responses: { 200: AccountStanding, ...ban.responses },
    metadata: ban.metadata,
  },
  reinstateUser: {
    method: 'POST',
    path: '/moderation/users/:wallet/reinstate',
    pathParams: walletParams,
    body: DecisionBody,
    summary: 'Reinstate a suspended or banned account',
    description:
      'Moderators only. Lifts a suspension or a ban. Event `user.reinstated` (to the user). 200 with the standing; 409 ' +
      'invalid-state-transition when the account is active (a suspension that ran out is active).',
    responses: { 200: AccountStanding, ...reinstate.responses },
    metadata: reinstate.metadata,
  },
});
