/**
 * ts-rest handlers of `contract.moderation` (issue 25): reports, the moderators' queue, takedowns and
 * appeals, account standing. Rules live in modules/moderation; errors are DomainErrors (problem+json in one
 * place). The moderator routes need the moderator role (contract: `access.role('moderator', 'moderation:write')`).
 */
import { initServer } from '@ts-rest/express';
import { contract, type Report, type ReportGroup } from '@bazaar/contract';
import { DomainError } from '../errors.js';
import { presentListing, type ListingRecord, type ListingsConfig } from '../modules/listings/index.js';
import type { Actor, ModerationService, ReportGroupRecord, ReportRecord } from '../modules/moderation/index.js';
import type { Principal } from '../modules/auth/index.js';
import { userOf } from './listings.handlers.js';

type WithPrincipal = { principal?: Principal };

export interface ModerationHttpDeps {
  service: ModerationService;
  /** currencies and categories: how a listing is presented */
  config: Pick<ListingsConfig, 'currencies' | 'categories'>;
}

/** The report as its reporter sees it. */
export function presentReport(r: ReportRecord): Report {
  return {
    report_id: r.id,
    target_type: r.targetType,
    target_id: r.targetId,
    target_wallet: r.targetWallet,
    reason: r.reason,
    text: r.text,
    status: r.status,
    created_at: r.createdAt.toISOString(),
  };
}

/** A target of the moderators' queue. */
export function presentReportGroup(g: ReportGroupRecord): ReportGroup {
  return {
    target_type: g.targetType,
    target_id: g.targetId,
    target_wallet: g.targetWallet,
    listing_title: g.listingTitle,
    taken_down: g.restricted,
    report_count: g.count,
    reasons: g.reasons,
    oldest_report_at: g.oldest.toISOString(),
    latest_report_at: g.latest.toISOString(),
    reports: g.reports.map((r) => ({ report_id: r.id, reporter_wallet: r.reporterWallet, reason: r.reason, text: r.text, created_at: r.createdAt.toISOString() })),
  };
}

/** The operator behind the request (the auth middleware admitted her). */
function actorOf(req: WithPrincipal): Actor {
  const p = req.principal;
  if (!p) throw new DomainError('unauthorized', 'No credential was sent.');
  return { kind: p.kind, userId: p.userId, wallet: p.wallet, isAdmin: p.isAdmin, roles: p.roles, apiKeyId: p.apiKeyId ?? null };
}

export function moderationHandlers(deps: ModerationHttpDeps) {
  const s = initServer();
  const { service, config } = deps;
  const listing = (l: ListingRecord) => presentListing(l, config);

  return s.router(contract.moderation, {
    createReport: async ({ body, req }) => ({ status: 201 as const, body: presentReport(await service.report(userOf(req), body)) }),
    listReportQueue: async ({ query }) => {
      const page = await service.queue({ targetType: query.target_type, limit: query.limit, cursor: query.cursor });
      return { status: 200 as const, body: { data: page.items.map(presentReportGroup), next_cursor: page.nextCursor } };
    },
    dismissReports: async ({ params, body, req }) => ({
      status: 200 as const,
      body: { dismissed: await service.dismiss(actorOf(req), params.target_type, params.target_id, body.reason) },
    }),
    takeDownListing: async ({ params, body, req }) => ({ status: 200 as const, body: listing(await service.takeDown(actorOf(req), params.listing_id, body.reason)) }),
    restoreListing: async ({ params, body, req }) => ({ status: 200 as const, body: listing(await service.restore(actorOf(req), params.listing_id, body.reason)) }),
    appealTakedown: async ({ params, body, req }) => ({ status: 200 as const, body: listing(await service.appeal(userOf(req), params.listing_id, body.text)) }),
    suspendUser: async ({ params, body, req }) => ({
      status: 200 as const,
      body: await service.suspend(actorOf(req), params.wallet, body.reason, body.until ? new Date(body.until) : null),
    }),
    banUser: async ({ params, body, req }) => ({ status: 200 as const, body: await service.ban(actorOf(req), params.wallet, body.reason) }),
    reinstateUser: async ({ params, body, req }) => ({ status: 200 as const, body: await service.reinstate(actorOf(req), params.wallet, body.reason) }),
  });
}
