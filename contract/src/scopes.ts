/**
 * Who may call each route with a personal access token (tokens.contract.ts), per capability: the scope
 * every request of the route needs and, for a route whose request can move money, the money capability
 * and its scope. Derived from each route's `metadata.access` (access.ts), never listed by hand: the
 * table has one entry per contract route by construction. The auth middleware
 * (server/src/http/security.ts) checks a token with `requiredScopesFor`, openapi.json publishes the table
 * per operation (`x-bazaar-token-scopes`) and tests/auth.route-walk.test.ts walks it with a token of each
 * single scope against docs/threat-model.md, which says why each money capability needs its scope.
 *
 * Only personal access tokens are scoped: a login session (JWT, cookie) and an operator's API key act
 * as their user with every right of that user.
 */
import type { AppRoute, AppRouter } from '@ts-rest/core';
import { MONEY_CAPABILITIES, type MoneyRule, type RouteAccessRule } from './access.js';
import { contract, type Contract } from './contract.js';
import type { RouteMetadata } from './problems.js';
import type { TokenScope } from './tokens.contract.js';

/** Every contract route key, `group.route` (e.g. `orders.createOrder`). */
export type RouteKey = { [G in keyof Contract & string]: `${G}.${keyof Contract[G] & string}` }[keyof Contract & string];

/**
 * Token access of one route. `scope`: the scope every request needs; `null`: no token may call it
 * (token management, role routes without an operator scope); `'public'`: the route
 * reads no credential (login, Solana Pay, token metadata). `money`: the route's money capability, or null
 * when no request of it can move money.
 */
export type RouteAccess =
  | { scope: 'public'; money: null }
  | { scope: null; money: null }
  | { scope: TokenScope; money: MoneyRule | null };

/** The token view of a route's access rule (metadata.access). */
export function tokenAccess(rule: RouteAccessRule): RouteAccess {
  if (rule.auth === 'public') return { scope: 'public', money: null };
  if (rule.scope === null) return { scope: null, money: null };
  if (rule.auth === 'role') return { scope: rule.scope, money: null };
  return { scope: rule.scope, money: rule.money ?? null };
}

/** Every route of the contract with its key (`group.route`), in contract order. */
export function contractRouteEntries(router: AppRouter = contract, prefix = ''): Array<[string, AppRoute]> {
  return Object.entries(router).flatMap(([key, value]) =>
    typeof (value as AppRoute).method === 'string' && typeof (value as AppRoute).path === 'string'
      ? [[prefix + key, value as AppRoute] as [string, AppRoute]]
      : contractRouteEntries(value as AppRouter, `${prefix}${key}.`),
  );
}

/** The access rule a route states (`metadata.access`). */
export const accessOf = (route: AppRoute): RouteAccessRule => (route.metadata as RouteMetadata).access;

/** Token access per route key, derived from each route's `metadata.access`. */
export const routeAccess = Object.fromEntries(
  contractRouteEntries().map(([key, route]) => [key, tokenAccess(accessOf(route))]),
) as Record<RouteKey, RouteAccess>;

/**
 * Does `rule` apply to a request with this (parsed JSON, not yet validated) body? See MoneyRule.unless.
 */
export function moneyRuleApplies(rule: MoneyRule, body: unknown): boolean {
  if (!rule.unless) return true;
  const value = body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[rule.unless.body_field] : undefined;
  if (value === undefined) return false;
  return !(typeof value === 'string' && rule.unless.absent_or.includes(value));
}

/**
 * The scopes a personal access token must hold for this request of a route with token access `access`:
 * the route's scope plus, when the request has the route's money capability, that capability's scope
 * (deduplicated, route scope first). `null`: no token may call the route; `'public'`: the route reads no
 * credential. `body`: the parsed JSON body (unvalidated), read only by a money rule with `unless`.
 */
export function requiredScopesFor(access: RouteAccess, body: unknown): TokenScope[] | null | 'public' {
  if (access.scope === null || access.scope === 'public') return access.scope;
  const scopes: TokenScope[] = [access.scope];
  if (access.money && moneyRuleApplies(access.money, body)) {
    const money = MONEY_CAPABILITIES[access.money.capability].scope;
    if (!scopes.includes(money)) scopes.push(money);
  }
  return scopes;
}

/** `requiredScopesFor` the route with contract key `key`. */
export function requiredScopes(key: RouteKey, body: unknown): TokenScope[] | null | 'public' {
  return requiredScopesFor(routeAccess[key], body);
}

/**
 * The scope each authenticated route requires of every request by route key (null: no token), without
 * the money scopes some requests need in addition: use `requiredScopes` to check a request.
 */
export const routeScopes: Record<string, TokenScope | null> = Object.fromEntries(
  Object.entries(routeAccess as Record<string, RouteAccess>)
    .filter(([, a]) => a.scope !== 'public')
    .map(([k, a]) => [k, a.scope as TokenScope | null]),
);
