/**
 * A minimal Server-Sent Events client for tests: connects with headers, parses `id`/`event`/`data`
 * blocks (WHATWG HTML §9.2.6) and collects them; `close()` drops the connection.
 */
import http from 'node:http';

export interface SseMessage {
  id: string | null;
  event: string;
  data: string;
}

export interface SseConnection {
  status: number;
  headers: http.IncomingHttpHeaders;
  messages: SseMessage[];
  comments: string[];
  /** resolves when at least `n` messages arrived (rejects after `ms`) */
  waitFor(n: number, ms?: number): Promise<SseMessage[]>;
  /** resolves when the server ended the stream */
  ended: Promise<void>;
  close(): void;
}

export function connectSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers: { accept: 'text/event-stream', ...headers } }, (res) => {
      const messages: SseMessage[] = [];
      const comments: string[] = [];
      const waiters: Array<() => void> = [];
      let buf = '';
      let endResolve!: () => void;
      const ended = new Promise<void>((r) => (endResolve = r));
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buf += chunk;
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          let id: string | null = null;
          let event = 'message';
          const data: string[] = [];
          let any = false;
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) comments.push(line.slice(1).trim());
            else if (line.startsWith('id: ')) (id = line.slice(4)), (any = true);
            else if (line.startsWith('event: ')) (event = line.slice(7)), (any = true);
            else if (line.startsWith('data: ')) data.push(line.slice(6)), (any = true);
          }
          if (any && data.length) messages.push({ id, event, data: data.join('\n') });
        }
        for (const w of waiters.splice(0)) w();
      });
      res.on('end', () => endResolve());
      res.on('close', () => endResolve());
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        messages,
        comments,
        ended,
        close: () => req.destroy(),
        waitFor(n: number, ms = 10_000) {
          return new Promise((ok, fail) => {
            const timer = setTimeout(() => fail(new Error(`only ${messages.length} of ${n} SSE messages after ${ms} ms`)), ms);
            const check = () => {
              if (messages.length >= n) {
                clearTimeout(timer);
                ok(messages.slice());
              } else waiters.push(check);
            };
            check();
          });
        },
      });
    });
    req.on('error', reject);
  });
}
