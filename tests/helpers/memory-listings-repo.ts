/**
 * MemoryListingsRepo: an in-memory ListingsRepo (listings + this module's chain intents) for service
 * unit tests. The Prisma repository (server/src/modules/listings/listings.repo.ts) is what runs in
 * production; the HTTP suites exercise it over PGlite / PostgreSQL.
 *
 * `failing` names repository methods that throw (a database outage at a named step).
 */
import { randomUUID } from 'node:crypto';
import type { ListingMintAttempt, TxAttempt } from '../../server/src/chain/types.js';
import type {
  ListingDraft,
  ListingIntent,
  ListingPatch,
  ListingRecord,
  ListingsRepo,
  ListingStatus,
  ListListingsFilter,
  LockedUnits,
  NewListing,
  RenameApplied,
} from '../../server/src/modules/listings/listings.types.js';

export class MemoryListingsRepo implements ListingsRepo {
  rows = new Map<string, ListingRecord>();
  intents = new Map<string, ListingIntent>();
  /** repository methods that throw like a database that went away */
  failing = new Set<keyof ListingsRepo>();

  private check(method: keyof ListingsRepo) {
    if (this.failing.has(method)) throw new Error(`database unavailable (${method})`);
  }

  private newIntent(i: Omit<ListingIntent, 'id' | 'status' | 'error' | 'createdAt' | 'updatedAt'>): ListingIntent {
    const now = new Date();
    const rec: ListingIntent = { ...i, id: randomUUID(), status: 'sent', error: null, createdAt: now, updatedAt: now };
    this.intents.set(rec.id, rec);
    return { ...rec };
  }

  async get(id: string) {
    this.check('get');
    const r = this.rows.get(id);
    return r ? { ...r } : null;
  }

  /**
   * As the Prisma repository's `list`: the listings that READ one of `statuses` (an `available` listing
   * with `heldUntil` reads reserved), plus the unlisted ones of `unlistedVisibleTo`; then the seller and
   * category filters; newest first (created_at, id descending) after the keyset position; at most `limit`.
   */
  async list(f: ListListingsFilter) {
    this.check('list');
    const reads = (r: ListingRecord): ListingStatus => (r.status === 'available' && r.heldUntil ? 'reserved' : r.status);
    const newerFirst = (a: ListingRecord, b: ListingRecord) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
    return [...this.rows.values()]
      .filter((r) => f.statuses.includes(reads(r)) || (!!f.unlistedVisibleTo && r.status === 'unlisted' && r.sellerId === f.unlistedVisibleTo))
      .filter((r) => f.sellerWallet === undefined || r.sellerWallet === f.sellerWallet)
      .filter((r) => f.category === undefined || r.category === f.category)
      .filter((r) => !f.after || newerFirst({ createdAt: f.after.createdAt, id: f.after.id } as ListingRecord, r) < 0)
      .sort(newerFirst)
      .slice(0, f.limit)
      .map((r) => ({ ...r }));
  }

  async updateIf(id: string, expected: readonly ListingStatus[], patch: ListingPatch) {
    this.check('updateIf');
    const r = this.rows.get(id);
    if (!r || !expected.includes(r.status)) return null;
    Object.assign(r, patch, { updatedAt: new Date() });
    return { ...r };
  }

  /** As the Prisma repository's: the row's stored status and units (no orders here: counts as stored), then `decide`. */
  async moveByUnits<T extends { to: ListingStatus | null }>(id: string, decide: (current: LockedUnits) => T, _scope?: unknown): Promise<T | null> {
    this.check('moveByUnits');
    const r = this.rows.get(id);
    if (!r) return null;
    const verdict = decide({ status: r.status, capacity: r.capacity ?? 1, stock: r.stock === undefined ? 1 : r.stock, open: r.openOrders ?? 0, unpaid: r.unpaidOrders ?? 0, sold: r.soldCount ?? 0 });
    if (verdict.to !== null && verdict.to !== r.status) Object.assign(r, { status: verdict.to, updatedAt: new Date() });
    return verdict;
  }

  async recordMint(draft: ListingDraft, fingerprint: string, a: ListingMintAttempt) {
    this.check('recordMint');
    return this.newIntent({
      action: 'mint_listing',
      listingId: draft.id,
      signature: a.signature,
      lastValidBlockHeight: a.lastValidBlockHeight,
      mint: a.mint,
      draft: { ...draft },
      fingerprint,
      name: null,
    });
  }

  async findOpenMint(fingerprint: string) {
    this.check('findOpenMint');
    const i = [...this.intents.values()].find((x) => x.action === 'mint_listing' && x.status === 'sent' && x.fingerprint === fingerprint);
    return i ? { ...i } : null;
  }

  async findMintByFingerprint(fingerprint: string) {
    this.check('findMintByFingerprint');
    const i = [...this.intents.values()].reverse().find((x) => x.action === 'mint_listing' && x.status !== 'failed' && x.fingerprint === fingerprint);
    return i ? { ...i } : null;
  }

  async replaceAttempt(intentId: string, expected: string | null, a: TxAttempt & { mint?: string }) {
    this.check('replaceAttempt');
    const i = this.intents.get(intentId);
    if (!i || i.status !== 'sent' || i.signature !== expected) return false;
    Object.assign(i, { signature: a.signature, lastValidBlockHeight: a.lastValidBlockHeight, ...(a.mint ? { mint: a.mint } : {}) });
    return true;
  }

  async finishMint(intentId: string, l: NewListing) {
    this.check('finishMint');
    if (!this.rows.has(l.id)) {
      const now = new Date();
      this.rows.set(l.id, { ...l, createdAt: now, updatedAt: now, sellerRating: null, sellerReviewCount: 0, heldUntil: null, openOrders: 0, unpaidOrders: 0, soldCount: 0 });
    }
    const i = this.intents.get(intentId);
    if (i) Object.assign(i, { status: 'confirmed', error: null });
    return { ...this.rows.get(l.id)! };
  }

  async failIntent(intentId: string, expected: string | null, error: string) {
    this.check('failIntent');
    const i = this.intents.get(intentId);
    if (!i || i.status !== 'sent' || i.signature !== expected) return false;
    Object.assign(i, { status: 'failed', error });
    return true;
  }

  async recordRename(listingId: string, name: string, a: TxAttempt) {
    this.check('recordRename');
    return this.newIntent({
      action: 'update_listing_token',
      listingId,
      signature: a.signature,
      lastValidBlockHeight: a.lastValidBlockHeight,
      mint: null,
      draft: null,
      fingerprint: null,
      name,
    });
  }

  async applyRename(intentId: string, listingId: string, expected: readonly ListingStatus[], patch: ListingPatch): Promise<RenameApplied> {
    this.check('applyRename');
    if (this.intents.get(intentId)?.status !== 'sent') return 'intent-closed';
    return this.updateIf(listingId, expected, patch);
  }

  async confirmRenames(ids: readonly string[], listingId: string, title: string) {
    this.check('confirmRenames');
    const l = this.rows.get(listingId);
    if (l && l.title !== title) return false;
    for (const id of ids) {
      const i = this.intents.get(id);
      if (i?.status === 'sent') Object.assign(i, { status: 'confirmed', error: null });
    }
    return true;
  }

  async getIntent(id: string) {
    this.check('getIntent');
    const i = this.intents.get(id);
    return i ? { ...i } : null;
  }

  async listOpenIntents(limit: number) {
    this.check('listOpenIntents');
    return [...this.intents.values()].filter((i) => i.status === 'sent').slice(0, limit).map((i) => ({ ...i }));
  }
}
