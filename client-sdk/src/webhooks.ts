/**
 * `@bazaar/client-sdk/webhooks`: verify a webhook request from Bazaar (Standard Webhooks v1, with the
 * `standardwebhooks` package) and get the typed Event.
 *
 *   app.post('/bazaar', express.raw({ type: 'application/json' }), (req, res) => {
 *     const event = verifyWebhook(req.body, req.headers, process.env.BAZAAR_WEBHOOK_SECRET!);
 *     if (event.type === 'order.funded') ship(event.data.order_id);
 *     res.sendStatus(204);   // 2xx within the timeout, else Bazaar retries
 *   });
 *
 * Pass the body exactly as received (bytes or string: the signature covers them). Deduplicate on
 * `event.event_id` (= the `webhook-id` header): delivery is at least once.
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { Event } from '@bazaar/contract';

export { WebhookVerificationError };

type Headers = Record<string, string | string[] | undefined> | { get(name: string): string | null };

function plain(h: Headers): Record<string, string> {
  const get = (n: string) => ('get' in h && typeof h.get === 'function' ? h.get(n) : (h as Record<string, string | string[] | undefined>)[n]);
  const one = (v: unknown) => (Array.isArray(v) ? v[0] : v) as string | undefined;
  return {
    'webhook-id': one(get('webhook-id')) ?? '',
    'webhook-timestamp': one(get('webhook-timestamp')) ?? '',
    'webhook-signature': one(get('webhook-signature')) ?? '',
  };
}

/**
 * The Event of a verified webhook request. Throws WebhookVerificationError when the signature does not
 * match `secret` (`whsec_…`), a header is missing, or the timestamp is more than 5 minutes off.
 */
export function verifyWebhook(body: string | Uint8Array, headers: Headers, secret: string): Event {
  const payload = typeof body === 'string' ? body : new TextDecoder().decode(body);
  new Webhook(secret).verify(payload, plain(headers));
  return JSON.parse(payload) as Event;
}
