/**
 * The router of the whole API: every group under /api/v1. Kept apart from index.ts (the package's
 * barrel) so that scopes.ts can derive its tables from it without an import cycle.
 */
import type { EveryRouteStatesAccess } from './access.js';
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

export const API_PREFIX = '/api/v1';

export const contract = c.router(
  { auth, users, listings, marketplace, orders, reviews, wallet, events, webhooks, chat, tokens, network, tips, offers },
  { pathPrefix: API_PREFIX, strictStatusCodes: true, commonResponses },
);
export type Contract = typeof contract;

/**
 * Compile-time check: every route states who may call it (`metadata.access`, access.ts). A route
 * without it fails here, naming its key (`routes_without_metadata_access`).
 */
const everyRouteStatesAccess: EveryRouteStatesAccess<Contract> = true;
void everyRouteStatesAccess;
