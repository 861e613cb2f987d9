/**
 * Storage of the dispute desk (tables `disputes`, `dispute_evidence`; migration 20261126204000_dispute_desk).
 * A dispute is an escrow row of `orders` that was disputed (`disputed_at` set): this repository reads the
 * orders table for it (read only; the orders module owns every write to it) and keeps what the desk adds:
 * the reason code, the evidence hash chain and the arbiter's ruling.
 */
import { randomUUID } from 'node:crypto';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { EvidenceFile } from '@bazaar/contract';
import { appendEvents, notifyAppended, type NewEvent } from '../events/outbox.js';

type Sql = Pick<Prisma.TransactionClient, '$queryRaw' | '$executeRaw'>;

/** A disputed escrow row with what the desk recorded about it. */
export interface DisputeRecord {
  /** the escrow row's id (= dispute_id, the milestone_id) */
  id: string;
  /** the order the buyer knows (its first row's id) */
  orderId: string;
  milestoneIndex: number;
  /** the row's lifecycle status: disputed (open), resolved, refunded */
  status: string;
  disputedAt: Date;
  disputeReason: string | null;
  disputedBy: 'buyer' | 'seller' | null;
  buyerId: string;
  sellerId: string;
  buyerWallet: string;
  sellerWallet: string;
  listingId: string;
  listingTitle: string;
  currency: string;
  decimals: number;
  /** base units held in the escrow */
  amount: bigint;
  resolutionBuyerBps: number | null;
  settledBy: string | null;
  completedAt: Date | null;
  /** null until the desk recorded something (a dispute opened on chain) */
  reasonCode: string | null;
  rationale: string | null;
  ruledBy: string | null;
  ruledBuyerBps: number | null;
  ruledAt: Date | null;
  rationaleMessageId: string | null;
}

export interface EvidenceRecord {
  id: string;
  disputeId: string;
  position: number;
  party: 'buyer' | 'seller';
  submittedBy: string;
  submittedByWallet: string;
  text: string;
  files: EvidenceFile[];
  contentHash: string;
  prevHash: string | null;
  anchorSignature: string | null;
  submittedAt: Date;
}

type Row = Omit<DisputeRecord, 'amount'> & { amount: string };

const select = Prisma.sql`
  SELECT o.id, COALESCE(o.order_id, o.id) AS "orderId", o.milestone_index AS "milestoneIndex", o.status,
         o.disputed_at AS "disputedAt", o.dispute_reason AS "disputeReason", o.disputed_by AS "disputedBy",
         o.buyer_id AS "buyerId", o.seller_id AS "sellerId", ub.wallet AS "buyerWallet", us.wallet AS "sellerWallet",
         o.listing_id AS "listingId", l.title AS "listingTitle", o.currency, o.decimals,
         o.amount_base_units::text AS amount, o.resolution_buyer_bps AS "resolutionBuyerBps", o.settled_by AS "settledBy",
         o.completed_at AS "completedAt",
         d.reason_code AS "reasonCode", d.rationale, d.ruled_by AS "ruledBy", d.ruled_buyer_bps AS "ruledBuyerBps",
         d.ruled_at AS "ruledAt", d.rationale_message_id AS "rationaleMessageId"
    FROM orders o
    LEFT JOIN disputes d ON d.id = o.id
    JOIN users ub ON ub.id = o.buyer_id
    JOIN users us ON us.id = o.seller_id
    JOIN listings l ON l.id = o.listing_id`;

const toRecord = (r: Row): DisputeRecord => ({ ...r, amount: BigInt(r.amount) });

/** Evidence rows as stored (files as JSON). */
type EvidenceRow = Omit<EvidenceRecord, 'files'> & { files: unknown };
const evidenceSelect = Prisma.sql`
  SELECT id, dispute_id AS "disputeId", position, party, submitted_by AS "submittedBy", submitted_by_wallet AS "submittedByWallet",
         text, files, content_hash AS "contentHash", prev_hash AS "prevHash", anchor_signature AS "anchorSignature",
         submitted_at AS "submittedAt"
    FROM dispute_evidence`;

export function createDisputesRepo(db: PrismaClient) {
  async function get(client: Sql, id: string): Promise<DisputeRecord | null> {
    const rows = await client.$queryRaw<Row[]>`${select} WHERE o.id = ${id}::uuid AND o.disputed_at IS NOT NULL`;
    return rows[0] ? toRecord(rows[0]) : null;
  }
  async function evidenceOf(client: Sql, ids: readonly string[]): Promise<Map<string, EvidenceRecord[]>> {
    const out = new Map<string, EvidenceRecord[]>();
    if (!ids.length) return out;
    const rows = await client.$queryRaw<EvidenceRow[]>`${evidenceSelect} WHERE dispute_id = ANY(${[...ids]}::uuid[]) ORDER BY dispute_id, position`;
    for (const r of rows) {
      const list = out.get(r.disputeId) ?? [];
      list.push({ ...r, party: r.party as EvidenceRecord['party'], files: r.files as EvidenceFile[] });
      out.set(r.disputeId, list);
    }
    return out;
  }
  /** the desk's row of dispute `id` (an escrow row of order `orderId`), created on first use */
  const ensure = (client: Sql, id: string, orderId: string) =>
    client.$executeRaw`INSERT INTO disputes (id, order_id) VALUES (${id}::uuid, ${orderId}::uuid) ON CONFLICT (id) DO NOTHING`;

  return {
    /** The dispute over escrow row `id`, or null when that row was never disputed (or does not exist). */
    get: (id: string) => get(db, id),
    /** Each dispute's evidence, in chain order (position 1, 2, ...). */
    evidenceOf: (ids: readonly string[]) => evidenceOf(db, ids),

    /** Record the reason code given when the dispute was opened (the first one recorded stays). */
    async recordOpening(id: string, orderId: string, reasonCode: string): Promise<void> {
      await db.$executeRaw`
        INSERT INTO disputes (id, order_id, reason_code) VALUES (${id}::uuid, ${orderId}::uuid, ${reasonCode})
        ON CONFLICT (id) DO NOTHING`;
    },

    /**
     * Append one submission to the dispute's hash chain, in one transaction: the dispute's desk row is locked
     * (FOR UPDATE) so submissions chain one at a time; `check` sees the dispute as it is under the lock and
     * the party's count, and may refuse (throw); `hash` computes the content hash from the chained fields;
     * `event` builds the event from the dispute and its evidence after the insert (written last, in the
     * same transaction).
     */
    async appendEvidence(
      d: { id: string; orderId: string },
      e: Omit<EvidenceRecord, 'id' | 'disputeId' | 'position' | 'contentHash' | 'prevHash' | 'anchorSignature'>,
      o: {
        check: (fresh: DisputeRecord, partyCount: number) => void;
        hash: (fields: { evidenceId: string; prevHash: string | null }) => string;
        event: (fresh: DisputeRecord, evidence: EvidenceRecord[]) => NewEvent;
      },
    ): Promise<EvidenceRecord> {
      const result = await db.$transaction(async (tx) => {
        await ensure(tx, d.id, d.orderId);
        await tx.$executeRaw`SELECT 1 FROM disputes WHERE id = ${d.id}::uuid FOR UPDATE`;
        const fresh = (await get(tx, d.id))!;
        const existing = (await evidenceOf(tx, [d.id])).get(d.id) ?? [];
        o.check(fresh, existing.filter((x) => x.party === e.party).length);
        const prevHash = existing.length ? existing[existing.length - 1]!.contentHash : null;
        const id = randomUUID();
        const contentHash = o.hash({ evidenceId: id, prevHash });
        await tx.$executeRaw`
          INSERT INTO dispute_evidence (id, dispute_id, position, party, submitted_by, submitted_by_wallet, text, files, content_hash, prev_hash, submitted_at)
          VALUES (${id}::uuid, ${d.id}::uuid, ${existing.length + 1}, ${e.party}, ${e.submittedBy}::uuid, ${e.submittedByWallet}, ${e.text},
                  ${JSON.stringify(e.files)}::jsonb, ${contentHash}, ${prevHash}, ${e.submittedAt})`;
        const inserted: EvidenceRecord = { ...e, id, disputeId: d.id, position: existing.length + 1, contentHash, prevHash, anchorSignature: null };
        await appendEvents(tx, [o.event(fresh, [...existing, inserted])]);
        return inserted;
      });
      notifyAppended();
      return result;
    },

    /**
     * Record the arbiter's ruling once it landed: rationale, arbiter, split, time; and its event, in one
     * transaction. Only the first recording counts (`ruled_at IS NULL`): returns false when one was there.
     */
    async recordRuling(
      d: { id: string; orderId: string },
      r: { rationale: string; ruledBy: string; buyerBps: number; at: Date },
      event: (fresh: DisputeRecord) => NewEvent,
    ): Promise<boolean> {
      const recorded = await db.$transaction(async (tx) => {
        await ensure(tx, d.id, d.orderId);
        const n = await tx.$executeRaw`
          UPDATE disputes SET rationale = ${r.rationale}, ruled_by = ${r.ruledBy}::uuid, ruled_buyer_bps = ${r.buyerBps}, ruled_at = ${r.at}
           WHERE id = ${d.id}::uuid AND ruled_at IS NULL`;
        if (n === 0) return false;
        await appendEvents(tx, [event((await get(tx, d.id))!)]);
        return true;
      });
      if (recorded) notifyAppended();
      return recorded;
    },

    /** The chat message that carried the rationale (so a repeat does not post it twice). */
    async setRationaleMessage(id: string, messageId: string): Promise<void> {
      await db.$executeRaw`UPDATE disputes SET rationale_message_id = ${messageId}::uuid WHERE id = ${id}::uuid AND rationale_message_id IS NULL`;
    },

    /**
     * Open disputes (escrow rows in `disputed`), oldest first by (disputed_at, id), after the keyset `after`;
     * `attention`: only those opened at or before `attentionBefore` (true) or after it (false).
     */
    async open(q: { limit: number; after?: { at: Date; id: string }; attention?: boolean; attentionBefore: Date }): Promise<DisputeRecord[]> {
      const keyset = q.after ? Prisma.sql`AND (o.disputed_at, o.id) > (${q.after.at}, ${q.after.id}::uuid)` : Prisma.empty;
      const flag =
        q.attention === undefined
          ? Prisma.empty
          : q.attention
            ? Prisma.sql`AND o.disputed_at <= ${q.attentionBefore}`
            : Prisma.sql`AND o.disputed_at > ${q.attentionBefore}`;
      const rows = await db.$queryRaw<Row[]>`
        ${select} WHERE o.status = 'disputed' AND o.disputed_at IS NOT NULL ${keyset} ${flag}
         ORDER BY o.disputed_at, o.id LIMIT ${q.limit}`;
      return rows.map(toRecord);
    },

    /** The conversation id of each of `orderIds` that has one (none until somebody wrote in it), in one statement. */
    async conversationsOf(orderIds: readonly string[]): Promise<Map<string, string>> {
      if (!orderIds.length) return new Map();
      const rows = await db.$queryRaw<{ id: string; orderId: string }[]>`
        SELECT id, order_id AS "orderId" FROM conversations WHERE order_id = ANY(${[...orderIds]}::uuid[])`;
      return new Map(rows.map((r) => [r.orderId, r.id]));
    },

    /** The wallet of user `userId` (null when unknown). */
    async walletOf(userId: string): Promise<string | null> {
      const rows = await db.$queryRaw<{ wallet: string }[]>`SELECT wallet FROM users WHERE id = ${userId}::uuid`;
      return rows[0]?.wallet ?? null;
    },
  };
}

export type DisputesRepo = ReturnType<typeof createDisputesRepo>;

/**
 * Open disputes that have waited longer than `attentionHours` without a ruling, at `now`: the attention
 * flag of the dispute desk, for the metrics (issue 25 part 5: a gauge per flag kind) and the README's
 * operator queries. One indexed count over `orders`.
 */
export async function countDisputesNeedingAttention(
  db: Pick<PrismaClient, '$queryRaw'>,
  o: { now: Date; attentionHours: number },
): Promise<number> {
  const before = new Date(o.now.getTime() - o.attentionHours * 3_600_000);
  const rows = await db.$queryRaw<{ n: bigint }[]>`
    SELECT count(*) AS n FROM orders WHERE status = 'disputed' AND disputed_at IS NOT NULL AND disputed_at <= ${before.toISOString()}::timestamptz`;
  return Number(rows[0]?.n ?? 0n);
}
