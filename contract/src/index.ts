/**
 * @bazaar/contract: the single source of truth of the Bazaar HTTP API (ts-rest + zod).
 * The Express server implements it, the client SDK calls it and openapi.json is generated from it.
 */
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

export const API_PREFIX = '/api/v1';

export const contract = c.router(
  { auth, users, listings, marketplace, orders, reviews, wallet, events, webhooks, chat, tokens, network },
  { pathPrefix: API_PREFIX, strictStatusCodes: true, commonResponses },
);
export type Contract = typeof contract;

export * from './common.js';
export * from './problems.js';
export * from './auth.contract.js';
export * from './users.contract.js';
export * from './listings.contract.js';
export * from './marketplace.contract.js';
export * from './orders.contract.js';
export * from './reviews.contract.js';
export * from './wallet.contract.js';
export * from './event-types.js';
export * from './events.contract.js';
export * from './webhooks.contract.js';
export * from './chat.contract.js';
export * from './tokens.contract.js';
export * from './network.contract.js';
export * from './scopes.js';
