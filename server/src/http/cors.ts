/**
 * Cross-origin policy (CORS, Fetch standard) of the HTTP API.
 *
 * - The Solana Pay transaction-request endpoints (`GET`/`POST /api/v1/orders/{id}/solana-pay`) and the
 *   icon they name (`/icon.svg`) answer any origin, without credentials: wallets fetch them from their
 *   own origin (Solana Pay spec, transaction requests). Their responses also carry
 *   `Cross-Origin-Resource-Policy: cross-origin` so a web wallet may show the icon in an <img>.
 * - The Solana Actions (`/actions.json`, `/api/actions/...`) get the Actions spec's CORS from their own router
 *   (http/actions/common.ts): any origin, no credentials, the spec's allowed and exposed headers.
 * - Every other route follows CORS_ORIGINS (config.ts): exact origins, `*` (any origin, no
 *   credentials), or `scheme://host:*` for any port of a host. `npm start` with the embedded localnet
 *   defaults to `http://localhost:*` and `http://127.0.0.1:*` (a Vite dev server works at once);
 *   elsewhere the default is none (no CORS headers: browsers refuse cross-origin calls).
 *   Credentials (the bazaar_session cookie) are allowed only for origins listed exactly, never for `*`
 *   nor for a `:*` port wildcard, also in development: with credentials for `http://localhost:*`, a page
 *   on any local port could act with a signed-in user's cookie (it created a wallet:write token, issue 21
 *   item 6). A wildcard-matched origin may call the API with a Bearer token it holds itself.
 */
import cors from 'cors';
import type { RequestHandler } from 'express';
import { API_PREFIX } from '@bazaar/contract';
import { isActionsPath } from './actions/router.js';

export const ICON_PATH = '/icon.svg';

const SOLANA_PAY_PATH = new RegExp(`^${API_PREFIX}/orders/[^/]+/solana-pay/?$`);

/** True for the Solana Pay transaction-request routes (GET/POST /api/v1/orders/{id}/solana-pay). */
export const isSolanaPayPath = (path: string): boolean => SOLANA_PAY_PATH.test(path);

/** True for the routes any origin may call (Solana Pay transaction requests and their icon). */
export const isAnyOriginPath = (path: string): boolean => path === ICON_PATH || isSolanaPayPath(path);

const EXPOSED = ['X-Request-Id', 'Retry-After', 'RateLimit', 'RateLimit-Policy'];

/**
 * Does `origin` (e.g. "http://localhost:5173") match one of `allowed`: an exact origin, `*`, or
 * `scheme://host:*` (that scheme and host on any port, or on none)?
 */
export function originAllowed(origin: string, allowed: readonly string[]): boolean {
  const o = origin.toLowerCase();
  return allowed.some((entry) => {
    const e = entry.toLowerCase().replace(/\/+$/, '');
    if (e === '*') return true;
    if (e.endsWith(':*')) {
      const base = e.slice(0, -2);
      return o === base || (o.startsWith(`${base}:`) && /^\d{1,5}$/.test(o.slice(base.length + 1)));
    }
    return o === e;
  });
}

/**
 * Is `origin` listed exactly in `allowed` (no `*`, no port wildcard)? Only such origins get
 * `Access-Control-Allow-Credentials` (see the module comment).
 */
export function originListedExactly(origin: string, allowed: readonly string[]): boolean {
  const o = origin.toLowerCase();
  return allowed.some((entry) => {
    const e = entry.toLowerCase().replace(/\/+$/, '');
    return e !== '*' && !e.endsWith(':*') && o === e;
  });
}

/** The CORS middleware for the whole app (see the module comment); `allowed` is Config.corsOrigins. */
export function corsPolicy(allowed: readonly string[]): RequestHandler {
  const anyOrigin = cors({ origin: '*', methods: ['GET', 'POST'], exposedHeaders: EXPOSED, maxAge: 600 });
  const any = allowed.includes('*');
  const listed: RequestHandler | null = !allowed.length
    ? null
    : cors((req, done) => {
        const origin = req.headers.origin;
        if (any) return done(null, { origin: '*', credentials: false, exposedHeaders: EXPOSED, maxAge: 600 });
        const ok = origin !== undefined && originAllowed(origin, allowed);
        done(null, {
          origin: ok,
          credentials: ok && originListedExactly(origin!, allowed),
          exposedHeaders: EXPOSED,
          maxAge: 600,
        });
      });
  return (req, res, next) => {
    // Solana Actions: their own CORS (any origin, the spec's headers), set by http/actions/common.ts actionsGuard
    if (isActionsPath(req.path)) return next();
    if (isAnyOriginPath(req.path)) {
      res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
      anyOrigin(req, res, next);
      return;
    }
    if (listed) listed(req, res, next);
    else next();
  };
}
