/**
 * Webhook records -> the contract's JSON (WebhookEndpoint, WebhookDelivery).
 */
import type { WebhookEndpoint } from '@bazaar/contract';
import type { DeliveryRecord, EndpointRecord } from './webhooks.repo.js';

export function presentWebhook(e: EndpointRecord): WebhookEndpoint {
  return {
    webhook_id: e.id,
    url: e.url,
    description: e.description,
    event_types: e.eventTypes,
    marketplace_wide: e.marketplaceWide,
    enabled: e.enabled,
    disabled_reason: e.disabledReason,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}

export function presentDelivery(d: DeliveryRecord) {
  return {
    delivery_id: d.id,
    event_id: d.eventId,
    event_type: d.eventType,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.status === 'pending' ? d.nextAttemptAt.toISOString() : null,
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
    last_duration_ms: d.lastDurationMs,
    delivered_at: d.deliveredAt ? d.deliveredAt.toISOString() : null,
    created_at: d.createdAt.toISOString(),
    attempt_log: d.attemptLog.map((a) => ({ status_code: a.statusCode, error: a.error, duration_ms: a.durationMs, at: a.createdAt.toISOString() })),
  };
}
