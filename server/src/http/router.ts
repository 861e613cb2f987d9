/**
 * The contract's routes mapped onto the modules: combines the per-group ts-rest handlers into one
 * router for `createExpressEndpoints(contract, router, ...)` (app.ts). Builds no module: they come
 * from the composition root (composition.ts).
 */
import type { Store } from 'express-rate-limit';
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import { chainMissing, type Services } from '../composition.js';
import { authHandlers } from './auth.handlers.js';
import { eventsHandlers } from './events.handlers.js';
import { webhooksHandlers } from './webhooks.handlers.js';
import { chatHandlers } from './chat.handlers.js';
import { tokensHandlers } from './tokens.handlers.js';
import { networkHandlers } from './network.handlers.js';
import type { NetworkSettings } from '../modules/network/index.js';
import { listingsHandlers } from './listings.handlers.js';
import { marketplaceHandlers } from './marketplace.handlers.js';
import { ordersHandlers } from './orders.handlers.js';
import { reviewsHandlers } from './reviews.handlers.js';
import { usersHandlers } from './users.handlers.js';
import { walletHandlers } from './wallet.handlers.js';
import { tipsHandlers } from './tips.handlers.js';
import { offersHandlers } from './offers.handlers.js';
import { reportsHandlers } from './reports.handlers.js';
import { disputesHandlers } from './disputes.handlers.js';
import { auditHandlers } from './audit.handlers.js';
import { moderationHandlers } from './moderation.handlers.js';

/** Routes of a group that cannot work in this configuration (no escrow client): 503 chain-unavailable. */
function unavailableRouter<T extends Record<string, unknown>>(group: T) {
  return Object.fromEntries(Object.keys(group).map((k) => [k, chainMissing])) as never;
}

/** What the routes need besides the modules. */
export interface RouterOptions {
  /** the session cookie is `Secure` (PUBLIC_BASE_URL is https) */
  secureCookie: boolean;
  /** CUSTODY_ENABLED: without a custody module (no chain client) the custodial routes answer 503 */
  custodyEnabled: boolean;
  /** counters of the chat per-sender rate limit (shared by every replica) */
  chatRateLimitStore: Store;
  /** the same counters for POST /conversations/{id}/offers (a store of its own: express-rate-limit wants one per limiter) */
  offerRateLimitStore?: Store;
  /** what GET /network states (cluster, RPC URL, explorer links, Solana Pay support): the service's config */
  network: NetworkSettings;
}

/** The ts-rest router of the whole contract over `services`. */
export function createRouter(services: Services, opts: RouterOptions) {
  const { auth, users, roles, listings, marketplace, orders, reviews, wallet, custody, events, webhooks, chat, tokens, tips, offers, reports, disputes, audit, moderation, idempotencyStore } = services;
  const s = initServer();
  return s.router(contract, {
    auth: authHandlers({ service: auth, secureCookie: opts.secureCookie }),
    users: usersHandlers({ service: users, roles }),
    listings: listingsHandlers({ ...listings.http, idempotencyStore, idempotencyLeases: orders?.http.idempotencyLeases }),
    marketplace: marketplaceHandlers(marketplace.http),
    orders: orders ? ordersHandlers({ ...orders.http, disputes: disputes.service }) : unavailableRouter(contract.orders),
    reviews: reviewsHandlers(reviews.http),
    wallet: walletHandlers({
      service: wallet,
      custody: custody?.service ?? null,
      custodyWithoutChain: opts.custodyEnabled && !custody,
      idempotencyStore,
    }),
    events: eventsHandlers({ ...events.http, refresh: auth.refreshPrincipal }),
    webhooks: webhooksHandlers(webhooks.http),
    chat: chatHandlers({ ...chat.http, rateLimitStore: opts.offerRateLimitStore }),
    tokens: tokensHandlers({ service: tokens }),
    network: networkHandlers(opts.network),
    tips: tips
      ? tipsHandlers({ ...tips.http, idempotencyStore, idempotencyLeases: orders?.http.idempotencyLeases, idempotencyLeaseMs: orders?.http.idempotencyLeaseMs, now: orders?.http.now })
      : unavailableRouter(contract.tips),
    offers: offersHandlers({ ...offers.http, rateLimitPerMinute: chat.http.rateLimitPerMinute, rateLimitStore: opts.chatRateLimitStore }),
    reports: reportsHandlers(reports.http),
    disputes: disputesHandlers(disputes.http),
    audit: auditHandlers(audit.http),
    moderation: moderationHandlers({ ...moderation.http, config: listings.http.config }),
  });
}
