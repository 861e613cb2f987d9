/**
 * Authentication middleware (ts-rest globalMiddleware): reads the route's `metadata.access` (contract
 * access.ts) and sets `req.principal`. An operator route (`access.role`) answers 403 forbidden naming the
 * role when the principal does not hold it now (issue 25).
 *
 * Credentials, first match wins: `Authorization: Bearer <JWT | bzk_ API key>`, `X-API-Key: <key>`,
 * cookie `bazaar_session` (JWT). A credential that is present but bad is always 401 (also on routes
 * that would allow anonymous access), so clients learn their token expired.
 * PUBLIC_MARKETPLACE=true opens, without a credential, exactly the routes whose access says
 * `public_marketplace: true`; never a route for its group or its method.
 * Once the principal is known it becomes the actor of the request context (lib/request-context.ts, read by
 * the audit log), and the rest of the chain runs in that context.
 */
import type { Request, RequestHandler } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import { accessOf, requiredScopesFor, SESSION_COOKIE_NAME, tokenAccess, type RouteAccessRule } from '@bazaar/contract';
import type { AppRoute } from '@ts-rest/core';
import { authErrors, hasRole, signedBy, type AuthService, type Principal } from '../modules/auth/index.js';
import { sendProblem } from './problem.js';
import { runWithContext, type Actor, type RequestContext } from '../lib/request-context.js';

declare module 'express-serve-static-core' {
  interface Request {
    principal?: Principal;
    /** who is acting for this request (lib/request-context.ts), set by the first middleware of app.ts */
    requestContext?: RequestContext;
  }
}

/**
 * The audit actor of a principal (lib/request-context.ts): a session acts as its user, an API key and a
 * personal access token as themselves (id = the key's or token's id) on behalf of their user (`userId`).
 */
export function actorOf(p: Principal): Actor {
  if (p.kind === 'api_key') return { type: 'api_key', id: p.apiKeyId ?? 'unknown', userId: p.userId };
  if (p.kind === 'pat') return { type: 'pat', id: p.tokenId ?? 'unknown', userId: p.userId };
  return { type: 'user', id: p.userId ?? 'unknown', userId: p.userId };
}

/** Does the route's access let a request without a credential through (`publicMarketplace`: PUBLIC_MARKETPLACE)? */
export function anonymousAllowed(rule: RouteAccessRule, publicMarketplace: boolean): boolean {
  return rule.auth === 'public' || (publicMarketplace && rule.auth === 'user' && rule.public_marketplace === true);
}

function credentialOf(req: Request): { kind: 'jwt' | 'api_key' | 'pat'; value: string } | 'malformed' | null {
  const authz = req.headers.authorization;
  if (authz !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authz);
    if (!m) return 'malformed';
    if (m[1]!.startsWith('bzp_')) return { kind: 'pat', value: m[1]! };
    return m[1]!.startsWith('bzk_') ? { kind: 'api_key', value: m[1]! } : { kind: 'jwt', value: m[1]! };
  }
  const apiKey = req.headers['x-api-key'];
  if (typeof apiKey === 'string') return { kind: 'api_key', value: apiKey.trim() };
  const cookie = (req as Request & { cookies?: Record<string, string> }).cookies?.[SESSION_COOKIE_NAME];
  if (cookie) return { kind: 'jwt', value: cookie };
  return null;
}

/**
 * `fixedRoute`: the contract route of a handler mounted outside ts-rest (the SSE stream), whose auth
 * level and token scopes apply. A personal access token must hold every scope the request needs
 * (contract `requiredScopes`: the route's scope, plus the money scope when the request's body can move
 * money, e.g. payment_source custodial): else 403 insufficient-scope naming the first one missing. Runs
 * before the body is validated, on the parsed JSON body.
 */
export function authenticate(auth: AuthService, opts: { publicMarketplace: boolean }, fixedRoute?: AppRoute): RequestHandler {
  return (req, _res, next) => {
    const route = fixedRoute ?? (req as Request & { tsRestRoute?: AppRoute }).tsRestRoute;
    // a request that reached no contract route is treated as a signed-in route no token may call
    const rule: RouteAccessRule = route ? accessOf(route) : { auth: 'user', scope: null };
    const cred = credentialOf(req);
    (async () => {
      // public routes (login, Solana Pay, token metadata) never look at credentials
      if (rule.auth === 'public') return;
      if (cred === 'malformed') throw authErrors.invalidToken('Authorization header must be "Bearer <token>"');
      if (!cred) {
        if (anonymousAllowed(rule, opts.publicMarketplace)) return;
        throw authErrors.unauthorized();
      }
      req.principal =
        cred.kind === 'jwt'
          ? await auth.principalFromJwt(cred.value)
          : cred.kind === 'pat'
            ? await auth.principalFromPat(cred.value)
            : await auth.principalFromApiKey(cred.value);
      if (req.principal.kind === 'pat') {
        const token = tokenAccess(rule);
        const required = requiredScopesFor(token, req.body);
        if (!Array.isArray(required)) throw authErrors.insufficientScope(null);
        const missing = required.find((s) => !req.principal!.scopes?.includes(s));
        if (missing) throw authErrors.insufficientScope(missing, missing === required[0] ? undefined : token.money?.capability);
      }
      // operator routes: the role as the user row says now (read for this request; an admin API key holds all)
      if (rule.auth === 'role' && !hasRole(req.principal, rule.role)) throw authErrors.roleRequired(rule.role, req.principal.kind === 'pat');
    })().then(
      () => {
        // the actor of the request context (audit log); the rest of the chain runs in that context
        const ctx = req.requestContext;
        if (!ctx) return next();
        if (req.principal) ctx.actor = actorOf(req.principal);
        runWithContext(ctx, next);
      },
      next,
    );
  };
}

/**
 * A login rate limit (mount one per login route: each gets its own counters): `perMinute` requests per
 * minute per client IP, or with `unsignedByAddress` per wallet `address` of a verify_login body counting
 * only requests whose signature does not verify with that address (mount it after the JSON parser; a body
 * without an address is left to the IP limit). A request the wallet's key really signed is never counted
 * nor refused by the address limit: anyone may name an address, so a limit on naming it (the old
 * request_login limit) let anyone lock its owner out of login (issue 20 item 5). Over the budget: 429
 * rate-limited problem with `Retry-After` (seconds until the window resets) and the draft-7 RateLimit headers.
 * Defaults and variables: contract `authDefaults`, AUTH_RATE_LIMIT_PER_MINUTE and
 * AUTH_ADDRESS_RATE_LIMIT_PER_MINUTE (config.ts). `store`: where the counters live; the app passes a
 * PrismaRateLimitStore (http/rate-limit-store.ts) so the budget is shared by every replica; absent:
 * express-rate-limit's memory store (this process only).
 */
export function authRateLimit(perMinute: number, opts: { unsignedByAddress?: boolean; store?: Store } = {}): RequestHandler {
  const body = (req: Request) => (req.body ?? {}) as { address?: unknown; signed_message?: unknown; signature?: unknown };
  const addressOf = (req: Request) => {
    const a = body(req).address;
    return typeof a === 'string' ? a : null;
  };
  const signedByAddress = (req: Request) => {
    const { address, signed_message, signature } = body(req);
    return typeof address === 'string' && typeof signed_message === 'string' && typeof signature === 'string' && signedBy(address, signed_message, signature);
  };
  const per = opts.unsignedByAddress ? 'not signed by this wallet address' : 'from this client IP';
  return perMinuteLimit({
    perMinute,
    store: opts.store,
    ...(opts.unsignedByAddress
      ? { key: (req: Request) => `address:${addressOf(req)}`, skip: (req: Request) => addressOf(req) === null || signedByAddress(req) }
      : {}),
    detail: (req, retryAfter) => `Too many requests to ${req.originalUrl.split('?')[0]} ${per} (${perMinute} per minute); retry in ${retryAfter} s.`,
  });
}

/**
 * The one shape of every rate limit here (express-rate-limit, fixed one-minute window): `perMinute`
 * requests per `key` (default: the client IP), requests `skip` passes are not counted; over the budget a
 * 429 `rate-limited` problem whose `detail` is built from the request and `Retry-After` (seconds until
 * the window resets, >= 1), with the draft-7 RateLimit headers. `store`: where the counters live
 * (PrismaRateLimitStore: shared by every replica; absent: this process's memory).
 */
export function perMinuteLimit(o: {
  perMinute: number;
  store?: Store;
  key?: (req: Request) => string;
  skip?: (req: Request) => boolean;
  detail: (req: Request, retryAfterSeconds: number) => string;
}): RequestHandler {
  return rateLimit({
    windowMs: 60_000,
    limit: o.perMinute,
    ...(o.store ? { store: o.store } : {}),
    ...(o.key ? { keyGenerator: o.key, validate: { keyGeneratorIpFallback: false } } : {}),
    ...(o.skip ? { skip: o.skip } : {}),
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    handler: (req, res, _next, options) => {
      const reset = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const retryAfter = reset ? Math.max(1, Math.ceil((reset.getTime() - Date.now()) / 1000)) : Math.ceil(options.windowMs / 1000);
      res.setHeader('Retry-After', String(retryAfter));
      sendProblem(req, res, 'rate-limited', o.detail(req, retryAfter));
    },
  });
}
