/**
 * The ledger reads of revenue reports: sums per period and currency of what the chain paid, from the money
 * events (contract REVENUE_LEDGER_EVENTS; the contract's reports overview defines each figure). Both queries
 * are bounded by the report's range through the index events(type, created_at) and group in the database:
 * a report costs one pass over the money events of its range, whatever its length.
 *
 * Escrow units: an order event's `data` is the Order as the API returned it; each element of
 * `data.milestones` (or the Order itself on events from before milestones) is one escrow unit, identified by
 * `milestone_id` (milestone 1's = the order's id) and closed when its `payout` is set. A unit is counted at the
 * first money event of its order whose snapshot shows its payout (NOT EXISTS an earlier one: the unique index
 * (resource_type, resource_id, resource_seq) finds the order's few events), so the order.* event of a
 * multi-milestone order, which shows the payouts its milestone.* events carried, counts nothing twice.
 */
import { REVENUE_LEDGER_EVENTS } from '@bazaar/contract';
import type { PrismaClient } from '../../generated/prisma/client.js';

/** The escrow-closing money events (every ledger event but tips). */
export const ESCROW_LEDGER_EVENTS: readonly string[] = REVENUE_LEDGER_EVENTS.filter((t) => t !== 'tip.received');

/** Sums of one period (1-based `bucket` into the boundaries) and currency; amounts base units as decimal text. */
export interface EscrowSums {
  bucket: number;
  currency: string;
  decimals: number;
  buyer: string;
  seller: string;
  treasury: string;
  closed: number;
  unverified: number;
}

export interface TipSums {
  bucket: number;
  currency: string;
  decimals: number;
  amount: string;
  count: number;
}

/**
 * What a report reads. `bounds`: the period boundaries in order (first = from, last = to); an event at t with
 * bounds[i-1] <= t < bounds[i] belongs to bucket i. `sellerId`: one seller's orders only (null: all).
 */
export interface ReportsRepo {
  escrowSums(bounds: readonly Date[], sellerId: string | null): Promise<EscrowSums[]>;
  tipSums(bounds: readonly Date[], sellerId: string | null): Promise<TipSums[]>;
  /** The user id of the user with this wallet, or null. */
  userIdByWallet(wallet: string): Promise<string | null>;
  /** The wallet of user `id`, or null. */
  walletOf(id: string): Promise<string | null>;
}

export function createReportsRepo(db: PrismaClient): ReportsRepo {
  return {
    async escrowSums(bounds, sellerId) {
      const edges = bounds.map((b) => b.toISOString());
      // ISO text with its Z, cast in SQL: a Date parameter reaches PostgreSQL as a timestamp without zone,
      // read in the session's time zone (a server on Pacific/Kiritimati moved every range by 14 h)
      const from = edges[0]!;
      const to = edges[edges.length - 1]!;
      const types = [...ESCROW_LEDGER_EVENTS];
      const rows = await db.$queryRaw<Array<Omit<EscrowSums, 'bucket'> & { bucket: number | bigint }>>`
        WITH ev AS (
          SELECT e.resource_id, e.resource_seq, e.created_at, e.data
            FROM events e
           WHERE e.type = ANY(${types}::text[]) AND e.created_at >= ${from}::timestamptz AND e.created_at < ${to}::timestamptz
             AND e.resource_type = 'order'
        ), unit AS (
          SELECT ev.resource_id, ev.resource_seq, ev.created_at,
                 COALESCE(u->>'milestone_id', u->>'order_id') AS unit_id, u->'payout' AS payout
            FROM ev
            CROSS JOIN LATERAL jsonb_array_elements(
              CASE WHEN jsonb_typeof(ev.data->'milestones') = 'array' THEN ev.data->'milestones' ELSE jsonb_build_array(ev.data) END) AS u
           WHERE jsonb_typeof(u->'payout') = 'object'
        )
        SELECT width_bucket(unit.created_at, ${edges}::timestamptz[])::int AS bucket,
               o.currency, o.decimals,
               sum((unit.payout->>'buyer_base_units')::numeric)::text AS buyer,
               sum((unit.payout->>'seller_base_units')::numeric)::text AS seller,
               sum((unit.payout->>'treasury_base_units')::numeric)::text AS treasury,
               count(*)::int AS closed,
               (count(*) FILTER (WHERE (unit.payout->>'verified') IS DISTINCT FROM 'true'))::int AS unverified
          FROM unit
          JOIN orders o ON o.id = unit.resource_id
         WHERE (${sellerId}::uuid IS NULL OR o.seller_id = ${sellerId}::uuid)
           AND NOT EXISTS (
             SELECT 1
               FROM events p
              CROSS JOIN LATERAL jsonb_array_elements(
                CASE WHEN jsonb_typeof(p.data->'milestones') = 'array' THEN p.data->'milestones' ELSE jsonb_build_array(p.data) END) AS pu
              WHERE p.resource_type = 'order' AND p.resource_id = unit.resource_id AND p.resource_seq < unit.resource_seq
                AND p.type = ANY(${types}::text[])
                AND jsonb_typeof(pu->'payout') = 'object'
                AND COALESCE(pu->>'milestone_id', pu->>'order_id') = unit.unit_id)
         GROUP BY 1, 2, 3
         ORDER BY 1, 2`;
      return rows.map((r) => ({ ...r, bucket: Number(r.bucket), decimals: Number(r.decimals), closed: Number(r.closed), unverified: Number(r.unverified) }));
    },

    async tipSums(bounds, sellerId) {
      const edges = bounds.map((b) => b.toISOString());
      // ISO text with its Z, cast in SQL: a Date parameter reaches PostgreSQL as a timestamp without zone,
      // read in the session's time zone (a server on Pacific/Kiritimati moved every range by 14 h)
      const from = edges[0]!;
      const to = edges[edges.length - 1]!;
      const rows = await db.$queryRaw<Array<Omit<TipSums, 'bucket'> & { bucket: number | bigint }>>`
        SELECT width_bucket(e.created_at, ${edges}::timestamptz[])::int AS bucket,
               e.data->>'currency' AS currency, t.decimals,
               sum((e.data->>'amount_base_units')::numeric)::text AS amount,
               count(*)::int AS count
          FROM events e
          JOIN tips t ON t.id = e.resource_id
         WHERE e.type = 'tip.received' AND e.resource_type = 'tip'
           AND e.created_at >= ${from}::timestamptz AND e.created_at < ${to}::timestamptz
           AND (${sellerId}::uuid IS NULL OR t.seller_id = ${sellerId}::uuid)
         GROUP BY 1, 2, 3
         ORDER BY 1, 2`;
      return rows.map((r) => ({ ...r, bucket: Number(r.bucket), decimals: Number(r.decimals), count: Number(r.count) }));
    },

    async userIdByWallet(wallet) {
      return (await db.user.findUnique({ where: { wallet }, select: { id: true } }))?.id ?? null;
    },

    async walletOf(id) {
      return (await db.user.findUnique({ where: { id }, select: { wallet: true } }))?.wallet ?? null;
    },
  };
}
