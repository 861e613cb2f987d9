/**
 * Moderation module wiring (issue 25; README.md):
 *
 *   const standing = standingPort(db, now);               // listings, offers, orders, auth ask it
 *   const moderation = createModerationModule({ db, listings: listings.moderation, standing, now });
 *   createExpressEndpoints(contract.moderation, moderationHandlers(moderation.http), router);
 */
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { ListingModerationStore } from '../listings/index.js';
import { createModerationRepo } from './moderation.repo.js';
import { createModerationService } from './moderation.service.js';
import type { StandingPort } from './moderation.standing.js';

export { createModerationRepo, type ModerationRepo, type ReportGroupRecord, type ReportRecord } from './moderation.repo.js';
export { createModerationService, actorId, type ModerationService, type Actor } from './moderation.service.js';
export { standingPort, restrictionAt, presentStanding, accountSuspended, type StandingPort, type StandingRow } from './moderation.standing.js';

export function createModerationModule(o: { db: PrismaClient; listings: ListingModerationStore; standing: StandingPort; now?: () => Date }) {
  const repo = createModerationRepo(o.db);
  const service = createModerationService({ repo, listings: o.listings, standing: o.standing, now: o.now ?? (() => new Date()) });
  return { repo, service, http: { service } };
}

export type ModerationModule = ReturnType<typeof createModerationModule>;
