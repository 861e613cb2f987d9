/**
 * The router of the whole API: every group under /api/v1. Kept apart from index.ts (the package's
 * barrel) so that scopes.ts can derive its tables from it without an import cycle.
 */
import type { EveryRouteStatesAccess } from './access.js';
import type { AppRouter } from '@ts-rest/core';
import { c } from './common.js';
import { auth } from './auth.contract.js';
import { listings } from './listings.contract.js';
import { marketplace } from './marketplace.contract.js';
import { orders } from './orders.contract.js';
import { commonResponses } from './problems.js';
import { reviews } from './reviews.contract.js';
import { users } from './users.contract.js';
import { wallet } from './wallet.contract.js';
import { events } from './events.contract.js';
import { webhooks } from './webhooks.contract.js';
import { chat } from './chat.contract.js';
import { tokens } from './tokens.contract.js';
import { network } from './network.contract.js';
import { tips } from './tips.contract.js';
import { offers } from './offers.contract.js';
import { reports } from './reports.contract.js';
import { disputes } from './disputes.contract.js';
import { audit } from './audit.contract.js';
import { moderation } from './moderation.contract.js';

export const API_PREFIX = '/api/v1';

const options = { pathPrefix: API_PREFIX, strictStatusCodes: true, commonResponses } as const;

/** A group of routes with the API's options applied (what `c.router(group, options)` returns), by name. */
type Applied<T extends AppRouter> = ReturnType<typeof c.router<T, typeof API_PREFIX, typeof options>>;

/*
 * Each group gets the options on its own (the same routes as one `c.router` over the whole object: ts-rest
 * applies them route by route) so that the declaration of `contract` names one type per group: the
 * single inferred type of the whole API grew past what the compiler serializes into a .d.ts (TS7056).
 */
export const authRoutes: Applied<typeof auth> = c.router(auth, options);
export const usersRoutes: Applied<typeof users> = c.router(users, options);
export const listingsRoutes: Applied<typeof listings> = c.router(listings, options);
export const marketplaceRoutes: Applied<typeof marketplace> = c.router(marketplace, options);
export const ordersRoutes: Applied<typeof orders> = c.router(orders, options);
export const reviewsRoutes: Applied<typeof reviews> = c.router(reviews, options);
export const walletRoutes: Applied<typeof wallet> = c.router(wallet, options);
export const eventsRoutes: Applied<typeof events> = c.router(events, options);
export const webhooksRoutes: Applied<typeof webhooks> = c.router(webhooks, options);
export const chatRoutes: Applied<typeof chat> = c.router(chat, options);
export const tokensRoutes: Applied<typeof tokens> = c.router(tokens, options);
export const networkRoutes: Applied<typeof network> = c.router(network, options);
export const tipsRoutes: Applied<typeof tips> = c.router(tips, options);
export const offersRoutes: Applied<typeof offers> = c.router(offers, options);
export const reportsRoutes: Applied<typeof reports> = c.router(reports, options);
export const disputesRoutes: Applied<typeof disputes> = c.router(disputes, options);
export const auditRoutes: Applied<typeof audit> = c.router(audit, options);
export const moderationRoutes: Applied<typeof moderation> = c.router(moderation, options);

/** The whole API: one applied group per key (named types, so that the .d.ts stays small). */
export type Contract = {
  auth: typeof authRoutes;
  users: typeof usersRoutes;
  listings: typeof listingsRoutes;
  marketplace: typeof marketplaceRoutes;
  orders: typeof ordersRoutes;
  reviews: typeof reviewsRoutes;
  wallet: typeof walletRoutes;
  events: typeof eventsRoutes;
  webhooks: typeof webhooksRoutes;
  chat: typeof chatRoutes;
  tokens: typeof tokensRoutes;
  network: typeof networkRoutes;
  tips: typeof tipsRoutes;
  offers: typeof offersRoutes;
  reports: typeof reportsRoutes;
  disputes: typeof disputesRoutes;
  audit: typeof auditRoutes;
  moderation: typeof moderationRoutes;
};

export const contract: Contract = {
  auth: authRoutes,
  users: usersRoutes,
  listings: listingsRoutes,
  marketplace: marketplaceRoutes,
  orders: ordersRoutes,
  reviews: reviewsRoutes,
  wallet: walletRoutes,
  events: eventsRoutes,
  webhooks: webhooksRoutes,
  chat: chatRoutes,
  tokens: tokensRoutes,
  network: networkRoutes,
  tips: tipsRoutes,
  offers: offersRoutes,
  reports: reportsRoutes,
  disputes: disputesRoutes,
  audit: auditRoutes,
  moderation: moderationRoutes,
};

/**
 * Compile-time check: every route states who may call it (`metadata.access`, access.ts). A route
 * without it fails here, naming its key (`routes_without_metadata_access`).
 */
const everyRouteStatesAccess: EveryRouteStatesAccess<Contract> = true;
void everyRouteStatesAccess;
