/**
 * Webhooks module wiring (issue 11): endpoints CRUD, the delivery worker.
 *
 *   const webhooks = createWebhooksModule({ db, settings: config.webhooks, log });
 *   await webhooks.start();   // the worker: fan-out + deliveries every intervalMs and on local commits
 *   await webhooks.stop();
 */
import type { EventEmitter } from 'node:events';
import type { PrismaClient } from '../../generated/prisma/client.js';
import { WEBHOOK_DEFAULTS, type WebhookSettings } from '../../config.js';
import { createWebhooksRepo } from './webhooks.repo.js';
import { createWebhooksService } from './webhooks.service.js';
import { WebhookWorker, type WebhookWorkerOptions } from './webhooks.worker.js';
import type { Log } from '../../lib/log.js';

export { createWebhooksRepo, EndpointLimitReached, type WebhooksRepo, type RevokedBecause } from './webhooks.repo.js';
export { createWebhooksService, type WebhooksService } from './webhooks.service.js';
export { WebhookWorker, retryDelay, RETRY_DELAYS_MS } from './webhooks.worker.js';
export { presentWebhook, presentDelivery } from './webhooks.presenter.js';
export { assertWebhookUrl, refusedAddress } from './ssrf.js';
export { sendWebhook, signedHeaders } from './webhooks.sender.js';

export interface WebhooksModuleOptions {
  db: PrismaClient;
  settings?: WebhookSettings;
  log?: Log;
  now?: () => Date;
  /** test seams: worker options (retry delays, give-up and disable thresholds, send) and DNS */
  worker?: Partial<WebhookWorkerOptions>;
  resolve?: (host: string) => Promise<string[]>;
  /** emits `'changed'` with a credential key when one is revoked on this process (auth credentialSignal): the worker runs at once */
  credentialChanges?: EventEmitter;
}

export function createWebhooksModule(o: WebhooksModuleOptions) {
  const settings: WebhookSettings = o.settings ?? { allowPrivateUrls: false, ...WEBHOOK_DEFAULTS };
  const repo = createWebhooksRepo(o.db);
  const worker = new WebhookWorker(repo, {
    timeoutMs: settings.timeoutMs,
    intervalMs: settings.intervalMs,
    concurrency: settings.concurrency,
    allowPrivate: settings.allowPrivateUrls,
    now: o.now,
    log: o.log,
    ...o.worker,
  });
  const service = createWebhooksService({
    repo,
    allowPrivateUrls: settings.allowPrivateUrls,
    now: o.now,
    wake: () => worker.trigger(),
    resolve: o.resolve,
    maxPerUser: settings.maxPerUser ?? WEBHOOK_DEFAULTS.maxPerUser,
  });
  // a revocation here: disable the endpoints tied to it now, not at the next pass
  const onChanged = () => worker.trigger();
  return {
    repo,
    service,
    worker,
    http: { service },
    async start() {
      worker.start();
      o.credentialChanges?.off('changed', onChanged);
      o.credentialChanges?.on('changed', onChanged);
    },
    async stop() {
      o.credentialChanges?.off('changed', onChanged);
      await worker.stop();
    },
  };
}

export type WebhooksModule = ReturnType<typeof createWebhooksModule>;
