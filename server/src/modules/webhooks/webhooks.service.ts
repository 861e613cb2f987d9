/**
 * Webhook endpoint rules: the owner manages their endpoints (anyone else: 404, existence not
 * disclosed), at most `maxPerUser` of them (409 webhook-limit-reached); marketplace-wide endpoints need
 * an admin credential (403); URLs pass the SSRF guard (400 webhook-url-refused); the secret (`whsec_` +
 * 24 random bytes, base64) is returned only by create and rotate.
 *
 * An endpoint is tied to the credential that created or last re-enabled it (issue 20): a personal
 * access token (its scopes filter the events; revoked or expired: the worker disables the endpoint) or
 * an API key (revoked: disabled); a session ties it to the user alone.
 */
import { randomBytes } from 'node:crypto';
import type { EventType } from '@bazaar/contract';
import { DomainError } from '../../errors.js';
import { decodeCursor, newestPage, cursorKey } from '../../lib/cursor.js';
import type { AccessPrincipal } from '../auth/index.js';
import { assertWebhookUrl } from './ssrf.js';
import { EndpointLimitReached, type EndpointRecord, type WebhooksRepo } from './webhooks.repo.js';

/** The caller with its credential: a personal access token's id, an API key's id (both absent: a session). */
export type WebhookPrincipal = AccessPrincipal & { tokenId?: string | null; apiKeyId?: string | null };

/** The credential columns of an endpoint made or re-enabled by `p`. */
const tieTo = (p: WebhookPrincipal) => ({ tokenId: p.tokenId ?? null, apiKeyId: p.tokenId ? null : (p.apiKeyId ?? null) });

export const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

const notFound = (id: string) => new DomainError('not-found', `Webhook ${id} not found.`);

export function createWebhooksService(deps: {
  repo: WebhooksRepo;
  allowPrivateUrls: boolean;
  now?: () => Date;
  /** wake the worker (re-enable, redeliver) */
  wake?: () => void;
  /** test seam: DNS */
  resolve?: (host: string) => Promise<string[]>;
  /** endpoints per user (default 16, WEBHOOK_DEFAULTS.maxPerUser) */
  maxPerUser?: number;
}) {
  const { repo } = deps;
  const now = deps.now ?? (() => new Date());
  const checkUrl = (url: string) => assertWebhookUrl(url, deps.allowPrivateUrls, deps.resolve);

  function owner(p: WebhookPrincipal): string {
    if (!p.userId) throw new DomainError('forbidden', 'Webhooks belong to a user: use a user credential (a service API key acts as no user).');
    return p.userId;
  }

  async function own(p: WebhookPrincipal, id: string): Promise<EndpointRecord> {
    const e = await repo.getEndpoint(id);
    if (!e || !p.userId || e.ownerId !== p.userId) throw notFound(id);
    return e;
  }

  return {
    async create(p: WebhookPrincipal, b: { url: string; event_types?: EventType[]; description?: string; marketplace_wide?: boolean }) {
      const ownerId = owner(p);
      if (b.marketplace_wide && !p.isAdmin) throw new DomainError('forbidden', 'Marketplace-wide webhooks need an admin credential.');
      await checkUrl(b.url);
      const limit = deps.maxPerUser ?? 16;
      try {
        return await repo.createEndpointCapped(
          {
            ownerId,
            marketplaceWide: !!b.marketplace_wide,
            url: b.url,
            description: b.description ?? '',
            eventTypes: [...new Set(b.event_types ?? [])],
            secret: newSecret(),
            ...tieTo(p),
          },
          limit,
        );
      } catch (err) {
        if (err instanceof EndpointLimitReached) {
          throw new DomainError('webhook-limit-reached', `A user may register at most ${limit} webhook endpoints; delete one first.`, { limit });
        }
        throw err;
      }
    },

    async list(p: WebhookPrincipal, q: { limit: number; cursor?: string }) {
      const spec = { sort: 'created_desc', filters: {}, keys: [cursorKey.timestamp] };
      const after = q.cursor ? (({ keys, id }) => ({ createdAt: new Date(String(keys[0])), id }))(decodeCursor(q.cursor, spec)) : undefined;
      const rows = await repo.listEndpoints(owner(p), q.limit + 1, after);
      return newestPage(rows, q.limit, spec);
    },

    get: own,

    async update(p: WebhookPrincipal, id: string, b: { url?: string; event_types?: EventType[]; description?: string; enabled?: boolean }) {
      const e = await own(p, id);
      if (b.url !== undefined) await checkUrl(b.url);
      const reenable = b.enabled === true && !e.enabled;
      if (reenable && e.marketplaceWide && !p.isAdmin) throw new DomainError('forbidden', 'Re-enabling a marketplace-wide webhook needs an admin credential.');
      const updated = await repo.updateEndpoint(id, {
        ...(b.url !== undefined ? { url: b.url } : {}),
        ...(b.description !== undefined ? { description: b.description } : {}),
        ...(b.event_types !== undefined ? { eventTypes: [...new Set(b.event_types)] } : {}),
        ...(b.enabled !== undefined ? { enabled: b.enabled, disabledReason: null } : {}),
        // re-enabled: tied to the credential that re-enables it (the old one may be revoked)
        ...(reenable ? { failingSince: null, ...tieTo(p) } : {}),
      });
      if (reenable) {
        await repo.resumeEndpoint(id, now());
        deps.wake?.();
      }
      return updated;
    },

    async remove(p: WebhookPrincipal, id: string) {
      const e = await own(p, id);
      await repo.deleteEndpoint(id);
      return e;
    },

    async rotate(p: WebhookPrincipal, id: string) {
      await own(p, id);
      return repo.updateEndpoint(id, { secret: newSecret() });
    },

    async deliveries(p: WebhookPrincipal, id: string, q: { limit: number; cursor?: string; status?: string }) {
      await own(p, id);
      const spec = { sort: 'created_desc', filters: { status: q.status }, keys: [cursorKey.timestamp] };
      const after = q.cursor ? (({ keys, id: i }) => ({ createdAt: new Date(String(keys[0])), id: i }))(decodeCursor(q.cursor, spec)) : undefined;
      const rows = await repo.listDeliveries(id, q.status, q.limit + 1, after);
      return newestPage(rows, q.limit, spec);
    },

    async redeliver(p: WebhookPrincipal, id: string, deliveryId: string) {
      await own(p, id);
      const d = await repo.getDelivery(deliveryId);
      if (!d || d.endpointId !== id) throw new DomainError('not-found', `Delivery ${deliveryId} not found.`);
      await repo.requeue(deliveryId, now());
      deps.wake?.();
      return (await repo.getDelivery(deliveryId))!;
    },
  };
}

export type WebhooksService = ReturnType<typeof createWebhooksService>;
