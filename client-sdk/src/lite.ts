/**
 * `@bazaar/client-sdk/lite`: the same typed client as `@bazaar/client-sdk` (`createBazaarClient`, the same
 * `BazaarClient` type: every route, body typed by status) built over the contract's table of methods and
 * paths (routes.generated.ts) instead of the contract's zod schemas, so a browser bundle does not carry
 * them. What it cannot do: validate responses at run time (`validateResponse`), which the schemas are for.
 * Also here: the error helpers, idempotency keys, base64 and Retry-After helpers; every schema type comes from
 * `@bazaar/client-sdk` (`import type`, nothing loaded).
 */
import { createClientOver, type BazaarClient, type BazaarClientOptions } from './client-core.js';
import { routerOf } from './route-table.js';
import { routes } from './routes.generated.js';

export {
  BazaarApiError,
  isProblem,
  newIdempotencyKey,
  type BazaarApi,
  type BazaarClient,
} from './client-core.js';
export { base64ToBytes, bytesToBase64 } from './encoding.js';
export { retryAfterSeconds, withRetryAfter, type RetryAfterOptions } from './retry.js';

/** The options of `@bazaar/client-sdk`'s client, without response validation (no schemas here). */
export type LiteClientOptions = Omit<BazaarClientOptions, 'validateResponse'> & {
  /** Not available here: validating responses needs the contract's schemas (`@bazaar/client-sdk`). */
  validateResponse?: false;
};

let router: ReturnType<typeof routerOf> | null = null;

/**
 * Create the typed client without the contract's schemas: `client.listings.getListing({ params })` resolves to
 * `{ status, body, headers }` exactly as with `@bazaar/client-sdk`; responses are not validated.
 * @throws TypeError when `validateResponse: true` is passed from untyped code (it needs `@bazaar/client-sdk`).
 */
export function createBazaarClient(options: LiteClientOptions): BazaarClient {
  if ((options as BazaarClientOptions).validateResponse) {
    throw new TypeError('@bazaar/client-sdk/lite cannot validate responses (no schemas): use @bazaar/client-sdk for validateResponse');
  }
  router ??= routerOf(routes);
  return createClientOver(router, options);
}
