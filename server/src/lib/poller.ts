/**
 * A background pass repeated on a timer, never overlapping itself: the shared loop of the payment
 * watcher, the reconciler and the custody worker.
 *
 * `start(intervalMs)` runs `pass` every `intervalMs` milliseconds (and once at once when `immediate`);
 * `intervalMs = 0` runs only that first pass. A tick that finds the previous pass still running is
 * skipped. A pass that throws is reported to `onError` and the loop goes on. The timer is unref'd, so
 * it never keeps the process alive. `stop()` clears the timer and waits for a running pass.
 * `actor`: the loop's name; each pass runs as that system actor (lib/request-context.ts `withSystemActor`),
 * also a pass `trigger`ed from a request handler, so what it writes (the audit log) names the loop.
 */
import { withSystemActor } from './request-context.js';

export class Poller {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private started = false;

  constructor(
    private readonly pass: () => Promise<unknown>,
    private readonly onError: (err: unknown) => void,
    private readonly options: { immediate?: boolean; actor?: string } = {},
  ) {}

  /** True while a pass is running. */
  get busy(): boolean {
    return this.running !== null;
  }

  /** Start the loop (a no-op when already started); `intervalMs` in milliseconds, 0 = first pass only. */
  start(intervalMs: number): void {
    if (this.started) return;
    this.started = true;
    if (this.options.immediate) this.tick();
    if (intervalMs > 0) {
      this.timer = setInterval(() => this.tick(), intervalMs);
      this.timer.unref?.();
    }
  }

  /**
   * Change the interval of a started loop (ms; 0 = no timer, passes only on `trigger`); the next
   * tick is `intervalMs` from now. A no-op when stopped (the next `start` sets its own).
   */
  reschedule(intervalMs: number): void {
    if (!this.started) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (intervalMs > 0) {
      this.timer = setInterval(() => this.tick(), intervalMs);
      this.timer.unref?.();
    }
  }

  /** Stop the loop and wait for the pass in progress, if any. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.started = false;
    await this.running;
  }

  /**
   * Run a pass now (outside the timer), e.g. when new work was announced; when one is running, one more
   * pass follows it, so work announced during a pass is never left to the next tick. No-op when stopped.
   */
  trigger(): void {
    if (!this.started) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.tick();
  }

  private again = false;

  private tick(): void {
    if (this.running) return;
    let pass: Promise<unknown>;
    try {
      const actor = this.options.actor;
      pass = actor ? withSystemActor(actor, () => this.pass()) : this.pass(); // starts now, as a direct call would
    } catch (err) {
      pass = Promise.reject(err);
    }
    this.running = pass
      .catch((err) => this.onError(err))
      .finally(() => {
        this.running = null;
        if (this.again && this.started) {
          this.again = false;
          this.tick();
        }
      });
  }
}
