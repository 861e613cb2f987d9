/**
 * `@bazaar/client-sdk`: the typed client for the Bazaar API (derived from @bazaar/contract), its errors,
 * the contract's state tables and problem types, and all schema types. Other entry points:
 * - `@bazaar/client-sdk/lite`: the same typed client without the contract's zod schemas (no response
 *   validation), for browser bundles;
 * - `@bazaar/client-sdk/login`: Sign In With Solana (loginWithWallet, buildSignInMessage);
 * - `@bazaar/client-sdk/keypair`: keypairSigner, a local ed25519 signer (Node scripts, tests).
 * One type system: the contract's (ts-rest inference over its zod schemas). No OpenAPI-generated types ship
 * here: a client generated from openapi.json brings its own (README "From another language").
 */
export {
  BazaarApiError,
  createBazaarClient,
  isProblem,
  newIdempotencyKey,
  type BazaarApi,
  type BazaarClient,
  type BazaarClientOptions,
} from './client.js';
export { base64ToBytes, bytesToBase64 } from './encoding.js';
export { retryAfterSeconds, withRetryAfter, type RetryAfterOptions } from './retry.js';
export {
  contract,
  listingTransitions,
  orderTransitions,
  problemTypes,
  problemTypeUri,
} from '@bazaar/contract';
export type * from '@bazaar/contract';
