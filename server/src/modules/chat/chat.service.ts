/**
 * Chat rules: who may read and post where (see contract/src/chat.contract.ts), paging, read markers,
 * reports. Strangers get 404 (existence is not disclosed); an admin credential or a holder of the arbiter
 * role (issue 25) is the arbiter of a disputed order (reads disputed and resolved orders' conversations,
 * posts while disputed; 403 before).
 */
import { DomainError } from '../../errors.js';
import { cursorKey, decodeCursor, newestPage } from '../../lib/cursor.js';
import { hasRole, type AccessPrincipal } from '../auth/index.js';
import type { ChatRepo, ConversationRecord, MessageRecord } from './chat.repo.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { expireDueOffers } from '../offers/offers.repo.js';

type Role = MessageRecord['senderRole'];
const ARBITER_READS = new Set(['disputed', 'resolved']);

const notFound = (what: string) => new DomainError('not-found', `${what} not found.`);

/** May `p` act as the arbiter of an order's conversation (an admin, or the arbiter role)? */
const arbiter = (p: AccessPrincipal) => p.isAdmin || hasRole(p, 'arbiter');

export function createChatService(deps: { repo: ChatRepo; db: PrismaClient; now?: () => Date }) {
  const { repo } = deps;
  const now = deps.now ?? (() => new Date());
  const spec = (what: string) => ({ sort: 'created_desc', filters: { what }, keys: [cursorKey.timestamp] });
  const afterOf = (cursor: string | undefined, what: string) => {
    if (!cursor) return undefined;
    const c = decodeCursor(cursor, spec(what));
    return { createdAt: new Date(String(c.keys[0])), id: c.id };
  };

  /** The caller's role in `c`, or the refusal. `write`: posting (the arbiter only while disputed). */
  async function roleIn(c: ConversationRecord, p: AccessPrincipal, write: boolean): Promise<Role> {
    if (p.userId && p.userId === c.buyerId) return 'buyer';
    if (p.userId && p.userId === c.sellerId) return 'seller';
    if (arbiter(p) && c.orderId) {
      const o = await repo.order(c.orderId);
      if (o && (write ? o.status === 'disputed' : ARBITER_READS.has(o.status))) return 'arbiter';
      throw new DomainError('forbidden', 'The arbiter joins an order\'s conversation once the order is disputed.');
    }
    throw notFound(`Conversation ${c.id}`);
  }

  async function conversation(p: AccessPrincipal, id: string, write: boolean) {
    const c = await repo.conversation(id);
    if (!c) throw notFound(`Conversation ${id}`);
    return { c, role: await roleIn(c, p, write) };
  }

  async function orderConversation(p: AccessPrincipal, orderId: string, write: boolean) {
    const o = await repo.order(orderId);
    const party = o && p.userId && (p.userId === o.buyerId || p.userId === o.sellerId);
    if (!o || (!party && !arbiter(p))) throw notFound(`Order ${orderId}`);
    const c = await repo.forOrder(o);
    return { c, role: await roleIn(c, p, write) };
  }

  async function view(c: ConversationRecord, p: AccessPrincipal) {
    const marker = p.userId ? await repo.readMarker(c.id, p.userId) : null;
    const unread = p.userId ? await repo.unread(c.id, p.userId, marker ? { at: marker.lastReadAt, id: marker.lastReadId } : null) : 0;
    return { c, unread, lastReadId: marker?.lastReadId ?? null };
  }

  async function page(c: ConversationRecord, p: AccessPrincipal, q: { limit: number; cursor?: string }) {
    // the offers in it show their current state: lapsed ones expire now (offer.expired once)
    await expireDueOffers(deps.db, { conversationId: c.id }, now());
    const rows = await repo.messages(c.id, q.limit + 1, afterOf(q.cursor, `messages:${c.id}`));
    const { items, nextCursor } = newestPage(rows, q.limit, spec(`messages:${c.id}`));
    return { items, nextCursor, conversation: await view(c, p) };
  }

  return {
    async listOrderMessages(p: AccessPrincipal, orderId: string, q: { limit: number; cursor?: string }) {
      const { c } = await orderConversation(p, orderId, false);
      return page(c, p, q);
    },
    async sendOrderMessage(p: AccessPrincipal, orderId: string, body: string) {
      const { c, role } = await orderConversation(p, orderId, true);
      if (!p.userId) throw new DomainError('forbidden', 'Posting needs a user credential (the arbiter: an admin user, not a service API key).');
      return repo.post(c, p.userId, role, body, now());
    },
    async listMessages(p: AccessPrincipal, id: string, q: { limit: number; cursor?: string }) {
      const { c } = await conversation(p, id, false);
      return page(c, p, q);
    },
    async send(p: AccessPrincipal, id: string, body: string) {
      const { c, role } = await conversation(p, id, true);
      if (!p.userId) throw new DomainError('forbidden', 'Posting needs a user credential (the arbiter: an admin user, not a service API key).');
      return repo.post(c, p.userId, role, body, now());
    },
    async inquire(p: AccessPrincipal, listingId: string, body: string) {
      if (!p.userId) throw new DomainError('forbidden', 'Inquiries need a user credential.');
      const l = await repo.listing(listingId);
      if (!l || (l.status === 'unlisted' && l.sellerId !== p.userId)) throw notFound(`Listing ${listingId}`);
      if (l.sellerId === p.userId) throw new DomainError('own-listing', 'A seller cannot inquire about their own listing.');
      const c = await repo.inquiry(listingId, p.userId, l.sellerId);
      const message = await repo.post(c, p.userId, 'buyer', body, now());
      return { conversation: await view((await repo.conversation(c.id))!, p), message };
    },
    async list(p: AccessPrincipal, q: { limit: number; cursor?: string }) {
      if (!p.userId) return { items: [], nextCursor: null };
      const rows = await repo.conversationsOf(p.userId, q.limit + 1, afterOf(q.cursor, 'conversations'));
      const keyed = rows.map((c) => ({ ...c, createdAt: c.lastMessageAt ?? c.createdAt, created: c.createdAt }));
      const { items, nextCursor } = newestPage(keyed, q.limit, spec('conversations'));
      return { items: await Promise.all(items.map((c) => view({ ...c, createdAt: c.created }, p))), nextCursor };
    },
    async markRead(p: AccessPrincipal, id: string, messageId: string) {
      const { c } = await conversation(p, id, false);
      const m = await repo.message(messageId);
      if (!m || m.conversationId !== c.id) throw notFound(`Message ${messageId}`);
      if (p.userId) await repo.markRead(c.id, p.userId, m);
      return view(c, p);
    },
    async report(p: AccessPrincipal, messageId: string, reason: string) {
      const m = await repo.message(messageId);
      if (!m) throw notFound(`Message ${messageId}`);
      const c = (await repo.conversation(m.conversationId))!;
      const participant = p.userId && (p.userId === c.buyerId || p.userId === c.sellerId);
      if (!participant) throw notFound(`Message ${messageId}`);
      if (m.senderId === p.userId) throw new DomainError('conflict', 'You cannot report your own message.');
      if (!(await repo.report(messageId, p.userId!, reason, now()))) throw new DomainError('conflict', `Message ${messageId} was already reported.`);
      return (await repo.message(messageId))!;
    },
  };
}

export type ChatService = ReturnType<typeof createChatService>;
