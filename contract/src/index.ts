/**
 * @bazaar/contract: the single source of truth of the Bazaar HTTP API (ts-rest + zod).
 * The Express server implements it, the client SDK calls it and openapi.json is generated from it.
 */
export { API_PREFIX, contract, type Contract } from './contract.js';

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
export * from './offers.contract.js';
export * from './disputes.contract.js';
export * from './moderation.contract.js';
export * from './tokens.contract.js';
export * from './network.contract.js';
export * from './tips.contract.js';
export * from './reports.contract.js';
export * from './audit.contract.js';
export * from './actions-orders.contract.js';
export * from './access.js';
export * from './http-cache.js';
export * from './scopes.js';
export * from './actions.contract.js';
