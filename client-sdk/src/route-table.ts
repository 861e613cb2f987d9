/**
 * A contract as a table of methods and paths (routes.generated.ts), and the router ts-rest's client
 * builds on from it: what `@bazaar/client-sdk/lite` uses instead of the contract's zod schemas.
 */
import type { AppRoute, AppRouter } from '@bazaar/contract/ts-rest';

/** One route: [method, path] or, for a body that is not JSON, [method, path, contentType]. */
type RouteEntry<R extends AppRoute> = R extends { contentType: infer C }
  ? readonly [R['method'], R['path'], C]
  : readonly [R['method'], R['path']];

/** The table of a router: its shape, each route replaced by its entry (exactly: tsc checks every literal). */
export type RouteTable<T> = { readonly [K in keyof T]: T[K] extends AppRoute ? RouteEntry<T[K]> : RouteTable<T[K]> };

/** A table of routes: groups of entries, nested like the contract. */
interface Table {
  readonly [key: string]: Table | readonly [string, string] | readonly [string, string, string];
}

/**
 * The router ts-rest's `initClient` reads: per route `method`, `path`, `contentType` when the table names one,
 * and `responses: {}` (no schemas: responses are not validated).
 */
export function routerOf(table: Table): AppRouter {
  return Object.fromEntries(
    Object.entries(table).map(([key, value]) => {
      if (!Array.isArray(value)) return [key, routerOf(value as Table)];
      const [method, path, contentType] = value as readonly [string, string, string?];
      return [key, { method, path, responses: {}, ...(contentType ? { contentType } : {}) }];
    }),
  ) as unknown as AppRouter;
}
