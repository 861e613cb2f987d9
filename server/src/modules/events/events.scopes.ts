/**
 * What a scoped credential may read in events (issue 20, item 4). An event carries the resource as the
 * API returns it (a message's body, a deposit, a withdrawal): it must not show a personal access token
 * more than the routes of that resource would. So each resource type needs the scope that reads that
 * resource (`EVENT_READ_SCOPES`), on top of `events:read` (GET /events, the stream) or
 * `webhooks:manage` (an endpoint the token created): a token without `chat:read` gets no
 * `message.created` at all, one without `wallet:read` no `deposit.*` / `withdrawal.*`.
 *
 * Decision: events of a resource the token may not read are left out whole, not sent with their
 * `data` emptied. A redacted snapshot would not be the resource "as the API returns it" (the Message
 * schema requires `body`), a client could not tell an empty body from a redacted one, and leaving the
 * event out leaks nothing either (its per-resource `sequence` restarts nowhere: the token sees no
 * event of that resource). Session tokens (JWT) and API keys carry no scopes: they see every type.
 *
 * This is about event *contents*, independent of which routes a scope opens (contract routeScopes).
 */
import { DISPUTE_EVENTS, EVENT_TYPES, LISTING_MODERATION_EVENTS, resourceTypeOf, USER_STANDING_EVENTS, type EventType, type OperatorRole, type ResourceType, type TokenScope } from '@bazaar/contract';

/** The scope that reads each resource type through its own routes (see contract routeScopes). */
export const EVENT_READ_SCOPES: Readonly<Record<ResourceType, TokenScope>> = {
  order: 'orders:read',
  listing: 'listings:read',
  review: 'listings:read',
  deposit: 'wallet:read',
  withdrawal: 'wallet:read',
  message: 'chat:read',
  webhook: 'webhooks:manage',
  // a tip is read through its order's routes (GET /orders/{id}/tips)
  tip: 'orders:read',
  // an offer is an order's terms before the order: read with the orders
  offer: 'orders:read',
  // a dispute is an order's escrow under dispute: read with the orders (GET /disputes/{id} needs orders:read)
  dispute: 'orders:read',
  // user.role_* and user.suspended / banned / reinstated (issue 25): about the user's own profile
  user: 'profile:read',
};

/**
 * The event types a credential with `scopes` may see: null = every type (no scopes: a session token or
 * an API key); otherwise the types whose resource's read scope (`EVENT_READ_SCOPES`) it holds (possibly
 * none).
 */
export function eventTypesFor(scopes: readonly string[] | null | undefined): EventType[] | null {
  if (!scopes) return null;
  return EVENT_TYPES.filter((t) => scopes.includes(EVENT_READ_SCOPES[resourceTypeOf(t)]));
}

/** Resource types whose events `scopes` may see (null: all). The webhook fan-out uses it in SQL. */
export function resourceTypesFor(scopes: readonly string[] | null | undefined): ResourceType[] | null {
  if (!scopes) return null;
  return (Object.keys(EVENT_READ_SCOPES) as ResourceType[]).filter((r) => scopes.includes(EVENT_READ_SCOPES[r]));
}

/**
 * The event types an operator role shows beyond the user's own audience (issue 25): a moderator sees every
 * moderation event (takedowns, restores, appeals, account standing) so appeals reach her; an arbiter every
 * dispute event (evidence, rulings). An admin sees every event anyway. `roles`: the principal's roles now.
 */
export function operatorEventTypes(roles: readonly OperatorRole[] | undefined): EventType[] {
  const out: EventType[] = [];
  if (roles?.includes('moderator')) out.push(...LISTING_MODERATION_EVENTS, ...USER_STANDING_EVENTS);
  if (roles?.includes('arbiter')) out.push(...DISPUTE_EVENTS);
  return out;
}
