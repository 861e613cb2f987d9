/**
 * HTTP caching of the public reads (issue 28 item 2; the policy and its reasons: contract/src/http-cache.ts):
 * on the GET/HEAD routes of CACHEABLE_OPERATIONS, a 200 gets a strong ETag of the bytes sent and
 * Cache-Control (public for anonymous requests, `private, no-cache` for any credential), every answer of
 * those routes gets `Vary: Authorization, Cookie, X-API-Key`, and `If-None-Match` naming the current tag
 * becomes 304 without a body (`noneMatch`: RFC 9110 §13.1.2 weak comparison, `*` included; only for a
 * 200, so a listing that became hidden still answers 404).
 *
 * The tag is computed from the body the handler built for this request (read from the database now),
 * never from a remembered version: a write through another replica cannot be answered with a stale 304
 * (tests/http-cache.test.ts proves it on two apps sharing one database). The reads whose answer comes from
 * the configuration alone (GET /currencies) touch no database to answer 304 either.
 *
 * A body the compression middleware will encode (http/compression.ts: at least 1 kB, a coding the client
 * accepts) gets the coding in its tag (`"<hash>-gzip"`): a strong validator names one representation.
 */
import { createHash } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { CACHE_VARY, CACHEABLE_OPERATIONS, contract, PRIVATE_CACHE_CONTROL, PUBLIC_CACHE_CONTROL, SESSION_COOKIE_NAME } from '@bazaar/contract';
import type { AppRoute, AppRouter } from '@ts-rest/core';
import { ROUTE_PATTERNS } from './route-table.js';
import { carriesSecret, COMPRESSION_THRESHOLD_BYTES } from './compression.js';

function routesOf(router: AppRouter): Array<[string, AppRoute]> {
  return Object.entries(router).flatMap(([k, v]) =>
    typeof (v as AppRoute).method === 'string' ? [[k, v as AppRoute] as [string, AppRoute]] : routesOf(v as AppRouter),
  );
}

/** The contract routes of CACHEABLE_OPERATIONS. */
export const CACHEABLE_ROUTES: readonly AppRoute[] = routesOf(contract)
  .filter(([k, r]) => r.method === 'GET' && CACHEABLE_OPERATIONS.includes(k))
  .map(([, r]) => r);

const patterns = ROUTE_PATTERNS.filter((p) => p.method === 'GET' && CACHEABLE_ROUTES.some((r) => r.path === p.path));

/** Is `req` a GET/HEAD of a cacheable read? */
export function isCacheableRead(req: Request): boolean {
  return (req.method === 'GET' || req.method === 'HEAD') && patterns.some((p) => p.regex.test(req.path));
}

/** Does `req` carry a credential (Authorization, X-API-Key, the session cookie)? Whether valid or not. */
export function carriesCredentials(req: Request): boolean {
  if (req.headers.authorization !== undefined || req.headers['x-api-key'] !== undefined) return true;
  const cookies = (req as Request & { cookies?: Record<string, string> }).cookies;
  return cookies ? cookies[SESSION_COOKIE_NAME] !== undefined : /(?:^|;\s*)bazaar_session=/.test(req.headers.cookie ?? '');
}

/** The content coding the compression middleware will send `bytes` bytes of JSON with, or null (identity). */
function codingOf(req: Request, bytes: number): string | null {
  if (bytes < COMPRESSION_THRESHOLD_BYTES || carriesSecret(req) || !req.headers['accept-encoding']) return null;
  const coding = req.acceptsEncodings('br', 'gzip', 'deflate', 'identity');
  return typeof coding === 'string' && coding !== 'identity' ? coding : null;
}

/** The strong ETag of `body` as sent to `req` (see the module comment). */
export function strongEtag(req: Request, body: string | Buffer): string {
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 22);
  const coding = codingOf(req, typeof body === 'string' ? Buffer.byteLength(body) : body.length);
  return coding ? `"${hash}-${coding}"` : `"${hash}"`;
}

/**
 * Does an If-None-Match field value name `etag` (RFC 9110 §13.1.2: `*`, or a list of entity tags compared
 * weakly, `W/` ignored)? Evaluated here rather than by Express's `req.fresh`, which also reports "not
 * fresh" for a request carrying `Cache-Control: no-cache` (what fetch() adds to a request with
 * If-None-Match): that directive asks caches to revalidate, and a conditional request at the origin is
 * that revalidation.
 */
export function noneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const opaque = etag.replace(/^W\//, '');
  return header.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag.replace(/^W\//, '') === opaque;
  });
}

/** Express middleware: the headers and the 304 of the cacheable reads (see the module comment). */
export function httpCache(): RequestHandler {
  return (req, res, next) => {
    if (!isCacheableRead(req)) return next();
    res.vary(CACHE_VARY);
    const credentialed = carriesCredentials(req);
    const send = res.send;
    res.send = function sendWithValidators(this: typeof res, body?: unknown) {
      if (this.statusCode === 200 && (typeof body === 'string' || Buffer.isBuffer(body))) {
        const etag = strongEtag(req, body);
        this.setHeader('ETag', etag);
        this.setHeader('Cache-Control', credentialed ? PRIVATE_CACHE_CONTROL : PUBLIC_CACHE_CONTROL);
        // res.send strips the body, Content-Type and Content-Length of a 304
        if (noneMatch(req.headers['if-none-match'], etag)) this.statusCode = 304;
      }
      return send.call(this, body);
    } as typeof res.send;
    next();
  };
}
