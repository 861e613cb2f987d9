/**
 * Listings storage (Prisma): tables listings and chain_intents (this module's intents have
 * order_id null and action mint_listing | update_listing_token). Queries only: the rules live in
 * listings.service.ts and listings.recovery.ts.
 *
 * Intent payload (JSON): { listing_id, mint?, last_valid_block_height, fingerprint?, draft?, name? };
 * the block height lives in the payload rather than in a column of chain_intents, whose columns the
 * orders module owns.
 *
 * Events (transactional outbox, modules/events/outbox.ts): the insert of a listing appends
 * listing.created, a status change the `emits` of its `listingTransitions` row, any other edit
 * listing.updated, each in the transaction of the change, with the listing as the API returns it
 * (`present`).
 */
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import type { ListingMintAttempt, TxAttempt } from '../../chain/types.js';
import { listingStatusOfUnits, listingTransitions, type ListingEvent } from '@bazaar/contract';
import { appendEvents, notifyAppended, type NewEvent, type SqlClient } from '../events/index.js';
import { listingStatusIn, selectListings, takenDownOf, toListingRecord, type ListingRow } from './listings.sql.js';
import { preparedRead, type PreparedStatement } from '../../db/prepared.js';
import {
  milestonesToJson,
  packagesToJson,
  parseStoredMilestones,
  parseStoredPackages,
  type StoredMilestoneJson,
  type StoredPackageJson,
} from './listings.packages.js';
import type {
  ListingDraft,
  ListingIntent,
  ListingIntentAction,
  ListingIntentStatus,
  ListingPatch,
  ListingRecord,
  ListingsRepo,
  ListingTxScope,
  ListListingsFilter,
  ListingStatus,
  LockedUnits,
  NewListing,
} from './listings.types.js';
import { StockBelowCommitted } from './listings.types.js';
import type { ReadDb } from '../../db/read-routing.js';

const ACTIONS: ListingIntentAction[] = ['mint_listing', 'update_listing_token'];

type IntentRow = Prisma.ChainIntentGetPayload<object>;

interface IntentPayload {
  listing_id: string;
  mint?: string;
  last_valid_block_height?: number;
  fingerprint?: string;
  name?: string;
  draft?: Omit<ListingDraft, 'priceBaseUnits' | 'packages' | 'milestones'> & {
    priceBaseUnits: string;
    /** issue 24; absent in intents recorded before packages existed */
    packages?: StoredPackageJson[];
    milestones?: StoredMilestoneJson[] | null;
  };
}

/** A draft as stored in an intent's payload (base units as text). */
function draftToJson(d: ListingDraft): NonNullable<IntentPayload['draft']> {
  return { ...d, priceBaseUnits: d.priceBaseUnits.toString(), packages: packagesToJson(d.packages), milestones: milestonesToJson(d.milestones) };
}

function draftFromJson(d: NonNullable<IntentPayload['draft']>): ListingDraft {
  return {
    ...d,
    priceBaseUnits: BigInt(d.priceBaseUnits),
    packages: parseStoredPackages(d.packages ?? []),
    milestones: parseStoredMilestones(d.milestones ?? null),
  };
}

function toIntent(r: IntentRow): ListingIntent {
  const p = (r.payload ?? {}) as unknown as IntentPayload;
  return {
    id: r.id,
    action: r.action as ListingIntentAction,
    status: r.status as ListingIntentStatus,
    listingId: p.listing_id,
    signature: r.signature,
    lastValidBlockHeight: p.last_valid_block_height ?? null,
    mint: p.mint ?? null,
    draft: p.draft ? draftFromJson(p.draft) : null,
    fingerprint: p.fingerprint ?? null,
    name: p.name ?? null,
    error: r.error,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
  };
}

const json = (p: IntentPayload) => p as unknown as Prisma.InputJsonValue;

function listingData(l: NewListing): Prisma.ListingCreateManyInput {
  return {
    id: l.id,
    sellerId: l.sellerId,
    title: l.title,
    description: l.description,
    priceBaseUnits: l.priceBaseUnits.toString(),
    currency: l.currency,
    category: l.category,
    durationDays: l.durationDays,
    packages: packagesToJson(l.packages) as unknown as Prisma.InputJsonValue,
    milestones: l.milestones ? (milestonesToJson(l.milestones) as unknown as Prisma.InputJsonValue) : Prisma.DbNull,
    status: l.status,
    tokenMintAddress: l.tokenMint,
    mintSignature: l.mintSignature,
    mintSlot: BigInt(l.mintSlot),
    metadataUri: l.metadataUri,
    capacity: l.capacity,
    stock: l.stock,
  };
}

/**
 * One UPDATE: the packages and the price column they set (the cheapest package's: what search filters
 * and sorts on) are always written together, in this statement.
 */
function patchData(patch: ListingPatch): Prisma.ListingUpdateManyMutationInput {
  const { priceBaseUnits, packages, milestones, ...rest } = patch;
  return {
    ...rest,
    ...(priceBaseUnits !== undefined ? { priceBaseUnits: priceBaseUnits.toString() } : {}),
    ...(packages !== undefined ? { packages: packagesToJson(packages) as unknown as Prisma.InputJsonValue } : {}),
    ...(milestones !== undefined ? { milestones: milestones ? (milestonesToJson(milestones) as unknown as Prisma.InputJsonValue) : Prisma.DbNull } : {}),
  };
}

/**
 * The event a listing change emits: the status row's `emits`; a move the table has no row for (a
 * capacity or stock change: available -> sold) emits what moves into that status emit (listing.sold,
 * listing.reserved); else listing.updated (an edit).
 */
export function listingEventFor(from: ListingStatus | null, to: ListingStatus): ListingEvent {
  const row = listingTransitions.find((t) => t.from === from && t.to === to);
  if (row) return row.emits;
  if (from === null) return 'listing.created';
  if (from !== to && (to === 'sold' || to === 'reserved')) return to === 'sold' ? 'listing.sold' : 'listing.reserved';
  return 'listing.updated';
}

/** The stored status a listing takes from its PAID orders (contract listingStatusOfUnits); unlisted and sold stay. */
function settledStatus(status: ListingStatus, u: LockedUnits): ListingStatus {
  if (status !== 'available' && status !== 'reserved') return status;
  return listingStatusOfUnits({ capacity: u.capacity, stock: u.stock, sold: u.sold, open: u.open - u.unpaid });
}

/** Lock listing `id` and read its stored status and units (null: no such listing). */
async function lockUnits(tx: SqlClient, id: string): Promise<LockedUnits | null> {
  const rows = await tx.$queryRaw<Array<{ status: string; capacity: number; stock: number | null; open_orders: number; unpaid_orders: number; sold_count: number }>>`
    SELECT status, capacity, stock, open_orders, unpaid_orders, sold_count FROM listings WHERE id = ${id}::uuid FOR UPDATE`;
  const r = rows[0];
  if (!r) return null;
  return {
    status: r.status as ListingStatus,
    capacity: Number(r.capacity),
    stock: r.stock === null ? null : Number(r.stock),
    open: Number(r.open_orders),
    unpaid: Number(r.unpaid_orders),
    sold: Number(r.sold_count),
  };
}

/**
 * `present`: the listing as the API returns it (presentListing with the service's currencies and
 * categories), the data of listing events; without it events carry the storage record's id only.
 */
export function createListingsRepo(
  db: PrismaClient,
  present: (l: ListingRecord) => unknown = (l) => ({ listing_id: l.id }),
  /**
   * where `get` and `list` read (db/read-routing.ts: a standby only for an anonymous GET/HEAD within the lag
   * bound); default `db`. The reads that follow a write here stay on `db` (the primary).
   */
  readDb: ReadDb = () => db,
): ListingsRepo {
  async function getWith(client: SqlClient, id: string): Promise<ListingRecord | null> {
    const rows = await client.$queryRaw<ListingRow[]>(selectListings(Prisma.sql`SELECT ${id}::uuid AS id`, Prisma.sql`page.id`));
    return rows[0] ? toListingRecord(rows[0]) : null;
  }
  /** the listing as the primary has it (after a write) */
  const get = (id: string) => getWith(db, id);

  /**
   * Append the listing's event for a change from `from` (null: created), inside `tx`; with `into`, push it
   * there instead (the caller appends it last in its transaction: `moveByUnits` with a scope).
   */
  async function appendListingEvent(tx: SqlClient, id: string, from: ListingStatus | null, into?: NewEvent[]): Promise<void> {
    const l = (await getWith(tx, id))!;
    const events: NewEvent[] = [
      {
        type: listingEventFor(from, l.status),
        resourceType: 'listing',
        resourceId: id,
        audience: [l.sellerId],
        data: present(l),
        // created: the transaction that minted the listing's NFT
        signature: from === null ? l.mintSignature : null,
      },
    ];
    if (into) into.push(...events);
    else await appendEvents(tx, events);
  }

  /**
   * Lock the listing row; while its status is one of `expected`, apply `patch` and append its event (false
   * otherwise). When the patch changes the units (capacity, stock) or relists, the stored status follows the
   * paid orders (repeat sales); a stock below the orders sold + open throws StockBelowCommitted.
   */
  async function patchLocked(tx: SqlClient & Pick<PrismaClient, 'listing'>, id: string, expected: readonly ListingStatus[], patch: ListingPatch): Promise<boolean> {
    const locked = await lockUnits(tx, id);
    if (!locked || !expected.includes(locked.status)) return false;
    const data = { ...patch };
    if (patch.capacity !== undefined || patch.stock !== undefined || patch.status === 'available') {
      const units: LockedUnits = { ...locked, capacity: patch.capacity ?? locked.capacity, stock: patch.stock !== undefined ? patch.stock : locked.stock };
      if (units.stock !== null && units.stock < locked.sold + locked.open) throw new StockBelowCommitted(locked.sold + locked.open);
      const settled = settledStatus(patch.status ?? locked.status, units);
      if (settled !== locked.status || data.status !== undefined) data.status = settled;
    }
    await tx.listing.updateMany({ where: { id }, data: patchData(data) });
    await appendListingEvent(tx, id, locked.status);
    return true;
  }

  async function getIntent(id: string): Promise<ListingIntent | null> {
    const row = await db.chainIntent.findFirst({ where: { id, orderId: null, action: { in: ACTIONS } } });
    return row ? toIntent(row) : null;
  }

  return {
    // the public read (GET /listings/{id}): one prepared statement on the driver (db/prepared.ts)
    get: async (id: string) => {
      const rows = await preparedRead<ListingRow>(readDb(), GET_LISTING, [id]);
      return rows[0] ? toListingRecord(rows[0]) : null;
    },
    getIntent,

    async recordMint(draft: ListingDraft, fingerprint: string, a: ListingMintAttempt) {
      const row = await db.chainIntent.create({
        data: {
          action: 'mint_listing',
          status: 'sent',
          signature: a.signature,
          payload: json({
            listing_id: draft.id,
            mint: a.mint,
            last_valid_block_height: a.lastValidBlockHeight,
            fingerprint,
            draft: draftToJson(draft),
          }),
        },
      });
      return toIntent(row);
    },

    async findOpenMint(fingerprint: string) {
      const row = await db.chainIntent.findFirst({
        where: { orderId: null, action: 'mint_listing', status: 'sent', payload: { path: ['fingerprint'], equals: fingerprint } },
        orderBy: { createdAt: 'asc' },
      });
      return row ? toIntent(row) : null;
    },

    async findMintByFingerprint(fingerprint: string) {
      const row = await db.chainIntent.findFirst({
        where: { orderId: null, action: 'mint_listing', status: { in: ['sent', 'confirmed'] }, payload: { path: ['fingerprint'], equals: fingerprint } },
        orderBy: { createdAt: 'desc' },
      });
      return row ? toIntent(row) : null;
    },

    async replaceAttempt(intentId: string, expected: string | null, a: TxAttempt & { mint?: string }) {
      return db.$transaction(async (tx) => {
        const row = await tx.chainIntent.findFirst({ where: { id: intentId, status: 'sent', signature: expected } });
        if (!row) return false;
        const p = (row.payload ?? {}) as unknown as IntentPayload;
        const res = await tx.chainIntent.updateMany({
          where: { id: intentId, status: 'sent', signature: expected },
          data: {
            signature: a.signature,
            payload: json({ ...p, last_valid_block_height: a.lastValidBlockHeight, ...(a.mint ? { mint: a.mint } : {}) }),
          },
        });
        return res.count === 1;
      });
    },

    async finishMint(intentId: string, l: NewListing) {
      const inserted = await db.$transaction(async (tx) => {
        // ON CONFLICT DO NOTHING: the recovery pass and the request may finish the same mint
        const created = await tx.listing.createMany({ data: [listingData(l)], skipDuplicates: true });
        await tx.chainIntent.update({
          where: { id: intentId },
          data: { status: 'confirmed', slot: BigInt(l.mintSlot), error: null },
        });
        if (created.count === 1) await appendListingEvent(tx, l.id, null);
        return created.count === 1;
      });
      if (inserted) notifyAppended();
      const row = await get(l.id);
      if (!row) throw new Error(`listing ${l.id} vanished after insert`);
      return row;
    },

    async failIntent(intentId: string, expected: string | null, error: string) {
      const res = await db.chainIntent.updateMany({
        where: { id: intentId, status: 'sent', signature: expected },
        data: { status: 'failed', error: error.slice(0, 1000) },
      });
      return res.count === 1;
    },

    async recordRename(listingId: string, name: string, a: TxAttempt) {
      const row = await db.chainIntent.create({
        data: {
          action: 'update_listing_token',
          status: 'sent',
          signature: a.signature,
          payload: json({ listing_id: listingId, name, last_valid_block_height: a.lastValidBlockHeight }),
        },
      });
      return toIntent(row);
    },

    async applyRename(intentId: string, listingId: string, expected: readonly ListingStatus[], patch: ListingPatch) {
      const applied = await db.$transaction(async (tx) => {
        // the intent row is the lock the recovery pass takes too (confirmRenames): whoever is first wins
        const locked = await tx.$queryRaw<{ status: string }[]>`SELECT status FROM chain_intents WHERE id = ${intentId}::uuid FOR UPDATE`;
        if (locked[0]?.status !== 'sent') return 'intent-closed' as const;
        return patchLocked(tx, listingId, expected, patch);
      });
      if (applied === 'intent-closed') return applied;
      if (applied) notifyAppended();
      return applied ? get(listingId) : null;
    },

    async confirmRenames(ids: readonly string[], listingId: string, title: string) {
      if (ids.length === 0) return true;
      return db
        .$transaction(async (tx) => {
          // lock the intents first (as applyRename does), then read the title a concurrent rename may have changed
          await tx.$queryRaw`SELECT id FROM chain_intents WHERE id IN (${Prisma.join(ids.map((id) => Prisma.sql`${id}::uuid`))}) FOR UPDATE`;
          const current = await tx.listing.findUnique({ where: { id: listingId }, select: { title: true } });
          if (current && current.title !== title) throw new TitleMoved();
          await tx.chainIntent.updateMany({ where: { id: { in: [...ids] }, status: 'sent' }, data: { status: 'confirmed', error: null } });
          return true;
        })
        .catch((err: unknown) => {
          if (err instanceof TitleMoved) return false;
          throw err;
        });
    },

    async listOpenIntents(limit: number) {
      const rows = await db.chainIntent.findMany({
        where: { orderId: null, action: { in: ACTIONS }, status: 'sent' },
        orderBy: { createdAt: 'asc' },
        take: limit,
      });
      return rows.map(toIntent);
    },

    async list(f: ListListingsFilter) {
      const visible: Prisma.Sql[] = [];
      if (f.statuses.length > 0) visible.push(listingStatusIn(f.statuses));
      if (f.unlistedVisibleTo) visible.push(Prisma.sql`(l.status = 'unlisted' AND l.seller_id = ${f.unlistedVisibleTo}::uuid)`);
      if (f.takenDownVisibleTo) visible.push(takenDownOf(f.takenDownVisibleTo, f.statuses));
      const where: Prisma.Sql[] = [visible.length > 0 ? Prisma.sql`(${Prisma.join(visible, ' OR ')})` : Prisma.sql`false`];
      if (f.sellerWallet) where.push(Prisma.sql`l.seller_id IN (SELECT id FROM users WHERE wallet = ${f.sellerWallet})`);
      if (f.category) where.push(Prisma.sql`l.category = ${f.category}`);
      if (f.after) where.push(Prisma.sql`(l.created_at, l.id) < (${f.after.createdAt.toISOString()}::timestamptz, ${f.after.id}::uuid)`);
      const page = Prisma.sql`
        SELECT l.id, l.created_at FROM listings l
         WHERE ${Prisma.join(where, ' AND ')}
         ORDER BY l.created_at DESC, l.id DESC
         LIMIT ${f.limit}`;
      const rows = await readDb().$queryRaw<ListingRow[]>(selectListings(page, Prisma.sql`page.created_at DESC, page.id DESC`));
      return rows.map(toListingRecord);
    },

    async updateIf(id: string, expected: readonly ListingStatus[], patch: ListingPatch) {
      const applied = await db.$transaction(async (tx) => {
        return patchLocked(tx, id, expected, patch);
      });
      if (!applied) return null;
      notifyAppended();
      return get(id);
    },

    async moveByUnits<T extends { to: ListingStatus | null }>(id: string, decide: (current: LockedUnits) => T, scope?: ListingTxScope): Promise<T | null> {
      const move = async (tx: Prisma.TransactionClient, into?: NewEvent[]) => {
        const locked = await lockUnits(tx, id);
        if (!locked) return null;
        const verdict = decide(locked);
        if (verdict.to === null || verdict.to === locked.status) return { verdict, moved: false };
        await tx.listing.updateMany({ where: { id }, data: { status: verdict.to } });
        await appendListingEvent(tx, id, locked.status, into);
        return { verdict, moved: true };
      };
      // in the caller's transaction (its event appended by the caller, who also wakes the readers)
      if (scope) return (await move(scope.tx as Prisma.TransactionClient, scope.events))?.verdict ?? null;
      const result = await db.$transaction((tx) => move(tx));
      if (!result) return null;
      if (result.moved) notifyAppended();
      return result.verdict;
    },
  };
}

/** getWith's statement as a prepared statement ($1: the listing id): the public read's hot path. */
const GET_LISTING: PreparedStatement = {
  name: 'bazaar_get_listing_v1',
  text: selectListings(Prisma.sql`SELECT ${'00000000-0000-0000-0000-000000000000'}::uuid AS id`, Prisma.sql`page.id`).text,
};

/** Rolls back confirmRenames' transaction when the title changed under it. */
class TitleMoved extends Error {}

/** A seller's listing counts: all listings, and those `available` (users module: profile stats). */
export async function sellerListingStats(db: PrismaClient, sellerId: string): Promise<{ listingsCount: number; activeListingsCount: number }> {
  const [listingsCount, activeListingsCount] = await Promise.all([
    db.listing.count({ where: { sellerId } }),
    // issue 25: a taken-down listing is not on offer
    db.listing.count({ where: { sellerId, status: 'available', takenDownAt: null } }),
  ]);
  return { listingsCount, activeListingsCount };
}
