/**
 * Cross-site request forgery guard for the session cookie (issue 21 item 5; OWASP CSRF Prevention Cheat
 * Sheet: "Verifying origin with standard headers", Fetch Metadata `Sec-Fetch-Site`).
 *
 * A request that changes state (any method but GET, HEAD, OPTIONS) on a route that takes credentials,
 * authenticated by the `bazaar_session` cookie (no `Authorization`, no `X-API-Key`: the cookie is then the
 * credential, http/security.ts), must come from a page this service trusts with its cookie:
 * - `Origin` present: it is this service's own origin (PUBLIC_BASE_URL's, or the origin the request was
 *   addressed to: scheme + Host) or an origin listed exactly in CORS_ORIGINS (the origins that get
 *   credentials, http/cors.ts). `Origin: null` (sandboxed or privacy-redirected pages) is refused.
 * - no `Origin` but `Sec-Fetch-Site`: it is `same-origin` (or `none`: typed by the user).
 * - neither (not a browser: curl, a server holding the cookie): allowed, there is no page to forge it.
 * Else 403 `cross-origin-refused`. `SameSite` alone does not cover this: another port of the same host or a
 * sibling subdomain is the same site, and it released an escrow with an empty form POST.
 *
 * Bearer tokens and API keys are not sent by browsers on their own, so those requests are not checked; the
 * public routes (login, Solana Pay, token metadata) do not read the cookie and are not checked either.
 */
import type { Request, RequestHandler } from 'express';
import { SESSION_COOKIE_NAME } from '@bazaar/contract';
import { originListedExactly } from './cors.js';
import { sendProblem } from './problem.js';
import { takesCredentials } from './route-table.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Was the request authenticated by the session cookie alone (no header credential)? */
const cookieAuthenticated = (req: Request): boolean =>
  req.headers.authorization === undefined &&
  req.headers['x-api-key'] === undefined &&
  !!(req as Request & { cookies?: Record<string, string> }).cookies?.[SESSION_COOKIE_NAME];

/**
 * The guard (mount after cookie-parser). `publicBaseUrl`: PUBLIC_BASE_URL; `corsOrigins`: CORS_ORIGINS
 * (only its exact entries count).
 */
export function refuseCrossOriginCookieWrites(opts: { publicBaseUrl: string; corsOrigins: readonly string[] }): RequestHandler {
  const own = new URL(opts.publicBaseUrl).origin.toLowerCase();
  return (req, res, next) => {
    if (SAFE_METHODS.has(req.method) || !cookieAuthenticated(req) || !takesCredentials(req.method, req.path)) return next();
    const origin = req.headers.origin;
    const site = req.headers['sec-fetch-site'];
    let from: string;
    if (origin !== undefined) {
      const o = origin.toLowerCase();
      const addressed = `${req.protocol}://${req.get('host') ?? ''}`.toLowerCase();
      if (o !== 'null' && (o === own || o === addressed || originListedExactly(o, opts.corsOrigins))) return next();
      from = `Origin ${origin.slice(0, 200)}`;
    } else if (typeof site === 'string') {
      if (site === 'same-origin' || site === 'none') return next();
      from = `Sec-Fetch-Site: ${site.slice(0, 40)}`;
    } else {
      return next();
    }
    sendProblem(
      req,
      res,
      'cross-origin-refused',
      `A ${req.method} with the session cookie from another origin (${from}) is refused; a page on another origin ` +
        'must be listed in CORS_ORIGINS or send an Authorization header.',
    );
  };
}
