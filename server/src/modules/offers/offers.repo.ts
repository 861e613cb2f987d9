/**
 * Offer storage (table offers; the offer's message is a row of messages with kind offer and offer_id).
 * Queries only; rules in offers.service.ts. Every status change is one conditional UPDATE on
 * `status = 'pending'` (so two decisions on one offer cannot both win: the row lock orders them) with
 * its `offer.*` event appended in the same transaction (transactional outbox, ../events/outbox.ts), to
 * the seller and the buyer only.
 *
 * `loadOffers` and `presentOffer` are also the chat module's read model of an offer message (its
 * `offer` member shows the offer as it is now), and `expireDueOffers` runs before the chat reads a
 * conversation (lazy expiry).
 */
import type { Offer, OfferStatus } from '@bazaar/contract';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { appendEvents, notifyAppended } from '../events/index.js';
import { toUiNumber } from '../../lib/money.js';

type Sql = Pick<PrismaClient, '$queryRaw' | '$executeRaw'>;

/** One milestone of an offer's terms (base units of the offer's currency). */
export interface OfferMilestoneRecord {
  /** null for the one milestone of an offer sent without milestones */
  title: string | null;
  amountBaseUnits: bigint;
  deliveryDays: number;
}

/** An offer as stored, with its parties' wallets and its message. */
export interface OfferRecord {
  id: string;
  conversationId: string;
  /** the message (kind offer) that carries it */
  messageId: string;
  listingId: string;
  sellerId: string;
  buyerId: string;
  sellerWallet: string;
  buyerWallet: string;
  title: string;
  description: string;
  currency: string;
  decimals: number;
  priceBaseUnits: bigint;
  /** 1..10, amounts summing to priceBaseUnits */
  milestones: OfferMilestoneRecord[];
  revisions: number;
  status: OfferStatus;
  expiresAt: Date;
  decidedAt: Date | null;
  orderId: string | null;
  createdAt: Date;
}

export type NewOffer = Omit<OfferRecord, 'messageId' | 'sellerWallet' | 'buyerWallet' | 'status' | 'decidedAt' | 'orderId'>;

interface OfferRow {
  id: string;
  conversationId: string;
  messageId: string | null;
  listingId: string;
  sellerId: string;
  buyerId: string;
  sellerWallet: string;
  buyerWallet: string;
  title: string;
  description: string;
  currency: string;
  decimals: number;
  price: string;
  milestones: Array<{ title: string | null; amount_base_units: string; delivery_days: number }>;
  revisions: number;
  status: OfferStatus;
  expiresAt: Date;
  decidedAt: Date | null;
  orderId: string | null;
  createdAt: Date;
}

const offerSelect = Prisma.sql`
  SELECT o.id::text AS id, o.conversation_id::text AS "conversationId", m.id::text AS "messageId", o.listing_id::text AS "listingId",
         o.seller_id::text AS "sellerId", o.buyer_id::text AS "buyerId", su.wallet AS "sellerWallet", bu.wallet AS "buyerWallet",
         o.title, o.description, o.currency, o.decimals, o.price_base_units::text AS price, o.milestones, o.revisions, o.status,
         o.expires_at AS "expiresAt", o.decided_at AS "decidedAt", o.order_id::text AS "orderId", o.created_at AS "createdAt"
    FROM offers o JOIN users su ON su.id = o.seller_id JOIN users bu ON bu.id = o.buyer_id
    LEFT JOIN messages m ON m.offer_id = o.id`;

const toRecord = (r: OfferRow): OfferRecord => ({
  id: r.id,
  conversationId: r.conversationId,
  messageId: r.messageId ?? '',
  listingId: r.listingId,
  sellerId: r.sellerId,
  buyerId: r.buyerId,
  sellerWallet: r.sellerWallet,
  buyerWallet: r.buyerWallet,
  title: r.title,
  description: r.description,
  currency: r.currency,
  decimals: r.decimals,
  priceBaseUnits: BigInt(r.price),
  milestones: r.milestones.map((m) => ({ title: m.title, amountBaseUnits: BigInt(m.amount_base_units), deliveryDays: m.delivery_days })),
  revisions: r.revisions,
  status: r.status,
  expiresAt: new Date(r.expiresAt),
  decidedAt: r.decidedAt ? new Date(r.decidedAt) : null,
  orderId: r.orderId,
  createdAt: new Date(r.createdAt),
});

/** The contract's Offer of a record. */
export function presentOffer(o: OfferRecord): Offer {
  return {
    offer_id: o.id,
    conversation_id: o.conversationId,
    message_id: o.messageId,
    listing_id: o.listingId,
    seller_wallet: o.sellerWallet,
    buyer_wallet: o.buyerWallet,
    title: o.title,
    description: o.description,
    currency: o.currency,
    price: toUiNumber(o.priceBaseUnits, o.decimals),
    price_base_units: o.priceBaseUnits.toString(),
    milestones: o.milestones.map((m) => ({
      title: m.title,
      amount: toUiNumber(m.amountBaseUnits, o.decimals),
      amount_base_units: m.amountBaseUnits.toString(),
      delivery_days: m.deliveryDays,
    })),
    revisions: o.revisions,
    delivery_days: o.milestones.reduce((s, m) => s + m.deliveryDays, 0),
    status: o.status,
    expires_at: o.expiresAt.toISOString(),
    created_at: o.createdAt.toISOString(),
    decided_at: o.decidedAt ? o.decidedAt.toISOString() : null,
    order_id: o.orderId,
  };
}

/** Offers by id (any order; missing ids are left out). */
export async function loadOffers(client: Pick<PrismaClient, '$queryRaw'>, ids: readonly string[]): Promise<OfferRecord[]> {
  if (ids.length === 0) return [];
  const rows = await client.$queryRaw<OfferRow[]>`${offerSelect} WHERE o.id = ANY(${[...ids]}::uuid[])`;
  return rows.map(toRecord);
}

const offerEvent = (type: `offer.${'sent' | 'accepted' | 'declined' | 'withdrawn' | 'expired'}`, o: OfferRecord) => ({
  type,
  resourceType: 'offer' as const,
  resourceId: o.id,
  audience: [o.sellerId, o.buyerId],
  data: presentOffer(o),
});

/**
 * Lazy expiry: pending offers past `expires_at` (on `now`) become expired, each with one offer.expired
 * event (the conditional UPDATE makes it once, whoever reads first). `scope` narrows the sweep: one
 * offer, one conversation's, or one user's (as seller or buyer). Returns the ids expired.
 */
export async function expireDueOffers(
  db: PrismaClient,
  scope: { offerId: string } | { conversationId: string } | { userId: string },
  now: Date,
): Promise<string[]> {
  const where =
    'offerId' in scope
      ? Prisma.sql`id = ${scope.offerId}::uuid`
      : 'conversationId' in scope
        ? Prisma.sql`conversation_id = ${scope.conversationId}::uuid`
        : Prisma.sql`(seller_id = ${scope.userId}::uuid OR buyer_id = ${scope.userId}::uuid)`;
  // the cheap read first: most reads find nothing to expire and open no transaction
  const due = await db.$queryRaw<{ id: string }[]>`
    SELECT id::text AS id FROM offers WHERE status = 'pending' AND expires_at <= ${now} AND ${where} LIMIT 100`;
  if (due.length === 0) return [];
  const expired = await db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<{ id: string }[]>`
      UPDATE offers SET status = 'expired', decided_at = expires_at
       WHERE id = ANY(${due.map((d) => d.id)}::uuid[]) AND status = 'pending' AND expires_at <= ${now}
      RETURNING id::text AS id`;
    const offers = await loadOffers(tx, rows.map((r) => r.id));
    await appendEvents(tx, offers.map((o) => offerEvent('offer.expired', o)));
    return offers.map((o) => o.id);
  });
  if (expired.length > 0) notifyAppended();
  return expired;
}

export function createOffersRepo(db: PrismaClient) {
  return {
    get: async (id: string): Promise<OfferRecord | null> => (await loadOffers(db, [id]))[0] ?? null,

    /**
     * Insert the offer (inside the transaction of its message: `tx` is the chat repo's post
     * transaction) and append offer.sent once the message exists (`sent`).
     */
    insert: async (tx: Sql, o: NewOffer): Promise<void> => {
      const milestones = JSON.stringify(
        o.milestones.map((m) => ({ title: m.title, amount_base_units: m.amountBaseUnits.toString(), delivery_days: m.deliveryDays })),
      );
      await tx.$executeRaw`
        INSERT INTO offers (id, conversation_id, listing_id, seller_id, buyer_id, title, description, currency, decimals,
                            price_base_units, milestones, revisions, status, expires_at, created_at)
        VALUES (${o.id}::uuid, ${o.conversationId}::uuid, ${o.listingId}::uuid, ${o.sellerId}::uuid, ${o.buyerId}::uuid, ${o.title},
                ${o.description}, ${o.currency}, ${o.decimals}, ${o.priceBaseUnits.toString()}::numeric, ${milestones}::jsonb,
                ${o.revisions}, 'pending', ${o.expiresAt}, ${o.createdAt})`;
    },
    /** offer.sent of a stored offer, in `tx` (after its message row exists). */
    sent: async (tx: Sql, id: string): Promise<void> => {
      const [o] = await loadOffers(tx, [id]);
      await appendEvents(tx, [offerEvent('offer.sent', o!)]);
    },

    /**
     * pending -> accepted with `orderId`, in `tx` (the order's insert transaction: HoldGuard.onCreated),
     * while not expired on `now`; appends offer.accepted. false when the offer is no longer pending or
     * expired (the caller rolls the order back).
     */
    claim: async (tx: Sql, id: string, orderId: string, now: Date): Promise<boolean> => {
      const n = await tx.$executeRaw`
        UPDATE offers SET status = 'accepted', order_id = ${orderId}::uuid, decided_at = ${now}
         WHERE id = ${id}::uuid AND status = 'pending' AND expires_at > ${now}`;
      if (n !== 1) return false;
      const [o] = await loadOffers(tx, [id]);
      await appendEvents(tx, [offerEvent('offer.accepted', o!)]);
      return true;
    },

    /** pending -> declined | withdrawn (not once expired on `now`), with its event; false when not pending. */
    decide: async (id: string, to: 'declined' | 'withdrawn', now: Date): Promise<boolean> => {
      const done = await db.$transaction(async (tx) => {
        const n = await tx.$executeRaw`
          UPDATE offers SET status = ${to}, decided_at = ${now}
           WHERE id = ${id}::uuid AND status = 'pending' AND expires_at > ${now}`;
        if (n !== 1) return false;
        const [o] = await loadOffers(tx, [id]);
        await appendEvents(tx, [offerEvent(to === 'declined' ? 'offer.declined' : 'offer.withdrawn', o!)]);
        return true;
      });
      if (done) notifyAppended();
      return done;
    },

    /** The user's offers (as seller and/or buyer), newest first, before (createdAt, id) when given. */
    list: async (
      userId: string,
      q: { role?: 'buyer' | 'seller'; status?: OfferStatus; limit: number; after?: { createdAt: Date; id: string } },
    ): Promise<OfferRecord[]> => {
      const party =
        q.role === 'buyer'
          ? Prisma.sql`o.buyer_id = ${userId}::uuid`
          : q.role === 'seller'
            ? Prisma.sql`o.seller_id = ${userId}::uuid`
            : Prisma.sql`(o.buyer_id = ${userId}::uuid OR o.seller_id = ${userId}::uuid)`;
      const status = q.status ? Prisma.sql`AND o.status = ${q.status}` : Prisma.empty;
      const keyset = q.after ? Prisma.sql`AND (o.created_at, o.id) < (${q.after.createdAt}, ${q.after.id}::uuid)` : Prisma.empty;
      const rows = await db.$queryRaw<OfferRow[]>`
        ${offerSelect} WHERE ${party} ${status} ${keyset} ORDER BY o.created_at DESC, o.id DESC LIMIT ${q.limit}`;
      return rows.map(toRecord);
    },
  };
}

export type OffersRepo = ReturnType<typeof createOffersRepo>;
