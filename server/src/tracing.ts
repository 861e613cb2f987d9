/**
 * OpenTelemetry traces (issue 25 part 5), off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: then
 * `startTracing()` (main.ts, before the database opens) registers the official SDK's tracer provider
 * (@opentelemetry/sdk-trace-node: AsyncLocalStorage context, W3C `traceparent` propagation) exporting
 * over OTLP/HTTP (protobuf-free JSON exporter, `<endpoint>/v1/traces`, batched), and three sources of spans:
 *
 * - HTTP server: @opentelemetry/instrumentation-http (one SERVER span per request, continuing an incoming
 *   `traceparent`); named `METHOD <route template>` once a contract route matched (`http.route`), so the
 *   span name never carries ids. Outgoing HTTP is not instrumented (webhook POSTs would export user URLs);
 *   /healthz and /metrics make no spans.
 * - database: @prisma/instrumentation (Prisma's own spans: `prisma:client:operation`, `prisma:client:db_query`
 *   with the parameterised SQL in `db.query.text`, never the parameters). It hooks the Prisma client itself
 *   (a global the client reads), not the driver, so it works with every driver adapter: PostgreSQL
 *   (@prisma/adapter-pg) and PGlite alike. @opentelemetry/instrumentation-pg is not used: it patches `pg` via
 *   require hooks, which do not see a module this ESM service imports before tracing starts, and would
 *   duplicate Prisma's db spans; PGlite has no instrumentation of its own.
 * - RPC: `tracedFetch` wraps the chain client's fetch (chain/index.ts): one CLIENT span per JSON-RPC call
 *   named by its method (`rpc.system=jsonrpc`, `rpc.method`, `server.address`/`server.port`); never the
 *   URL's path or query (provider API keys live there) nor params.
 *
 * Spans never carry headers, bodies or credentials (threat model "Traces").
 *
 * When tracing is off nothing is registered: `isTracing()` is false, the HTTP layer adds no middleware,
 * the RPC fetch is the plain one, log lines and problem bodies have no trace id (zero cost).
 *
 * The trace id of a request's span goes into every log line written in its context (logger.ts pino mixin)
 * and into each problem+json body as `trace_id` (http/problem.ts).
 */
import { createRequire } from 'node:module';
import { context, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { getRPCMetadata, RPCType } from '@opentelemetry/core';
import type { NodeTracerProvider, SpanExporter } from '@opentelemetry/sdk-trace-node';
import type { RequestHandler } from 'express';

export interface TracingSettings {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: base URL of the OTLP/HTTP receiver; spans go to `<endpoint>/v1/traces` */
  endpoint: string;
  /** OTEL_SERVICE_NAME (default `bazaar`) */
  serviceName: string;
}

export interface StartTracingOptions {
  /** export to this exporter instead of OTLP, one span at a time (tests: the SDK's InMemorySpanExporter) */
  exporter?: SpanExporter;
}

/** Paths whose requests make no span (probes and scrapes: noise at every interval). */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

let running: { provider: NodeTracerProvider; instrumentations: Array<{ disable(): void }> } | null = null;

/** True once startTracing() ran (and stopTracing() did not). */
export function isTracing(): boolean {
  return running !== null;
}

/**
 * Register the tracer provider and the instrumentations (idempotent: a second call returns at once).
 * Call before the server listens. The SDK is loaded here, so a service without tracing never loads it.
 */
export async function startTracing(settings: TracingSettings, opts: StartTracingOptions = {}): Promise<void> {
  if (running) return;
  const [{ OTLPTraceExporter }, { HttpInstrumentation }, { resourceFromAttributes }, { BatchSpanProcessor, NodeTracerProvider, SimpleSpanProcessor }, { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION }, { PrismaInstrumentation }] =
    await Promise.all([
      import('@opentelemetry/exporter-trace-otlp-http'),
      import('@opentelemetry/instrumentation-http'),
      import('@opentelemetry/resources'),
      import('@opentelemetry/sdk-trace-node'),
      import('@opentelemetry/semantic-conventions'),
      import('@prisma/instrumentation'),
    ]);
  if (running) return;
  const exporter = opts.exporter ?? new OTLPTraceExporter({ url: `${settings.endpoint.replace(/\/+$/, '')}/v1/traces` });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: settings.serviceName, [ATTR_SERVICE_VERSION]: process.env.npm_package_version ?? '0.1.0' }),
    spanProcessors: [opts.exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter)],
  });
  provider.register();
  const http = new HttpInstrumentation({
    // outgoing requests: webhook deliveries (user URLs) and the like; RPC calls have spans of their own
    disableOutgoingRequestInstrumentation: true,
    ignoreIncomingRequestHook: (req) => UNTRACED_PATHS.has((req.url ?? '').split('?')[0]!),
  });
  const prisma = new PrismaInstrumentation();
  // the http module is already loaded (ESM imports it before this runs): requiring it again lets the
  // instrumentation's require hook patch it (Server.prototype.emit is shared by every importer)
  const require = createRequire(import.meta.url);
  require('node:http');
  require('http');
  running = { provider, instrumentations: [http, prisma] };
}

/** Unregister everything and flush the exporter (tests; the process exit needs nothing). */
export async function stopTracing(): Promise<void> {
  const r = running;
  if (!r) return;
  running = null;
  for (const i of r.instrumentations) i.disable();
  await r.provider.shutdown();
  trace.disable();
  context.disable();
}

/** The trace id (32 hex digits) of the span active in the current context, or undefined. */
export function activeTraceId(): string | undefined {
  if (!running) return undefined;
  const ctx = trace.getSpan(context.active())?.spanContext();
  return ctx && trace.isSpanContextValid(ctx) ? ctx.traceId : undefined;
}

/** pino mixin: `trace_id` and `span_id` of the active span on every log line (empty when none). */
export function traceLogFields(): Record<string, string> {
  if (!running) return {};
  const ctx = trace.getSpan(context.active())?.spanContext();
  return ctx && trace.isSpanContextValid(ctx) ? { trace_id: ctx.traceId, span_id: ctx.spanId } : {};
}

/**
 * Express middleware (app.ts, first; only while tracing): remembers the request's trace id on `req.traceId`
 * (problem bodies read it there, whatever context an error handler runs in).
 */
export const rememberTraceId: RequestHandler = (req, _res, next) => {
  (req as typeof req & { traceId?: string }).traceId = activeTraceId();
  next();
};

/**
 * ts-rest global middleware (only while tracing): once a contract route matched, the HTTP server span
 * is named `METHOD <path template>` and gets `http.route` (instrumentation-http reads the route from the
 * RPC metadata when the response ends).
 */
export const nameServerSpan: RequestHandler = (req, _res, next) => {
  const route = (req as typeof req & { tsRestRoute?: { path: string } }).tsRestRoute?.path ?? (typeof req.route?.path === 'string' ? req.route.path : undefined);
  const meta = getRPCMetadata(context.active());
  if (route && meta?.type === RPCType.HTTP) meta.route = route;
  next();
};

type Fetch = (input: unknown, init?: RequestInit) => Promise<Response>;

const METHOD = /"method"\s*:\s*"([A-Za-z0-9_]{1,64})"/g;

/** The JSON-RPC method name(s) of a request body (a batch: its methods joined with `,`, at most 5). */
export function rpcMethodsOf(body: unknown): string {
  if (typeof body !== 'string') return 'unknown';
  const names = [...new Set([...body.matchAll(METHOD)].map((m) => m[1]!))];
  if (names.length === 0) return 'unknown';
  return names.length > 5 ? `${names.slice(0, 5).join(',')},…` : names.join(',');
}

/**
 * `fetch` with one CLIENT span per JSON-RPC call while tracing is on (the plain `fetch` otherwise):
 * named by the method, with `rpc.system`, `rpc.method`, `server.address`, `server.port`; an HTTP error
 * or a network failure marks the span as an error. Never the URL's path/query, headers, params or results.
 */
export function tracedFetch(fetchFn: Fetch): Fetch {
  return (input, init) => {
    if (!running) return fetchFn(input, init);
    const method = rpcMethodsOf(init?.body);
    let server: { address?: string; port?: number } = {};
    try {
      const u = new URL(String(input instanceof Request ? input.url : input));
      server = { address: u.hostname, port: Number(u.port || (u.protocol === 'https:' ? 443 : 80)) };
    } catch {
      // not a URL: no server attributes
    }
    const tracer = trace.getTracer('bazaar.chain');
    return tracer.startActiveSpan(
      method,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'rpc.system': 'jsonrpc',
          'rpc.method': method,
          ...(server.address ? { 'server.address': server.address, 'server.port': server.port } : {}),
        },
      },
      async (span) => {
        try {
          const res = await fetchFn(input, init);
          span.setAttribute('http.response.status_code', res.status);
          if (res.status >= 400) span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${res.status}` });
          return res;
        } catch (err) {
          span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.name ?? 'error' });
          throw err;
        } finally {
          span.end();
        }
      },
    );
  };
}
