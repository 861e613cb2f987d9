/**
 * `@bazaar/client-sdk`: the typed client for the Bazaar API (derived from @bazaar/contract), its errors,
 * the contract's state tables and problem types, and all schema types. Other entry points:
 * - `@bazaar/client-sdk/login`: Sign In With Solana (loginWithWallet, buildSignInMessage);
 * - `@bazaar/client-sdk/keypair`: keypairSigner, a local ed25519 signer (Node scripts, tests).
 * Raw OpenAPI types (openapi-typescript) are exported as OpenApiPaths / OpenApiComponents / OpenApiOperations.
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
export type { paths as OpenApiPaths, components as OpenApiComponents, operations as OpenApiOperations } from './openapi-types.js';
