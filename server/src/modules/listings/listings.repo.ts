/**
 * Listings storage (Prisma). Queries only: the rules live in listings.service.ts.
 */
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { selectListings, toListingRecord, type ListingRow } from './listings.sql.js';
import type { ListingPatch, ListingRecord, ListingsRepo, ListListingsFilter, ListingStatus, NewListing } from './listings.types.js';

export function createListingsRepo(db: PrismaClient): ListingsRepo {
  async function get(id: string): Promise<ListingRecord | null> {
    const rows = await db.$queryRaw<ListingRow[]>(selectListings(Prisma.sql`SELECT ${id}::uuid AS id`, Prisma.sql`page.id`));
    return rows[0] ? toListingRecord(rows[0]) : null;
  }

  return {
    get,

    async insert(l: NewListing) {
      await db.listing.create({
        data: {
          id: l.id,
          sellerId: l.sellerId,
          title: l.title,
          description: l.description,
          priceBaseUnits: l.priceBaseUnits.toString(),
          currency: l.currency,
          category: l.category,
          durationDays: l.durationDays,
          status: l.status,
          tokenMintAddress: l.tokenMint,
          mintSignature: l.mintSignature,
          mintSlot: BigInt(l.mintSlot),
          metadataUri: l.metadataUri,
        },
      });
      const row = await get(l.id);
      if (!row) throw new Error(`listing ${l.id} vanished after insert`);
      return row;
    },

    async list(f: ListListingsFilter) {
      const visible: Prisma.Sql[] = [];
      if (f.statuses.length > 0) visible.push(Prisma.sql`l.status IN (${Prisma.join(f.statuses)})`);
      if (f.unlistedVisibleTo) visible.push(Prisma.sql`(l.status = 'unlisted' AND l.seller_id = ${f.unlistedVisibleTo}::uuid)`);
      const where: Prisma.Sql[] = [visible.length > 0 ? Prisma.sql`(${Prisma.join(visible, ' OR ')})` : Prisma.sql`false`];
      if (f.sellerWallet) where.push(Prisma.sql`l.seller_id IN (SELECT id FROM users WHERE wallet = ${f.sellerWallet})`);
      if (f.category) where.push(Prisma.sql`l.category = ${f.category}`);
      if (f.after) where.push(Prisma.sql`(l.created_at, l.id) < (${f.after.createdAt.toISOString()}::timestamptz, ${f.after.id}::uuid)`);
      const page = Prisma.sql`
        SELECT l.id, l.created_at FROM listings l
         WHERE ${Prisma.join(where, ' AND ')}
         ORDER BY l.created_at DESC, l.id DESC
         LIMIT ${f.limit}`;
      const rows = await db.$queryRaw<ListingRow[]>(selectListings(page, Prisma.sql`page.created_at DESC, page.id DESC`));
      return rows.map(toListingRecord);
    },

    async updateIf(id: string, expected: readonly ListingStatus[], patch: ListingPatch) {
      const { priceBaseUnits, ...rest } = patch;
      const res = await db.listing.updateMany({
        where: { id, status: { in: [...expected] } },
        data: { ...rest, ...(priceBaseUnits !== undefined ? { priceBaseUnits: priceBaseUnits.toString() } : {}) },
      });
      return res.count === 1 ? get(id) : null;
    },
  };
}
