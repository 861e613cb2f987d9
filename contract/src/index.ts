/**
 * @bazaar/contract: the single source of truth of the Bazaar HTTP API (ts-rest + zod).
 * The Express server implements it, the client SDK calls it and openapi.json is generated from it.
 */
import { c } from './common';
import { auth } from './auth.contract';
import { listings } from './listings.contract';
import { marketplace } from './marketplace.contract';
import { orders } from './orders.contract';
import { commonResponses } from './problems';
import { reviews } from './reviews.contract';
import { users } from './users.contract';
import { wallet } from './wallet.contract';

export const API_PREFIX = '/api/v1';

export const contract = c.router(
  { auth, users, listings, marketplace, orders, reviews, wallet },
  { pathPrefix: API_PREFIX, strictStatusCodes: true, commonResponses },
);
export type Contract = typeof contract;

export * from './common';
export * from './problems';
export * from './auth.contract';
export * from './users.contract';
export * from './listings.contract';
export * from './marketplace.contract';
export * from './orders.contract';
export * from './reviews.contract';
export * from './wallet.contract';
