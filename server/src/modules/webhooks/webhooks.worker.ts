/**
 * The webhook worker: one pass = fan out new events into deliveries (repo.fanOut), then claim due
 * deliveries (FOR UPDATE SKIP LOCKED, safe with several replicas) and attempt them, up to
 * `concurrency` at once. Runs every `intervalMs` and at once when this process commits events.
 *
 * Retry schedule (exponential back-off with ±20 % jitter): RETRY_DELAYS_MS, then every 4 h, until
 * GIVE_UP_AFTER_MS (3 days) after the delivery was created: then `failed`. An endpoint whose attempts
 * all failed for DISABLE_AFTER_MS (3 days, its `failing_since`) is disabled with a webhook.disabled
 * event. Every attempt is logged (status code, error, duration). Each pass first disables the endpoints
 * whose credential was revoked (or marketplace-wide ones whose creator lost admin): see webhooks.repo.ts.
 */
import type { Explorer } from '../../lib/explorer.js';
import { Poller } from '../../lib/poller.js';
import type { Log } from '../../lib/log.js';
import { outboxSignal } from '../events/index.js';
import { toEventDto } from '../events/index.js';
import { presentWebhook } from './webhooks.presenter.js';
import type { ClaimedDelivery, WebhooksRepo } from './webhooks.repo.js';
import { sendWebhook, type AttemptOutcome, type SendInput } from './webhooks.sender.js';

/** Delays before attempts 2, 3, ... (ms); after the list, the last value repeats. */
export const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000];
export const GIVE_UP_AFTER_MS = 3 * 86_400_000;
export const DISABLE_AFTER_MS = 3 * 86_400_000;

export interface WebhookWorkerOptions {
  /** the explorer links of each delivered event (lib/explorer.ts), added before it is signed; absent: none */
  explorer?: Pick<Explorer, 'explorerUrl'>;
  timeoutMs: number;
  intervalMs: number;
  concurrency: number;
  allowPrivate: boolean;
  retryDelaysMs?: readonly number[];
  giveUpAfterMs?: number;
  disableAfterMs?: number;
  /** jitter fraction (default 0.2: ±20 %) */
  jitter?: number;
  now?: () => Date;
  log?: Log;
  /** test seam: the HTTP attempt */
  send?: (i: SendInput) => Promise<AttemptOutcome>;
  /** told of each attempt's outcome (metrics.ts `bazaar_webhook_attempts_total`) */
  onAttempt?: (outcome: 'delivered' | 'retry' | 'failed') => void;
}

/** Delay before the attempt after `attempts` failed ones, with jitter. */
export function retryDelay(attempts: number, delays: readonly number[], jitter: number, random = Math.random): number {
  const base = delays[Math.min(attempts - 1, delays.length - 1)] ?? delays[delays.length - 1]!;
  return Math.round(base * (1 - jitter + 2 * jitter * random()));
}

export class WebhookWorker {
  private readonly poller: Poller;
  private readonly wake = () => this.poller.trigger();
  private readonly now: () => Date;

  constructor(
    private readonly repo: WebhooksRepo,
    private readonly o: WebhookWorkerOptions,
  ) {
    this.now = o.now ?? (() => new Date());
    this.poller = new Poller(
      () => this.runOnce(),
      (err) => o.log?.error({ err }, 'webhook pass failed'),
      { immediate: true, actor: 'webhook-worker' },
    );
  }

  start(): void {
    if (this.o.intervalMs <= 0) return;
    outboxSignal.on('appended', this.wake);
    this.poller.start(this.o.intervalMs);
  }

  async stop(): Promise<void> {
    outboxSignal.off('appended', this.wake);
    await this.poller.stop();
  }

  /** Wake the worker now (e.g. after a redelivery was queued). */
  trigger(): void {
    this.poller.trigger();
  }

  /**
   * Disable the endpoints that lost their credential's authority (issue 20), fan out everything new, then
   * attempt what is due until nothing is; returns the attempts made. One delivery's failure to be
   * recorded (e.g. its endpoint deleted meanwhile) is logged and never fails the pass for the others.
   */
  async runOnce(): Promise<number> {
    const off = await this.repo.disableUnauthorized(this.now(), presentWebhook);
    for (const e of off) this.o.log?.warn({ webhook_id: e.id, because: e.because }, 'webhook endpoint disabled: its credential no longer authorises it');
    while ((await this.repo.fanOut(500, this.now())) > 0);
    let attempts = 0;
    for (;;) {
      const now = this.now();
      const claimed = await this.repo.claimDue(this.o.concurrency, now, new Date(now.getTime() + this.o.timeoutMs + 30_000));
      if (claimed.length === 0) return attempts;
      const accepted: Array<{ id: string; statusCode: number | null; durationMs: number; at: Date }> = [];
      await Promise.all(
        claimed.map((d) =>
          this.attempt(d, accepted).catch((err) => this.o.log?.error({ err, webhook_id: d.endpointId, delivery_id: d.id }, 'webhook attempt not recorded (retried after its lease)')),
        ),
      );
      // the accepted ones of the batch in one statement (a crash before it: they are sent again, at least once)
      try {
        await this.repo.recordSuccesses(accepted);
      } catch (err) {
        // one at a time, so one bad row costs only its own delivery
        this.o.log?.warn({ err }, 'recording a batch of accepted webhook deliveries failed; recording them one by one');
        for (const a of accepted) {
          await this.repo.recordSuccesses([a]).catch((e) => this.o.log?.error({ err: e, delivery_id: a.id }, 'webhook delivery not recorded (sent again after its lease)'));
        }
      }
      attempts += claimed.length;
    }
  }

  private async attempt(d: ClaimedDelivery, accepted: Array<{ id: string; statusCode: number | null; durationMs: number; at: Date }>): Promise<void> {
    const payload = JSON.stringify(toEventDto(d.event, this.o.explorer));
    const send = this.o.send ?? sendWebhook;
    const outcome = await send({ url: d.url, secret: d.secret, eventId: d.eventId, payload, timeoutMs: this.o.timeoutMs, allowPrivate: this.o.allowPrivate, now: this.now });
    const at = this.now();
    if (outcome.ok) {
      accepted.push({ id: d.id, statusCode: outcome.statusCode, durationMs: outcome.durationMs, at });
      this.o.onAttempt?.('delivered');
      return;
    }
    const giveUp = at.getTime() - d.createdAt.getTime() >= (this.o.giveUpAfterMs ?? GIVE_UP_AFTER_MS);
    this.o.onAttempt?.(giveUp ? 'failed' : 'retry');
    const delay = retryDelay(d.attempts, this.o.retryDelaysMs ?? RETRY_DELAYS_MS, this.o.jitter ?? 0.2);
    const endpoint = await this.repo.getEndpoint(d.endpointId);
    const failingFor = endpoint?.failingSince ? at.getTime() - endpoint.failingSince.getTime() : 0;
    const disable =
      failingFor >= (this.o.disableAfterMs ?? DISABLE_AFTER_MS)
        ? { reason: `every delivery failed for ${Math.round(failingFor / 3_600_000)} h (last: ${outcome.error})`, present: presentWebhook }
        : null;
    await this.repo.recordAttempt(
      d,
      { ...outcome, at },
      { status: giveUp ? 'failed' : 'pending', nextAttemptAt: new Date(at.getTime() + delay) },
      disable,
    );
    if (disable) this.o.log?.warn({ webhook_id: d.endpointId }, 'webhook endpoint disabled after sustained failure');
  }
}
