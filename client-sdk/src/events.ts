/**
 * `@bazaar/client-sdk/events`: follow the caller's events (GET /api/v1/events/stream, Server-Sent
 * Events) in a browser or in Node 18+, with resume.
 *
 * Uses `fetch` (so an `Authorization: Bearer` token or a personal access token can be sent, which
 * the browser's EventSource cannot) and `eventsource-parser`. On a dropped connection or a server
 * shutdown it reconnects after the server's `retry` delay (2 s), sending `Last-Event-ID` = the
 * position of the last event handed to `onEvent`: nothing lost, nothing twice. A replay longer than the
 * server's bound ends with `stream.closed` (`replay_limit`) and is resumed at once. Stop with
 * `signal` (AbortController). `onEvent` may be async: events are handed over one at a time, in order.
 *
 *   const stop = new AbortController();
 *   await followEvents({ baseUrl, token, types: ['order.funded'], signal: stop.signal,
 *     onEvent: (e) => { if (e.type === 'order.funded') console.log(e.data.order_id); } });
 */
import { createParser } from 'eventsource-parser';
import type { Event, EventType, STREAM_CLOSED_EVENT, StreamClosed } from '@bazaar/contract';

/** the contract's STREAM_CLOSED_EVENT, without loading the contract (zod) at run time */
const STREAM_CLOSED: typeof STREAM_CLOSED_EVENT = 'stream.closed';

export interface FollowEventsOptions {
  /** service origin, e.g. http://localhost:3000 */
  baseUrl: string;
  /** access token (JWT) or personal access token (scope events:read); omit to use the browser's session cookie */
  token?: string;
  /** only these event types (default all) */
  types?: EventType[];
  resourceType?: Event['resource_type'];
  resourceId?: string;
  /** resume after this position (a previous event's `position`); default: from now on */
  lastEventId?: string;
  onEvent: (e: Event) => void | Promise<void>;
  /**
   * called when the server ends the stream with its final `stream.closed` message (reason
   * `credential_revoked`, `access_changed` or `replay_limit`); following goes on (a revoked credential
   * then fails with 401)
   */
  onClosed?: (why: StreamClosed) => void;
  /** called on each connection failure before the retry (default: ignore) */
  onError?: (err: unknown) => void;
  signal?: AbortSignal;
  /** custom fetch (tests, proxies) */
  fetch?: typeof fetch;
  /** reconnect delay in ms until the server sends its own `retry` (default 2000) */
  retryMs?: number;
}

/** Follow the stream until `signal` aborts; resolves then. Returns the last position handed out. */
export async function followEvents(o: FollowEventsOptions): Promise<string | undefined> {
  const doFetch = o.fetch ?? fetch;
  let last = o.lastEventId;
  let retryMs = o.retryMs ?? 2000;
  const url = new URL('/api/v1/events/stream', o.baseUrl);
  if (o.types?.length) url.searchParams.set('type', o.types.join(','));
  if (o.resourceType) url.searchParams.set('resource_type', o.resourceType);
  if (o.resourceId) url.searchParams.set('resource_id', o.resourceId);
  while (!o.signal?.aborted) {
    let closed: StreamClosed | null = null;
    try {
      const headers: Record<string, string> = { accept: 'text/event-stream' };
      if (o.token) headers.authorization = `Bearer ${o.token}`;
      if (last !== undefined) headers['last-event-id'] = last;
      const res = await doFetch(url, { headers, signal: o.signal, credentials: o.token ? 'omit' : 'include' });
      if (res.status === 401 || res.status === 403 || res.status === 400) {
        throw Object.assign(new Error(`event stream refused: ${res.status} ${await res.text()}`), { fatal: true });
      }
      if (!res.ok || !res.body) throw new Error(`event stream answered ${res.status}`);
      const queue: Event[] = [];
      const parser = createParser({
        onEvent: (m) => {
          if (m.event === STREAM_CLOSED) {
            // the server ended the stream on purpose: a replay bound reconnects at once; a revoked
            // credential gets 401 on the reconnect (fatal); a changed view reconnects to the new one
            closed = JSON.parse(m.data) as StreamClosed;
            o.onClosed?.(closed);
            return;
          }
          if (m.data) queue.push(JSON.parse(m.data) as Event);
        },
        onRetry: (ms) => (retryMs = ms),
      });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        parser.feed(value);
        while (queue.length) {
          const e = queue.shift()!;
          await o.onEvent(e);
          last = e.position;
        }
      }
    } catch (err) {
      if (o.signal?.aborted) break;
      if ((err as { fatal?: boolean }).fatal) throw err;
      o.onError?.(err);
    }
    if (o.signal?.aborted) break;
    // more replay is waiting: resume at once from the last position
    if ((closed as StreamClosed | null)?.reason === 'replay_limit') continue;
    await new Promise((r) => setTimeout(r, retryMs));
  }
  return last;
}
