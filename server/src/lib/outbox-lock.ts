/**
 * The outbox advisory lock (modules/events/outbox.ts): every transaction that writes events or audit entries
 * takes `pg_advisory_xact_lock(OUTBOX_LOCK)` last and holds it to commit, so those transactions commit one
 * at a time (event positions never go backwards; the audit chain's head is read and extended by one writer at
 * a time). Here, not in the events module, because the audit module (which the outbox calls) takes it too.
 */
import type { Prisma } from '../generated/prisma/client.js';

/** Key of the outbox advisory lock (any constant bigint shared by every writer). */
export const OUTBOX_LOCK = 0x0b_a2_aa_12_e7_e1n;

/** Anything that can run raw SQL: a Prisma client or an interactive transaction's client. */
export type SqlClient = Pick<Prisma.TransactionClient, '$executeRaw' | '$queryRaw'>;

/** Take the outbox lock in `tx`'s transaction (held to commit; taking it again in the same transaction is free). */
export async function takeOutboxLock(tx: SqlClient): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${OUTBOX_LOCK})`;
}
