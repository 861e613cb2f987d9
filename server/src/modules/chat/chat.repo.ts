/**
 * Chat storage (tables conversations, messages, read_markers). Queries only; rules in chat.service.ts.
 * Posting a message appends message.created (to both parties) in the message's transaction
 * (../events/outbox.ts).
 *
 * A custom offer (issue 24, modules/offers) is a message of kind offer: its row names the offer
 * (offer_id) and the message shows the offer as it is now (read with the offers module's read model,
 * `loadOffers` / `presentOffer`: chat reads offers, the offers module owns their rules).
 */
import type { Message } from '@bazaar/contract';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { appendEvents, notifyAppended } from '../events/index.js';
import { loadOffers, presentOffer, type OfferRecord } from '../offers/offers.repo.js';

type Sql = Pick<PrismaClient, '$queryRaw' | '$executeRaw'>;

/** What a post of an offer message adds to the message's transaction (modules/offers). */
export interface OfferPost {
  id: string;
  /** inserts the offer row (before the message, which names it) */
  insert(tx: Sql): Promise<void>;
  /** appends the offer's own event (offer.sent) once the message exists */
  sent(tx: Sql): Promise<void>;
}

export interface ConversationRecord {
  id: string;
  listingId: string;
  orderId: string | null;
  buyerId: string;
  sellerId: string;
  buyerWallet: string;
  sellerWallet: string;
  lastMessageAt: Date | null;
  createdAt: Date;
}

export interface MessageRecord {
  id: string;
  conversationId: string;
  orderId: string | null;
  listingId: string;
  senderId: string;
  senderWallet: string;
  senderRole: 'buyer' | 'seller' | 'arbiter';
  body: string;
  /** text, or offer: a custom offer (`offer`) */
  kind: 'text' | 'offer';
  /** the offer of a kind offer message, as it is now */
  offer: OfferRecord | null;
  createdAt: Date;
  report: { reason: string; at: Date; byWallet: string } | null;
}

const withUsers = Prisma.sql`
  SELECT c.id::text AS id, c.listing_id::text AS "listingId", c.order_id::text AS "orderId",
         c.buyer_id::text AS "buyerId", c.seller_id::text AS "sellerId", bu.wallet AS "buyerWallet", su.wallet AS "sellerWallet",
         c.last_message_at AS "lastMessageAt", c.created_at AS "createdAt"
    FROM conversations c JOIN users bu ON bu.id = c.buyer_id JOIN users su ON su.id = c.seller_id`;

const messageSelect = Prisma.sql`
  SELECT m.id::text AS id, m.conversation_id::text AS "conversationId", c.order_id::text AS "orderId", c.listing_id::text AS "listingId",
         m.sender_id::text AS "senderId", su.wallet AS "senderWallet", m.sender_role AS "senderRole", m.body, m.created_at AS "createdAt",
         m.kind, m.offer_id::text AS "offerId",
         m.report_reason AS "reportReason", m.reported_at AS "reportedAt", ru.wallet AS "reportedByWallet"
    FROM messages m JOIN conversations c ON c.id = m.conversation_id JOIN users su ON su.id = m.sender_id
    LEFT JOIN users ru ON ru.id = m.reported_by`;

type MessageRow = Omit<MessageRecord, 'report' | 'offer'> & {
  reportReason: string | null;
  reportedAt: Date | null;
  reportedByWallet: string | null;
  offerId: string | null;
};
const toMessage = (r: MessageRow, offers: ReadonlyMap<string, OfferRecord>): MessageRecord => ({
  id: r.id,
  conversationId: r.conversationId,
  orderId: r.orderId,
  listingId: r.listingId,
  senderId: r.senderId,
  senderWallet: r.senderWallet,
  senderRole: r.senderRole,
  body: r.body,
  kind: r.kind === 'offer' ? 'offer' : 'text',
  offer: r.offerId ? (offers.get(r.offerId) ?? null) : null,
  createdAt: new Date(r.createdAt),
  report: r.reportReason ? { reason: r.reportReason, at: new Date(r.reportedAt!), byWallet: r.reportedByWallet! } : null,
});

/** Records of message rows, with the offers of kind offer messages read in one query. */
async function toMessages(client: Pick<PrismaClient, '$queryRaw'>, rows: MessageRow[]): Promise<MessageRecord[]> {
  const ids = rows.flatMap((r) => (r.offerId ? [r.offerId] : []));
  const offers = new Map((await loadOffers(client, ids)).map((o) => [o.id, o]));
  return rows.map((r) => toMessage(r, offers));
}

/** The contract's Message of a record. */
export function presentMessage(m: MessageRecord): Message {
  return {
    message_id: m.id,
    conversation_id: m.conversationId,
    order_id: m.orderId,
    listing_id: m.listingId,
    sender_wallet: m.senderWallet,
    sender_role: m.senderRole,
    body: m.body,
    kind: m.kind,
    offer: m.offer ? presentOffer(m.offer) : null,
    created_at: m.createdAt.toISOString(),
    report: m.report ? { reason: m.report.reason, reported_at: m.report.at.toISOString(), reported_by_wallet: m.report.byWallet } : null,
  };
}

export function createChatRepo(db: PrismaClient) {
  async function conversation(client: Pick<PrismaClient, '$queryRaw'>, id: string): Promise<ConversationRecord | null> {
    const rows = await client.$queryRaw<ConversationRecord[]>`${withUsers} WHERE c.id = ${id}::uuid`;
    return rows[0] ?? null;
  }
  async function message(client: Pick<PrismaClient, '$queryRaw'>, id: string): Promise<MessageRecord | null> {
    const rows = await client.$queryRaw<MessageRow[]>`${messageSelect} WHERE m.id = ${id}::uuid`;
    return (await toMessages(client, rows))[0] ?? null;
  }

  return {
    conversation: (id: string) => conversation(db, id),
    message: (id: string) => message(db, id),

    /** The order's conversation, created on first use. */
    async forOrder(o: { id: string; listingId: string; buyerId: string; sellerId: string }): Promise<ConversationRecord> {
      await db.$executeRaw`
        INSERT INTO conversations (id, listing_id, order_id, buyer_id, seller_id, created_at)
        VALUES (gen_random_uuid(), ${o.listingId}::uuid, ${o.id}::uuid, ${o.buyerId}::uuid, ${o.sellerId}::uuid, now())
        ON CONFLICT (order_id) DO NOTHING`;
      const rows = await db.$queryRaw<ConversationRecord[]>`${withUsers} WHERE c.order_id = ${o.id}::uuid`;
      return rows[0]!;
    },

    /** The inquiry of (listing, buyer), created on first use (an advisory lock makes it one per pair). */
    async inquiry(listingId: string, buyerId: string, sellerId: string): Promise<ConversationRecord> {
      return db.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`inquiry:${listingId}:${buyerId}`}))`;
        const found = await tx.$queryRaw<ConversationRecord[]>`
          ${withUsers} WHERE c.listing_id = ${listingId}::uuid AND c.buyer_id = ${buyerId}::uuid AND c.order_id IS NULL`;
        if (found[0]) return found[0];
        const id = crypto.randomUUID();
        await tx.$executeRaw`
          INSERT INTO conversations (id, listing_id, buyer_id, seller_id, created_at)
          VALUES (${id}::uuid, ${listingId}::uuid, ${buyerId}::uuid, ${sellerId}::uuid, now())`;
        return (await conversation(tx, id))!;
      });
    },

    /**
     * Insert a message and its message.created event (to both parties), in one transaction. `offer`: the
     * message carries a custom offer (kind offer), inserted in the same transaction (modules/offers).
     */
    async post(c: ConversationRecord, senderId: string, role: MessageRecord['senderRole'], body: string, now: Date, offer?: OfferPost): Promise<MessageRecord> {
      const m = await db.$transaction(async (tx) => {
        const id = crypto.randomUUID();
        if (offer) await offer.insert(tx);
        await tx.$executeRaw`
          INSERT INTO messages (id, conversation_id, sender_id, sender_role, body, created_at, kind, offer_id)
          VALUES (${id}::uuid, ${c.id}::uuid, ${senderId}::uuid, ${role}, ${body}, ${now}, ${offer ? 'offer' : 'text'}, ${offer?.id ?? null}::uuid)`;
        await tx.$executeRaw`UPDATE conversations SET last_message_at = ${now} WHERE id = ${c.id}::uuid`;
        const m = (await message(tx, id))!;
        await appendEvents(tx, [{ type: 'message.created', resourceType: 'message', resourceId: id, audience: [c.buyerId, c.sellerId], data: presentMessage(m) }]);
        if (offer) await offer.sent(tx);
        return m;
      });
      notifyAppended();
      return m;
    },

    /** Newest first, before (createdAt, id) when given. */
    async messages(conversationId: string, limit: number, after?: { createdAt: Date; id: string }): Promise<MessageRecord[]> {
      const keyset = after ? Prisma.sql`AND (m.created_at, m.id) < (${after.createdAt}, ${after.id}::uuid)` : Prisma.empty;
      const rows = await db.$queryRaw<MessageRow[]>`
        ${messageSelect} WHERE m.conversation_id = ${conversationId}::uuid ${keyset}
         ORDER BY m.created_at DESC, m.id DESC LIMIT ${limit}`;
      return toMessages(db, rows);
    },

    /** The user's conversations, most recent activity first (keyset on (activity, id)). */
    async conversationsOf(userId: string, limit: number, after?: { createdAt: Date; id: string }): Promise<ConversationRecord[]> {
      const keyset = after ? Prisma.sql`AND (coalesce(c.last_message_at, c.created_at), c.id) < (${after.createdAt}, ${after.id}::uuid)` : Prisma.empty;
      return db.$queryRaw<ConversationRecord[]>`
        ${withUsers} WHERE (c.buyer_id = ${userId}::uuid OR c.seller_id = ${userId}::uuid) ${keyset}
         ORDER BY coalesce(c.last_message_at, c.created_at) DESC, c.id DESC LIMIT ${limit}`;
    },

    async readMarker(conversationId: string, userId: string) {
      return db.readMarker.findUnique({ where: { conversationId_userId: { conversationId, userId } } });
    },

    /** Move the marker forward to `m` (never back). */
    async markRead(conversationId: string, userId: string, m: MessageRecord): Promise<void> {
      await db.$executeRaw`
        INSERT INTO read_markers (conversation_id, user_id, last_read_at, last_read_id)
        VALUES (${conversationId}::uuid, ${userId}::uuid, ${m.createdAt}, ${m.id}::uuid)
        ON CONFLICT (conversation_id, user_id) DO UPDATE
          SET last_read_at = EXCLUDED.last_read_at, last_read_id = EXCLUDED.last_read_id
        WHERE (read_markers.last_read_at, read_markers.last_read_id) < (EXCLUDED.last_read_at, EXCLUDED.last_read_id)`;
    },

    /** Messages of the other party after `since` (all when null). */
    async unread(conversationId: string, userId: string, since: { at: Date; id: string } | null): Promise<number> {
      const after = since ? Prisma.sql`AND (m.created_at, m.id) > (${since.at}, ${since.id}::uuid)` : Prisma.empty;
      const r = await db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM messages m WHERE m.conversation_id = ${conversationId}::uuid AND m.sender_id <> ${userId}::uuid ${after}`;
      return Number(r[0]!.n);
    },

    /** Report a message once; false when it was reported before. */
    async report(messageId: string, byUserId: string, reason: string, now: Date): Promise<boolean> {
      const n = await db.$executeRaw`
        UPDATE messages SET report_reason = ${reason}, reported_at = ${now}, reported_by = ${byUserId}::uuid
         WHERE id = ${messageId}::uuid AND reported_at IS NULL`;
      return n === 1;
    },

    /** Order facts chat rules need. */
    async order(orderId: string): Promise<{ id: string; listingId: string; buyerId: string; sellerId: string; status: string } | null> {
      const rows = await db.$queryRaw<{ id: string; listingId: string; buyerId: string; sellerId: string; status: string }[]>`
        SELECT id::text AS id, listing_id::text AS "listingId", buyer_id::text AS "buyerId", seller_id::text AS "sellerId", status
          FROM orders WHERE id = ${orderId}::uuid`;
      return rows[0] ?? null;
    },

    async listing(listingId: string): Promise<{ id: string; sellerId: string; status: string } | null> {
      const rows = await db.$queryRaw<{ id: string; sellerId: string; status: string }[]>`
        SELECT id::text AS id, seller_id::text AS "sellerId", status FROM listings WHERE id = ${listingId}::uuid`;
      return rows[0] ?? null;
    },
  };
}

export type ChatRepo = ReturnType<typeof createChatRepo>;
