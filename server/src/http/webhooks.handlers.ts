/**
 * ts-rest handlers of `contract.webhooks`. Rules live in modules/webhooks.
 */
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import { DomainError } from '../errors.js';
import type { Principal } from '../modules/auth/index.js';
import { presentDelivery, presentWebhook, type WebhooksService } from '../modules/webhooks/index.js';
import type { WebhookPrincipal } from '../modules/webhooks/webhooks.service.js';

export interface WebhooksHttpDeps {
  service: WebhooksService;
}

/** The caller with its credential (an endpoint is tied to the token or key that creates it). */
function principalOf(req: unknown): WebhookPrincipal {
  const p = (req as { principal?: Principal }).principal;
  if (!p) throw new DomainError('unauthorized', 'No credential was sent.');
  return {
    userId: p.userId ?? null,
    isAdmin: !!p.isAdmin,
    tokenId: p.kind === 'pat' ? (p.tokenId ?? null) : null,
    apiKeyId: p.kind === 'api_key' ? (p.apiKeyId ?? null) : null,
  };
}

export function webhooksHandlers(deps: WebhooksHttpDeps) {
  const s = initServer();
  const { service } = deps;
  const withSecret = (e: Parameters<typeof presentWebhook>[0]) => ({ ...presentWebhook(e), secret: e.secret });
  return s.router(contract.webhooks, {
    createWebhook: async ({ body, req }) => ({ status: 201 as const, body: withSecret(await service.create(principalOf(req), body)) }),
    listWebhooks: async ({ query, req }) => {
      const page = await service.list(principalOf(req), query);
      return { status: 200 as const, body: { data: page.items.map(presentWebhook), next_cursor: page.nextCursor } };
    },
    getWebhook: async ({ params, req }) => ({ status: 200 as const, body: presentWebhook(await service.get(principalOf(req), params.webhook_id)) }),
    updateWebhook: async ({ params, body, req }) => ({
      status: 200 as const,
      body: presentWebhook(await service.update(principalOf(req), params.webhook_id, body)),
    }),
    deleteWebhook: async ({ params, req }) => ({ status: 200 as const, body: presentWebhook(await service.remove(principalOf(req), params.webhook_id)) }),
    rotateWebhookSecret: async ({ params, req }) => ({ status: 200 as const, body: withSecret(await service.rotate(principalOf(req), params.webhook_id)) }),
    listWebhookDeliveries: async ({ params, query, req }) => {
      const page = await service.deliveries(principalOf(req), params.webhook_id, query);
      return { status: 200 as const, body: { data: page.items.map(presentDelivery), next_cursor: page.nextCursor } };
    },
    redeliverWebhook: async ({ params, req }) => ({
      status: 202 as const,
      body: presentDelivery(await service.redeliver(principalOf(req), params.webhook_id, params.delivery_id)),
    }),
  });
}
