/**
 * Who may call a route: each route of the contract states it once, in `metadata.access` (built with
 * `access.*` and passed to `routeErrors`), and everything else is derived from it:
 * - the personal access token table `routeAccess` and `requiredScopes` (scopes.ts),
 * - the server's auth middleware (server/src/http/security.ts: credential, admin role, token scopes, and
 *   which routes `PUBLIC_MARKETPLACE=true` opens anonymously),
 * - the OpenAPI `security`, `x-bazaar-auth`, `x-bazaar-token-scopes` and `x-bazaar-public-marketplace`
 *   of each operation (contract/scripts/openapi.ts),
 * - the route table of docs/design.md (generated between markers by `npm run openapi:generate`).
 *
 * A route without `metadata.access` does not compile: `EveryRouteStatesAccess` (checked over the whole
 * contract in contract.ts; proven by access.test-d.ts, which tsc runs).
 *
 * Levels: `public` (reads no credential: login, Solana Pay, token metadata), `user` (any signed-in user:
 * session JWT or cookie, API key, or a personal access token holding `scope`; `scope: null` = no personal
 * access token may call it), `role` (issue 25: a signed-in user holding the operator role `role`, one of
 * OPERATOR_ROLES; a personal access token only with the operator scope `scope`, which it can carry only while
 * its owner holds the role; `scope: null` = no token). `access.admin()` is `access.role('admin')`. Only
 * personal access tokens are scoped: a login session and an operator's API key act as their user with every
 * right of that user. `public_marketplace: true` marks the read routes a service started with
 * `PUBLIC_MARKETPLACE=true` serves without a credential; nothing is opened by its group or method.
 */
import type { TokenScope } from './tokens.contract.js';

/**
 * The operator roles (issue 25), held by users (`users.roles`; a user may hold several), granted and revoked
 * by an admin through the API (`PUT`/`DELETE /admin/users/{wallet}/roles/{role}`; the first admin from the
 * command line, `npm run admin:grant`): `admin` manages roles and reads the whole marketplace (every order
 * and event, marketplace-wide webhooks, audit log, reports), `moderator` handles reports, takedowns and
 * suspensions, `arbiter` resolves disputes (the service signs as the program's arbiter). An admin API key
 * (`npm run api-key -- create --admin`) holds every role.
 */
export const OPERATOR_ROLES = ['admin', 'moderator', 'arbiter'] as const;
export type OperatorRole = (typeof OPERATOR_ROLES)[number];

/** The scopes that let a token move money: a money capability needs one of them. */
export const MONEY_SCOPES = ['payments:write', 'wallet:write'] as const satisfies readonly TokenScope[];
export type MoneyScope = (typeof MONEY_SCOPES)[number];

/**
 * What a request can do with the user's money without the user's wallet signing it, and the scope a
 * token needs for it. A payment the buyer's wallet signs (payment_source wallet) is not listed: the
 * signature is the user's consent, the token only carries it.
 */
export const MONEY_CAPABILITIES = {
  'custodial-payment': {
    scope: 'payments:write',
    description:
      'pay an order from the custodial balance: the service funds the escrow from its hot wallet, no wallet signs',
  },
  'escrow-release': {
    scope: 'payments:write',
    description:
      'release an order\'s escrow to the seller (the buyer confirms delivery): irreversible, and it ends the ' +
      'buyer\'s right to dispute, whether the escrow was funded from a wallet or from custody',
  },
  'escrow-refund': {
    scope: 'payments:write',
    description:
      'return an order\'s escrow to the buyer: the seller gives up a payment (irreversible), or the buyer cancels a ' +
      'late order',
  },
  'escrow-settlement': {
    scope: 'payments:write',
    description:
      'propose or accept a split of an order\'s escrow by agreement (issue 24): accepted, the escrow program pays it ' +
      'out at once, irreversibly, without an arbiter; a proposal is the proposer\'s consent to that split',
  },
  'custody-withdrawal': {
    scope: 'wallet:write',
    description: 'send custodial balance to any address',
  },
} as const satisfies Record<string, { scope: MoneyScope; description: string }>;
export type MoneyCapability = keyof typeof MONEY_CAPABILITIES;

/** A route's money capability and the requests it applies to. */
export interface MoneyRule {
  capability: MoneyCapability;
  /**
   * Absent: every request of the route has the capability. Present: every request has it except those
   * whose JSON body field `body_field` is absent or one of `absent_or` (e.g. `payment_source` absent or
   * `wallet`). Any other value, even one the schema then refuses, counts as the capability: the check
   * runs before validation and errs on the side of asking for the money scope.
   */
  unless?: { body_field: string; absent_or: readonly string[] };
}

/** Who may call a route (`metadata.access` of every contract route); see the module comment. */
export type RouteAccessRule =
  | { readonly auth: 'public' }
  | {
      readonly auth: 'user';
      /** the scope a personal access token needs; null: no personal access token may call the route */
      readonly scope: TokenScope | null;
      /** the route's money capability (absent: no request of it can move money) */
      readonly money?: MoneyRule;
      /** `PUBLIC_MARKETPLACE=true` serves the route without a credential (reads only) */
      readonly public_marketplace?: true;
    }
  | {
      readonly auth: 'role';
      /** the operator role the caller must hold (checked per request against the user row) */
      readonly role: OperatorRole;
      /** the operator scope a personal access token needs (OPERATOR_SCOPES: only while its owner holds `role`); null: no token */
      readonly scope: TokenScope | null;
    };

/** Constructors of `RouteAccessRule`, one per level (the contract files use these). */
export const access = {
  /** Reads no credential (login, Solana Pay, token metadata): a credential sent along is not even read. */
  public: (): { readonly auth: 'public' } => ({ auth: 'public' }),
  /**
   * Any signed-in user; a personal access token needs `scope` (and the money capability's scope for the
   * requests `money` covers). `public_marketplace: true` (GET routes only): anonymous under PUBLIC_MARKETPLACE.
   */
  user: <const S extends TokenScope>(
    scope: S,
    o: { money?: MoneyRule; public_marketplace?: true } = {},
  ): { readonly auth: 'user'; readonly scope: S; readonly money?: MoneyRule; readonly public_marketplace?: true } => ({
    auth: 'user',
    scope,
    ...(o.money ? { money: o.money } : {}),
    ...(o.public_marketplace ? { public_marketplace: true as const } : {}),
  }),
  /** A signed-in session or API key; no personal access token (403 insufficient-scope): token management, logout. */
  noToken: (): { readonly auth: 'user'; readonly scope: null } => ({ auth: 'user', scope: null }),
  /**
   * A signed-in user holding the operator role `role` (403 forbidden otherwise); a personal access token only
   * with the operator scope `scope` (OPERATOR_SCOPES) while its owner holds `role`; `scope` null: no token.
   */
  role: <const R extends OperatorRole, const S extends TokenScope | null = null>(
    role: R,
    scope: S = null as S,
  ): { readonly auth: 'role'; readonly role: R; readonly scope: S } => ({ auth: 'role', role, scope }),
  /** `access.role('admin')`: a signed-in user with the admin role; never a personal access token. */
  admin: (): { readonly auth: 'role'; readonly role: 'admin'; readonly scope: null } => ({ auth: 'role', role: 'admin', scope: null }),
} as const;

type IsRoute<T> = T extends { method: string; path: string; responses: unknown } ? true : false;

/** The keys (`group.route`) of the routes of router type `R` whose metadata states no `access`. */
export type RoutesWithoutAccess<R, P extends string = ''> = {
  [K in keyof R & string]: IsRoute<R[K]> extends true
    ? R[K] extends { metadata: { access: RouteAccessRule } }
      ? never
      : `${P}${K}`
    : RoutesWithoutAccess<R[K], `${P}${K}.`>;
}[keyof R & string];

/**
 * `true` when every route of router type `R` (groups nested) states `metadata.access`; otherwise an object
 * naming those that do not, so `const ok: EveryRouteStatesAccess<typeof router> = true` fails to compile
 * with their keys in the message.
 */
export type EveryRouteStatesAccess<R> = [RoutesWithoutAccess<R>] extends [never]
  ? true
  : { routes_without_metadata_access: RoutesWithoutAccess<R> };
