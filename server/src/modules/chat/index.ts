/**
 * Chat module wiring (issue 11): order conversations, listing inquiries, read markers, reports.
 */
import type { PrismaClient } from '../../generated/prisma/client.js';
import { createChatRepo } from './chat.repo.js';
import { createChatService } from './chat.service.js';

export { createChatRepo, presentMessage, type ConversationRecord, type MessageRecord, type OfferPost } from './chat.repo.js';
export { createChatService, type ChatService } from './chat.service.js';

export function createChatModule(o: { db: PrismaClient; now?: () => Date; rateLimitPerMinute?: number }) {
  const repo = createChatRepo(o.db);
  const service = createChatService({ repo, db: o.db, now: o.now });
  return { repo, service, http: { service, rateLimitPerMinute: o.rateLimitPerMinute ?? 30 } };
}

export type ChatModule = ReturnType<typeof createChatModule>;
