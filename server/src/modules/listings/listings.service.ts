/**
 * Listings: the rules. Creating a listing mints its Token-2022 NFT first and stores the row only
 * after the mint succeeded, so there is never a listing without a token (a failed mint stores
 * nothing; the listing id is generated up front because the token's metadata URI contains it).
 *
 * Status table (contract/src/listings.contract.ts `listingTransitions`):
 *   available <-> unlisted   by the seller (PATCH status)
 *   available  -> reserved   reserve()   (an order for it was funded)
 *   reserved   -> sold       markSold()  (that order completed / was resolved partly)
 *   reserved   -> available  release()   (that order was refunded / resolved with a full refund)
 * Only available and unlisted listings can be edited; reserved and sold ones answer 409.
 */
import { randomUUID } from 'node:crypto';
import { cursorKey, decodeCursor, newestPage, type CursorSpec, type Page } from '../../lib/cursor.js';
import { formatUiAmount, toBaseUnits } from '../../lib/money.js';
import { listingErrors, type FieldError } from './listings.errors.js';
import type {
  CurrencyConfig,
  ListingPatch,
  ListingRecord,
  ListingsDeps,
  ListingStatus,
  Viewer,
} from './listings.types.js';

export const TOKEN_SYMBOL = 'BZR';
/** token-metadata name limit of the chain module (bytes of UTF-8) */
export const TOKEN_NAME_MAX_BYTES = 32;

export interface CreateListingInput {
  title: string;
  description: string;
  price: number;
  currency: string;
  category: string;
  duration: number;
}

export interface UpdateListingInput {
  title?: string;
  description?: string;
  price?: number;
  category?: string;
  duration?: number;
  status?: 'available' | 'unlisted';
}

export interface ListListingsInput {
  sellerWallet?: string;
  /** 'active' = available */
  status?: ListingStatus | 'active';
  category?: string;
  limit: number;
  cursor?: string;
}


/** `title` cut to at most 32 characters and 32 UTF-8 bytes, on a code point boundary. */
export function tokenName(title: string): string {
  let out = '';
  let bytes = 0;
  let chars = 0;
  for (const ch of title) {
    const len = Buffer.byteLength(ch, 'utf8');
    if (chars + 1 > TOKEN_NAME_MAX_BYTES || bytes + len > TOKEN_NAME_MAX_BYTES) break;
    out += ch;
    bytes += len;
    chars += 1;
  }
  return out.trimEnd();
}

export function metadataUri(publicBaseUrl: string, listingId: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/api/v1/listings/${listingId}/token-metadata.json`;
}


const EDITABLE: readonly ListingStatus[] = ['available', 'unlisted'];

export function createListingsService(deps: ListingsDeps) {
  const { repo, chain, config } = deps;
  const newId = deps.newId ?? randomUUID;

  function currency(code: string): CurrencyConfig | undefined {
    return config.currencies.find((c) => c.code === code);
  }

  function checkCurrency(code: string, errors: FieldError[]): CurrencyConfig | undefined {
    const cur = currency(code);
    if (!cur) {
      errors.push({
        path: 'body.currency',
        message: `must be one of ${config.currencies.map((c) => c.code).join(', ')}`,
        code: 'unknown_currency',
      });
    }
    return cur;
  }

  function checkCategory(slug: string, errors: FieldError[]) {
    if (!config.categories.some((c) => c.slug === slug)) {
      errors.push({
        path: 'body.category',
        message: `must be one of ${config.categories.map((c) => c.slug).join(', ')}`,
        code: 'unknown_category',
      });
    }
  }

  function checkPrice(price: number, cur: CurrencyConfig, errors: FieldError[]): bigint | undefined {
    const r = toBaseUnits(price, cur.decimals);
    if (r.ok) return r.value;
    errors.push({ path: 'body.price', message: r.message, code: r.code });
    return undefined;
  }

  /** Visible to the viewer: everything but unlisted, which only its seller (and admins) see. */
  function visible(l: ListingRecord, viewer: Viewer | null): boolean {
    return l.status !== 'unlisted' || (viewer !== null && (viewer.userId === l.sellerId || viewer.role === 'admin'));
  }

  async function load(listingId: string): Promise<ListingRecord> {
    const l = await repo.get(listingId);
    if (!l) throw listingErrors.notFound(listingId);
    return l;
  }

  /** System transition (order lifecycle): applies only from `from`; no-op when already in `to`. */
  async function move(listingId: string, from: ListingStatus, to: ListingStatus, idempotent: boolean) {
    const updated = await repo.updateIf(listingId, [from], { status: to });
    if (updated) return updated;
    const current = await load(listingId);
    if (idempotent && current.status === to) return current;
    if (to === 'reserved') throw listingErrors.unavailable(listingId, current.status);
    throw listingErrors.invalidTransition(listingId, current.status, to);
  }

  return {
    async create(seller: Viewer, input: CreateListingInput): Promise<ListingRecord> {
      const errors: FieldError[] = [];
      const cur = checkCurrency(input.currency, errors);
      checkCategory(input.category, errors);
      const priceBaseUnits = cur ? checkPrice(input.price, cur, errors) : undefined;
      if (errors.length > 0 || priceBaseUnits === undefined) throw listingErrors.validation(errors);

      const id = newId();
      const uri = metadataUri(config.publicBaseUrl, id);
      // Chain first: a failure (503 chain-unavailable / 502 chain-transaction-failed) leaves no row.
      const minted = await chain.mintListingToken({
        owner: seller.wallet,
        name: tokenName(input.title),
        symbol: TOKEN_SYMBOL,
        uri,
      });
      try {
        return await repo.insert({
          id,
          sellerId: seller.userId,
          sellerWallet: seller.wallet,
          title: input.title,
          description: input.description,
          priceBaseUnits,
          currency: input.currency,
          category: input.category,
          durationDays: input.duration,
          status: 'available',
          tokenMint: minted.mint,
          mintSignature: minted.signature,
          mintSlot: minted.slot,
          metadataUri: uri,
        });
      } catch (err) {
        // The token exists on chain but the row could not be written: log it for reconciliation.
        deps.log?.error({ err, listingId: id, mint: minted.mint, signature: minted.signature }, 'listing token minted but row not stored');
        throw err;
      }
    },

    async get(listingId: string, viewer: Viewer | null): Promise<ListingRecord> {
      const l = await load(listingId);
      if (!visible(l, viewer)) throw listingErrors.notFound(listingId);
      return l;
    },

    /**
     * Newest first. Without `status` every status but unlisted is listed, plus the caller's own
     * unlisted listings; `status=unlisted` lists only the caller's own unlisted listings.
     */
    async list(input: ListListingsInput, viewer: Viewer | null): Promise<Page<ListingRecord>> {
      const status = input.status === 'active' ? 'available' : input.status;
      const unlistedVisibleTo = !status || status === 'unlisted' ? (viewer?.userId ?? null) : null;
      const spec: CursorSpec = {
        sort: 'newest',
        filters: { seller_wallet: input.sellerWallet, status, category: input.category, viewer: unlistedVisibleTo },
        keys: [cursorKey.timestamp],
      };
      const after = input.cursor ? decodeCursor(input.cursor, spec) : undefined;
      const rows = await repo.list({
        sellerWallet: input.sellerWallet,
        category: input.category,
        statuses: !status ? ['available', 'reserved', 'sold'] : status === 'unlisted' ? [] : [status],
        unlistedVisibleTo,
        limit: input.limit + 1,
        after: after ? { createdAt: new Date(after.keys[0] as string), id: after.id } : undefined,
      });
      return newestPage(rows, input.limit, spec);
    },

    async update(listingId: string, actor: Viewer, input: UpdateListingInput): Promise<ListingRecord> {
      const current = await load(listingId);
      if (current.sellerId !== actor.userId) {
        if (!visible(current, actor)) throw listingErrors.notFound(listingId);
        throw listingErrors.notSeller(listingId);
      }
      if (!EDITABLE.includes(current.status)) throw listingErrors.invalidTransition(listingId, current.status, 'updated');

      const errors: FieldError[] = [];
      const patch: ListingPatch = {};
      if (input.category !== undefined) {
        checkCategory(input.category, errors);
        patch.category = input.category;
      }
      if (input.price !== undefined) {
        const cur = currency(current.currency);
        const base = cur ? checkPrice(input.price, cur, errors) : undefined;
        if (base !== undefined) patch.priceBaseUnits = base;
      }
      if (errors.length > 0) throw listingErrors.validation(errors);
      if (input.title !== undefined) patch.title = input.title;
      if (input.description !== undefined) patch.description = input.description;
      if (input.duration !== undefined) patch.durationDays = input.duration;
      if (input.status !== undefined) patch.status = input.status;

      // Keep the on-chain name in step; only when the (truncated) name actually changes.
      const oldName = tokenName(current.title);
      const newName = input.title !== undefined ? tokenName(input.title) : oldName;
      if (newName !== oldName) await chain.updateListingToken(current.tokenMint, { name: newName });

      const updated = await repo.updateIf(listingId, EDITABLE, patch);
      if (updated) return updated;
      // An order reserved it meanwhile: undo the name change on chain (best effort) and refuse.
      if (newName !== oldName) {
        await chain.updateListingToken(current.tokenMint, { name: oldName }).catch((err: unknown) => {
          deps.log?.warn({ err, listingId, mint: current.tokenMint }, 'could not restore listing token name');
        });
      }
      const now = await load(listingId);
      throw listingErrors.invalidTransition(listingId, now.status, 'updated');
    },

    /** The public Metaplex-style JSON the token's `uri` points at (any status: the token exists). */
    async tokenMetadata(listingId: string) {
      const l = await load(listingId);
      const cur = currency(l.currency);
      const category = config.categories.find((c) => c.slug === l.category);
      return {
        name: tokenName(l.title),
        symbol: TOKEN_SYMBOL,
        description: l.description,
        external_url: `${config.publicBaseUrl.replace(/\/+$/, '')}/api/v1/listings/${l.id}`,
        attributes: [
          { trait_type: 'category', value: category?.name ?? l.category },
          { trait_type: 'price', value: cur ? formatUiAmount(l.priceBaseUnits, cur.decimals) : l.priceBaseUnits.toString() },
          { trait_type: 'currency', value: l.currency },
          { trait_type: 'duration_days', value: l.durationDays },
          { trait_type: 'seller', value: l.sellerWallet },
          { trait_type: 'status', value: l.status },
        ],
      };
    },

    /** available -> reserved when an order is funded; 409 listing-unavailable otherwise. */
    reserve: (listingId: string) => move(listingId, 'available', 'reserved', false).then(() => undefined),
    /** reserved -> available (order refunded); no-op when already available. */
    release: (listingId: string) => move(listingId, 'reserved', 'available', true).then(() => undefined),
    /** reserved -> sold (order completed); no-op when already sold. */
    markSold: (listingId: string) => move(listingId, 'reserved', 'sold', true).then(() => undefined),

    /** The read the orders module needs (ListingsPort.get); null when unknown. */
    async view(listingId: string) {
      const l = await repo.get(listingId);
      if (!l) return null;
      return {
        id: l.id,
        sellerId: l.sellerId,
        sellerWallet: l.sellerWallet,
        title: l.title,
        status: l.status,
        currency: l.currency,
        priceBaseUnits: l.priceBaseUnits,
        durationDays: l.durationDays,
      };
    },
  };
}

export type ListingsService = ReturnType<typeof createListingsService>;

/** Adapter for the orders module's ListingsPort. */
export function listingsPort(service: ListingsService) {
  return {
    get: service.view,
    reserve: service.reserve,
    release: service.release,
    markSold: service.markSold,
  };
}
