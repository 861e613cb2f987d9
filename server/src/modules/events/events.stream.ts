/**
 * The live event stream (Server-Sent Events, WHATWG HTML §9.2) of GET /api/v1/events/stream.
 *
 * One `EventHub` per process follows the events table: it reads every event after its position
 * (ascending seq, i.e. commit order: see outbox.ts) when woken by a local commit (`outboxSignal`) or
 * every `pollMs` (commits of other replicas), and hands each to the subscribed streams that may see it.
 *
 * A stream that resumes (`Last-Event-ID` / `last_event_id`) subscribes first (buffering live events),
 * then replays from the database what is visible after that position, then sends the buffer minus
 * what the replay already sent (seq <= the last one sent): nothing lost, nothing twice. A stream that
 * does not resume starts with the events committed from its subscription on.
 *
 * Limits (issue 20):
 *  - at most `maxPerUser` open streams per user on this process (a user-less API key: per key); one
 *    more answers 429 rate-limited before any byte of the stream;
 *  - backpressure: a write the socket does not take at once (`res.write` false) pauses the stream until
 *    `drain`; events meanwhile wait in a queue of at most `maxBuffered`, beyond which the client is
 *    disconnected (it resumes with Last-Event-ID); the replay waits for `drain` the same way;
 *  - a replay sends at most `replayMax` events: with more waiting, the stream ends with the final
 *    `stream.closed` message (reason `replay_limit`) and the client reconnects from its last id (or
 *    pages GET /events for older history);
 *  - the caller is re-checked every `recheckMs` and at once on `revalidate(credential)` (the auth module's
 *    revocation signal on this process): a credential that no longer authenticates ends the stream with
 *    `stream.closed` `credential_revoked`, one whose view changed (admin role lost, other scopes) with
 *    `access_changed`. Revocation on another replica is seen by the timer (it is in the database).
 *
 * Each event goes out as `id: <seq>`, `event: <type>`, `data: <Event JSON>`; a comment heartbeat
 * every STREAM_HEARTBEAT_SECONDS; `retry: 2000` first. `closeAll()` (shutdown) ends every stream
 * cleanly so the HTTP server can drain.
 */
import type { Explorer } from '../../lib/explorer.js';
import type { Request, Response } from 'express';
import { STREAM_CLOSED_EVENT, STREAM_DEFAULTS, STREAM_HEARTBEAT_SECONDS, type StreamClosed } from '@bazaar/contract';
import { DomainError } from '../../errors.js';
import { Poller } from '../../lib/poller.js';
import type { Log } from '../../lib/log.js';
import { matches, toEventDto, type EventFilter, type EventRecord, type EventsRepo, type EventViewer } from './events.repo.js';
import { outboxSignal } from './outbox.js';

interface Subscriber {
  viewer: EventViewer;
  filter: EventFilter;
  deliver: (e: EventRecord) => void;
}

/**
 * Who holds a stream: what it may see, and how to check it again later.
 */
export interface StreamAccess {
  viewer: EventViewer;
  /** the cap's key: the user id (every credential of a user counts together); absent = not capped */
  owner?: string;
  /** the credential (auth `credentialKey`: `pat:<id>`, `api_key:<id>`, `user:<id>`) for `revalidate` */
  credential?: string;
  /** re-read the credential: the viewer it has now, or null when it no longer authenticates */
  recheck?: () => Promise<EventViewer | null>;
}

export interface EventHubOptions {
  /** the explorer links of each event sent (lib/explorer.ts); absent: none */
  explorer?: Pick<Explorer, 'explorerUrl'>;
  /** poll period for other replicas' commits, ms (default 1000) */
  pollMs?: number;
  /** heartbeat comment period, ms (default STREAM_HEARTBEAT_SECONDS) */
  heartbeatMs?: number;
  /** open streams per owner on this process (default STREAM_DEFAULTS.maxPerUser); 0 = no cap */
  maxPerUser?: number;
  /** events a replay sends before it ends with `replay_limit` (default STREAM_DEFAULTS.replayMax) */
  replayMax?: number;
  /** period of the credential re-check, ms (default STREAM_DEFAULTS.recheckSeconds s); 0 = only on `revalidate` */
  recheckMs?: number;
  /** events queued for a stream that does not drain before it is disconnected (default 10 000) */
  maxBuffered?: number;
  log?: Pick<Log, 'warn' | 'error'>;
}

interface OpenStream {
  access: StreamAccess;
  close: (why?: StreamClosed) => void;
}

const sameViewer = (a: EventViewer, b: EventViewer) =>
  a.userId === b.userId &&
  a.isAdmin === b.isAdmin &&
  JSON.stringify(a.types ?? null) === JSON.stringify(b.types ?? null) &&
  JSON.stringify(a.operatorTypes ?? []) === JSON.stringify(b.operatorTypes ?? []);

export class EventHub {
  private position: bigint | null = null;
  private readonly subscribers = new Set<Subscriber>();
  private readonly streams = new Set<OpenStream>();
  private readonly perOwner = new Map<string, number>();
  private readonly poller: Poller;
  private readonly rechecker: Poller;
  private running = false;
  private readonly wake = () => this.poller.trigger();
  private readonly listeners = new Set<(e: EventRecord) => void>();

  constructor(
    private readonly repo: EventsRepo,
    private readonly opts: EventHubOptions = {},
  ) {
    this.poller = new Poller(
      () => this.tick(),
      (err) => opts.log?.error({ err }, 'event hub read failed'),
      { immediate: true, actor: 'event-hub' },
    );
    this.rechecker = new Poller(
      () => this.revalidate(),
      (err) => opts.log?.error({ err }, 'event stream credential re-check failed'),
      { actor: 'event-hub' },
    );
  }

  /** Start following the table (from its current head) and re-checking the streams' credentials. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.position ??= await this.repo.head();
    outboxSignal.on('appended', this.wake);
    this.poller.start(this.opts.pollMs ?? 1000);
    const recheckMs = this.opts.recheckMs ?? STREAM_DEFAULTS.recheckSeconds * 1000;
    if (recheckMs > 0) this.rechecker.start(recheckMs);
  }

  /** Stop following and end every open stream. */
  async stop(): Promise<void> {
    this.running = false;
    outboxSignal.off('appended', this.wake);
    this.closeAll();
    await Promise.all([this.poller.stop(), this.rechecker.stop()]);
  }

  /** The hub's position: every event up to it has been handed out. */
  get head(): bigint | null {
    return this.position;
  }

  /** Open streams on this process (all owners). */
  get openStreams(): number {
    return this.streams.size;
  }

  /** Open streams of `owner` (a user id) on this process: what the cap counts. */
  streamsOf(owner: string): number {
    return this.perOwner.get(owner) ?? 0;
  }

  /** Every event the hub reads, in order (the webhook fan-out and tests listen). */
  onEvent(fn: (e: EventRecord) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  subscribe(s: Subscriber): () => void {
    this.subscribers.add(s);
    return () => this.subscribers.delete(s);
  }

  /** End every open stream (server shutdown). */
  closeAll(): void {
    for (const s of [...this.streams]) s.close();
  }

  /**
   * Re-check the credential of the open streams (all, or those of `credential`): a stream whose
   * credential no longer authenticates ends with `credential_revoked`, one whose view changed with
   * `access_changed`. Runs every `recheckMs` and when the auth module signals a revocation here.
   * Returns how many streams it ended.
   */
  async revalidate(credential?: string): Promise<number> {
    const open = [...this.streams].filter((s) => s.access.recheck && (credential === undefined || s.access.credential === credential));
    let ended = 0;
    // a few at a time: the re-check reads the database, the pool is shared with requests
    for (let i = 0; i < open.length; i += 8) {
      await Promise.all(
        open.slice(i, i + 8).map(async (s) => {
          let now: EventViewer | null;
          try {
            now = await s.access.recheck!();
          } catch (err) {
            this.opts.log?.warn({ err }, 'event stream credential re-check failed; kept until the next one');
            return;
          }
          if (!this.streams.has(s)) return;
          if (now === null) {
            s.close({ reason: 'credential_revoked', detail: 'The credential of this stream was revoked or expired.' });
            ended++;
          } else if (!sameViewer(now, s.access.viewer)) {
            s.close({ reason: 'access_changed', detail: 'What this credential may see changed; reconnect to get the new view.' });
            ended++;
          }
        }),
      );
    }
    return ended;
  }

  /** Read and hand out everything after the position; returns how many. */
  async tick(): Promise<number> {
    if (this.position === null) this.position = await this.repo.head();
    let n = 0;
    for (;;) {
      const batch = await this.repo.readAfter(this.position, 500);
      for (const e of batch) {
        this.position = e.seq;
        for (const fn of this.listeners) fn(e);
        for (const s of this.subscribers) if (matches(e, s.viewer, s.filter)) s.deliver(e);
      }
      n += batch.length;
      if (batch.length < 500) return n;
    }
  }

  /**
   * Serve one SSE stream on `res` for `access` (resuming after `lastEventId` when given). Resolves
   * when the stream ends (client gone, too slow, replay bound, credential re-check, or closeAll).
   * Throws DomainError 429 rate-limited, before anything is written, when `access.owner` already holds
   * `maxPerUser` streams here.
   */
  async serve(req: Request, res: Response, access: StreamAccess, filter: EventFilter, lastEventId: bigint | null): Promise<void> {
    const viewer = access.viewer;
    const cap = this.opts.maxPerUser ?? STREAM_DEFAULTS.maxPerUser;
    const maxBuffered = this.opts.maxBuffered ?? 10_000;
    const replayMax = this.opts.replayMax ?? STREAM_DEFAULTS.replayMax;
    const owner = access.owner;
    if (owner !== undefined && cap > 0 && (this.perOwner.get(owner) ?? 0) >= cap) {
      res.setHeader('Retry-After', '5');
      throw new DomainError('rate-limited', `At most ${cap} event streams per user are open at once (EVENTS_STREAM_MAX_PER_USER); close one first.`);
    }
    if (owner !== undefined) this.perOwner.set(owner, (this.perOwner.get(owner) ?? 0) + 1);

    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    req.socket.setTimeout(0);
    req.socket.setNoDelay(true);

    let ended = false;
    let lastSent = lastEventId ?? -1n;
    let replaying = lastEventId !== null;
    /** waiting for 'drain' */
    let paused = false;
    const queue: EventRecord[] = [];
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));

    /** write a chunk; false when the socket buffer is full (then wait for 'drain') */
    const send = (chunk: string): boolean => {
      if (ended) return false;
      if (!res.write(chunk)) paused = true;
      return !paused;
    };
    const format = (e: EventRecord) => `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(toEventDto(e, this.opts.explorer))}\n\n`;
    /** send queued live events until the socket pushes back */
    const flush = () => {
      while (!ended && !paused && !replaying && queue.length) {
        const e = queue.shift()!;
        if (e.seq <= lastSent) continue;
        lastSent = e.seq;
        send(format(e));
      }
    };
    const drained = () => new Promise<void>((r) => {
      res.once('drain', r);
      void finished.then(r);
    });
    const onDrain = () => {
      paused = false;
      flush();
    };
    const end = (why?: StreamClosed) => {
      if (ended) return;
      if (why) res.write(`event: ${STREAM_CLOSED_EVENT}\ndata: ${JSON.stringify(why)}\n\n`);
      ended = true;
      unsubscribe();
      clearInterval(heartbeat);
      this.streams.delete(stream);
      if (owner !== undefined) {
        const n = (this.perOwner.get(owner) ?? 1) - 1;
        if (n > 0) this.perOwner.set(owner, n);
        else this.perOwner.delete(owner);
      }
      res.off('drain', onDrain);
      res.end();
      done();
    };
    const stream: OpenStream = { access, close: end };
    const unsubscribe = this.subscribe({
      viewer,
      filter,
      deliver: (e) => {
        if (ended) return;
        if (replaying || paused || queue.length) {
          queue.push(e);
          if (queue.length > maxBuffered) {
            this.opts.log?.warn({ position: String(e.seq) }, 'event stream client too slow; disconnected (it resumes with Last-Event-ID)');
            end();
          }
          return;
        }
        if (e.seq <= lastSent) return;
        lastSent = e.seq;
        send(format(e));
      },
    });
    const heartbeat = setInterval(() => {
      if (!paused) send(': heartbeat\n\n');
    }, this.opts.heartbeatMs ?? STREAM_HEARTBEAT_SECONDS * 1000);
    heartbeat.unref?.();
    this.streams.add(stream);
    // the client went away (res 'close' fires when the connection closes before or after the end)
    res.on('close', () => end());
    res.on('error', () => end());
    res.on('drain', onDrain);
    send('retry: 2000\n\n');

    if (lastEventId !== null) {
      try {
        let sent = 0;
        for (;;) {
          // one more than the bound allows tells whether more is waiting
          const limit = Math.min(500, replayMax - sent + 1);
          const batch = await this.repo.readAfter(lastSent, limit, viewer, filter);
          for (const e of batch) {
            if (ended) break;
            if (sent === replayMax) {
              // more than the bound is waiting: the client resumes from here on a new connection
              end({ reason: 'replay_limit', detail: `A stream replays at most ${replayMax} events; reconnect with Last-Event-ID ${lastSent} (or page GET /events).` });
              break;
            }
            lastSent = e.seq;
            sent++;
            if (!send(format(e))) await drained();
          }
          if (ended || batch.length < limit) break;
        }
      } catch (err) {
        this.opts.log?.error({ err }, 'event stream replay failed');
        end();
      }
      replaying = false;
      flush();
    }
    return finished;
  }
}
