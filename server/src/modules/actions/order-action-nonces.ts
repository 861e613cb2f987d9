/**
 * The nonce store of the order actions (table `order_action_nonces`, migration 20261127020000): one row per
 * message the service asked an order's buyer wallet to sign. A row binds the nonce to the order, the act, the
 * wallet and every field of the message (so the callback can rebuild the exact text the wallet signed); it is
 * single use (`used_at` set by one conditional UPDATE: of two concurrent callbacks exactly one consumes it) and
 * expires `expiresAt` (service clock). Rows are purged a day after they expire (`purgeExpired`).
 */
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { OrderActionAct } from '@bazaar/contract';

/** One issued message (what the wallet is asked to sign, and what it is bound to). */
export interface OrderActionNonceRow {
  nonce: string;
  orderId: string;
  act: OrderActionAct;
  wallet: string;
  /** the dispute's reason and kind (null for confirm) */
  reason: string | null;
  reasonCode: string | null;
  domain: string;
  chainId: string | null;
  statement: string;
  issuedAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}

/** Persistence of the order actions' nonces (Prisma; PGlite or PostgreSQL). */
export interface OrderActionNonceStore {
  insert(row: Omit<OrderActionNonceRow, 'usedAt'>): Promise<void>;
  /** The row of `nonce`, or null when the service never issued it (or it was purged). */
  get(nonce: string): Promise<OrderActionNonceRow | null>;
  /** Marks `nonce` used at `at` when it is still unused; false when it was used already (a replay or a race). */
  consume(nonce: string, at: Date): Promise<boolean>;
  /** Deletes rows that expired before `before`; the count deleted. */
  purgeExpired(before: Date): Promise<number>;
}

/** The store over the app's Prisma client. */
export function orderActionNonceStore(db: PrismaClient): OrderActionNonceStore {
  return {
    async insert(row) {
      await db.orderActionNonce.create({ data: { ...row } });
    },
    async get(nonce) {
      const row = await db.orderActionNonce.findUnique({ where: { nonce } });
      return row ? { ...row, act: row.act as OrderActionAct } : null;
    },
    async consume(nonce, at) {
      const r = await db.orderActionNonce.updateMany({ where: { nonce, usedAt: null }, data: { usedAt: at } });
      return r.count === 1;
    },
    async purgeExpired(before) {
      return (await db.orderActionNonce.deleteMany({ where: { expiresAt: { lt: before } } })).count;
    },
  };
}
