/**
 * Tips storage (Prisma): the `tips` table only (orders are read through the orders module's port).
 * Queries only: the rules live in the use cases. `confirm` appends `tip.received` (to the buyer and the
 * seller) in its transaction (modules/events/outbox.ts); the unique `signature` column is the rule that
 * one transaction confirms one tip.
 */
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { appendEvents, notifyAppended } from '../events/index.js';
import { presentTip } from './tips.presenter.js';
import type { NewTip, TipRecord, TipStatus } from './tips.types.js';

type Row = Prisma.TipGetPayload<object>;

const toRecord = (r: Row): TipRecord => ({
  id: r.id,
  orderId: r.orderId,
  buyerId: r.buyerId,
  sellerId: r.sellerId,
  buyerWallet: r.buyerWallet,
  sellerWallet: r.sellerWallet,
  currency: r.currency,
  mint: r.mint,
  decimals: r.decimals,
  amount: BigInt(r.amountBaseUnits.toFixed()),
  sourceTokenAccount: r.sourceTokenAccount,
  destinationTokenAccount: r.destinationTokenAccount,
  status: r.status as TipStatus,
  message: r.message,
  blockhash: r.blockhash,
  lastValidBlockHeight: Number(r.lastValidBlockHeight),
  validUntil: r.validUntil,
  signature: r.signature,
  slot: r.slot === null ? null : Number(r.slot),
  confirmedAt: r.confirmedAt,
  createdAt: r.createdAt,
});

const isUniqueViolation = (e: unknown) =>
  (e as { code?: string }).code === 'P2002' || /unique constraint|duplicate key/i.test(e instanceof Error ? e.message : String(e));

/** What `confirm` did: the tip now confirmed, `used` (the signature confirmed another tip), or `not_pending` (already confirmed or expired). */
export type ConfirmOutcome = { state: 'confirmed'; tip: TipRecord } | { state: 'used' } | { state: 'not_pending'; tip: TipRecord | null };

export function createTipsRepo(db: PrismaClient) {
  return {
    /**
     * Insert a pending tip unless the order has `maxPending` pending tips already (checked and inserted
     * under a per-order advisory lock, so concurrent requests cannot pass the cap). null: the cap refused it.
     */
    async createPending(tip: NewTip, maxPending: number): Promise<TipRecord | null> {
      return db.$transaction(async (tx) => {
        await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${'tips:' + tip.orderId}, 0))`;
        const pending = await tx.tip.count({ where: { orderId: tip.orderId, status: 'pending' } });
        if (pending >= maxPending) return null;
        const row = await tx.tip.create({
          data: {
            id: tip.id,
            orderId: tip.orderId,
            buyerId: tip.buyerId,
            sellerId: tip.sellerId,
            buyerWallet: tip.buyerWallet,
            sellerWallet: tip.sellerWallet,
            currency: tip.currency,
            mint: tip.mint,
            decimals: tip.decimals,
            amountBaseUnits: tip.amount.toString(),
            sourceTokenAccount: tip.sourceTokenAccount,
            destinationTokenAccount: tip.destinationTokenAccount,
            message: tip.message,
            blockhash: tip.blockhash,
            lastValidBlockHeight: BigInt(tip.lastValidBlockHeight),
            validUntil: tip.validUntil,
          },
        });
        return toRecord(row);
      });
    },

    async get(id: string): Promise<TipRecord | null> {
      const row = await db.tip.findUnique({ where: { id } });
      return row ? toRecord(row) : null;
    },

    /** The tip a signature confirmed, if any. */
    async bySignature(signature: string): Promise<TipRecord | null> {
      const row = await db.tip.findUnique({ where: { signature } });
      return row ? toRecord(row) : null;
    },

    /** An order's tips, newest first, after the keyset (createdAt, id) when given. */
    async listForOrder(orderId: string, limit: number, after?: { createdAt: Date; id: string }): Promise<TipRecord[]> {
      const rows = await db.tip.findMany({
        where: {
          orderId,
          ...(after ? { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] } : {}),
        },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: limit,
      });
      return rows.map(toRecord);
    },

    /** Pending tips, oldest first (the background check). */
    async pending(limit: number): Promise<TipRecord[]> {
      const rows = await db.tip.findMany({ where: { status: 'pending' }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], take: limit });
      return rows.map(toRecord);
    },

    /**
     * pending -> confirmed with the paying transaction, and `tip.received` in the same transaction.
     * A signature that confirmed another tip already: `used`, nothing changes.
     */
    async confirm(id: string, paid: { signature: string; slot: number | null; at: Date }): Promise<ConfirmOutcome> {
      let outcome: ConfirmOutcome;
      try {
        outcome = await db.$transaction(async (tx) => {
          const changed = await tx.tip.updateMany({
            where: { id, status: 'pending' },
            data: { status: 'confirmed', signature: paid.signature, slot: paid.slot === null ? null : BigInt(paid.slot), confirmedAt: paid.at },
          });
          const row = await tx.tip.findUnique({ where: { id } });
          if (changed.count === 0 || !row) return { state: 'not_pending', tip: row ? toRecord(row) : null } as const;
          const tip = toRecord(row);
          await appendEvents(tx, [
            { type: 'tip.received', resourceType: 'tip', resourceId: tip.id, audience: [tip.buyerId, tip.sellerId], data: presentTip(tip), signature: tip.signature },
          ]);
          return { state: 'confirmed', tip } as const;
        });
      } catch (e) {
        if (isUniqueViolation(e)) return { state: 'used' };
        throw e;
      }
      if (outcome.state === 'confirmed') notifyAppended();
      return outcome;
    },

    /** pending -> expired (its transaction can no longer land). */
    async expire(id: string): Promise<boolean> {
      return (await db.tip.updateMany({ where: { id, status: 'pending' }, data: { status: 'expired' } })).count > 0;
    },

    /** Confirmed tips a seller received, per currency (base units as decimal strings). */
    async receivedBySeller(sellerId: string): Promise<Array<{ currency: string; amountBaseUnits: string; decimals: number }>> {
      const rows = await db.$queryRaw<Array<{ currency: string; total: string; decimals: number }>>`
        SELECT currency, sum(amount_base_units)::text AS total, max(decimals)::int AS decimals
          FROM tips
         WHERE seller_id = ${sellerId}::uuid AND status = 'confirmed'
         GROUP BY currency
         ORDER BY currency`;
      return rows.map((r) => ({ currency: r.currency, amountBaseUnits: r.total, decimals: Number(r.decimals) }));
    },
  };
}

export type TipsRepo = ReturnType<typeof createTipsRepo>;
