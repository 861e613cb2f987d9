/**
 * The contract's route table as path patterns, for what Express cannot tell on its own:
 * - which methods a path has (405 method-not-allowed with `Allow` instead of 404 for an undeclared
 *   method on a known path), derived from the contract, never listed by hand;
 * - which route declares a request body (a missing required body is 400, not an empty object);
 * - which path parameter does not percent-decode (400 malformed-request naming `params.<name>`);
 * - whether a route takes credentials (the cross-origin check of cookie-authenticated writes, http/csrf.ts).
 *
 * Patterns match the raw (still percent-encoded) request path, like Express: `:name` is one non-empty
 * segment, an optional trailing slash, case-insensitive.
 */
import { accessOf, contract } from '@bazaar/contract';
import { ContractNoBody, type AppRoute, type AppRouter } from '@ts-rest/core';

export interface RoutePattern {
  method: string;
  path: string;
  regex: RegExp;
  params: string[];
  /** the contract route's `metadata.access.auth` ('public' | 'user' | 'admin'); undefined for ops routes */
  auth?: string;
}

/** Routes outside the contract served by the app itself (app.ts). */
export const OPS_ROUTES: ReadonlyArray<{ method: string; path: string }> = [
  { method: 'GET', path: '/healthz' },
  { method: 'GET', path: '/readyz' },
  { method: 'GET', path: '/openapi.json' },
];

function routesOf(router: AppRouter): AppRoute[] {
  return Object.values(router).flatMap((v) =>
    typeof (v as AppRoute).method === 'string' ? [v as AppRoute] : routesOf(v as AppRouter),
  );
}

function compile(method: string, path: string, auth?: string): RoutePattern {
  const params: string[] = [];
  const source = path
    .split(/(:\w+)/)
    .map((part) => {
      if (part.startsWith(':')) {
        params.push(part.slice(1));
        return '([^/]+)';
      }
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return { method, path, regex: new RegExp(`^${source}/?$`, 'i'), params, ...(auth ? { auth } : {}) };
}

export const ROUTE_PATTERNS: readonly RoutePattern[] = [
  ...routesOf(contract).map((r) => compile(r.method, r.path, accessOf(r).auth)),
  ...OPS_ROUTES.map((r) => compile(r.method, r.path)),
];

const matching = (rawPath: string) => ROUTE_PATTERNS.filter((p) => p.regex.test(rawPath));

/**
 * The methods `rawPath` has (HEAD wherever GET is, as Express serves it), sorted; empty when no route
 * has this path.
 */
export function allowedMethods(rawPath: string): string[] {
  const methods = new Set(matching(rawPath).map((p) => p.method));
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}

/**
 * Does a contract route that takes credentials ('user' or 'admin', not 'public') answer `method` on
 * `rawPath`? False for public and unknown routes.
 */
export function takesCredentials(method: string, rawPath: string): boolean {
  return matching(rawPath).some((p) => p.method === method && p.auth !== undefined && p.auth !== 'public');
}

/** The name of the first path parameter of `rawPath` that is not valid percent-encoded UTF-8, if any. */
export function undecodableParam(rawPath: string): string | null {
  for (const p of matching(rawPath)) {
    const values = p.regex.exec(rawPath)!.slice(1);
    for (let i = 0; i < values.length; i++) {
      try {
        decodeURIComponent(values[i]!);
      } catch {
        return p.params[i]!;
      }
    }
  }
  return null;
}

/** Does the contract route declare a request body (anything but c.noBody())? */
export function declaresBody(route: AppRoute): boolean {
  return route.method !== 'GET' && 'body' in route && route.body !== ContractNoBody;
}
