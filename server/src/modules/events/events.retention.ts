/**
 * Events retention: events (and the webhook deliveries of them) are kept `retentionDays` days, as
 * Stripe keeps events 30 days; after that GET /events no longer lists them and a stream resumed from an
 * older Last-Event-ID starts at the oldest event kept.
 *
 * A pass deletes in batches (`batch` rows per statement, so no long lock) events older than the cutoff,
 * except:
 *  - what a consumer still needs: each `holdBack()` returns the lowest position it will read (the webhook
 *    worker: its oldest pending delivery, or the first event not fanned out yet);
 *  - the newest event of each resource, so the per-resource `sequence` continues (1, 2, ... never restarts).
 * Runs hourly on the process that holds the background lease; `retentionDays = 0` keeps everything.
 */
import { Poller } from '../../lib/poller.js';
import type { Log } from '../../lib/log.js';
import type { EventsRepo } from './events.repo.js';

export interface EventRetentionOptions {
  repo: Pick<EventsRepo, 'purgeBefore'>;
  /** days events are kept (whole days, > 0) */
  retentionDays: number;
  /** lowest positions consumers still need (each is kept, with every later event) */
  holdBack?: ReadonlyArray<() => Promise<bigint>>;
  /** other stores pruned with the same cutoff (e.g. finished webhook deliveries); each returns rows deleted */
  alsoPurge?: ReadonlyArray<(cutoff: Date, batch: number) => Promise<number>>;
  /** rows per DELETE statement (default 5000) */
  batch?: number;
  now?: () => Date;
  log?: Pick<Log, 'info' | 'error'>;
}

export interface RetentionPass {
  /** events deleted */
  events: number;
  /** rows deleted by `alsoPurge` */
  other: number;
}

export class EventRetention {
  private readonly poller = new Poller(
    () => this.runOnce(),
    (err) => this.o.log?.error({ err }, 'events retention pass failed'),
    { immediate: true, actor: 'event-retention' },
  );

  constructor(private readonly o: EventRetentionOptions) {
    if (!(o.retentionDays > 0)) throw new RangeError('retentionDays must be > 0');
  }

  /** One pass: delete until nothing older than the cutoff is left to delete. */
  async runOnce(): Promise<RetentionPass> {
    const now = (this.o.now ?? (() => new Date()))();
    const cutoff = new Date(now.getTime() - this.o.retentionDays * 86_400_000);
    const batch = this.o.batch ?? 5000;
    let keepFrom = 9223372036854775807n;
    for (const need of this.o.holdBack ?? []) {
      const seq = await need();
      if (seq < keepFrom) keepFrom = seq;
    }
    const out: RetentionPass = { events: 0, other: 0 };
    for (;;) {
      const n = await this.o.repo.purgeBefore(cutoff, keepFrom, batch);
      out.events += n;
      if (n < batch) break;
    }
    for (const purge of this.o.alsoPurge ?? []) {
      for (;;) {
        const n = await purge(cutoff, batch);
        out.other += n;
        if (n < batch) break;
      }
    }
    if (out.events + out.other > 0) this.o.log?.info({ ...out, cutoff }, 'events retention');
    return out;
  }

  /** Start the hourly pass (the first one at once). */
  start(intervalMs = 3_600_000): void {
    this.poller.start(intervalMs);
  }

  async stop(): Promise<void> {
    await this.poller.stop();
  }
}
