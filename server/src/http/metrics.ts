/**
 * `GET /metrics`: the Prometheus text exposition (server/src/metrics.ts). An ops route like /healthz,
 * outside the contract (no openapi.json entry, no SDK method). Where it is served (README "Metrics and
 * traces"):
 *
 * - METRICS_PORT set (`npm start`: 9464): a listener of its own on METRICS_HOST (default 127.0.0.1)
 *   serving only /metrics: reachable from the host (or the network the operator binds it to), never
 *   through the public port and its proxy;
 * - METRICS_TOKEN set: also on the main port, to `Authorization: Bearer <METRICS_TOKEN>` only (401
 *   `unauthorized` otherwise, compared in constant time); the metrics port then asks for it too.
 * - neither: not served (404 route-not-found on the main port).
 *
 * `httpMetrics(metrics)` is the middleware that counts every request by method, route TEMPLATE and
 * status (bounded labels: the matched route's path pattern, never the raw URL).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Request, RequestHandler } from 'express';
import { PROBLEM_CONTENT_TYPE } from '@bazaar/contract';
import { UNMATCHED_ROUTE, type Metrics } from '../metrics.js';
import type { Logger } from '../logger.js';

export const METRICS_PATH = '/metrics';

/** Methods used as a label as they are; any other (a client may send anything) counts as OTHER. */
const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * The route label of an answered request: the path pattern of the route that matched (the contract's
 * path, e.g. `/api/v1/listings/:id`, or an ops route), the mount point plus `/*` for a mounted app
 * (the web app's static files), else `(unmatched)`.
 */
export function routeTemplate(req: Request): string {
  const path = req.route?.path;
  if (typeof path === 'string') return `${req.baseUrl ?? ''}${path}`;
  if (req.baseUrl) return `${req.baseUrl}/*`;
  return UNMATCHED_ROUTE;
}

/** Counts each request when its response is done (or its connection closed): count and latency histogram. */
export function httpMetrics(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.once('close', () => {
      const labels = {
        method: KNOWN_METHODS.has(req.method) ? req.method : 'OTHER',
        route: routeTemplate(req),
        status: String(res.statusCode),
      };
      metrics.httpRequests.inc(labels);
      metrics.httpDuration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
}

const digest = (s: string) => createHash('sha256').update(s).digest();

/** Does the Authorization header carry `Bearer <token>`? Constant time in the token's content. */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '');
  return !!m && timingSafeEqual(digest(m[1]!), digest(token));
}

function unauthorized(res: ServerResponse, requestId: string, instance: string): void {
  res.statusCode = 401;
  res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
  res.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
  res.end(
    JSON.stringify({
      type: 'https://bazaar.dev/problems/unauthorized',
      title: 'Unauthorized',
      status: 401,
      detail: 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>.',
      instance,
      request_id: requestId,
    }),
  );
}

async function serve(metrics: Metrics, res: ServerResponse, log: Pick<Logger, 'error'>): Promise<void> {
  try {
    const body = await metrics.scrape();
    res.statusCode = 200;
    res.setHeader('Content-Type', metrics.contentType);
    res.setHeader('Cache-Control', 'no-store');
    res.end(body);
  } catch (err) {
    log.error({ err }, 'metrics scrape failed');
    res.statusCode = 500;
    res.setHeader('Content-Type', 'text/plain; charset=utf-8');
    res.end('metrics scrape failed\n');
  }
}

/** The main app's `GET /metrics` behind `token` (Bearer). */
export function metricsRoute(metrics: Metrics, token: string, log: Pick<Logger, 'error'>): RequestHandler {
  return (req, res) => {
    if (!bearerMatches(req.headers.authorization, token)) {
      unauthorized(res, (req as Request & { id?: string }).id ?? '', METRICS_PATH);
      return;
    }
    void serve(metrics, res, log);
  };
}

export interface MetricsServerOptions {
  metrics: Metrics;
  /** METRICS_TOKEN: when set, the metrics port asks for it too */
  token?: string;
  log: Pick<Logger, 'error'>;
}

/**
 * The metrics listener (METRICS_PORT): answers GET/HEAD /metrics, 404 to anything else, 405 to other
 * methods. The caller listens (`server.listen(port, host)`) and closes it.
 */
export function createMetricsServer(o: MetricsServerOptions): Server {
  return createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '').split('?')[0];
    if (path !== METRICS_PATH) {
      res.statusCode = 404;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end('not found: this port serves GET /metrics only\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.statusCode = 405;
      res.setHeader('Allow', 'GET, HEAD');
      res.end();
      return;
    }
    if (o.token !== undefined && !bearerMatches(req.headers.authorization, o.token)) {
      unauthorized(res, '', METRICS_PATH);
      return;
    }
    void serve(o.metrics, res, o.log);
  });
}
