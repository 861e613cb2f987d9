/**
 * Events (issue 11): every state change of an order, a listing, a review, a custodial deposit or
 * withdrawal is written as an event in the same database transaction as the change (a transactional
 * outbox), and reaches clients three ways: `GET /events` (cursor-paged), the live stream
 * `GET /events/stream` (Server-Sent Events, resumable with `Last-Event-ID`) and webhooks
 * (webhooks.contract.ts, signed per Standard Webhooks v1).
 *
 * An event carries: a stable `event_id` (UUID; the `webhook-id` of its deliveries), its `type`, the
 * resource it concerns (`resource_type`, `resource_id`) and that resource's `sequence` (1, 2, ... per
 * resource: a client that sees sequence n+2 after n knows it missed one), the resource snapshot as the
 * API returns it at that moment (`data`; an order's `allowed_actions` depends on the caller and is
 * empty in events), the transaction `signature` when the chain moved, and its stream `position`.
 *
 * `position` is a decimal integer that grows in commit order (events are ordered by the moment their
 * change committed, so a reader that saw position p never sees a smaller one appear later); the stream
 * uses it as the SSE `id`. Events of one resource are in the order the resource changed.
 *
 * Who sees what: a user sees the events of resources they are a party of (an order's buyer and seller,
 * a listing's seller, a review's reviewer and seller, a deposit's or withdrawal's owner, a webhook's
 * owner, an offer's seller and buyer, a dispute's buyer and seller, the user whose operator roles changed, a moderation
 * decision's user: listing.taken_down / restored / appealed the seller, user.suspended / banned / reinstated the user);
 * an admin credential sees every event of the marketplace.
 *
 * Scopes (issue 20): events carry the resource (a message's body, a deposit, a withdrawal), so a personal
 * access token sees only the events of resources its scopes can read through their own routes, on top of
 * `events:read` (or `webhooks:manage` for its webhooks): `orders:read` for order.*, `listings:read` for
 * listing.* and review.*, `wallet:read` for deposit.* and withdrawal.*, `chat:read` for message.*,
 * `webhooks:manage` for webhook.*, `orders:read` for tip.*, offer.* and dispute.*, `profile:read` for user.* (role changes and a moderator's decision on the account). Other events are left out whole (not sent with the body removed). A
 * session (JWT) or API key sees every type it is a party of.
 *
 * The order events come from the `emits` column of the order lifecycle table (`orderTransitions`), the
 * listing events from `listingTransitions` (listing.updated also on an edit by the seller).
 */
import { z } from 'zod';
import { c, Cursor, ExplorerUrl, named, namedExtension, queryNumber, Timestamp, TxSignature, Uuid } from './common.js';
import {
  DEPOSIT_EVENTS,
  EVENT_TYPES,
  type EventType,
  MESSAGE_EVENTS,
  ResourceType,
  REVIEW_EVENTS,
  WEBHOOK_EVENTS,
  WITHDRAWAL_EVENTS,
} from './event-types.js';
import { Message } from './chat.contract.js';
import { Listing, LISTING_EVENTS } from './listings.contract.js';
import { MILESTONE_EVENTS, Order, ORDER_EVENTS, ORDER_LEVEL_EVENTS } from './orders.contract.js';
import { access } from './access.js';
import { routeErrors } from './problems.js';
import { Review } from './reviews.contract.js';
import { CustodyDeposit, Withdrawal } from './wallet.contract.js';
import { WebhookEndpoint } from './webhooks.contract.js';
import { Tip, TIP_EVENTS } from './tips.contract.js';
import { Offer, OFFER_EVENTS } from './offers.contract.js';
import { Dispute, DISPUTE_EVENTS } from './disputes.contract.js';
import { USER_ROLE_EVENTS, UserRoles } from './users.contract.js';
import { AccountStanding, LISTING_MODERATION_EVENTS, USER_STANDING_EVENTS } from './moderation.contract.js';

/** Stream position: a decimal integer (at most 19 digits), growing in commit order. */
export const EventPosition = z
  .string()
  .regex(/^(0|[1-9]\d{0,18})$/, 'must be a position from an event (decimal digits)')
  .describe('Stream position (decimal integer, grows in commit order); the SSE `id` of the event');

const envelope = {
  event_id: Uuid.describe('Stable id of the event (the `webhook-id` of its webhook deliveries)'),
  position: EventPosition,
  resource_id: Uuid,
  sequence: z.number().int().min(1).describe('1, 2, ... per resource, in the order the resource changed'),
  signature: TxSignature.nullable().describe('The transaction that moved the chain for this change, when one did'),
  explorer_url: ExplorerUrl('that transaction').nullable(),
  created_at: Timestamp.describe('When the change committed'),
};

const event = <T extends readonly [string, ...string[]], R extends ResourceType, D extends z.ZodTypeAny>(
  title: string,
  types: T,
  resource: R,
  data: D,
) =>
  named(
    title,
    z.object({ type: z.enum(types), resource_type: z.literal(resource), ...envelope, data: data.describe('The resource as the API returns it') }),
  );

export const OrderEventSchema = event('OrderEvent', [...ORDER_EVENTS, ...ORDER_LEVEL_EVENTS] as const, 'order', Order);
/** milestone.* (orders with several milestones): the order, and which milestone the event is about. */
export const MilestoneEventSchema = event(
  'MilestoneEvent',
  MILESTONE_EVENTS,
  'order',
  namedExtension('OrderMilestoneChange', Order, { milestone_index: z.number().int().min(1).describe('The milestone the event is about') }),
);
export const ListingEventSchema = event('ListingEvent', LISTING_EVENTS, 'listing', Listing);
/** listing.taken_down / restored / appealed (issue 25): the listing, and the decision's reason or the appeal's text. */
export const ListingModerationEventSchema = event(
  'ListingModerationEvent',
  LISTING_MODERATION_EVENTS,
  'listing',
  namedExtension('ListingModerationChange', Listing, {
    reason: z.string().describe('taken_down / restored: the moderator\'s reason; appealed: the seller\'s appeal text'),
  }),
);
export const ReviewEventSchema = event('ReviewEvent', REVIEW_EVENTS, 'review', Review);
export const DepositEventSchema = event('DepositEvent', DEPOSIT_EVENTS, 'deposit', CustodyDeposit);
export const WithdrawalEventSchema = event('WithdrawalEvent', WITHDRAWAL_EVENTS, 'withdrawal', Withdrawal);
export const MessageEventSchema = event('MessageEvent', MESSAGE_EVENTS, 'message', Message);
export const WebhookEventSchema = event('WebhookEvent', WEBHOOK_EVENTS, 'webhook', WebhookEndpoint);
export const TipEventSchema = event('TipEvent', TIP_EVENTS, 'tip', Tip);
export const OfferEventSchema = event('OfferEvent', OFFER_EVENTS, 'offer', Offer);
export const DisputeEventSchema = event('DisputeEvent', DISPUTE_EVENTS, 'dispute', Dispute);
/** user.role_granted / user.role_revoked (issue 25): to the user whose roles changed. */
export const UserRoleEventSchema = event('UserRoleEvent', USER_ROLE_EVENTS, 'user', UserRoles);
/** user.suspended / banned / reinstated (issue 25): a moderator's decision on the account; data is its standing, audience the user. */
export const UserStandingEventSchema = event('UserStandingEvent', USER_STANDING_EVENTS, 'user', AccountStanding);

/** An event: a discriminated union over `type`. */
export const Event = named(
  'Event',
  z.discriminatedUnion('type', [
    OrderEventSchema,
    MilestoneEventSchema,
    ListingEventSchema,
    ListingModerationEventSchema,
    ReviewEventSchema,
    DepositEventSchema,
    WithdrawalEventSchema,
    MessageEventSchema,
    WebhookEventSchema,
    TipEventSchema,
    OfferEventSchema,
    DisputeEventSchema,
    UserRoleEventSchema,
    UserStandingEventSchema,
  ]),
  'A state change of a resource (discriminated by `type`)',
);
export type Event = z.infer<typeof Event>;
/** The event of one type, e.g. `EventOf<'order.funded'>` (its `data` is an Order). */
export type EventOf<T extends EventType> = Extract<Event, { type: T }> & { type: T };

export const EventPage = named(
  'EventPage',
  z.object({
    data: z.array(Event),
    next_cursor: z.string().nullable().describe('Cursor of the next (older) page; null on the last page'),
  }),
  'A page of events, newest first',
);

/** Comma-separated list of event types in a query parameter. */
const TypeList = z
  .string()
  .max(2000)
  .transform((s, ctx) => {
    const items = s.split(',').map((t) => t.trim()).filter(Boolean);
    for (const t of items) {
      if (!(EVENT_TYPES as readonly string[]).includes(t)) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, message: `unknown event type "${t}"` });
        return z.NEVER;
      }
    }
    return items as EventType[];
  })
  .describe('Comma-separated event types (e.g. `order.funded,order.completed`); default all');

export const ListEventsQuery = z.object({
  limit: queryNumber(z.number().int().min(1).max(100), { integer: true }).default(20).describe('Page size, 1..100 (default 20)'),
  cursor: Cursor.optional(),
  type: TypeList.optional(),
  resource_type: ResourceType.optional(),
  resource_id: Uuid.optional().describe('Only events of this resource'),
});

export const StreamEventsQuery = z.object({
  type: TypeList.optional(),
  resource_type: ResourceType.optional(),
  resource_id: Uuid.optional(),
  last_event_id: EventPosition.optional().describe(
    'Resume after this position (for clients that cannot send the Last-Event-ID header on their first connection); the header wins',
  ),
});

export const STREAM_HEARTBEAT_SECONDS = 15;

/**
 * The last message of a stream the server ends on purpose (issue 20): `event: stream.closed`, no `id`
 * (so Last-Event-ID stays the position of the last event), `data: StreamClosed` JSON. Not an Event.
 */
export const STREAM_CLOSED_EVENT = 'stream.closed';
export const STREAM_CLOSE_REASONS = ['credential_revoked', 'access_changed', 'replay_limit'] as const;
export const StreamClosed = named(
  'StreamClosed',
  z.object({
    reason: z
      .enum(STREAM_CLOSE_REASONS)
      .describe(
        '`credential_revoked`: the credential was revoked or expired, or its user is gone (reconnecting gets 401); ' +
          '`access_changed`: what the credential may see changed (e.g. it lost the admin role): reconnect to get the new view; ' +
          '`replay_limit`: the replay reached its bound with more events waiting: reconnect with Last-Event-ID (or page GET /events)',
      ),
    detail: z.string(),
  }),
  'Why the server ended the stream (data of the final `stream.closed` message)',
);
export type StreamClosed = z.infer<typeof StreamClosed>;

/** Defaults of the stream limits (server EVENTS_STREAM_* variables). */
export const STREAM_DEFAULTS = {
  /** open streams per user (per replica); one more answers 429 rate-limited */
  maxPerUser: 5,
  /** events one connection replays after Last-Event-ID before it ends with `replay_limit` */
  replayMax: 1000,
  /** seconds between re-checks of the stream's credential */
  recheckSeconds: 30,
} as const;

/** The body of the stream: endless `text/event-stream` text. */
export const EventStream = named('EventStream', z.string(), 'An endless text/event-stream of Event (id: position, event: type, data: JSON)');

const listEvents = routeErrors(access.user('events:read'), []);
const streamEvents = routeErrors(access.user('events:read'), []);

export const events = c.router({
  listEvents: {
    method: 'GET',
    path: '/events',
    query: ListEventsQuery,
    summary: 'List the caller\'s events',
    description:
      'Events of resources the caller is a party of (an admin credential: every event), newest first, cursor ' +
      'pagination. A personal access token sees only the event types its scopes can read: `chat:read` for ' +
      '`message.*`, `wallet:read` for `deposit.*` and `withdrawal.*`, `orders:read` for `order.*`, `listings:read` ' +
      'for `listing.*` and `review.*`, `webhooks:manage` for `webhook.*`, `orders:read` for `tip.*`, `profile:read` for `user.*` (other events are left out whole). Also the way to read history older than a ' +
      'stream replays (EVENTS_STREAM_REPLAY_MAX). Limit 1..100, default 20. Filters: `type` (comma-separated event types), `resource_type`, ' +
      '`resource_id`. An order\'s `allowed_actions` is empty in events (it depends on the caller; GET the order). ' +
      'Events are kept EVENTS_RETENTION_DAYS (default 30) days; the newest event of each resource is kept ' +
      'longer, so its `sequence` never restarts, and the money events revenue reports read (REVENUE_LEDGER_EVENTS: ' +
      'releases, claims, refunds, splits, accepted settlements, tips) are never deleted.',
    responses: { 200: EventPage, ...listEvents.responses },
    metadata: listEvents.metadata,
  },
  streamEvents: {
    method: 'GET',
    path: '/events/stream',
    query: StreamEventsQuery,
    headers: z.object({
      'last-event-id': EventPosition.optional().describe('Resume after this position (EventSource sends it on reconnect)'),
    }),
    summary: 'Live stream of the caller\'s events (Server-Sent Events)',
    description:
      '`text/event-stream` (WHATWG HTML "Server-sent events"). Each event is `id: <position>`, `event: <type>`, ' +
      '`data: <the Event as JSON>`. With `Last-Event-ID` (or `last_event_id`) the stream first replays every ' +
      'visible event after that position, then continues live: across a reconnect nothing is lost and nothing ' +
      `is repeated (a position older than the retention period resumes at the oldest event kept). Without it, the stream starts at the present. A comment line (\`: heartbeat\`) every ` +
      `${STREAM_HEARTBEAT_SECONDS} s keeps proxies from closing an idle connection; \`retry: 2000\` tells ` +
      'EventSource to reconnect after 2 s. On shutdown the server ends the stream cleanly (the client ' +
      'reconnects to another replica with Last-Event-ID). Same visibility, scope filtering and filters as GET /events. ' +
      'Browsers authenticate with the session cookie (EventSource sends no Authorization header).\n\n' +
      `Limits: at most EVENTS_STREAM_MAX_PER_USER (default ${STREAM_DEFAULTS.maxPerUser}) open streams per user on one server ` +
      '(all the user\'s credentials together; one more answers 429 rate-limited). A replay sends at most ' +
      `EVENTS_STREAM_REPLAY_MAX (default ${STREAM_DEFAULTS.replayMax}) events; with more waiting the stream ends with ` +
      '`stream.closed` reason `replay_limit`: reconnect with Last-Event-ID (EventSource does) or page GET /events for ' +
      'older history. A client that does not read its stream is disconnected once too many events wait for it ' +
      '(it resumes with Last-Event-ID).\n\n' +
      'Revocation: the stream\'s credential is checked again every EVENTS_STREAM_RECHECK_SECONDS ' +
      `(default ${STREAM_DEFAULTS.recheckSeconds} s; at once when it is revoked through the server that holds the stream). ` +
      'A credential revoked or expired, or whose user is gone, ends the stream with a final message ' +
      '`event: stream.closed` (no `id`) whose `data` is StreamClosed with reason `credential_revoked` (reconnecting ' +
      'gets 401); a credential whose view changed (its user lost the admin role) ends it with `access_changed` ' +
      '(reconnect for the new view).',
    responses: {
      200: c.otherResponse({ contentType: 'text/event-stream', body: EventStream }),
      ...streamEvents.responses,
    },
    metadata: streamEvents.metadata,
  },
});
