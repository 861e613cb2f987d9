/**
 * Custom offers (issue 24 item 6): the use cases send, read, accept, decline, withdraw, and the lazy
 * expiry. Rules (contract/src/offers.contract.ts states them for clients):
 *
 *  - Who: the seller of a conversation sends offers to its buyer (the buyer: 403; anyone else: 404);
 *    only the buyer accepts or declines (the seller: 403), only the seller withdraws (the buyer: 403).
 *  - Terms are frozen when sent, in base units of the offer's currency: a known currency, the currency of
 *    the listing the order will be on, no more decimals than it has, not under the listing minimum
 *    price (LISTING_MIN_PRICE: the fee of the order must pay what the service spends on it), 1..10
 *    milestones summing exactly to the price or one milestone of `delivery_days`, at most 365 delivery
 *    days in all (a listing's longest duration; within the escrow program's max_delivery_window).
 *  - The listing: `listing_id` (one of the seller's listings) or the conversation's listing. Decision:
 *    an offer always names a listing (the orders table needs one: category, token, hold), rather than
 *    a hidden per-seller "custom" listing, which would need a token mint the seller pays for and a
 *    listing nobody can see: the simplest safe option. The order counts against that listing like any order.
 *  - Accept: the order is created through the orders module's seam (`createOrder(caller, input,
 *    { terms, offerId, onCreated })`) with the offer's terms, never terms from the request; the offer is
 *    claimed (pending -> accepted, order_id) inside the order's insert transaction, so the order and the
 *    acceptance commit together or not at all, and one offer never yields two orders (the order's
 *    idempotency key is `offer:<id>`: a second or concurrent accept resumes the same order).
 *  - Expiry: a pending offer past `expires_at` (service clock) is expired lazily, before any read of
 *    it (GET, lists, the conversation's messages) and before any decision on it; offer.expired once.
 */
import { randomUUID } from 'node:crypto';
import type { CreateOfferBody, OfferStatus } from '@bazaar/contract';
import { OFFER_LIMITS } from '@bazaar/contract';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { DomainError } from '../../errors.js';
import { cursorKey, decodeCursor, newestPage } from '../../lib/cursor.js';
import type { CurrencyInfo } from '../../lib/currency.js';
import { formatUiAmount, toBaseUnits } from '../../lib/money.js';
import type { ChatRepo } from '../chat/chat.repo.js';
import type { OrderTerms } from '../listings/order-terms.js';
import type { OrderRecord, OrdersService, PaymentInstructions, PrincipalLike } from '../orders/index.js';
import { offerErrors, type FieldError } from './offers.errors.js';
import { expireDueOffers, type NewOffer, type OfferMilestoneRecord, type OfferRecord, type OffersRepo } from './offers.repo.js';

/** The listing facts an offer needs (the listings module's port). */
export interface OfferListingsPort {
  get(listingId: string): Promise<{ id: string; sellerId: string; currency: string; takenDown?: unknown } | null>;
}

export interface OffersServiceDeps {
  db: PrismaClient;
  repo: OffersRepo;
  chat: Pick<ChatRepo, 'conversation' | 'post'>;
  listings: OfferListingsPort;
  /** the orders module's service; null without an escrow program (accept: 503 chain-unavailable) */
  orders: Pick<OrdersService, 'createOrder'> | null;
  currencies: readonly CurrencyInfo[];
  /** LISTING_MIN_PRICE per currency code (UI amount text), as listings apply it */
  minPrice?: Readonly<Record<string, string>>;
  now?: () => Date;
  /** issue 25 (modules/moderation): a suspended or banned seller sends no offer (an offer lists a sale) */
  standing?: { assertMayTrade(userId: string): Promise<void> };
}

/** What the buyer may choose when accepting (as POST /orders): never the terms. */
export interface AcceptInput {
  paymentSource?: 'wallet' | 'custodial';
  buyerWallet?: string | null;
  /** the client network (per-network hold limit); null: not counted */
  network?: string | null;
}

const DAY_MS = 86_400_000;

/** The frozen terms of an offer, as the orders module takes them. */
export function termsOfOffer(o: OfferRecord): OrderTerms {
  return {
    packageKey: null,
    packageName: null,
    priceBaseUnits: o.priceBaseUnits,
    revisionsIncluded: o.revisions,
    milestones: o.milestones.map((m) => ({ title: m.title, amountBaseUnits: m.amountBaseUnits, deliveryDays: m.deliveryDays })),
  };
}

/** The claim lost inside the order's transaction (the offer left pending meanwhile): the order is rolled back. */
class ClaimLost extends Error {}

export function createOffersService(deps: OffersServiceDeps) {
  const { repo, chat, db } = deps;
  const now = deps.now ?? (() => new Date());
  const spec = (filters: Record<string, unknown>) => ({ sort: 'created_desc', filters: { what: 'offers', ...filters }, keys: [cursorKey.timestamp] });

  /** The offer, expired first when due; 404 unless the caller is its seller or buyer. */
  async function visible(p: PrincipalLike, id: string): Promise<OfferRecord> {
    await expireDueOffers(db, { offerId: id }, now());
    const o = await repo.get(id);
    if (!o || !p.userId || (p.userId !== o.sellerId && p.userId !== o.buyerId)) throw offerErrors.notFound(`Offer ${id}`);
    return o;
  }

  /** Validate a new offer's terms: base units of `cur`, milestones, expiry. Pushes field errors. */
  function terms(body: CreateOfferBody, cur: CurrencyInfo, errors: FieldError[]) {
    const price = toBaseUnits(body.price, cur.decimals);
    if (!price.ok) errors.push({ path: 'body.price', message: price.message, code: price.code });
    const min = deps.minPrice?.[cur.code];
    const minBase = min !== undefined ? toBaseUnits(min, cur.decimals) : null;
    if (price.ok && minBase?.ok && price.value < minBase.value) errors.push({ path: 'body.price', message: `at least ${min} ${cur.code}`, code: 'below_minimum' });
    let milestones: OfferMilestoneRecord[] = [];
    if (body.milestones) {
      if (body.delivery_days !== undefined) {
        errors.push({ path: 'body.delivery_days', message: 'not allowed with milestones (each milestone has its own)', code: 'not_allowed' });
      }
      body.milestones.forEach((m, i) => {
        const a = toBaseUnits(m.amount, cur.decimals);
        if (!a.ok) errors.push({ path: `body.milestones.${i}.amount`, message: a.message, code: a.code });
        else milestones.push({ title: m.title, amountBaseUnits: a.value, deliveryDays: m.delivery_days });
      });
      const sum = milestones.reduce((s, m) => s + m.amountBaseUnits, 0n);
      if (price.ok && milestones.length === body.milestones.length && sum !== price.value) {
        errors.push({
          path: 'body.milestones',
          message: `amounts sum to ${formatUiAmount(sum, cur.decimals)} ${cur.code}, not the price ${formatUiAmount(price.value, cur.decimals)}`,
          code: 'milestones_sum',
        });
      }
    } else if (body.delivery_days === undefined) {
      errors.push({ path: 'body.delivery_days', message: 'required without milestones', code: 'required' });
    } else if (price.ok) {
      milestones = [{ title: null, amountBaseUnits: price.value, deliveryDays: body.delivery_days }];
    }
    const days = milestones.reduce((s, m) => s + m.deliveryDays, 0);
    if (days > OFFER_LIMITS.maxTotalDeliveryDays) {
      errors.push({ path: 'body.milestones', message: `delivery days add up to ${days}, at most ${OFFER_LIMITS.maxTotalDeliveryDays}`, code: 'too_long' });
    }
    const t = now();
    const expiresAt = body.expires_at ? new Date(body.expires_at) : new Date(t.getTime() + OFFER_LIMITS.defaultLifetimeDays * DAY_MS);
    if (expiresAt.getTime() <= t.getTime() || expiresAt.getTime() > t.getTime() + OFFER_LIMITS.maxLifetimeDays * DAY_MS) {
      errors.push({ path: 'body.expires_at', message: `must be in the future and at most ${OFFER_LIMITS.maxLifetimeDays} days ahead`, code: 'out_of_range' });
    }
    // createdAt: the same instant the default expiry counts from (one clock read: expires_at - created_at is exactly the lifetime)
    return { price: price.ok ? price.value : 0n, milestones, expiresAt, createdAt: t };
  }

  async function decide(p: PrincipalLike, id: string, to: 'declined' | 'withdrawn'): Promise<OfferRecord> {
    const o = await visible(p, id);
    const party = to === 'declined' ? o.buyerId : o.sellerId;
    if (p.userId !== party) throw offerErrors.wrongParty(to === 'declined' ? 'decline' : 'withdraw');
    if (!(await repo.decide(id, to, now()))) {
      const current = await visible(p, id);
      throw offerErrors.notPending(id, current.status, current.orderId);
    }
    return (await repo.get(id))!;
  }

  return {
    /**
     * The seller of conversation `conversationId` sends its buyer an offer: stored with its message
     * (kind offer) and offer.sent + message.created in one transaction. Errors: 404 not-found (no such
     * conversation, or the caller is not in it), 403 forbidden (the caller is its buyer), 400
     * validation-error (see the module comment; `errors[].code`).
     */
    async create(p: PrincipalLike, conversationId: string, body: CreateOfferBody): Promise<OfferRecord> {
      if (!p.userId) throw offerErrors.needsUser();
      const c = await chat.conversation(conversationId);
      if (!c || (p.userId !== c.buyerId && p.userId !== c.sellerId)) throw offerErrors.notFound(`Conversation ${conversationId}`);
      if (p.userId !== c.sellerId) throw offerErrors.notSeller();
      await deps.standing?.assertMayTrade(p.userId);
      const errors: FieldError[] = [];
      const listingId = body.listing_id ?? c.listingId;
      const listing = await deps.listings.get(listingId);
      // issue 25: a taken-down listing is not sold, by offer either (its seller still sees it)
      if (listing && listing.sellerId === c.sellerId && listing.takenDown) {
        throw new DomainError('listing-taken-down', `Listing ${listingId} was taken down by a moderator: no offer can be made on it.`);
      }
      if (!listing || listing.sellerId !== c.sellerId) errors.push({ path: 'body.listing_id', message: 'must be one of your listings', code: 'not_your_listing' });
      const cur = deps.currencies.find((x) => x.code === body.currency);
      if (!cur) errors.push({ path: 'body.currency', message: `must be one of ${deps.currencies.map((x) => x.code).join(', ')}`, code: 'unknown_currency' });
      else if (listing && listing.sellerId === c.sellerId && listing.currency !== cur.code) {
        errors.push({ path: 'body.currency', message: `must be the listing's currency ${listing.currency}`, code: 'currency_mismatch' });
      }
      const t = cur ? terms(body, cur, errors) : null;
      if (errors.length > 0 || !cur || !t) throw offerErrors.validation(errors);

      const id = randomUUID();
      const offer: NewOffer = {
        id,
        conversationId: c.id,
        listingId,
        sellerId: c.sellerId,
        buyerId: c.buyerId,
        title: body.title,
        description: body.description,
        currency: cur.code,
        decimals: cur.decimals,
        priceBaseUnits: t.price,
        milestones: t.milestones,
        revisions: body.revisions,
        expiresAt: t.expiresAt,
        createdAt: t.createdAt,
      };
      const summary = `Offer: ${body.title} (${formatUiAmount(t.price, cur.decimals)} ${cur.code})`;
      const m = await chat.post(c, p.userId, 'seller', summary, offer.createdAt, {
        id,
        insert: (tx) => repo.insert(tx, offer),
        sent: (tx) => repo.sent(tx, id),
      });
      return m.offer!;
    },

    /** One offer (expired first when due); 404 for anyone but its seller and buyer. */
    get: visible,

    /** The caller's offers (as seller and/or buyer), newest first; lapsed ones expire first. */
    async list(p: PrincipalLike, q: { role?: 'buyer' | 'seller'; status?: OfferStatus; limit: number; cursor?: string }) {
      if (!p.userId) return { items: [] as OfferRecord[], nextCursor: null };
      await expireDueOffers(db, { userId: p.userId }, now());
      const s = spec({ role: q.role, status: q.status });
      const c = q.cursor ? decodeCursor(q.cursor, s) : null;
      const rows = await repo.list(p.userId, {
        role: q.role,
        status: q.status,
        limit: q.limit + 1,
        after: c ? { createdAt: new Date(String(c.keys[0])), id: c.id } : undefined,
      });
      return newestPage(rows, q.limit, s);
    },

    /**
     * The buyer accepts: the order with the offer's terms (see the module comment). Returns the offer
     * (accepted) and the order with its payment (null for custodial, or when the order no longer awaits
     * payment). Accepting an offer the buyer accepted already returns its order. Errors: 404, 403 (not
     * the buyer), 409 offer-expired / offer-not-pending, 503 chain-unavailable (no escrow program; or
     * the payment could not be built: the offer is accepted, a retry returns the order), and every error
     * of POST /orders (listing-unavailable, own-listing, insufficient-funds, ...: the offer stays pending).
     */
    async accept(p: PrincipalLike, id: string, input: AcceptInput): Promise<{ offer: OfferRecord; order: OrderRecord; payment: PaymentInstructions | null }> {
      const o = await visible(p, id);
      if (p.userId !== o.buyerId) throw offerErrors.wrongParty('accept');
      if (o.status !== 'pending' && o.status !== 'accepted') throw offerErrors.notPending(id, o.status, o.orderId);
      const orders = deps.orders;
      if (!orders) throw new DomainError('chain-unavailable', 'The escrow program is not configured on this service.');
      const createFor = (offer: OfferRecord) =>
        orders.createOrder(
          p,
          { listingId: offer.listingId, buyerWallet: input.buyerWallet ?? null, paymentSource: input.paymentSource ?? 'wallet', network: input.network ?? null },
          {
            terms: termsOfOffer(offer),
            offerId: offer.id,
            onCreated: async (tx, order) => {
              if (!(await repo.claim(tx as Parameters<OffersRepo['claim']>[0], offer.id, order.id, now()))) throw new ClaimLost();
            },
          },
        );
      let created;
      try {
        created = await createFor(o);
      } catch (err) {
        if (!(err instanceof ClaimLost)) throw err;
        // decided (or lapsed) between the read and the claim: nothing was created
        const current = await visible(p, id);
        if (current.status !== 'accepted') throw offerErrors.notPending(id, current.status, current.orderId);
        created = await createFor(current);
      }
      return { offer: (await repo.get(id))!, order: created.order, payment: created.payment };
    },

    /** The buyer declines a pending offer (offer.declined). 404 / 403 / 409 offer-expired / offer-not-pending. */
    decline: (p: PrincipalLike, id: string) => decide(p, id, 'declined'),
    /** The seller withdraws a pending offer (offer.withdrawn). 404 / 403 / 409 offer-expired / offer-not-pending. */
    withdraw: (p: PrincipalLike, id: string) => decide(p, id, 'withdrawn'),
  };
}

export type OffersService = ReturnType<typeof createOffersService>;
