/**
 * ts-rest handlers of `contract.listings`: request -> ListingsService call -> { status, body }.
 * Rules live in modules/listings; errors are DomainErrors (problem+json in one place).
 */
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import { DomainError } from '../errors.js';
import { presentListing } from '../modules/listings/index.js';
import type { ListingsService } from '../modules/listings/index.js';
import type { ListingsConfig, Viewer } from '../modules/listings/index.js';
import type { Principal } from '../modules/auth/index.js';
import { IDEMPOTENCY_HEADER, idempotency, parseIdempotencyKey, type IdempotencyLeases, type IdempotencyStore } from '../modules/idempotency/index.js';

export interface ListingsHttpDeps {
  service: ListingsService;
  config: Pick<ListingsConfig, 'currencies' | 'categories'>;
  /** where the optional Idempotency-Key of createListing is kept (the one orders and withdrawals use) */
  idempotencyStore: IdempotencyStore;
  /** the process's idempotency lease timers (stopped on shutdown) */
  idempotencyLeases?: IdempotencyLeases;
}

/** What the handlers read of a request: the principal the auth middleware set (security.ts). */
type WithPrincipal = { principal?: Principal };

/** The caller as a listings Viewer; null without a credential or for credentials without a user (service API keys). */
export function viewerOf(req: WithPrincipal): Viewer | null {
  const p = req.principal;
  if (!p?.userId || !p.wallet) return null;
  return { userId: p.userId, wallet: p.wallet, isAdmin: p.isAdmin, roles: p.roles };
}

/** The caller as a user acting on its own behalf (seller); 401 without a credential, 403 for one without a user. */
export function userOf(req: WithPrincipal): Viewer {
  if (!req.principal) throw new DomainError('unauthorized', 'No credential was sent.');
  const v = viewerOf(req);
  if (!v) throw new DomainError('forbidden', 'This action needs a user credential (a service API key acts as no user).');
  return v;
}

/**
 * A 503 of a chain-then-database step (the token is sent or minted, the row not yet stored) says when
 * to repeat the request: a repeat resumes the recorded intent at once (problem.ts adds the same header
 * for chain-unavailable; this covers service-unavailable too).
 */
async function withRetryAfter<T>(res: { setHeader(name: string, value: string): unknown }, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof DomainError && err.status === 503) res.setHeader('Retry-After', '5');
    throw err;
  }
}

export function listingsHandlers(deps: ListingsHttpDeps) {
  const s = initServer();
  const { service, config } = deps;
  const present = (l: Parameters<typeof presentListing>[0]) => presentListing(l, config);

  return s.router(contract.listings, {
    createListing: {
      // optional: without a key the body fingerprint still resumes an unfinished mint; with one, the
      // service also finds the listing the key minted when its stored response was lost (service.create)
      middleware: [idempotency({ store: deps.idempotencyStore, required: false, leases: deps.idempotencyLeases }) as never],
      handler: async ({ body, req, res }) => {
        const idempotencyKey = parseIdempotencyKey(req.get(IDEMPOTENCY_HEADER)) ?? null;
        const listing = await withRetryAfter(res, () => service.create(userOf(req), body, { idempotencyKey, ip: req.ip ?? null }));
        return { status: 201 as const, body: present(listing) };
      },
    },
    getListing: async ({ params, req }) => ({
      status: 200 as const,
      body: present(await service.get(params.listing_id, viewerOf(req))),
    }),
    listListings: async ({ query, req }) => {
      const page = await service.list(
        { sellerWallet: query.seller_wallet, status: query.status, category: query.category, limit: query.limit, cursor: query.cursor },
        viewerOf(req),
      );
      return { status: 200 as const, body: { data: page.items.map(present), next_cursor: page.nextCursor } };
    },
    updateListing: async ({ params, body, req, res }) => ({
      status: 200 as const,
      body: present(await withRetryAfter(res, () => service.update(params.listing_id, userOf(req), body))),
    }),
    getListingTokenMetadata: async ({ params }) => ({
      status: 200 as const,
      body: await service.tokenMetadata(params.listing_id),
    }),
  });
}
