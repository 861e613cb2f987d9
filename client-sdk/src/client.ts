/**
 * Typed Bazaar API client: a ts-rest client over the contract, with the credential kept in the client
 * (`setToken`) and an optional custom `fetch`. It carries the contract's zod schemas, so it can validate
 * responses (`validateResponse: true`); `@bazaar/client-sdk/lite` (lite.ts) is the same typed client
 * without them, for browser bundles.
 */
import { contract } from '@bazaar/contract';
import { createClientOver, type BazaarClient, type BazaarClientOptions } from './client-core.js';

export {
  BazaarApiError,
  isProblem,
  newIdempotencyKey,
  type BazaarApi,
  type BazaarClient,
  type BazaarClientOptions,
} from './client-core.js';

/** Create a typed client: `client.listings.createListing({ body })` resolves to `{ status, body, headers }`. */
export function createBazaarClient(options: BazaarClientOptions): BazaarClient {
  return createClientOver(contract, options);
}
