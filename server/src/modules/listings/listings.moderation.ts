/**
 * Takedowns of listings (issue 25): the moderation module decides, this module stores the decision on the
 * listing row (it owns the table) and emits the listing event, in one transaction.
 *
 * A takedown is a mark beside the status (`taken_down_at`, `taken_down_reason`), not a status of the listing
 * lifecycle (contract `listingTransitions`): the status keeps following the listing's orders (a funded order
 * still completes it, a refund still frees a unit), so its open orders settle and its counts stay right, and a
 * restored listing reads what its orders give it. Every read that shows listings to others excludes the mark
 * (listings.sql.ts `listingStatusIn`, `listingVisibleTo`); a new order reads it under the listing's row lock
 * (orders `createHeld`), which a takedown takes too, so an order is either held before the takedown (and
 * settles) or refused (409 listing-taken-down).
 */
import type { ListingModerationEvent } from '@bazaar/contract';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { Prisma } from '../../generated/prisma/client.js';
import { appendEvents, notifyAppended, type SqlClient } from '../events/index.js';
import { selectListings, toListingRecord, type ListingRow } from './listings.sql.js';
import type { ListingRecord } from './listings.types.js';

/** Why a moderation step on a listing did not apply. */
export type ListingModerationRefusal = 'not-found' | 'already-taken-down' | 'not-taken-down' | 'already-appealed' | 'not-seller';

/** Work the caller runs inside the same transaction, before the event (e.g. close the target's reports). */
export type InTransaction = (tx: Prisma.TransactionClient) => Promise<void>;

/**
 * `present`: the listing as the API returns it (the events' data). Each function locks the listing row,
 * checks, writes, runs `also` and appends its event (audience: the seller) last; returns the listing after
 * the change, or why nothing changed.
 */
export function createListingModerationStore(db: PrismaClient, present: (l: ListingRecord) => unknown) {
  async function read(client: SqlClient, id: string): Promise<ListingRecord | null> {
    const rows = await client.$queryRaw<ListingRow[]>(selectListings(Prisma.sql`SELECT ${id}::uuid AS id`, Prisma.sql`page.id`));
    return rows[0] ? toListingRecord(rows[0]) : null;
  }

  async function step(
    id: string,
    type: ListingModerationEvent,
    reason: string,
    decide: (row: { sellerId: string; takenDown: boolean; appealed: boolean }) => ListingModerationRefusal | null,
    write: (tx: Prisma.TransactionClient) => Promise<void>,
    also?: InTransaction,
  ): Promise<ListingRecord | ListingModerationRefusal> {
    const result = await db.$transaction(async (tx) => {
      const row = (
        await tx.$queryRaw<Array<{ seller_id: string; taken_down: boolean; appealed: boolean }>>`
          SELECT seller_id::text AS seller_id, taken_down_at IS NOT NULL AS taken_down, appealed_at IS NOT NULL AS appealed
            FROM listings WHERE id = ${id}::uuid FOR UPDATE`
      )[0];
      if (!row) return 'not-found' as const;
      const refused = decide({ sellerId: row.seller_id, takenDown: row.taken_down, appealed: row.appealed });
      if (refused) return refused;
      await write(tx);
      await also?.(tx);
      const l = (await read(tx, id))!;
      // the data: the listing as the API returns it, and the decision's reason (or the appeal's text)
      const data = { ...(present(l) as Record<string, unknown>), reason };
      await appendEvents(tx, [{ type, resourceType: 'listing', resourceId: id, audience: [l.sellerId], data }]);
      return l;
    });
    if (typeof result !== 'string') notifyAppended();
    return result;
  }

  return {
    /** Take listing `id` down with `reason` at `at`; emits listing.taken_down. Refusals: not-found, already-taken-down. */
    takeDown(id: string, reason: string, at: Date, also?: InTransaction) {
      return step(
        id,
        'listing.taken_down',
        reason,
        (r) => (r.takenDown ? 'already-taken-down' : null),
        async (tx) => {
          await tx.$executeRaw`
            UPDATE listings SET taken_down_at = ${at}, taken_down_reason = ${reason}, appealed_at = NULL, appeal_text = NULL, updated_at = ${at}
             WHERE id = ${id}::uuid`;
        },
        also,
      );
    },
    /**
     * Lift the takedown of listing `id` with the moderator's `reason` (in the event; the appeal goes with the
     * mark); emits listing.restored. Refusals: not-found, not-taken-down.
     */
    restore(id: string, reason: string, at: Date, also?: InTransaction) {
      return step(
        id,
        'listing.restored',
        reason,
        (r) => (r.takenDown ? null : 'not-taken-down'),
        async (tx) => {
          await tx.$executeRaw`
            UPDATE listings SET taken_down_at = NULL, taken_down_reason = NULL, appealed_at = NULL, appeal_text = NULL, updated_at = ${at}
             WHERE id = ${id}::uuid`;
        },
        also,
      );
    },
    /**
     * The seller `sellerId` appeals the takedown of listing `id` once; emits listing.appealed. Refusals:
     * not-found, not-seller, not-taken-down, already-appealed.
     */
    appeal(id: string, sellerId: string, text: string, at: Date) {
      return step(
        id,
        'listing.appealed',
        text,
        (r) => (r.sellerId !== sellerId ? 'not-seller' : !r.takenDown ? 'not-taken-down' : r.appealed ? 'already-appealed' : null),
        async (tx) => {
          await tx.$executeRaw`UPDATE listings SET appealed_at = ${at}, appeal_text = ${text} WHERE id = ${id}::uuid`;
        },
      );
    },
    /** The listing (whatever its visibility), or null. */
    get: (id: string) => read(db, id),
  };
}

export type ListingModerationStore = ReturnType<typeof createListingModerationStore>;
