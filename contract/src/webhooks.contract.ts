/**
 * Webhooks (issue 11): a user registers an HTTPS endpoint and receives the events it may see
 * (events.contract.ts), each POSTed as the Event JSON and signed per Standard Webhooks v1
 * (https://www.standardwebhooks.com): headers `webhook-id` (the event_id: deduplicate on it),
 * `webhook-timestamp` (unix seconds) and `webhook-signature` (`v1,<base64 HMAC-SHA256>` with the
 * endpoint's `whsec_` secret). Verify with the `standardwebhooks` package or the SDK's
 * `verifyWebhook`.
 *
 * Delivery: at least once. A 2xx answer within the timeout accepts a delivery; anything else is retried
 * with exponential back-off and jitter (5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 2 h, then every 4 h)
 * for about 3 days, then given up (`failed`). Events of one resource reach an endpoint in order: a
 * later event waits while an earlier one is being retried. An endpoint that has failed every attempt
 * for 3 days is disabled (`enabled: false`, `disabled_reason`) and its owner gets a `webhook.disabled`
 * event; PATCH `enabled: true` re-enables it (pending deliveries resume).
 *
 * URLs: http or https, no credentials in them; refused (400 webhook-url-refused) when the host resolves
 * to a loopback, private, link-local, CGNAT, multicast or otherwise non-public address (SSRF), unless the
 * operator allows private addresses (WEBHOOK_ALLOW_PRIVATE_URLS, on under `npm start` for localhost
 * receivers). The address is checked again at every delivery. The receiver must answer within
 * WEBHOOK_TIMEOUT_MS (default 10 s); its response body is read up to 64 KiB (kept in the log up to 1 KiB).
 *
 * Who: a user manages their own endpoints (404 for others'), at most WEBHOOK_MAX_PER_USER (default 16;
 * one more: 409 webhook-limit-reached). `marketplace_wide: true` (admin credential only, else 403)
 * receives every event of the marketplace while its creator is still an admin (checked at every fan-out;
 * an admin API key: while the key is not revoked and still admin).
 *
 * Credentials (issue 20): an endpoint created with a personal access token (or an API key) is tied to it.
 * It receives only the events that token may read (events.contract.ts: `chat:read` for `message.*`,
 * `wallet:read` for `deposit.*` and `withdrawal.*`, ...); when the token is revoked or expires (the key
 * revoked, or a marketplace-wide endpoint's creator no longer admin) the endpoint is disabled
 * (`disabled_reason` says why) and its owner gets `webhook.disabled`; pending deliveries are not sent.
 * Re-enabling an endpoint (PATCH `enabled: true`) ties it to the credential that re-enables it. Endpoints created
 * with a session (JWT) are tied to the user only.
 */
import { z } from 'zod';
import { c, named, PaginationQuery, page, safeText, Timestamp, Uuid } from './common.js';
import { EventType } from './event-types.js';
import { access } from './access.js';
import { bodyProblems, routeErrors } from './problems.js';

export const WebhookUrl = z
  .string()
  .max(2048)
  .url()
  .describe('http(s) URL the events are POSTed to (no user:password; must resolve to a public address)');

export const WebhookEndpoint = named(
  'WebhookEndpoint',
  z.object({
    webhook_id: Uuid,
    url: z.string(),
    description: z.string(),
    event_types: z.array(EventType).describe('Event types delivered; empty: every type'),
    marketplace_wide: z.boolean().describe('Every event of the marketplace (admin endpoints), else the owner\'s events'),
    enabled: z.boolean(),
    disabled_reason: z.string().nullable().describe('Why the service disabled it (null while enabled or disabled by the owner)'),
    created_at: Timestamp,
    updated_at: Timestamp,
  }),
  'A registered webhook endpoint (the secret is shown only on creation and rotation)',
);
export type WebhookEndpoint = z.infer<typeof WebhookEndpoint>;

export const WebhookWithSecret = named(
  'WebhookWithSecret',
  WebhookEndpoint.extend({
    secret: z.string().regex(/^whsec_[A-Za-z0-9+/=]+$/).describe('Signing secret (`whsec_<base64>`), shown once: store it'),
  }),
);

export const CreateWebhookBody = named(
  'CreateWebhookBody',
  z
    .object({
      url: WebhookUrl,
      event_types: z.array(EventType).max(50).optional().describe('Types to deliver; omitted or empty: every type'),
      description: safeText(z.string().trim().max(500)).optional(),
      marketplace_wide: z.boolean().optional().describe('Admin credential only (else 403): every event of the marketplace'),
    })
    .strict(),
);

export const UpdateWebhookBody = named(
  'UpdateWebhookBody',
  z
    .object({
      url: WebhookUrl.optional(),
      event_types: z.array(EventType).max(50).optional(),
      description: safeText(z.string().trim().max(500)).optional(),
      enabled: z.boolean().optional().describe('false pauses deliveries; true re-enables (also after an automatic disable)'),
    })
    .strict(),
);

export const WebhookAttempt = named(
  'WebhookAttempt',
  z.object({
    status_code: z.number().int().nullable().describe('HTTP status of the receiver\'s answer; null when none came'),
    error: z.string().nullable().describe('Why the attempt failed (timeout, connection refused, refused address, non-2xx)'),
    duration_ms: z.number().int().min(0),
    at: Timestamp,
  }),
);

export const WebhookDelivery = named(
  'WebhookDelivery',
  z.object({
    delivery_id: Uuid,
    event_id: Uuid,
    event_type: EventType,
    status: z.enum(['pending', 'delivered', 'failed']).describe('pending: not yet accepted (retrying); delivered: a 2xx came; failed: given up'),
    attempts: z.number().int().min(0),
    next_attempt_at: Timestamp.nullable().describe('When the next attempt is due (pending only)'),
    last_status_code: z.number().int().nullable(),
    last_error: z.string().nullable(),
    last_duration_ms: z.number().int().nullable(),
    delivered_at: Timestamp.nullable(),
    created_at: Timestamp,
    attempt_log: z.array(WebhookAttempt).describe('Every attempt, oldest first (at most the last 20)'),
  }),
  'One event to one endpoint, with its attempts',
);

export const WebhookPage = named('WebhookPage', page(WebhookEndpoint));
export const WebhookDeliveryPage = named('WebhookDeliveryPage', page(WebhookDelivery));

const WebhookParams = z.object({ webhook_id: Uuid });
const DeliveryParams = z.object({ webhook_id: Uuid, delivery_id: Uuid });

const create = routeErrors(access.user('webhooks:manage'), [...bodyProblems, 'forbidden', 'webhook-url-refused', 'webhook-limit-reached'], { actors: ['owner', 'admin'] });
const list = routeErrors(access.user('webhooks:manage'), []);
const get = routeErrors(access.user('webhooks:manage'), ['not-found']);
const update = routeErrors(access.user('webhooks:manage'), [...bodyProblems, 'forbidden', 'not-found', 'webhook-url-refused']);
const remove = routeErrors(access.user('webhooks:manage'), ['not-found']);
const rotate = routeErrors(access.user('webhooks:manage'), ['not-found']);
const deliveries = routeErrors(access.user('webhooks:manage'), ['not-found']);
const redeliver = routeErrors(access.user('webhooks:manage'), ['not-found']);

export const webhooks = c.router({
  createWebhook: {
    method: 'POST',
    path: '/webhooks',
    body: CreateWebhookBody,
    summary: 'Register a webhook endpoint',
    description:
      'Returns 201 with the endpoint and its signing `secret` (shown once). 400 webhook-url-refused when the URL ' +
      'resolves to a non-public address (unless the operator allows it) or is not http(s). `marketplace_wide` ' +
      'needs an admin credential (403). Deliveries start with the next event. 409 webhook-limit-reached when the ' +
      'user already has WEBHOOK_MAX_PER_USER (default 16) endpoints. Created with a personal access token, the ' +
      'endpoint is tied to it: it receives only the event types the token\'s scopes may read and is disabled when ' +
      'the token is revoked or expires.',
    responses: { 201: WebhookWithSecret, ...create.responses },
    metadata: create.metadata,
  },
  listWebhooks: {
    method: 'GET',
    path: '/webhooks',
    query: PaginationQuery,
    summary: 'List the caller\'s webhook endpoints',
    description: 'Newest first, cursor pagination (limit 1..100, default 20). Secrets are not shown.',
    responses: { 200: WebhookPage, ...list.responses },
    metadata: list.metadata,
  },
  getWebhook: {
    method: 'GET',
    path: '/webhooks/:webhook_id',
    pathParams: WebhookParams,
    summary: 'Get a webhook endpoint',
    description: 'The owner only (404 for anyone else).',
    responses: { 200: WebhookEndpoint, ...get.responses },
    metadata: get.metadata,
  },
  updateWebhook: {
    method: 'PATCH',
    path: '/webhooks/:webhook_id',
    pathParams: WebhookParams,
    body: UpdateWebhookBody,
    summary: 'Change a webhook endpoint',
    description:
      'URL, event types, description, enabled. Re-enabling resumes pending deliveries at once and ties the endpoint ' +
      'to the credential that re-enables it (a marketplace-wide endpoint needs an admin credential for it: 403).',
    responses: { 200: WebhookEndpoint, ...update.responses },
    metadata: update.metadata,
  },
  deleteWebhook: {
    method: 'DELETE',
    path: '/webhooks/:webhook_id',
    pathParams: WebhookParams,
    body: c.noBody(),
    summary: 'Delete a webhook endpoint',
    description: 'Deletes the endpoint and its delivery log; pending deliveries are dropped. 200 with the deleted endpoint.',
    responses: { 200: WebhookEndpoint, ...remove.responses },
    metadata: remove.metadata,
  },
  rotateWebhookSecret: {
    method: 'POST',
    path: '/webhooks/:webhook_id/rotate_secret',
    pathParams: WebhookParams,
    body: c.noBody(),
    summary: 'Rotate the signing secret',
    description: 'A new secret (shown once) signs every delivery from now on; the old one stops at once.',
    responses: { 200: WebhookWithSecret, ...rotate.responses },
    metadata: rotate.metadata,
  },
  listWebhookDeliveries: {
    method: 'GET',
    path: '/webhooks/:webhook_id/deliveries',
    pathParams: WebhookParams,
    query: PaginationQuery.extend({ status: z.enum(['pending', 'delivered', 'failed']).optional() }),
    summary: 'Delivery log of an endpoint',
    description: 'Deliveries newest first with their attempts (status code, error, duration). Owner only.',
    responses: { 200: WebhookDeliveryPage, ...deliveries.responses },
    metadata: deliveries.metadata,
  },
  redeliverWebhook: {
    method: 'POST',
    path: '/webhooks/:webhook_id/deliveries/:delivery_id/redeliver',
    pathParams: DeliveryParams,
    body: c.noBody(),
    summary: 'Deliver an event again',
    description:
      'Queues the delivery for an attempt now (also a delivered or failed one: the receiver deduplicates on ' +
      '`webhook-id`). 202 with the delivery.',
    responses: { 202: WebhookDelivery, ...redeliver.responses },
    metadata: redeliver.metadata,
  },
});
