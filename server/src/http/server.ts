/**
 * The Node HTTP server around the Express app: its limits, its socket-level errors, and its drain.
 *
 * Limits (config.ts HTTP_*; they are passed to http.createServer, because Node 20 applies headersTimeout
 * and requestTimeout to new connections only from the creation options: setting the properties after
 * creation left connections that never send a byte open indefinitely, measured):
 * - headersTimeoutMs: request line + headers must arrive within it (408 request-timeout); a connection that
 *   never sends a byte is closed after twice that (slowloris). Node's checker sees a connection only once its
 *   parser has started a message (measured on Node 20.20 and 24.21: a fresh silent connection stayed open, one
 *   that reused a pooled parser was closed), so the server arms an idle timer of its own on every new socket and
 *   disarms it when the first request arrives; the margin leaves a started request to Node's 408;
 * - requestTimeoutMs: the whole request (headers + body) must arrive within it; a Content-Length
 *   larger than what is sent ends there with 408 request-timeout (server processing time is not
 *   counted: the timer stops when the request is fully received);
 * - keepAliveTimeoutMs: a keep-alive connection idle longer between requests is closed;
 * - maxConnections: connections beyond it are closed as soon as they are accepted;
 * - timeoutCheckIntervalMs: how often Node checks the two timeouts (their granularity).
 * Request line + headers are limited to Node's 16 kB (max-http-header-size).
 *
 * Errors Node raises before a request reaches Express ('clientError') are answered with
 * problem+json and `Connection: close` instead of Node's bare status line: 431
 * header-fields-too-large (URL or headers over 16 kB), 408 request-timeout, 400 malformed-request
 * (unparseable HTTP). Their `instance` is `urn:uuid:<request_id>` (the path may be what was too long).
 *
 * drain(): stop accepting (server.close), answer every request still arriving on open connections
 * with `Connection: close`, close idle keep-alive connections (at once and every 100 ms while
 * draining), and resolve when the last connection has closed.
 */
import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';
import { PROBLEM_CONTENT_TYPE, problemTypes, problemTypeUri, type ProblemSlug } from '@bazaar/contract';
import type { HttpLimits } from '../config.js';
import type { Logger } from '../logger.js';

export interface HttpServer {
  server: Server;
  /** true once drain() was called */
  draining(): boolean;
  /** stop accepting, finish in-flight requests, close keep-alive connections; resolves when all are closed */
  drain(): Promise<void>;
  /** destroy every connection (the drain deadline passed) */
  destroyAll(): void;
}

/** The raw HTTP/1.1 response of a problem, written straight to a socket (no Express, no request). */
export function rawProblemResponse(slug: ProblemSlug, detail: string): string {
  const { status, title } = problemTypes[slug];
  const requestId = randomUUID();
  const body = JSON.stringify({
    type: problemTypeUri(slug),
    title,
    status,
    detail,
    instance: `urn:uuid:${requestId}`,
    request_id: requestId,
  });
  return (
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? title}\r\n` +
    `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\n` +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    `X-Request-Id: ${requestId}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

function clientErrorProblem(code: string | undefined, limits: HttpLimits): [ProblemSlug, string] {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return ['header-fields-too-large', 'The request line and headers exceed 16 kB.'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [
        'request-timeout',
        `The request was not received completely within ${limits.requestTimeoutMs} ms (headers within ${limits.headersTimeoutMs} ms); check Content-Length.`,
      ];
    default:
      return ['malformed-request', `The request is not valid HTTP/1.1 (${code ?? 'parse error'}).`];
  }
}

/** http.createServer(app) with `limits`, problem+json for client errors, and a drain. */
export function createHttpServer(app: Express, limits: HttpLimits, log: Logger): HttpServer {
  let draining = false;
  const silentConnectionMs = 2 * limits.headersTimeoutMs;
  const inflight = new Set<ServerResponse>();
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    // a request arrived: the silent-connection timer is done (Node's own keep-alive timer takes over after it)
    if (req.socket.timeout === silentConnectionMs) req.socket.setTimeout(0);
    inflight.add(res);
    res.once('close', () => inflight.delete(res));
    if (draining) res.setHeader('Connection', 'close');
    app(req, res);
  };
  const server = http.createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: limits.requestTimeoutMs,
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.timeoutCheckIntervalMs,
    },
    handler,
  );
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // a connection that never sends a byte (see headersTimeoutMs above): Node's socket 'timeout' handler destroys a
  // socket with no request and no response on it
  server.on('connection', (socket: Socket) => socket.setTimeout(silentConnectionMs));
  server.maxConnections = limits.maxConnections;
  server.on('drop', (data) => log.warn({ remote: data?.remoteAddress, max: limits.maxConnections }, 'connection refused: HTTP_MAX_CONNECTIONS reached'));

  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    const res = (socket as Duplex & { _httpMessage?: ServerResponse })._httpMessage;
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || !socket.writable || res?.headersSent) {
      socket.destroy();
      return;
    }
    const [slug, detail] = clientErrorProblem(err.code, limits);
    log.info({ code: err.code, slug }, 'client error answered before routing');
    socket.end(rawProblemResponse(slug, detail));
  });

  let closed: Promise<void> | null = null;
  return {
    server,
    draining: () => draining,
    drain() {
      closed ??= new Promise<void>((resolve) => {
        draining = true;
        // responses not started yet close their connection when done
        for (const res of inflight) if (!res.headersSent) res.setHeader('Connection', 'close');
        const sweep = setInterval(() => server.closeIdleConnections(), 100);
        server.close(() => {
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      });
      return closed;
    },
    destroyAll() {
      server.closeAllConnections();
    },
  };
}
