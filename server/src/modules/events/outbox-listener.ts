/**
 * Cross-replica wake-up of the outbox readers (issue 14): every event-writing transaction ends with
 * `pg_notify(OUTBOX_CHANNEL, '')` (outbox.ts `appendEvents`), which PostgreSQL delivers at commit to
 * every session that LISTENs on the channel, i.e. to every replica. This listener holds one dedicated
 * connection (`pg.Client`, outside the pool) with `LISTEN bazaar_events`, and turns each notification
 * into `notifyAppended()`, the in-process signal the SSE hub and the webhook worker already wake on.
 * Their polls stay as the fallback (a notification is lost while this connection is down).
 *
 * The connection is re-opened with exponential back-off (250 ms doubling to 30 s) when it fails or
 * the server ends it; each (re)connection also wakes the readers once, for what was committed while
 * nobody listened. PGlite (one process) needs none of this: the in-process signal reaches everything.
 */
import type pg from 'pg';
import { newPgClient } from '../../db/host-list.js';
import { OUTBOX_CHANNEL, notifyAppended } from './outbox.js';
import type { Log } from '../../lib/log.js';

export interface OutboxListenerOptions {
  /** `postgres://…` of the database the events are written to */
  connectionString: string;
  log?: Pick<Log, 'info' | 'warn'>;
  /** reconnect delays, ms (default 250 .. 30 000) */
  backoff?: { initialMs: number; maxMs: number };
}

export class OutboxListener {
  private client: pg.Client | null = null;
  private stopped = true;
  private attempt = 0;
  private timer: NodeJS.Timeout | null = null;
  private live = false;

  constructor(private readonly o: OutboxListenerOptions) {}

  /** True while the LISTEN connection is up. */
  get listening(): boolean {
    return this.live;
  }

  /** Open the LISTEN connection (retried in the background until it works). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.attempt = 0;
    void this.connect();
  }

  /** Close the connection and stop reconnecting. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.live = false;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const c = this.client;
    this.client = null;
    await c?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    // db/host-list.ts: a host-list DATABASE_URL is followed to the read-write server after a failover
    const client = newPgClient(this.o.connectionString, { application_name: 'bazaar-outbox-listener' });
    this.client = client;
    let failed = false;
    const fail = (err?: unknown) => {
      if (failed || this.client !== client) return;
      failed = true;
      this.client = null;
      const wasLive = this.live;
      this.live = false;
      client.end().catch(() => undefined);
      if (this.stopped) return;
      const { initialMs, maxMs } = this.o.backoff ?? { initialMs: 250, maxMs: 30_000 };
      const delay = Math.min(maxMs, initialMs * 2 ** Math.min(this.attempt, 30));
      this.attempt += 1;
      this.o.log?.warn({ err: err ? String(err) : undefined, retry_in_ms: delay, was_listening: wasLive }, 'outbox listener disconnected; polling covers until it is back');
      this.timer = setTimeout(() => {
        this.timer = null;
        if (!this.stopped) void this.connect();
      }, delay);
      this.timer.unref?.();
    };
    client.on('error', fail);
    client.on('end', () => fail(new Error('connection ended')));
    client.on('notification', (n) => {
      if (n.channel === OUTBOX_CHANNEL) notifyAppended();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
    } catch (err) {
      fail(err);
      return;
    }
    if (this.client !== client) return; // stopped meanwhile
    this.live = true;
    this.attempt = 0;
    notifyAppended(); // what other replicas committed while nobody listened
  }
}
