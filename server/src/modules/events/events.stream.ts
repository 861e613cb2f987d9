/**
 * The live event stream (Server-Sent Events, WHATWG HTML §9.2) of GET /api/v1/events/stream.
 *
 * One `EventHub` per process follows the events table: it reads every event after its position
 * (ascending seq, i.e. commit order: see outbox.ts) when woken by a local commit (`outboxSignal`) or
 * every `pollMs` (commits of other replicas), and hands each to the subscribed streams that may see it.
 *
 * A stream that resumes (`Last-Event-ID` / `last_event_id`) subscribes first (buffering live events),
 * then replays from the database everything visible after that position, then sends the buffer minus
 * what the replay already sent (seq <= the last one sent): nothing lost, nothing twice. A stream that
 * does not resume starts with the events committed from its subscription on.
 *
 * Each event goes out as `id: <seq>`, `event: <type>`, `data: <Event JSON>`; a comment heartbeat
 * every STREAM_HEARTBEAT_SECONDS; `retry: 2000` first. A client too slow to take its events (more than
 * `maxBuffered` waiting) is disconnected; it resumes with Last-Event-ID. `closeAll()` (shutdown) ends
 * every stream cleanly so the HTTP server can drain.
 */
import type { Request, Response } from 'express';
import { STREAM_HEARTBEAT_SECONDS } from '@bazaar/contract';
import { Poller } from '../../lib/poller.js';
import { matches, toEventDto, type EventFilter, type EventRecord, type EventsRepo, type EventViewer } from './events.repo.js';
import { outboxSignal } from './outbox.js';

type Log = { warn: (...a: unknown[]) => void; error: (...a: unknown[]) => void };

interface Subscriber {
  viewer: EventViewer;
  filter: EventFilter;
  deliver: (e: EventRecord) => void;
}

export interface EventHubOptions {
  /** poll period for other replicas' commits, ms (default 1000) */
  pollMs?: number;
  /** heartbeat comment period, ms (default STREAM_HEARTBEAT_SECONDS) */
  heartbeatMs?: number;
  log?: Log;
}

export class EventHub {
  private position: bigint | null = null;
  private readonly subscribers = new Set<Subscriber>();
  private readonly streams = new Set<() => void>();
  private readonly poller: Poller;
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
      { immediate: true },
    );
  }

  /** Start following the table (from its current head). */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.position ??= await this.repo.head();
    outboxSignal.on('appended', this.wake);
    this.poller.start(this.opts.pollMs ?? 1000);
  }

  /** Stop following and end every open stream. */
  async stop(): Promise<void> {
    this.running = false;
    outboxSignal.off('appended', this.wake);
    this.closeAll();
    await this.poller.stop();
  }

  /** The hub's position: every event up to it has been handed out. */
  get head(): bigint | null {
    return this.position;
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
    for (const end of [...this.streams]) end();
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
   * Serve one SSE stream on `res` for `viewer` (resuming after `lastEventId` when given). Resolves
   * when the stream ends (client gone, too slow, or closeAll).
   */
  async serve(req: Request, res: Response, viewer: EventViewer, filter: EventFilter, lastEventId: bigint | null, maxBuffered = 10_000): Promise<void> {
    res.status(200);
    res.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    res.setHeader('Cache-Control', 'no-cache, no-transform');
    res.setHeader('Connection', 'keep-alive');
    res.setHeader('X-Accel-Buffering', 'no');
    res.flushHeaders();
    res.write('retry: 2000\n\n');
    req.socket.setTimeout(0);
    req.socket.setNoDelay(true);

    let ended = false;
    let lastSent = lastEventId ?? -1n;
    let replaying = lastEventId !== null;
    const buffered: EventRecord[] = [];
    let done!: () => void;
    const finished = new Promise<void>((r) => (done = r));

    const write = (e: EventRecord) => {
      if (e.seq <= lastSent) return;
      lastSent = e.seq;
      res.write(`id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(toEventDto(e))}\n\n`);
    };
    const end = () => {
      if (ended) return;
      ended = true;
      unsubscribe();
      clearInterval(heartbeat);
      this.streams.delete(end);
      res.end();
      done();
    };
    const unsubscribe = this.subscribe({
      viewer,
      filter,
      deliver: (e) => {
        if (ended) return;
        if (replaying) {
          buffered.push(e);
          if (buffered.length > maxBuffered) end();
          return;
        }
        if (res.writableLength > 1_000_000) {
          this.opts.log?.warn({ position: String(e.seq) }, 'event stream client too slow; disconnected (it resumes with Last-Event-ID)');
          end();
          return;
        }
        write(e);
      },
    });
    const heartbeat = setInterval(() => res.write(': heartbeat\n\n'), this.opts.heartbeatMs ?? STREAM_HEARTBEAT_SECONDS * 1000);
    heartbeat.unref?.();
    this.streams.add(end);
    // the client went away (res 'close' fires when the connection closes before or after the end)
    res.on('close', end);
    res.on('error', end);

    if (lastEventId !== null) {
      try {
        for (;;) {
          const batch = await this.repo.readAfter(lastSent, 500, viewer, filter);
          for (const e of batch) write(e);
          if (batch.length < 500 || ended) break;
        }
      } catch (err) {
        this.opts.log?.error({ err }, 'event stream replay failed');
        end();
      }
      replaying = false;
      for (const e of buffered.splice(0)) if (!ended) write(e);
    }
    return finished;
  }
}
