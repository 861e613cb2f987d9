/**
 * TipWatcher: the background check of pending tips (leader loops, server/src/composition.ts), so a tip
 * the buyer sent from her own wallet is confirmed too, and one never sent expires. One pass at a time;
 * `stop()` awaits the pass in progress.
 */
import type { TipsService } from './tips.service.js';
import type { Log } from './tips.types.js';
import { withSystemActor } from '../../lib/request-context.js';

export class TipWatcher {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(private readonly o: { service: Pick<TipsService, 'checkPending'>; log?: Log }) {}

  /** One pass now (awaited); errors are logged, never thrown. */
  async runOnce(): Promise<{ confirmed: number; expired: number } | null> {
    if (this.running) await this.running.catch(() => undefined);
    // the loop's own actor (audit log), also when a test or the leader's start-up calls it
    const pass = withSystemActor('tip-watcher', () => this.o.service.checkPending()).catch((err) => {
      this.o.log?.error({ err }, 'tip check failed');
      return null;
    });
    this.running = pass;
    try {
      return await pass;
    } finally {
      if (this.running === pass) this.running = null;
    }
  }

  start(intervalMs: number): void {
    this.stopTimer();
    if (intervalMs <= 0) return;
    this.timer = setInterval(() => {
      if (!this.running) void this.runOnce();
    }, intervalMs);
    this.timer.unref?.();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  async stop(): Promise<void> {
    this.stopTimer();
    await this.running?.catch(() => undefined);
  }
}
