/**
 * HTTP caching of the public reads (issue 28 item 2; RFC 9110 §8.8.3 ETag, §13.1.2 If-None-Match,
 * §15.4.5 304 Not Modified; RFC 9111 §5.2 Cache-Control; RFC 5861 stale-while-revalidate).
 *
 * The operations named in CACHEABLE_OPERATIONS answer 200 with
 * - `ETag`: a strong validator of the exact bytes sent: the SHA-256 of the JSON body (base64url, first 22
 *   characters) and, when the body is sent compressed, the content coding (`"<hash>-gzip"`), so two
 *   representations never share a tag;
 * - `Cache-Control`: PUBLIC_CACHE_CONTROL for a request without credentials (a CDN may keep it briefly),
 *   PRIVATE_CACHE_CONTROL for a request with any credential (Authorization, X-API-Key or the session cookie),
 *   whose body may be the caller's own view (its unlisted listings): never stored by a shared cache, always
 *   revalidated by the browser;
 * - `Vary: Authorization, Cookie, X-API-Key` (and Accept-Encoding), so a cache never answers a credentialed
 *   request with an anonymous body or the reverse.
 *
 * `If-None-Match` naming the current tag (weak comparison, or `*`) answers 304 Not Modified with the same
 * ETag, Cache-Control and Vary and no body. The tag is computed from the answer the request would get, read
 * from the database for this request: a change made through any replica is seen at once (never a stale 304),
 * and a listing hidden from the caller (unlisted, taken down) answers 404 as before whatever tag is sent.
 * Errors (4xx/5xx) carry no ETag and no cache headers.
 */

/** Cache-Control of an anonymous 200 of a cacheable read: shared caches may keep it 5 s, serve it stale 30 s more while revalidating. */
export const PUBLIC_CACHE_CONTROL = 'public, max-age=5, stale-while-revalidate=30';

/** Cache-Control of a credentialed 200 of a cacheable read: the caller's browser only, revalidated every time. */
export const PRIVATE_CACHE_CONTROL = 'private, no-cache';

/** Request headers a cacheable read's answer varies with (besides Accept-Encoding). */
export const CACHE_VARY = 'Authorization, Cookie, X-API-Key';

/** operationIds (contract keys) of the cacheable public reads. */
export const CACHEABLE_OPERATIONS: readonly string[] = [
  'getListing',
  'listListings',
  'listSimilarListings',
  'searchListings',
  'listMarketplaceListings',
  'listCategories',
  'listCurrencies',
  'getUser',
  'listSellerReviews',
];

/** The sentence the OpenAPI description of a cacheable read ends with. */
export const HTTP_CACHE_SENTENCE =
  ' Cacheable: a 200 carries a strong `ETag` (of the bytes sent) and `Cache-Control` (`' +
  PUBLIC_CACHE_CONTROL +
  '` without credentials, `' +
  PRIVATE_CACHE_CONTROL +
  '` with any credential), `Vary: ' +
  CACHE_VARY +
  '`; `If-None-Match` naming the current tag answers 304 with no body. The tag is checked against the ' +
  'database for each request, so a change made through any replica is never answered 304.';
