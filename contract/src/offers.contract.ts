/**
 * Custom offers (issue 24 item 6): work no package describes, priced by the seller for one buyer.
 *
 *  - The seller of a conversation (an inquiry or an order conversation, chat.contract.ts) sends its buyer
 *    an offer: `POST /conversations/{conversation_id}/offers` with a title, a description, a price in a
 *    currency, 0..20 revisions, either `delivery_days` or 1..10 milestones (title, amount, delivery days;
 *    the amounts sum to the price exactly, in base units) and an expiry (default 7 days, at most 30). The
 *    offer appears in the conversation as a message of kind `offer` (its `offer` member shows the offer's
 *    current state).
 *  - The listing: an order needs one (its category, token and hold). `listing_id` names one of the seller's
 *    listings; absent, the conversation's listing is used (every conversation belongs to one of the
 *    seller's listings). The offer's currency must be that listing's currency. The order counts against
 *    the listing like any order (its hold, capacity and stock).
 *  - The buyer accepts (`POST /offers/{offer_id}/accept`, Idempotency-Key required): the order is
 *    created with the offer's frozen terms (price, milestones, revisions; never terms from the request
 *    body) and the offer becomes `accepted` with its `order_id`; the order shows `offer_id`. Accepting an
 *    offer the same buyer accepted already returns that order (with a fresh payment transaction while it
 *    awaits payment): one offer gives at most one order, also under concurrent accepts.
 *  - The buyer declines, the seller withdraws, both only while pending (409 offer-not-pending after). A
 *    pending offer past `expires_at` is expired (lazily, on any read or action; 409 offer-expired on
 *    accept).
 *  - Events `offer.sent|accepted|declined|withdrawn|expired` (the Offer as data) reach the stream and
 *    webhooks of the two parties only (a token needs `orders:read` to see them).
 *  - Strangers get 404 on every offer route (existence is not disclosed).
 */
import { z } from 'zod';
import { access } from './access.js';
import {
  BaseUnits,
  c,
  CurrencyCode,
  IdempotencyHeaders,
  named,
  PaginationQuery,
  page,
  Pubkey,
  safeText,
  Timestamp,
  UiAmount,
  Uuid,
} from './common.js';
import { CreateOrderResponse, PaymentSource } from './orders.contract.js';
import { bodyProblems, routeErrors } from './problems.js';

export const OFFER_EVENTS = ['offer.sent', 'offer.accepted', 'offer.declined', 'offer.withdrawn', 'offer.expired'] as const;
export const OFFER_STATUSES = ['pending', 'accepted', 'declined', 'withdrawn', 'expired'] as const;
export const OfferStatus = z.enum(OFFER_STATUSES).describe('pending until the buyer accepts or declines, the seller withdraws, or it expires');
export type OfferStatus = z.infer<typeof OfferStatus>;

/** Bounds of an offer (the server and the web app share them). */
export const OFFER_LIMITS = {
  maxMilestones: 10,
  maxRevisions: 20,
  maxDeliveryDays: 365,
  /** the milestones' delivery days together (the longest a listing may take; within the escrow program's max_delivery_window) */
  maxTotalDeliveryDays: 365,
  defaultLifetimeDays: 7,
  maxLifetimeDays: 30,
} as const;

const DeliveryDays = z.number().int().min(1).max(OFFER_LIMITS.maxDeliveryDays);

export const OfferMilestone = named(
  'OfferMilestone',
  z.object({
    title: z.string().nullable().describe('null for the one milestone of an offer sent without milestones'),
    amount: z.number().describe('UI amount'),
    amount_base_units: BaseUnits,
    delivery_days: z.number().int().describe('Days to deliver, counted from the funding of this milestone'),
  }),
);

export const Offer = named(
  'Offer',
  z.object({
    offer_id: Uuid,
    conversation_id: Uuid,
    message_id: Uuid.describe('The conversation message (kind offer) that carries it'),
    listing_id: Uuid.describe('The seller\'s listing the order is created on'),
    seller_wallet: Pubkey,
    buyer_wallet: Pubkey,
    title: z.string(),
    description: z.string(),
    currency: CurrencyCode,
    price: z.number().describe('UI amount'),
    price_base_units: BaseUnits,
    milestones: z.array(OfferMilestone).min(1).max(OFFER_LIMITS.maxMilestones).describe('Always at least one; amounts sum to the price'),
    revisions: z.number().int().min(0).max(OFFER_LIMITS.maxRevisions).describe('Revisions included'),
    delivery_days: z.number().int().describe('Sum of the milestones\' delivery days'),
    status: OfferStatus,
    expires_at: Timestamp,
    created_at: Timestamp,
    decided_at: Timestamp.nullable().describe('When it left pending'),
    order_id: Uuid.nullable().describe('The order created on acceptance'),
  }),
);
export type Offer = z.infer<typeof Offer>;

export const CreateOfferBody = named(
  'CreateOfferBody',
  z
    .object({
      listing_id: Uuid.optional().describe('One of the seller\'s listings (default: the conversation\'s listing); its currency must be the offer\'s'),
      title: safeText(z.string().trim().min(1).max(200)).describe('1..200 characters'),
      description: safeText(z.string().trim().min(1).max(5000)).describe('1..5000 characters'),
      currency: CurrencyCode,
      price: UiAmount.describe('UI amount; at most the currency\'s decimals (400 too_many_decimals)'),
      milestones: z
        .array(
          z
            .object({
              title: safeText(z.string().trim().min(1).max(200)),
              amount: UiAmount,
              delivery_days: DeliveryDays,
            })
            .strict(),
        )
        .min(1)
        .max(OFFER_LIMITS.maxMilestones)
        .optional()
        .describe(
          '1..10 milestones whose amounts sum to the price exactly (in base units; 400 milestones_sum otherwise) and whose ' +
            'delivery days add up to at most 365 (400 too_long)',
        ),
      revisions: z.number().int().min(0).max(OFFER_LIMITS.maxRevisions).describe('Revisions included, 0..20'),
      delivery_days: DeliveryDays.optional().describe('Required without milestones (one milestone of the whole price); not allowed with them'),
      expires_at: Timestamp.optional().describe('Default now + 7 days; in the future and at most 30 days ahead'),
    })
    .strict(),
);
export type CreateOfferBody = z.infer<typeof CreateOfferBody>;

export const AcceptOfferBody = named(
  'AcceptOfferBody',
  z
    .object({
      payment_source: PaymentSource.optional().describe('As POST /orders: wallet (default) or custodial'),
      buyer_wallet: Pubkey.optional().describe('As POST /orders: API-key integrations only'),
    })
    .strict(),
);

export const AcceptedOffer = named(
  'AcceptedOffer',
  z.object({ offer: Offer, order: CreateOrderResponse }),
  'The accepted offer and its order (with the fund transaction while it awaits payment)',
);

export const ListOffersQuery = PaginationQuery.extend({
  role: z.enum(['buyer', 'seller']).optional().describe('Only offers where the caller has this role; both when absent'),
  status: OfferStatus.optional(),
});
export const OfferPage = named('OfferPage', page(Offer));

const OfferParams = z.object({ offer_id: Uuid });
const offerState = ['offer-not-pending', 'offer-expired'] as const;

const create = routeErrors(access.user('orders:write'), [...bodyProblems, 'not-found', 'forbidden', 'listing-taken-down', 'account-suspended'], { actors: ['seller'] });
const list = routeErrors(access.user('orders:read'), []);
const get = routeErrors(access.user('orders:read'), ['not-found'], { actors: ['buyer', 'seller'] });
const accept = routeErrors(
  access.user('orders:write', {
    money: { capability: 'custodial-payment', unless: { body_field: 'payment_source', absent_or: ['wallet'] } },
  }),
  [
    ...bodyProblems,
    ...offerState,
    'idempotency-key-missing',
    'idempotency-key-in-use',
    'idempotency-key-reused',
    'forbidden',
    'not-found',
    'listing-unavailable',
    'listing-taken-down',
    'account-suspended',
    'too-many-unpaid-orders',
    'too-many-holds',
    'hold-cooldown',
    'own-listing',
    'custody-disabled',
    'insufficient-funds',
    'chain-unavailable',
    'chain-transaction-failed',
  ],
  { actors: ['buyer'], idempotent: true },
);
const decide = (actor: 'buyer' | 'seller') => routeErrors(access.user('orders:write'), ['not-found', 'forbidden', ...offerState], { actors: [actor] });
const decline = decide('buyer');
const withdraw = decide('seller');

export const offers = c.router({
  createOffer: {
    method: 'POST',
    path: '/conversations/:conversation_id/offers',
    pathParams: z.object({ conversation_id: Uuid }),
    body: CreateOfferBody,
    summary: 'Send the buyer of a conversation a custom offer',
    description:
      'The seller of the conversation only (its buyer: 403 forbidden; anyone else: 404). 201 with the offer, posted ' +
      'in the conversation as a message of kind offer and published as offer.sent. 400 validation-error: an unknown ' +
      'currency (unknown_currency) or not the listing\'s (currency_mismatch), more decimals than the currency has ' +
      '(too_many_decimals), a price under the listing minimum (below_minimum), milestones not summing to the price ' +
      '(milestones_sum) or adding up to more than 365 delivery days (too_long), delivery_days missing without milestones or given with them, listing_id not one of the ' +
      'seller\'s listings (not_your_listing), expires_at not in (now, now + 30 days].',
    responses: { 201: Offer, ...create.responses },
    metadata: create.metadata,
  },
  listOffers: {
    method: 'GET',
    path: '/offers',
    query: ListOffersQuery,
    summary: 'The caller\'s offers',
    description: 'Offers the caller sent (seller) or received (buyer), newest first, cursor pagination.',
    responses: { 200: OfferPage, ...list.responses },
    metadata: list.metadata,
  },
  getOffer: {
    method: 'GET',
    path: '/offers/:offer_id',
    pathParams: OfferParams,
    summary: 'One offer',
    description: 'Its buyer and seller; anyone else 404.',
    responses: { 200: Offer, ...get.responses },
    metadata: get.metadata,
  },
  acceptOffer: {
    method: 'POST',
    path: '/offers/:offer_id/accept',
    pathParams: OfferParams,
    headers: IdempotencyHeaders,
    body: AcceptOfferBody,
    summary: 'Accept an offer: create its order',
    description:
      'The buyer only (the seller: 403 forbidden). Requires Idempotency-Key. Creates the order with the offer\'s frozen ' +
      'terms exactly as POST /orders does (same holds, limits and payment; its errors), on the offer\'s listing, and ' +
      'answers 201 with the offer (accepted, order_id) and the order (offer_id, payment). Accepting it again returns the ' +
      'same order (one order per offer, also under concurrent accepts). 409 offer-expired past expires_at, 409 ' +
      'offer-not-pending once declined or withdrawn. A 503 after the order was created leaves the offer accepted: a ' +
      'retry returns the order with a fresh payment.',
    responses: { 201: AcceptedOffer, ...accept.responses },
    metadata: accept.metadata,
  },
  declineOffer: {
    method: 'POST',
    path: '/offers/:offer_id/decline',
    pathParams: OfferParams,
    body: c.noBody(),
    summary: 'Decline an offer',
    description: 'The buyer, while pending (409 offer-not-pending / offer-expired after). 200 with the offer; offer.declined.',
    responses: { 200: Offer, ...decline.responses },
    metadata: decline.metadata,
  },
  withdrawOffer: {
    method: 'POST',
    path: '/offers/:offer_id/withdraw',
    pathParams: OfferParams,
    body: c.noBody(),
    summary: 'Withdraw an offer',
    description: 'The seller, while pending (409 offer-not-pending / offer-expired after). 200 with the offer; offer.withdrawn.',
    responses: { 200: Offer, ...withdraw.responses },
    metadata: withdraw.metadata,
  },
});
