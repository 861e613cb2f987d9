/**
 * createApp(ctx): the Express application (no listen; main.ts listens, tests use supertest).
 *
 * Order: (trace id, while tracing) -> request id (and the request context of lib/request-context.ts) -> request metrics (http/metrics.ts) -> JSON access log -> gzip/brotli above 1 kB (http/compression.ts: never SSE nor a secret-bearing response) -> 414 for a request target over 8 KiB -> one warning on the first X-Forwarded-For while TRUST_PROXY=0
 * (http/proxy-warning.ts) -> helmet -> CORS (http/cors.ts: any origin on the Solana Pay
 * endpoints and /icon.svg, CORS_ORIGINS elsewhere) -> the Solana Actions router (/actions.json, /api/actions/...:
 * http/actions/router.ts, answers them whole with the spec's headers and errors) -> cookies -> 403 for a cookie-authenticated write from
 * another origin (http/csrf.ts) -> login rate limits per route and IP (counters in the database: shared by every replica) ->
 * 413 for a declared Content-Length over the limit -> 415 for non-JSON bodies -> JSON body parser
 * (limit) -> 400 for text PostgreSQL cannot store (NUL, unpaired surrogates) in body or query
 * (http/request-text.ts; path parameters once the route matched) -> ETag / Cache-Control / 304 of the public reads (http/http-cache.ts) -> verify_login rate limit per wallet address for requests that wallet did not sign -> ops routes (/healthz, /readyz, /metrics behind METRICS_TOKEN, /docs,
 * /openapi.json, /icon.svg, the web app at /app/ when built) -> ts-rest endpoints (auth middleware per route metadata, then 400 when a
 * declared body is missing) -> 404 / 405 -> problem+json.
 *
 * /healthz is liveness and touches nothing. /readyz probes the database off the shared pool
 * (ctx.dbPing: its own connection on PostgreSQL) and the chain RPC, each within READY_TIMEOUT_MS, and
 * answers 503 while the server drains, so it answers in about a second even when the pool is exhausted;
 * a ready answer also carries the day's on-chain spending `chain_budget` (modules/budget, docs/threat-model.md#who-pays-for-what-on-chain).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import bytes from 'bytes';
import cookieParser from 'cookie-parser';
import express, { type Express, type Request } from 'express';
import helmet from 'helmet';
import { createExpressEndpoints } from '@ts-rest/express';
import { explorerLinks } from './http/explorer-links.js';
import { createExplorer } from './lib/explorer.js';
import { API_PREFIX, contract } from '@bazaar/contract';
import type { AppContext } from './context.js';
import { REPO_ROOT } from './db/migrate.js';
import {
  errorHandler,
  problemBody,
  requestValidationErrorHandler,
  requireDeclaredBody,
  refuseOversizedBody,
  refuseLongUrl,
  requireJsonBody,
  routeNotFound,
} from './http/problem.js';
import { docsConnectSrc, docsRoutes } from './http/docs.js';
import { accessLog } from './http/access-log.js';
import { untrustedProxyWarning } from './http/proxy-warning.js';
import { refuseUnstorableParams, refuseUnstorableText } from './http/request-text.js';
import { composeServices, type Services } from './composition.js';
import { createRouter } from './http/router.js';
import { streamEventsHandler } from './http/events.handlers.js';
import { custodyErrors } from './modules/custody/index.js';
import { authenticate, authRateLimit } from './http/security.js';
import { PrismaRateLimitStore } from './http/rate-limit-store.js';
import { corsPolicy, ICON_PATH } from './http/cors.js';
import { actionsRouter } from './http/actions/router.js';
import { clusterBlockchainId } from './http/actions/cluster.js';
import { refuseCrossOriginCookieWrites } from './http/csrf.js';
import { WEB_APP_PATH, webAppRoutes, webAppShareablePages } from './http/web-app.js';
import { compressResponses } from './http/compression.js';
import { httpCache } from './http/http-cache.js';
import { runWithContext, type RequestContext } from './lib/request-context.js';
import { httpMetrics, METRICS_PATH, metricsRoute } from './http/metrics.js';
import { isTracing, nameServerSpan, rememberTraceId } from './tracing.js';

/** The service's Solana Pay icon (served at ICON_PATH). */
const ICON_FILE = path.join(REPO_ROOT, 'server', 'assets', 'icon.svg');

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export type BazaarApp = Express & { services: Services };

/** `work`, or a rejection after `ms` milliseconds (readiness checks must answer promptly). */
function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The Express app over `services` (built from `ctx` by the composition root when not given: tests).
 * `app.services` is what main.ts starts after listen and stops on shutdown.
 */
export function createApp(ctx: AppContext, given?: Services): BazaarApp {
  const { config, log } = ctx;
  const app = express() as BazaarApp;
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);
  app.set('etag', false);
  const services = given ?? composeServices(ctx);
  app.services = services;

  // while tracing (OTEL_EXPORTER_OTLP_ENDPOINT): the request's trace id for problem bodies (tracing.ts)
  if (isTracing()) app.use(rememberTraceId);
  app.use((req, res, next) => {
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    (req as Request & { id: string }).id = id;
    res.setHeader('X-Request-Id', id);
    // who did it (lib/request-context.ts): the request id now, the actor once the auth middleware knows it
    const context: RequestContext = { requestId: id, actor: null, method: req.method };
    req.requestContext = context;
    runWithContext(context, next);
  });
  // request count and latency per route template and status (metrics.ts, http/metrics.ts); only when
  // the metrics are served somewhere (METRICS_PORT or METRICS_TOKEN): otherwise nobody could read them
  if (config.metrics && (config.metrics.port !== null || config.metrics.token)) app.use(httpMetrics(services.metrics));
  app.use(accessLog(log));
  // gzip / brotli above 1 kB; never the event stream nor a response carrying a secret (http/compression.ts)
  app.use(compressResponses());
  app.use(refuseLongUrl());
  app.use(untrustedProxyWarning(config.trustProxy, log));
  const https = config.publicBaseUrl.startsWith('https://');
  // over plain http (local development) no HSTS and no upgrade-insecure-requests, or /docs breaks;
  // connect-src: /docs "Try it out" calls the origin its /openapi.json names (http/docs.ts)
  app.use(
    helmet({
      hsts: https,
      contentSecurityPolicy: {
        directives: { upgradeInsecureRequests: https ? [] : null, connectSrc: docsConnectSrc(config) },
      },
    }),
  );
  app.use(corsPolicy(config.corsOrigins));
  // Solana Actions (blinks): /actions.json and /api/actions/..., the spec's headers, CORS and `{ message }`
  // errors, before the API's problem+json middlewares (http/actions/router.ts); 404 unless ACTIONS_ENABLED
  app.use(
    actionsRouter({
      guard: {
        enabled: config.actionsEnabled ?? false,
        perMinute: config.actionsRateLimitPerMinute ?? 60,
        store: new PrismaRateLimitStore(ctx.db, 'actions:ip'),
        blockchainIds: clusterBlockchainId(config.siwsChainId, ctx.chain),
      },
      bodyLimit: config.bodyLimit,
      listings: services.actions.listings,
      orders: services.orderActions,
      log,
    }),
  );
  app.use(cookieParser());
  // a cookie-authenticated write must come from this service or an origin listed exactly in CORS_ORIGINS
  app.use(refuseCrossOriginCookieWrites({ publicBaseUrl: config.publicBaseUrl, corsOrigins: config.corsOrigins }));
  const loginRoutes = [`${API_PREFIX}/auth/request_login`, `${API_PREFIX}/auth/verify_login`];
  // one budget per route and client IP, then (once the body is parsed) per route and wallet address
  // counters in the database (http/rate-limit-store.ts): one budget across every replica
  for (const route of loginRoutes) app.use(route, authRateLimit(config.authRateLimitPerMinute, { store: new PrismaRateLimitStore(ctx.db, `auth:ip:${route}`) }));
  app.use(refuseOversizedBody(bytes.parse(config.bodyLimit) ?? 100 * 1024));
  app.use(requireJsonBody);
  app.use(express.json({ limit: config.bodyLimit, type: ['application/json', 'application/*+json'] }));
  // NUL and unpaired surrogates anywhere in the body or query: 400 before a limiter, hash or handler reads them
  app.use(refuseUnstorableText);
  // strong ETag + Cache-Control on the public reads, 304 on If-None-Match (http/http-cache.ts)
  app.use(httpCache());
  // explorer links next to every signature and mint of the answers (http/explorer-links.ts)
  app.use(explorerLinks(createExplorer(config)));
  // per wallet address only the verify_login requests that wallet did not sign: naming an address costs its
  // owner nothing (request_login has the IP limit only; a nonce is useless to anyone but the key's holder)
  const verifyRoute = `${API_PREFIX}/auth/verify_login`;
  app.post(verifyRoute, authRateLimit(config.authAddressRateLimitPerMinute, { unsignedByAddress: true, store: new PrismaRateLimitStore(ctx.db, `auth:address:${verifyRoute}`) }));

  // ops
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', uptime_seconds: Math.round(process.uptime()) });
  });
  const ping = ctx.dbPing ?? ((ms: number) => within(ms, ctx.db.$queryRaw`SELECT 1`));
  app.get('/readyz', async (req, res) => {
    const checks: Record<string, { ok: boolean; slot?: number; error?: string }> = {};
    const ms = config.readyTimeoutMs;
    const [db, chain] = await Promise.all([
      ping(ms).then(
        () => ({ ok: true }),
        (e: Error) => ({ ok: false, error: String(e?.message ?? e).slice(0, 200) }),
      ),
      ctx.chain ? within(ms, ctx.chain.health()).catch(() => ({ ok: false })) : null,
    ]);
    checks.db = db;
    if (chain) checks.chain = chain;
    if (ctx.draining?.()) checks.server = { ok: false, error: 'shutting down' };
    const ready = Object.values(checks).every((c) => c.ok);
    if (ready) {
      // the day's on-chain spending (modules/budget): for operators and alerts; never makes a replica unready
      const chain_budget = await within(ms, app.services.budget.state()).catch(() => null);
      res.json({ status: 'ready', checks, ...(chain_budget ? { chain_budget } : {}) });
      return;
    }
    const down = Object.entries(checks).filter(([, c]) => !c.ok).map(([k]) => k);
    res.setHeader('Retry-After', '5');
    res
      .status(503)
      .type('application/problem+json')
      .send(JSON.stringify({ ...problemBody(req, 'service-unavailable', `Not ready: ${down.join(', ')} unavailable.`), checks }));
  });
  // the Solana Pay icon (SOLANA_PAY_ICON defaults to it): wallets show it, from any origin
  const icon = readFileSync(ICON_FILE);
  app.get(ICON_PATH, (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=86400');
    res.type('image/svg+xml').send(icon);
  });
  // Prometheus metrics on this port only behind METRICS_TOKEN (http/metrics.ts; else on METRICS_PORT or nowhere)
  if (config.metrics?.token) app.get(METRICS_PATH, metricsRoute(services.metrics, config.metrics.token, log));
  app.use(docsRoutes(config));
  // the reference web app (web/), when built: ctx.webAppDir, else web/dist
  // the shareable pages /app/listings/{id} and /app/orders/{id} (what /actions.json maps to the blinks): to the app's route
  app.use(WEB_APP_PATH, webAppShareablePages());
  const webApp = ctx.webAppDir === null ? null : webAppRoutes(ctx.webAppDir);
  if (webApp) app.use(WEB_APP_PATH, webApp);

  const authn = authenticate(services.auth, { publicMarketplace: config.publicMarketplace });
  if (!config.custodyEnabled) {
    // custody is off: its routes answer 404 custody-disabled to an authenticated caller before headers
    // and body are validated (a client learns the feature is absent, not that its Idempotency-Key is
    // missing); anonymous callers get 401 like on every user route (the setting is not disclosed)
    const w = contract.wallet;
    for (const r of [w.createDeposit, w.listDeposits, w.createWithdrawal, w.listWithdrawals, w.getWithdrawal]) {
      const method = r.method.toLowerCase() as 'get' | 'post';
      // its own contract route, so that a personal access token is checked against that route's scopes
      const routeAuthn = authenticate(services.auth, { publicMarketplace: config.publicMarketplace }, r);
      app[method](r.path, routeAuthn, (_req, _res, next) => next(custodyErrors.disabled()));
    }
  }
  // the SSE stream writes its own response (ts-rest answers JSON): mounted first, after the auth middleware
  const streamAuthn = authenticate(services.auth, { publicMarketplace: config.publicMarketplace }, contract.events.streamEvents);
  app.get(contract.events.streamEvents.path, streamAuthn, streamEventsHandler({ ...services.events.http, refresh: services.auth.refreshPrincipal }));
  const router = createRouter(services, {
    secureCookie: https,
    custodyEnabled: config.custodyEnabled,
    chatRateLimitStore: new PrismaRateLimitStore(ctx.db, 'chat:sender'),
    // an offer is a message: the same counters (same prefix), a limiter of its own (one store per limiter)
    offerRateLimitStore: new PrismaRateLimitStore(ctx.db, 'chat:sender'),
    network: config,
  });
  createExpressEndpoints(contract, router, app, {
    globalMiddleware: [...(isTracing() ? [nameServerSpan] : []), refuseUnstorableParams, authn, requireDeclaredBody],
    requestValidationErrorHandler: requestValidationErrorHandler as never,
    responseValidation: false,
  });

  app.use(routeNotFound);
  app.use(errorHandler(log));
  return app;
}
