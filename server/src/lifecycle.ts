/**
 * Process lifecycle: graceful stop on SIGTERM/SIGINT, from the first line of start-up on.
 *
 * The entry point (main.ts when run directly, scripts/start.ts for `npm start`) creates a Lifecycle and
 * installs the signal handlers BEFORE any start-up work (database, migrations, chain, listen, start-up
 * reconciliation). A signal at any point runs the registered stop function once: the server drains,
 * workers stop, the database closes. Start-up code calls `checkpoint()` between its steps and stops
 * there (StartAborted) once a stop began, so a SIGTERM one second after launch exits 0 instead of
 * killing the process mid-migration.
 *
 * Deadline: the stop must finish within `deadlineMs` (SHUTDOWN_TIMEOUT_MS, 25 s by default, below the
 * usual 30 s of a container orchestrator's grace period). Exit code 0 when it did, 1 when the deadline
 * passed (then `onDeadline` runs, e.g. destroying the connections still open) or the stop threw.
 * Repeated signals are ignored (npm/tsx relay a terminal's Ctrl-C a second time): the deadline bounds
 * the wait.
 */
import type { Log } from './lib/log.js';

/** Thrown by checkpoint() once a stop began; the entry point then waits for the stop to finish. */
export class StartAborted extends Error {
  constructor() {
    super('start-up aborted: the process is stopping');
    this.name = 'StartAborted';
  }
}

type StopFn = () => Promise<void>;

export class Lifecycle {
  private stops: StopFn[] = [];
  private stopping: Promise<number> | null = null;
  private onDeadline: (() => void) | null = null;

  constructor(
    private readonly log: Log,
    /** stop deadline, ms */
    readonly deadlineMs: number,
  ) {}

  /** True once stop() was called. */
  get isStopping(): boolean {
    return this.stopping !== null;
  }

  /** Register work to do on stop; stop functions run in reverse order of registration, one after another. */
  onStop(fn: StopFn): void {
    this.stops.push(fn);
  }

  /** What to do when the deadline passes (e.g. destroy open connections). */
  setDeadlineAction(fn: () => void): void {
    this.onDeadline = fn;
  }

  /** Throw StartAborted when a stop began (call it between start-up steps). */
  checkpoint(): void {
    if (this.stopping) throw new StartAborted();
  }

  /** Stop once (later calls return the same promise). Resolves to the exit code: 0 done in time, 1 otherwise. */
  stop(reason: string): Promise<number> {
    this.stopping ??= (async () => {
      const started = Date.now();
      this.log.info({ reason, deadline_ms: this.deadlineMs }, 'stopping');
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<number>((resolve) => {
        timer = setTimeout(() => {
          this.log.error({ deadline_ms: this.deadlineMs }, 'stop deadline exceeded; closing what is left');
          try {
            this.onDeadline?.();
          } catch {
            // best effort
          }
          resolve(1);
        }, this.deadlineMs);
      });
      const work = (async () => {
        for (const fn of [...this.stops].reverse()) await fn();
        return 0;
      })().catch((err) => {
        this.log.error({ err }, 'stop failed');
        return 1;
      });
      const code = await Promise.race([work, deadline]);
      clearTimeout(timer);
      this.log.info({ ms: Date.now() - started, exit_code: code }, 'stopped');
      return code;
    })();
    return this.stopping;
  }

  /**
   * SIGTERM and SIGINT -> stop(), then `exit(code)`. Call before any start-up work. Returns a function
   * removing the handlers.
   */
  installSignalHandlers(exit: (code: number) => void = (code) => process.exit(code)): () => void {
    const onSignal = (sig: NodeJS.Signals) => {
      if (this.stopping) {
        this.log.warn({ signal: sig }, 'already stopping');
        return;
      }
      void this.stop(sig).then(exit);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
    return () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    };
  }
}
