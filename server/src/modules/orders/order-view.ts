/**
 * The read model of an order beyond its own row (issue 23 item 1): what was bought (`listing`), both
 * parties (`seller`, `buyer`: wallet, display name, rating as a seller), the buyer's published review,
 * and what happens next (`next_step`, a pure function of the order and the clocks).
 *
 * A page of orders is read in two statements whatever its size (no N+1): one joined query for the
 * listing, parties, their ratings and the review of every order of the page (`prismaOrderViews`), and
 * one for the chain transactions of all of them. tests/orders.view.test.ts counts them.
 */
import type { OrderListingSummary, OrderNextStep, OrderParty } from '@bazaar/contract';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { Clocks } from './order-state.js';
import type { ChainIntentRecord, OrderRecord } from './orders.types.js';

/** The buyer's published review of an order (contract OrderReview). */
export interface OrderReviewView {
  rating: number;
  text: string;
  createdAt: Date;
}

/** Everything an order shows besides its own row and the caller's allowed_actions. */
export interface OrderView {
  listing: OrderListingSummary;
  seller: OrderParty;
  buyer: OrderParty;
  review: OrderReviewView | null;
  /** the buyer reviewed the order (review is set, except in `recordOnlyView`) */
  reviewed: boolean;
  /** the order's chain transactions, oldest first */
  intents: ChainIntentRecord[];
}

/** Reads the views of a page of orders in a bounded number of statements; every order of `orders` has one. */
export type OrderViewReader = (orders: readonly OrderRecord[]) => Promise<Map<string, OrderView>>;

/** A category's display name: the configured one, else the slug in title case (as config.ts derives names). */
export type CategoryNameOf = (slug: string) => string | undefined;

const titleCase = (slug: string) =>
  slug
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(' ');

/** Mean rating rounded to 2 decimals (as the reviews module's Reputation.average); null without reviews. */
export function ratingOf(count: number, total: number): OrderParty['rating'] {
  return { average: count > 0 ? Math.round((total / count) * 100) / 100 : null, review_count: count };
}

interface ViewRow {
  order_id: string;
  listing_id: string;
  title: string;
  category: string;
  seller_wallet: string;
  seller_name: string | null;
  seller_reviews: number;
  seller_total: number;
  buyer_wallet: string;
  buyer_name: string | null;
  buyer_reviews: number;
  buyer_total: number;
  review_rating: number | null;
  review_text: string | null;
  review_created_at: Date | null;
  /** the order's chain intents, oldest first, as a JSON array text (see IntentJson) */
  intents: string;
}

/** A chain intent as the view query aggregates it (json_build_object: bigints as text, times as ISO text). */
interface IntentJson {
  id: string;
  order_id: string;
  action: string;
  status: string;
  signature: string | null;
  slot: string | null;
  payload: Prisma.JsonValue | null;
  error: string | null;
  blockhash: string | null;
  last_valid_block_height: string | null;
  created_at: string;
  updated_at: string;
}

function intentRowOf(j: IntentJson): IntentRow {
  return {
    id: j.id,
    orderId: j.order_id,
    action: j.action,
    status: j.status,
    signature: j.signature,
    slot: j.slot === null ? null : BigInt(j.slot),
    payload: j.payload,
    error: j.error,
    blockhash: j.blockhash,
    lastValidBlockHeight: j.last_valid_block_height === null ? null : BigInt(j.last_valid_block_height),
    createdAt: new Date(j.created_at),
    updatedAt: new Date(j.updated_at),
  };
}

type Db = Pick<PrismaClient, '$queryRaw'> | Prisma.TransactionClient;

/** Chain intent row -> record (the same mapping as the repo's). */
type IntentRow = Prisma.ChainIntentGetPayload<object>;
export type IntentMapper = (row: IntentRow) => ChainIntentRecord;

/**
 * The views of `orders` from the database, in ONE statement (issue 28: statements per buyer; the chain intents
 * were a second one): a join of orders with their listing, seller, buyer (each with the count and sum of the
 * ratings they received as a seller), review, and the chain intents of each order (oldest first, aggregated as
 * JSON). Ratings count every review of the user (reviews rate sellers), as GET /users/{wallet} `reputation` does.
 */
export async function readOrderViews(
  db: Db,
  orders: readonly { id: string }[],
  opts: { categoryName?: CategoryNameOf; toIntent: IntentMapper },
): Promise<Map<string, OrderView>> {
  const out = new Map<string, OrderView>();
  if (orders.length === 0) return out;
  const ids = Prisma.join(orders.map((o) => Prisma.sql`${o.id}::uuid`));
  const rows = await db.$queryRaw<ViewRow[]>`
      SELECT o.id::text AS order_id, l.id::text AS listing_id, l.title, l.category,
             s.wallet AS seller_wallet, s.display_name AS seller_name, sr.n AS seller_reviews, sr.total AS seller_total,
             b.wallet AS buyer_wallet, b.display_name AS buyer_name, br.n AS buyer_reviews, br.total AS buyer_total,
             r.rating::int AS review_rating, r.text AS review_text, r.created_at AS review_created_at,
             COALESCE((
               SELECT json_agg(json_build_object(
                        'id', ci.id, 'order_id', ci.order_id, 'action', ci.action, 'status', ci.status,
                        'signature', ci.signature, 'slot', ci.slot::text, 'payload', ci.payload, 'error', ci.error,
                        'blockhash', ci.blockhash, 'last_valid_block_height', ci.last_valid_block_height::text,
                        'created_at', ci.created_at, 'updated_at', ci.updated_at)
                      ORDER BY ci.created_at, ci.id)
                 FROM chain_intents ci WHERE ci.order_id = o.id), '[]'::json)::text AS intents
        FROM orders o
        JOIN listings l ON l.id = o.listing_id
        JOIN users s ON s.id = o.seller_id
        JOIN users b ON b.id = o.buyer_id
        LEFT JOIN reviews r ON r.order_id = o.id
        CROSS JOIN LATERAL (SELECT count(*)::int AS n, coalesce(sum(x.rating), 0)::int AS total FROM reviews x WHERE x.seller_id = o.seller_id) sr
        CROSS JOIN LATERAL (SELECT count(*)::int AS n, coalesce(sum(y.rating), 0)::int AS total FROM reviews y WHERE y.seller_id = o.buyer_id) br
       WHERE o.id IN (${ids})`;
  const intentsOf = new Map<string, ChainIntentRecord[]>();
  for (const r of rows) intentsOf.set(r.order_id, (JSON.parse(r.intents) as IntentJson[]).map((j) => opts.toIntent(intentRowOf(j))));
  for (const r of rows) {
    out.set(r.order_id, {
      listing: {
        listing_id: r.listing_id,
        title: r.title,
        category_slug: r.category,
        category_name: opts.categoryName?.(r.category) ?? titleCase(r.category),
      },
      seller: { wallet: r.seller_wallet, display_name: r.seller_name, rating: ratingOf(Number(r.seller_reviews), Number(r.seller_total)) },
      buyer: { wallet: r.buyer_wallet, display_name: r.buyer_name, rating: ratingOf(Number(r.buyer_reviews), Number(r.buyer_total)) },
      review:
        r.review_rating === null
          ? null
          : { rating: Number(r.review_rating), text: r.review_text ?? '', createdAt: new Date(r.review_created_at!) },
      reviewed: r.review_rating !== null,
      intents: intentsOf.get(r.order_id) ?? [],
    });
  }
  return out;
}

/**
 * A view made from the order row alone, for a service running on in-memory fakes (unit tests) that have no
 * listings or users tables: the parties are the order's wallets without name or rating, the listing has no
 * title, the review's content unknown (`reviewed` only).
 */
export function recordOnlyView(o: OrderRecord, intents: ChainIntentRecord[], reviewed: boolean): OrderView {
  const party = (wallet: string): OrderParty => ({ wallet, display_name: null, rating: { average: null, review_count: 0 } });
  return {
    listing: { listing_id: o.listingId, title: '', category_slug: '', category_name: '' },
    seller: party(o.sellerWallet),
    buyer: party(o.buyerWallet),
    review: null,
    reviewed,
    intents,
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * What happens next on order `o` (contract OrderNextStep), derived from the lifecycle table's timing rules
 * and the order's deadlines, on the clocks the rules use: the payment window on the service clock
 * (`serviceMs`), delivery_deadline and auto_release_at on the chain clock (`chainSeconds`). Pure; the same
 * for every caller (allowed_actions says what the caller may do).
 *
 * | status           | situation                                   | actor   | kind               | due_at                          | after_due        |
 * |------------------|---------------------------------------------|---------|--------------------|---------------------------------|------------------|
 * | awaiting_payment | wallet, before payment_expires_at           | buyer   | pay                | payment_expires_at              | hold_lapses      |
 * | awaiting_payment | wallet, window closed                       | system  | expire             | payment_expires_at + grace      | hold_lapses      |
 * | awaiting_payment | custodial (the service funds it)            | system  | confirm_payment    | null                            | null             |
 * | in_progress      | before delivery_deadline                    | seller  | deliver            | delivery_deadline               | buyer_may_refund |
 * | in_progress      | from delivery_deadline                      | buyer   | refund_available   | null                            | null             |
 * | delivered        | before auto_release_at                      | buyer   | confirm_or_dispute | auto_release_at                 | auto_release     |
 * | delivered        | from auto_release_at                        | system  | auto_release       | auto_release_at                 | null             |
 * | disputed         | delivered on time, or deadline to come      | arbiter | arbiter_decides    | delivery_deadline if to come and not delivered, else null | buyer_may_refund / null |
 * | disputed         | not delivered by a past delivery_deadline   | arbiter | arbiter_decides    | null (the buyer may refund now) | null             |
 * | scheduled        | a later milestone not funded yet            | buyer   | fund_milestone     | null                            | null             |
 * | completed, resolved, refunded, expired | -                     | none    | done               | null                            | null             |
 */
export function nextStepOf(
  o: Pick<OrderRecord, 'status' | 'paymentSource' | 'paymentExpiresAt' | 'deliveryDeadline' | 'deliveredAt' | 'autoReleaseAt'>,
  clocks: Clocks,
  graceSeconds: number,
): OrderNextStep {
  const deadlineMs = o.deliveryDeadline * 1000;
  const chainMs = clocks.chainSeconds * 1000;
  const step = (actor: OrderNextStep['actor'], kind: OrderNextStep['kind'], dueMs: number | null, afterDue: OrderNextStep['after_due']) => ({
    actor,
    kind,
    due_at: dueMs === null ? null : iso(dueMs),
    after_due: dueMs === null ? null : afterDue,
  });
  switch (o.status) {
    case 'scheduled':
      return step('buyer', 'fund_milestone', null, null);
    case 'awaiting_payment': {
      if (o.paymentSource === 'custodial') return step('system', 'confirm_payment', null, null);
      const expires = o.paymentExpiresAt.getTime();
      if (clocks.serviceMs < expires) return step('buyer', 'pay', expires, 'hold_lapses');
      return step('system', 'expire', expires + graceSeconds * 1000, 'hold_lapses');
    }
    case 'in_progress':
      if (chainMs <= deadlineMs) return step('seller', 'deliver', deadlineMs, 'buyer_may_refund');
      return step('buyer', 'refund_available', null, null);
    case 'delivered': {
      const release = o.autoReleaseAt?.getTime() ?? null;
      if (release !== null && chainMs >= release) return step('system', 'auto_release', release, null);
      return step('buyer', 'confirm_or_dispute', release, 'auto_release');
    }
    case 'disputed': {
      const deliveredOnTime = o.deliveredAt !== null && o.deliveredAt.getTime() <= deadlineMs;
      if (!deliveredOnTime && chainMs <= deadlineMs) return step('arbiter', 'arbiter_decides', deadlineMs, 'buyer_may_refund');
      return step('arbiter', 'arbiter_decides', null, null);
    }
    case 'completed':
    case 'resolved':
    case 'refunded':
    case 'expired':
      return step('none', 'done', null, null);
  }
}

/**
 * The views of a page of orders: the repository's batched read (`views`, two statements) when it has one,
 * else (in-memory fakes) one read of the intents and of `hasReview` per order and `recordOnlyView`.
 */
export async function presentViews(
  orders: readonly OrderRecord[],
  repo: { views?: OrderViewReader; listIntents(orderId: string): Promise<ChainIntentRecord[]> },
  hasReview?: (orderId: string) => Promise<boolean>,
): Promise<Map<string, OrderView>> {
  if (repo.views) return repo.views(orders);
  const entries = await Promise.all(
    orders.map(async (o) => {
      const [intents, reviewed] = await Promise.all([repo.listIntents(o.id), hasReview ? hasReview(o.id) : Promise.resolve(false)]);
      return [o.id, recordOnlyView(o, intents, reviewed)] as const;
    }),
  );
  return new Map(entries);
}
