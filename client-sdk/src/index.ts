/**
 * @bazaar/client-sdk: typed client for the Bazaar API (derived from @bazaar/contract) and the wallet
 * login helper. Raw OpenAPI types (openapi-typescript) are in ./openapi-types.
 */
export {
  BazaarApiError,
  createBazaarClient,
  isProblem,
  newIdempotencyKey,
  type BazaarApi,
  type BazaarClient,
  type BazaarClientOptions,
} from './client';
export {
  buildSignInMessage,
  keypairSigner,
  loginWithWallet,
  signerAddress,
  type LoginOptions,
  type LoginResult,
  type MessageSigner,
} from './login';
export { base64ToBytes, bytesToBase64 } from './encoding';
export { retryAfterSeconds, withRetryAfter, type RetryAfterOptions } from './retry';
export {
  contract,
  listingTransitions,
  orderTransitions,
  problemTypes,
  problemTypeUri,
} from '@bazaar/contract';
export type * from '@bazaar/contract';
export type { paths as OpenApiPaths, components as OpenApiComponents, operations as OpenApiOperations } from './openapi-types';
