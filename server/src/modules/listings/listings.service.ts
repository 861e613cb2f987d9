/**
 * Listings: the rules. A listing is stored once its Token-2022 NFT exists, and its token's on-chain
 * name follows its title; both chain-then-database steps are recoverable (listings.token-steps.ts,
 * README.md "Crash safety"): the intent is recorded before each send, a repeated create resumes it,
 * and the recovery pass (listings.recovery.ts) finishes or compensates after a failure or a crash.
 * Pending mints live in chain_intents only, so no read of `listings` can ever show them.
 *
 * Status moves follow the contract's listing state table (`listingTransitions`): the seller's
 * (available <-> unlisted, PATCH status) and the order lifecycle's (`applyOrderEvent`, the `listing`
 * column of the order lifecycle table: order_funded reserves, order_completed / order_resolved_partial
 * sell, order_refunded / order_resolved_full make it available again). Only LISTING_EDITABLE_STATUSES
 * (available, unlisted) can be edited; reserved and sold ones answer 409.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  type CreateListingBody,
  DEFAULT_LISTING_UNITS,
  LISTING_EDITABLE_STATUSES,
  listingMoveOnOrderEvent,
  type ListingOrderEvent,
  listingTransitions,
  type UpdateListingBody,
} from '@bazaar/contract';
import { DomainError } from '../../errors.js';
import { cursorKey, decodeCursor, newestPage, type CursorSpec, type Page } from '../../lib/cursor.js';
import type { CurrencyInfo } from '../../lib/currency.js';
import { formatUiAmount, toBaseUnits } from '../../lib/money.js';
import { SPEND_ESTIMATES } from '../budget/index.js';
import { hasRole } from '../auth/index.js';
import { listingErrors, type FieldError } from './listings.errors.js';
import { checkMilestoneSums, cheapestPackage, milestonesToJson, packagesToJson, parseMilestones, parsePackages } from './listings.packages.js';
import { createTokenSteps, TOKEN_SYMBOL, tokenName } from './listings.token-steps.js';
import type {
  ListingDraft,
  ListingMilestone,
  ListingPackage,
  ListingIntent,
  ListingPatch,
  ListingRecord,
  ListingsDeps,
  ListingTxScope,
  ListingStatus,
  RenameApplied,
  Viewer,
} from './listings.types.js';
import { StockBelowCommitted } from './listings.types.js';

export { TOKEN_NAME_MAX_BYTES, TOKEN_SYMBOL, tokenName } from './listings.token-steps.js';

/** The contract's request bodies (POST /listings, PATCH /listings/{id}). */
export type CreateListingInput = CreateListingBody;
export type UpdateListingInput = UpdateListingBody;

export interface ListListingsInput {
  sellerWallet?: string;
  /** 'active' = available */
  status?: ListingStatus | 'active';
  category?: string;
  limit: number;
  cursor?: string;
}


/**
 * Is listing `l` visible to `viewer` (null: anonymous or a credential without a user)? Everything but
 * unlisted is; an unlisted or taken-down listing only to its seller, admins and moderators (everyone else gets
 * 404 not-found).
 */
export function listingVisibleTo(l: Pick<ListingRecord, 'status' | 'sellerId' | 'takenDown'>, viewer: Viewer | null): boolean {
  // issue 25: a taken-down listing, like an unlisted one, only to its seller and operators (admins, moderators)
  return (
    (l.status !== 'unlisted' && !l.takenDown) ||
    (viewer !== null && (viewer.userId === l.sellerId || viewer.isAdmin || hasRole(viewer, 'moderator')))
  );
}

export function metadataUri(publicBaseUrl: string, listingId: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/api/v1/listings/${listingId}/token-metadata.json`;
}


const EDITABLE: readonly ListingStatus[] = LISTING_EDITABLE_STATUSES;

export function createListingsService(deps: ListingsDeps) {
  const { repo, chain, config } = deps;
  const newId = deps.newId ?? randomUUID;
  const steps = createTokenSteps(deps);

  function currency(code: string): CurrencyInfo | undefined {
    return config.currencies.find((c) => c.code === code);
  }

  function checkCurrency(code: string, errors: FieldError[]): CurrencyInfo | undefined {
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

  /**
   * A price or milestone amount (UI units of `cur`) -> base units, or undefined after pushing its error at
   * `path`. Each is at least LISTING_MIN_PRICE: a package is bought at its price and each milestone is an
   * escrow of its own, whose platform fee pays the fees the service spends on it
   * (docs/threat-model.md#who-pays-for-what-on-chain).
   */
  function checkPrice(price: number, cur: CurrencyInfo, errors: FieldError[], path = 'body.price'): bigint | undefined {
    const r = toBaseUnits(price, cur.decimals);
    if (!r.ok) {
      errors.push({ path, message: r.message, code: r.code });
      return undefined;
    }
    const min = config.minPrice?.[cur.code];
    const minBase = min !== undefined ? toBaseUnits(Number(min), cur.decimals) : null;
    if (minBase?.ok && r.value < minBase.value) {
      errors.push({ path, message: `at least ${min} ${cur.code}`, code: 'below_minimum' });
      return undefined;
    }
    return r.value;
  }

  /**
   * The commercial terms of a listing after a create or an edit (issue 24): price, duration, packages and
   * listing-level milestones, checked as a whole (listings.packages.ts has the rules). `input` holds
   * what the request sends (undefined = not sent; for an edit, null = remove), `current` the stored
   * listing (null on create). Pushes field errors; undefined when any rule is broken.
   */
  function checkTerms(
    input: {
      price?: number;
      duration?: number;
      packages?: CreateListingInput['packages'] | null;
      milestones?: CreateListingInput['milestones'] | null;
    },
    current: Pick<ListingRecord, 'priceBaseUnits' | 'durationDays' | 'packages' | 'milestones'> | null,
    cur: CurrencyInfo,
    errors: FieldError[],
  ): { priceBaseUnits: bigint; durationDays: number; packages: ListingPackage[]; milestones: ListingMilestone[] | null } | undefined {
    const before = errors.length;
    const amount = (v: number, path: string) => checkPrice(v, cur, errors, path);
    const packages: ListingPackage[] | undefined =
      input.packages === undefined ? (current?.packages ?? []) : input.packages === null ? [] : parsePackages(input.packages, cur, amount, errors);
    const sentMilestones = input.milestones;
    if (packages && packages.length > 0) {
      // the listing's price and duration follow the cheapest package; its milestones are the packages'
      const why = input.packages ? 'not allowed with packages' : 'follows the cheapest package while the listing has packages';
      if (input.price !== undefined) errors.push({ path: 'body.price', message: `${why}: change the packages instead`, code: 'follows_packages' });
      if (input.duration !== undefined) errors.push({ path: 'body.duration', message: `${why}: change the packages instead`, code: 'follows_packages' });
      const keptMilestones = sentMilestones === undefined ? (current?.milestones ?? null) : sentMilestones;
      if (keptMilestones) {
        errors.push({
          path: 'body.milestones',
          message: sentMilestones ? 'not allowed with packages: give each package its milestones' : 'the listing has milestones: remove them (milestones: null) to add packages',
          code: 'not_with_packages',
        });
      }
      if (errors.length > before) return undefined;
      const cheapest = cheapestPackage(packages)!;
      return { priceBaseUnits: cheapest.priceBaseUnits, durationDays: cheapest.deliveryDays, packages, milestones: null };
    }
    if (packages === undefined) return undefined;
    // no packages: the listing's own price and duration, and optional listing-level milestones
    let priceBaseUnits = current?.priceBaseUnits;
    if (input.price !== undefined) priceBaseUnits = amount(input.price, 'body.price');
    else if (!current) errors.push({ path: 'body.price', message: 'is required without packages', code: 'required' });
    const durationDays = input.duration ?? current?.durationDays;
    if (durationDays === undefined) errors.push({ path: 'body.duration', message: 'is required without packages', code: 'required' });
    const milestones =
      sentMilestones === undefined ? (current?.milestones ?? null) : sentMilestones === null ? null : parseMilestones(sentMilestones, 'body.milestones', amount, errors);
    if (milestones && priceBaseUnits !== undefined && durationDays !== undefined) {
      checkMilestoneSums(
        milestones,
        { priceBaseUnits, deliveryDays: durationDays, decimals: cur.decimals, currency: cur.code, priceLabel: 'price', daysLabel: 'duration' },
        'body.milestones',
        errors,
      );
    }
    if (errors.length > before || priceBaseUnits === undefined || durationDays === undefined || milestones === undefined) return undefined;
    return { priceBaseUnits, durationDays, packages: [], milestones };
  }

  const visible = listingVisibleTo;

  async function load(listingId: string): Promise<ListingRecord> {
    const l = await repo.get(listingId);
    if (!l) throw listingErrors.notFound(listingId);
    return l;
  }

  /**
   * An order lifecycle event moves the listing's stored status, derived from its units under its row lock
   * (contract `listingMoveOnOrderEvent`: `from` = the status its paid and sold orders gave before the
   * event, `to` = after it; at capacity 1 and stock 1 exactly the `listingTransitions` row of the event).
   * The stored status must be `from` (else 409 invalid-state-transition), or already `to`: then it is a
   * no-op, so the request and the reconciler may both apply it. Funding is exclusive: it is refused with
   * 409 listing-unavailable unless the listing had a unit for this paid order (stored `from`, or a concurrent
   * call already counted it: `to` with this order among the paid ones; never once sold out). A capacity
   * lowered under the open orders refuses none of them (they were held before). An unlisted
   * listing takes no order outcome (its counts still change; it reads by them once relisted) and refuses a
   * funding. `scope`: inside the caller's transaction (the orders repository's funding), the event left to it.
   */
  async function applyOrderEvent(listingId: string, event: ListingOrderEvent, scope?: ListingTxScope): Promise<void> {
    const verdict = await repo.moveByUnits(listingId, (cur) => {
      const paid = cur.open - cur.unpaid;
      const { from, to } = listingMoveOnOrderEvent(event, { capacity: cur.capacity, stock: cur.stock, paid, sold: cur.sold });
      if (event === 'order_funded') {
        // never once sold out (open orders count against the stock, so a held order never meets that)
        if (from !== 'sold' && cur.status === from) return { to };
        // a concurrent call already moved it: the paid orders (this one among them) explain the status
        if (from !== 'sold' && cur.status === to && paid >= 1) return { to: null };
        return { to: null, refuse: 'unavailable' as const, status: cur.status };
      }
      if (cur.status === to || cur.status === 'unlisted') return { to: null };
      if (cur.status === from) return { to };
      return { to: null, refuse: 'invalid' as const, status: cur.status, target: to };
    }, scope);
    if (!verdict) throw listingErrors.notFound(listingId);
    if ('refuse' in verdict && verdict.refuse === 'unavailable') throw listingErrors.unavailable(listingId, verdict.status);
    if ('refuse' in verdict && verdict.refuse === 'invalid') throw listingErrors.invalidTransition(listingId, verdict.status, verdict.target);
  }

  /**
   * Run a listing update; a stock below the orders sold or open (checked under the row lock) becomes 400
   * validation-error `below_committed` (repeat sales: no sold or open order is ever cancelled by an edit).
   */
  async function stockChecked<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      if (!(err instanceof StockBelowCommitted)) throw err;
      throw listingErrors.validation([
        { path: 'body.stock', message: `at least ${err.committed}: the orders sold or open for this listing`, code: 'below_committed' },
      ]);
    }
  }

  /**
   * Chain first, database second, converged at the end: the token update is recorded before its
   * send (intent), the patch is written only while that intent is still open, then `syncName` makes
   * the on-chain name match the stored title and confirms. A failure before the database write leaves
   * the intent open and the recovery pass puts the on-chain name back to the stored title.
   */
  async function rename(current: ListingRecord, newName: string, patch: ListingPatch): Promise<ListingRecord> {
    const listingId = current.id;
    let intent: ListingIntent | null = null;
    // a chain error here (503/502) changed nothing in the database; a sent attempt stays recorded
    const tx = await chain.updateListingToken(current.tokenMint, { name: newName }, {
      onSigned: async (a) => {
        intent = await repo.recordRename(listingId, newName, a);
      },
    });
    const recorded = intent as ListingIntent | null;
    if (tx) await deps.hooks?.afterTokenUpdate?.({ listingId, name: newName, tx });

    let applied: RenameApplied;
    try {
      applied = recorded ? await repo.applyRename(recorded.id, listingId, EDITABLE, patch) : await repo.updateIf(listingId, EDITABLE, patch);
    } catch (err) {
      // the token is renamed but the title is not stored: put the name back now if possible (else the recovery pass will)
      await steps.syncName(listingId, recorded ? [recorded.id] : []).catch(() => undefined);
      if (err instanceof StockBelowCommitted) throw err; // a refused stock: nothing changed, the name is put back
      deps.log?.error({ err, listingId, intent_id: recorded?.id }, 'listing rename: token renamed, title not stored');
      throw new DomainError('service-unavailable', `Listing ${listingId} could not be saved; nothing was changed. Retry later.`, {
        listing_id: listingId,
      });
    }
    if (applied === 'intent-closed') {
      // the recovery pass settled this rename (name put back) before the title was written
      throw new DomainError('chain-unavailable', `The rename of listing ${listingId} was rolled back; nothing was changed. Retry.`, {
        listing_id: listingId,
      });
    }
    // converge: another rename may have raced this one; on a chain error the recovery pass finishes it
    await steps.syncName(listingId, recorded ? [recorded.id] : []).catch((err: unknown) => {
      deps.log?.warn({ err, listingId }, 'listing rename: token name not confirmed yet (recovery will)');
    });
    if (!applied) {
      const now = await load(listingId);
      throw listingErrors.invalidTransition(listingId, now.status, 'updated');
    }
    return load(listingId);
  }

  return {
    /** The chain steps (recovery pass, tests). */
    steps,

    /**
     * Create a listing: validate (400 validation-error, nothing sent), then mint its token and store
     * it, or resume the seller's identical create whose mint is unfinished (never a second token).
     * `input.price` is a UI amount of `input.currency`. `opts.idempotencyKey` (the request's
     * Idempotency-Key) is part of the request fingerprint, and a create whose key already minted returns
     * that listing, also when the first response was lost after the listing was stored (the middleware's
     * stored response is the first line of defence; this closes the crash window between the two).
     * `opts.ip`: the client IP, counted by the daily creation limit per IP.
     * Errors: 503 chain-unavailable / 502 chain-transaction-failed without `listing_id` (nothing minted or
     * stored); 503 chain-unavailable with `listing_id` (mint sent, outcome unknown); 503
     * service-unavailable with `listing_id` (minted, the row not stored yet). The recovery pass finishes
     * the last two.
     */
    async create(seller: Viewer, input: CreateListingInput, opts: { idempotencyKey?: string | null; ip?: string | null } = {}): Promise<ListingRecord> {
      await deps.standing?.assertMayTrade(seller.userId);
      const errors: FieldError[] = [];
      const cur = checkCurrency(input.currency, errors);
      checkCategory(input.category, errors);
      const terms = cur ? checkTerms(input, null, cur, errors) : undefined;
      if (errors.length > 0 || terms === undefined) throw listingErrors.validation(errors);
      const { priceBaseUnits } = terms;

      // The same request again (same seller, same body) while its mint is unfinished resumes that mint.
      const key = opts.idempotencyKey ?? null;
      const fields: unknown[] = [seller.userId, input.title, input.description, priceBaseUnits.toString(), input.currency, input.category, terms.durationDays];
      // packages and milestones (issue 24) are part of what was asked for; absent ones leave the old fingerprint
      if (terms.packages.length > 0) fields.push({ packages: packagesToJson(terms.packages) });
      if (terms.milestones) fields.push({ milestones: milestonesToJson(terms.milestones) });
      // repeat sales: part of the request only when given (fingerprints of bodies without them are unchanged)
      if (input.capacity !== undefined || input.stock !== undefined) fields.push({ capacity: input.capacity ?? null, stock: input.stock });
      const fingerprint = createHash('sha256')
        .update(JSON.stringify(key ? [...fields, key] : fields))
        .digest('hex');
      if (key) {
        const minted = await repo.findMintByFingerprint(fingerprint);
        if (minted?.status === 'confirmed') return load(minted.listingId);
      }
      const open = await repo.findOpenMint(fingerprint);
      if (open) return steps.resumeMint(open);

      const id = newId();
      const draft: ListingDraft = {
        id,
        sellerId: seller.userId,
        sellerWallet: seller.wallet,
        title: input.title,
        description: input.description,
        priceBaseUnits,
        currency: input.currency,
        category: input.category,
        durationDays: terms.durationDays,
        packages: terms.packages,
        milestones: terms.milestones,
        status: 'available',
        metadataUri: metadataUri(config.publicBaseUrl, id),
        // repeat sales: orders at once and in all (defaults: sold once)
        capacity: input.capacity ?? DEFAULT_LISTING_UNITS.capacity,
        stock: input.stock !== undefined ? input.stock : DEFAULT_LISTING_UNITS.stock,
      };
      // a new token: the service pays its rent and fees (docs/threat-model.md#who-pays-for-what-on-chain), within the seller's and the
      // client address's daily caps and the daily budget (429 / 503, nothing sent)
      await deps.budget?.charge({ action: 'listing_mint', lamports: SPEND_ESTIMATES.listing_mint, userId: seller.userId, ip: opts.ip ?? null });
      return steps.attemptMint(draft, fingerprint, null);
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
        // issue 25: the seller's own taken-down listings, in her lists without a status filter
        takenDownVisibleTo: !status ? (viewer?.userId ?? null) : null,
        limit: input.limit + 1,
        after: after ? { createdAt: new Date(after.keys[0] as string), id: after.id } : undefined,
      });
      return newestPage(rows, input.limit, spec);
    },

    /**
     * Seller-only partial update (404 / 403 / 409 / 400 as in the contract). A title whose token name
     * changes renames the token first (`rename`): on 502/503 nothing is stored.
     */
    async update(listingId: string, actor: Viewer, input: UpdateListingInput): Promise<ListingRecord> {
      const current = await load(listingId);
      if (current.sellerId !== actor.userId) {
        if (!visible(current, actor)) throw listingErrors.notFound(listingId);
        throw listingErrors.notSeller(listingId);
      }
      await deps.standing?.assertMayTrade(actor.userId);
      // repeat sales: a reserved listing (its paid orders fill it) may still change its capacity and stock alone
      const unitsOnly = Object.keys(input).every((k) => k === 'capacity' || k === 'stock');
      const editable: readonly ListingStatus[] = unitsOnly ? [...EDITABLE, 'reserved'] : EDITABLE;
      if (!editable.includes(current.status)) throw listingErrors.invalidTransition(listingId, current.status, 'updated');

      const errors: FieldError[] = [];
      const patch: ListingPatch = {};
      if (input.category !== undefined) {
        checkCategory(input.category, errors);
        patch.category = input.category;
      }
      const termsSent = input.price !== undefined || input.duration !== undefined || input.packages !== undefined || input.milestones !== undefined;
      if (termsSent) {
        const cur = currency(current.currency);
        const terms = cur ? checkTerms(input, current, cur, errors) : undefined;
        if (terms) {
          // one row write: the price column (what search filters and sorts on) follows the packages
          patch.priceBaseUnits = terms.priceBaseUnits;
          patch.durationDays = terms.durationDays;
          patch.packages = terms.packages;
          patch.milestones = terms.milestones;
        } else if (!cur) {
          errors.push({ path: 'body.price', message: `currency ${current.currency} is not configured any more`, code: 'unknown_currency' });
        }
      }
      if (errors.length > 0) throw listingErrors.validation(errors);
      if (input.title !== undefined) patch.title = input.title;
      if (input.description !== undefined) patch.description = input.description;
      if (input.capacity !== undefined) patch.capacity = input.capacity;
      if (input.stock !== undefined) patch.stock = input.stock;
      if (input.status !== undefined) {
        // the seller's own moves (unlist / relist) are rows of the listing state table
        const move = listingTransitions.some((t) => t.by === 'seller' && t.from === current.status && t.to === input.status);
        if (input.status !== current.status && !move) throw listingErrors.invalidTransition(listingId, current.status, input.status);
        patch.status = input.status;
      }

      // The on-chain name follows the title: only when the (truncated) name actually changes.
      const newName = input.title !== undefined ? tokenName(input.title) : tokenName(current.title);
      if (newName === tokenName(current.title)) {
        const updated = await stockChecked(() => repo.updateIf(listingId, editable, patch));
        if (updated) return updated;
        const now = await load(listingId);
        throw listingErrors.invalidTransition(listingId, now.status, 'updated');
      }
      // a token rename costs the service a fee (and rent when the name grows): capped per seller and day
      await deps.budget?.charge({ action: 'listing_rename', lamports: SPEND_ESTIMATES.listing_rename, userId: actor.userId });
      return stockChecked(() => rename(current, newName, patch));
    },

    /**
     * The public Metaplex-style JSON the token's `uri` points at: only what a wallet or explorer shows for
     * the token (name, symbol, a description naming the marketplace, the listing's URL, its category),
     * never the listing's own description, price or seller, which the listing routes serve to whom they
     * allow. An unlisted listing has none: 404 not-found, as GET /listings/{id} answers a stranger (issue 21
     * item 9). Throws DomainError 404 not-found.
     */
    async tokenMetadata(listingId: string) {
      const l = await load(listingId);
      if (l.status === 'unlisted' || l.takenDown) throw listingErrors.notFound(listingId);
      const category = config.categories.find((c) => c.slug === l.category);
      const external_url = `${config.publicBaseUrl.replace(/\/+$/, '')}/api/v1/listings/${l.id}`;
      return {
        name: tokenName(l.title),
        symbol: TOKEN_SYMBOL,
        description: `A service listed on Bazaar; details at ${external_url}`,
        external_url,
        attributes: [{ trait_type: 'category', value: category?.name ?? l.category }],
      };
    },

    /** The order lifecycle's listing moves (see `applyOrderEvent`). */
    applyOrderEvent,

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
        // issue 24: what `orderTermsOf` reads (order-terms.ts), from this same read
        packages: l.packages,
        milestones: l.milestones,
        tokenMint: l.tokenMint,
        // an unpaid order's hold (the orders module refuses other buyers before reading their balances)
        heldUntil: l.heldUntil,
        // issue 25: a moderator's takedown (orders and offers refuse it: 409 listing-taken-down)
        takenDown: l.takenDown ? { at: l.takenDown.at } : null,
      };
    },
  };
}

export type ListingsService = ReturnType<typeof createListingsService>;

/** Adapter for the orders module's ListingsPort. */
export function listingsPort(service: ListingsService) {
  return { get: service.view, applyOrderEvent: service.applyOrderEvent };
}
