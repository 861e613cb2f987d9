/**
 * Offers module wiring (issue 24 item 6: custom offers). Rules in offers.service.ts, decisions in
 * README.md.
 *
 *   const offers = createOffersModule({ db, chat: chat.repo, listings: listings.port, orders: orders?.service ?? null, currencies, ... });
 *   offersHandlers(offers.http)
 */
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { CurrencyInfo } from '../../lib/currency.js';
import type { IdempotencyLeases, IdempotencyStore } from '../idempotency/index.js';
import type { OrdersService } from '../orders/index.js';
import { createOffersRepo } from './offers.repo.js';
import { createOffersService, type OffersServiceDeps } from './offers.service.js';

export { createOffersRepo, expireDueOffers, loadOffers, presentOffer, type OfferRecord, type OffersRepo } from './offers.repo.js';
export { createOffersService, termsOfOffer, type AcceptInput, type OffersService } from './offers.service.js';

export function createOffersModule(o: {
  db: PrismaClient;
  chat: OffersServiceDeps['chat'];
  listings: OffersServiceDeps['listings'];
  /** the orders module's service; null without an escrow program (accept answers 503 chain-unavailable) */
  orders: OrdersService | null;
  currencies: readonly CurrencyInfo[];
  /** LISTING_MIN_PRICE per currency (UI amount text) */
  minPrice?: Readonly<Record<string, string>>;
  now?: () => Date;
  /** issue 25: the moderation module's standing port */
  standing?: OffersServiceDeps['standing'];
  /** the Idempotency-Key store and leases of POST /offers/{id}/accept (the orders module's) */
  idempotencyStore: IdempotencyStore;
  idempotencyLeases?: IdempotencyLeases;
  idempotencyLeaseMs?: number;
}) {
  const repo = createOffersRepo(o.db);
  const service = createOffersService({ db: o.db, repo, chat: o.chat, listings: o.listings, orders: o.orders, currencies: o.currencies, minPrice: o.minPrice, now: o.now, standing: o.standing });
  return {
    repo,
    service,
    http: {
      service,
      orders: o.orders,
      idempotencyStore: o.idempotencyStore,
      idempotencyLeases: o.idempotencyLeases,
      idempotencyLeaseMs: o.idempotencyLeaseMs,
      now: o.now,
    },
  };
}

export type OffersModule = ReturnType<typeof createOffersModule>;
