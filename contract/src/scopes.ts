/**
 * Who may call each route with a personal access token (tokens.contract.ts), per capability: the scope
 * every request of the route needs and, for a route whose request can move money, the money capability
 * and its scope. The table is keyed by the contract's route keys (`group.route`) and typed so that a
 * route without an entry does not compile. The auth middleware (server/src/http/security.ts) derives its
 * check from it (`requiredScopes`), openapi.json publishes it per operation (`x-bazaar-token-scopes`) and
 * tests/auth.route-walk.test.ts walks it with a token of each single scope. docs/threat-model.md says
 * why each money capability needs its scope.
 *
 * Only personal access tokens are scoped: a login session (JWT, cookie) and an operator's API key act
 * as their user with every right of that user.
 */
import type { Contract } from './index.js';
import type { TokenScope } from './tokens.contract.js';

/** Every contract route key, `group.route` (e.g. `orders.createOrder`). */
export type RouteKey = { [G in keyof Contract & string]: `${G}.${keyof Contract[G] & string}` }[keyof Contract & string];

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

/**
 * Token access of one route. `scope`: the scope every request needs; `null`: no token may call it
 * (token management, admin-only routes: a token never carries the admin role); `'public'`: the route
 * reads no credential (login, Solana Pay, token metadata). `money`: the route's money capability, or null
 * when no request of it can move money.
 */
export type RouteAccess =
  | { scope: 'public'; money: null }
  | { scope: null; money: null }
  | { scope: TokenScope; money: MoneyRule | null };

const needs = (scope: TokenScope, money: MoneyRule | null = null): RouteAccess => ({ scope, money });
const PUBLIC: RouteAccess = { scope: 'public', money: null };
const NO_TOKEN: RouteAccess = { scope: null, money: null };

export const routeAccess = {
  'auth.requestLogin': PUBLIC,
  'auth.verifyLogin': PUBLIC,
  // a session logs itself out; an API key or a personal access token is not a session (403)
  'auth.logout': NO_TOKEN,
  'users.getMe': needs('profile:read'),
  'users.updateMe': needs('profile:write'),
  'users.getUser': needs('listings:read'),
  'reviews.listSellerReviews': needs('listings:read'),
  'reviews.createReview': needs('reviews:write'),
  'listings.createListing': needs('listings:write'),
  'listings.getListing': needs('listings:read'),
  'listings.listListings': needs('listings:read'),
  'listings.updateListing': needs('listings:write'),
  'listings.getListingTokenMetadata': PUBLIC,
  'marketplace.searchListings': needs('listings:read'),
  'marketplace.listMarketplaceListings': needs('listings:read'),
  'marketplace.listCategories': needs('listings:read'),
  'marketplace.listCurrencies': needs('listings:read'),
  'orders.createOrder': needs('orders:write', {
    capability: 'custodial-payment',
    unless: { body_field: 'payment_source', absent_or: ['wallet'] },
  }),
  'orders.listOrders': needs('orders:read'),
  'orders.getOrder': needs('orders:read'),
  // the buyer's wallet signed this transaction: the signature, not the token, authorises the payment
  'orders.submitOrderTransaction': needs('orders:write'),
  'orders.createOrderPayment': needs('orders:write'),
  'orders.getSolanaPayLabel': PUBLIC,
  'orders.createSolanaPayTransaction': PUBLIC,
  'orders.deliverOrder': needs('orders:write'),
  'orders.confirmOrder': needs('orders:write', { capability: 'escrow-release' }),
  // a dispute freezes the escrow; only the arbiter (no token) moves it
  'orders.disputeOrder': needs('orders:write'),
  'orders.refundOrder': needs('orders:write', { capability: 'escrow-refund' }),
  'orders.resolveDispute': NO_TOKEN,
  'wallet.getBalances': needs('wallet:read'),
  'wallet.createDeposit': needs('wallet:write'),
  'wallet.createWithdrawal': needs('wallet:write', { capability: 'custody-withdrawal' }),
  'wallet.listWithdrawals': needs('wallet:read'),
  'wallet.getWithdrawal': needs('wallet:read'),
  'wallet.listDeposits': needs('wallet:read'),
  'events.listEvents': needs('events:read'),
  'events.streamEvents': needs('events:read'),
  'webhooks.createWebhook': needs('webhooks:manage'),
  'webhooks.listWebhooks': needs('webhooks:manage'),
  'webhooks.getWebhook': needs('webhooks:manage'),
  'webhooks.updateWebhook': needs('webhooks:manage'),
  'webhooks.deleteWebhook': needs('webhooks:manage'),
  'webhooks.rotateWebhookSecret': needs('webhooks:manage'),
  'webhooks.listWebhookDeliveries': needs('webhooks:manage'),
  'webhooks.redeliverWebhook': needs('webhooks:manage'),
  'chat.listOrderMessages': needs('chat:read'),
  'chat.sendOrderMessage': needs('chat:write'),
  'chat.createInquiry': needs('chat:write'),
  'chat.listConversations': needs('chat:read'),
  'chat.listConversationMessages': needs('chat:read'),
  'chat.sendConversationMessage': needs('chat:write'),
  'chat.markConversationRead': needs('chat:write'),
  'chat.reportMessage': needs('chat:write'),
  'tokens.createToken': NO_TOKEN,
  'tokens.listTokens': NO_TOKEN,
  'tokens.revokeToken': NO_TOKEN,
  'network.getNetwork': PUBLIC,
} as const satisfies Record<RouteKey, RouteAccess>;

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
 * The scopes a personal access token must hold for this request of route `key`: the route's scope plus,
 * when the request has the route's money capability, that capability's scope (deduplicated, route scope
 * first). `null`: no token may call the route; `'public'`: the route reads no credential. `body`: the
 * parsed JSON body (unvalidated), read only by a money rule with `unless`.
 */
export function requiredScopes(key: RouteKey, body: unknown): TokenScope[] | null | 'public' {
  const access: RouteAccess = routeAccess[key];
  if (access.scope === null || access.scope === 'public') return access.scope;
  const scopes: TokenScope[] = [access.scope];
  if (access.money && moneyRuleApplies(access.money, body)) {
    const money = MONEY_CAPABILITIES[access.money.capability].scope;
    if (!scopes.includes(money)) scopes.push(money);
  }
  return scopes;
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
