/**
 * ts-rest handlers of `contract.chat`. Rules live in modules/chat. The three routes that post a
 * message share one rate limit per sender (express-rate-limit keyed by the principal's user id, counters
 * in the database so every replica shares them): CHAT_RATE_LIMIT_PER_MINUTE, then 429 rate-limited with
 * Retry-After.
 */
import type { RequestHandler } from 'express';
import type { Store } from 'express-rate-limit';
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import { DomainError } from '../errors.js';
import type { AccessPrincipal, Principal } from '../modules/auth/index.js';
import { presentMessage, type ChatService, type ConversationRecord } from '../modules/chat/index.js';
import { perMinuteLimit } from './security.js';

export interface ChatHttpDeps {
  service: ChatService;
  rateLimitPerMinute: number;
  /** where the per-sender counters live (router: PrismaRateLimitStore, shared by every replica); absent: this process's memory */
  rateLimitStore?: Store;
}

function principalOf(req: unknown): AccessPrincipal {
  const p = (req as { principal?: Partial<Principal> }).principal;
  if (!p) throw new DomainError('unauthorized', 'No credential was sent.');
  return { userId: p.userId ?? null, isAdmin: !!p.isAdmin, roles: p.roles ?? [] };
}

function presentConversation(v: { c: ConversationRecord; unread: number; lastReadId: string | null }) {
  return {
    conversation_id: v.c.id,
    listing_id: v.c.listingId,
    order_id: v.c.orderId,
    buyer_wallet: v.c.buyerWallet,
    seller_wallet: v.c.sellerWallet,
    last_message_at: v.c.lastMessageAt ? new Date(v.c.lastMessageAt).toISOString() : null,
    unread_count: v.unread,
    last_read_message_id: v.lastReadId,
    created_at: new Date(v.c.createdAt).toISOString(),
  };
}

/** One limiter for every route that posts a message: `perMinute` per sender. */
export function senderLimit(perMinute: number, store?: Store): RequestHandler {
  return perMinuteLimit({
    perMinute,
    store,
    key: (req) => `sender:${(req as { principal?: { userId?: string | null } }).principal?.userId ?? 'none'}`,
    detail: (_req, retryAfter) => `At most ${perMinute} messages per minute per sender; retry in ${retryAfter} s.`,
  });
}

export function chatHandlers(deps: ChatHttpDeps) {
  const s = initServer();
  const { service } = deps;
  const limited = [senderLimit(deps.rateLimitPerMinute, deps.rateLimitStore)] as never;
  const pageBody = (r: Awaited<ReturnType<ChatService['listMessages']>>) => ({
    data: r.items.map(presentMessage),
    next_cursor: r.nextCursor,
    conversation: presentConversation(r.conversation),
  });
  return s.router(contract.chat, {
    listOrderMessages: async ({ params, query, req }) => ({
      status: 200 as const,
      body: pageBody(await service.listOrderMessages(principalOf(req), params.order_id, query)),
    }),
    sendOrderMessage: {
      middleware: limited,
      handler: async ({ params, body, req }) => ({
        status: 201 as const,
        body: presentMessage(await service.sendOrderMessage(principalOf(req), params.order_id, body.body)),
      }),
    },
    createInquiry: {
      middleware: limited,
      handler: async ({ params, body, req }) => {
        const r = await service.inquire(principalOf(req), params.listing_id, body.body);
        return { status: 201 as const, body: { conversation: presentConversation(r.conversation), message: presentMessage(r.message) } };
      },
    },
    listConversations: async ({ query, req }) => {
      const r = await service.list(principalOf(req), query);
      return { status: 200 as const, body: { data: r.items.map(presentConversation), next_cursor: r.nextCursor } };
    },
    listConversationMessages: async ({ params, query, req }) => ({
      status: 200 as const,
      body: pageBody(await service.listMessages(principalOf(req), params.conversation_id, query)),
    }),
    sendConversationMessage: {
      middleware: limited,
      handler: async ({ params, body, req }) => ({
        status: 201 as const,
        body: presentMessage(await service.send(principalOf(req), params.conversation_id, body.body)),
      }),
    },
    markConversationRead: async ({ params, body, req }) => ({
      status: 200 as const,
      body: presentConversation(await service.markRead(principalOf(req), params.conversation_id, body.message_id)),
    }),
    reportMessage: async ({ params, body, req }) => ({
      status: 200 as const,
      body: presentMessage(await service.report(principalOf(req), params.message_id, body.reason)),
    }),
  });
}
