/**
 * Server entry point: config from env -> database (PGlite under DATA_DIR or DATABASE_URL, with the
 * pool and timeout limits) -> migrations -> chain client -> HTTP listen (http/server.ts limits);
 * background work starts after listen: the SSE hub and the webhook worker on every replica, the loops
 * (payment watcher, crank, reconcilers, custody worker, purges) once this replica holds the leader lease
 * (modules/leader: with N replicas on one database they run on one at a time).
 *
 * Observability: METRICS_PORT opens the metrics listener after the main port (http/metrics.ts), closed on
 * stop; OTEL_EXPORTER_OTLP_ENDPOINT starts tracing first thing (tracing.ts).
 *
 * SIGTERM/SIGINT (lifecycle.ts; handlers installed before any start-up work): stop accepting, finish
 * in-flight requests (responses during the drain carry `Connection: close`, idle keep-alive
 * connections are closed), stop the background workers at the end of their current pass, close the
 * database; exit 0 when all of it finished within SHUTDOWN_TIMEOUT_MS (25 s), else the remaining
 * connections are destroyed and the exit code is 1. A signal during start-up waits for the step in
 * progress (e.g. a migration), closes what was opened, and exits 0 the same way.
 *
 * Start-up failures with a known cause (startup.ts: a bad variable, DATA_DIR unusable, PORT taken, the
 * database unreachable) print one line naming the variable to change, and exit 1.
 */
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { createApp } from './app.js';
import { composeServices, type Services } from './composition.js';
import { createChain, type ChainClient, type RpcCallObserver } from './chain/index.js';
import { readKeypairFile, sponsorKeypair } from './chain/keys.js';
import type { Config } from './config.js';
import type { AppContext } from './context.js';
import { createDb, type Db } from './db/client.js';
import { hostListFor, hostPortLabel } from './db/host-list.js';
import { migrateDatabase } from './db/migrate.js';
import { createHttpServer, type HttpServer } from './http/server.js';
import { clientIpNote } from './http/proxy-warning.js';
import { Lifecycle, StartAborted } from './lifecycle.js';
import { createLogger, type Logger } from './logger.js';
import { loadServerConfig, probeDatabase, reportStartupFailure, StartupError, startupFailureLine } from './startup.js';
import { createMetricsServer, METRICS_PATH } from './http/metrics.js';
import { createMetrics, registerRpcProviderGauges } from './metrics.js';
import { startTracing, stopTracing } from './tracing.js';

/**
 * The chain client: one provider (SOLANA_RPC_URL), or a pool of several (SOLANA_RPC_URLS, chain/rpc-pool.ts)
 * whose health loop the caller starts and stops.
 */
function chainFor(config: Config, log: Logger, onRpcCall?: RpcCallObserver): ChainClient | null {
  if (!existsSync(config.serviceKeypairPath)) {
    log.warn({ path: config.serviceKeypairPath }, 'no service keypair: running without a chain client (run the localnet bootstrap)');
    return null;
  }
  return createChain({
    rpcUrl: config.solanaRpcUrl,
    ...(config.solanaWsUrl ? { wsUrl: config.solanaWsUrl } : {}),
    rpcUrls: config.solanaRpcUrls,
    wsUrls: config.solanaWsUrls,
    pool: { ...config.rpcPool, log: log.child({ component: 'rpc-pool' }) },
    serviceKeypair: readKeypairFile(config.serviceKeypairPath),
    // fee sponsorship: a key of its own (its balance caps what sponsorship can cost), created at the default path
    ...(config.feeSponsorship?.enabled ? { sponsorKeypair: sponsorKeypair(config.feeSponsorship, config.dataDir) } : {}),
    programId: config.escrowProgramId,
    currencies: config.currencies,
    ...(onRpcCall ? { onRpcCall } : {}),
    ...(config.blockhashReuseMs !== undefined ? { blockhashReuseMs: config.blockhashReuseMs } : {}),
  });
}

/** Close `server` (the metrics listener), dropping its keep-alive connections; resolves when closed. */
function closeServer(server: Server | null): Promise<void> {
  if (!server) return Promise.resolve();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export interface MainOptions {
  /** the process lifecycle (signal handlers installed by the caller); a fresh one without handlers otherwise */
  lifecycle?: Lifecycle;
  config?: Config;
  log?: Logger;
  /**
   * Runs once the database is migrated, before the service is built and listens (npm start: the dev admin on its
   * embedded defaults). A throw fails the start.
   */
  afterMigrate?: (db: Db['prisma']) => Promise<void>;
}

export interface Running {
  server: Server;
  lifecycle: Lifecycle;
  /** the configuration the service runs with (e.g. publicBaseUrl for the start banner) */
  config: Config;
  /** stop everything (what SIGTERM does); rejects when the deadline was exceeded */
  shutdown: () => Promise<void>;
}

/**
 * Start the service. Throws StartAborted when a stop began during start-up (the lifecycle's stop
 * then finishes the job), or the start-up error.
 */
export async function main(env: NodeJS.ProcessEnv = process.env, opts: MainOptions = {}): Promise<Running> {
  const config = opts.config ?? loadServerConfig(env);
  const log = opts.log ?? createLogger(config.logLevel, { traceIds: !!config.tracing });
  // OpenTelemetry (OTEL_EXPORTER_OTLP_ENDPOINT): before the database opens and the server listens
  if (config.tracing) await startTracing(config.tracing);
  const lifecycle = opts.lifecycle ?? new Lifecycle(log, config.shutdownTimeoutMs);

  let db: Db | null = null;
  let http: HttpServer | null = null;
  let services: Services | null = null;
  let metricsServer: Server | null = null;
  let chain: ChainClient | null = null;
  // the start-up step in progress: a stop waits for it, then closes what exists
  let step: Promise<unknown> = Promise.resolve();
  const run = <T>(p: Promise<T>): Promise<T> => {
    step = p;
    return p;
  };
  lifecycle.onStop(async () => {
    await step.catch(() => undefined);
    await Promise.all([http?.drain(), services?.stop(), closeServer(metricsServer)]);
    await chain?.stop();
    await db?.close();
    // the spans still batched go out before the process exits
    if (config.tracing) await stopTracing().catch(() => undefined);
  });
  lifecycle.setDeadlineAction(() => http?.destroyAll());

  lifecycle.checkpoint();
  if (config.databaseUrl) {
    // a host-list DATABASE_URL (db/host-list.ts): say which server takes the writes, and when that changes (a failover)
    hostListFor(config.databaseUrl, (now, previous) => {
      const fields = { server: now && hostPortLabel(now), previous: previous && hostPortLabel(previous) };
      if (!now) log.warn(fields, 'no database server of DATABASE_URL accepts writes');
      else if (previous) log.warn(fields, 'database read-write server changed (failover)');
      else log.info(fields, 'database read-write server found');
    });
    await run(probeDatabase(config.databaseUrl));
  }
  lifecycle.checkpoint();
  db = await run(
    createDb({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      limits: config.db,
      standbyReads: config.standbyReads,
      // until a sample succeeds again, public reads go to the primary
      onStandbySampleError: (err) => log.warn({ err }, 'standby replay lag unknown (sample failed): public reads go to the primary'),
    }),
  );
  lifecycle.checkpoint();
  const migrated = await run(migrateDatabase(db.adapter));
  log.info({ applied: migrated.applied, ms: migrated.ms, database: db.kind, schema_engine: migrated.engine }, 'database migrated');
  lifecycle.checkpoint();
  if (opts.afterMigrate) {
    await run(opts.afterMigrate(db.prisma));
    lifecycle.checkpoint();
  }

  // the process metrics (CPU, memory, event-loop delay) once per process, beside the service's own; made
  // before the chain client so its JSON-RPC calls are timed (bazaar_rpc_request_duration_seconds)
  const metrics = createMetrics({ processMetrics: true });
  chain = chainFor(config, log, (method, seconds, outcome) => metrics.rpcDuration.observe({ method, outcome }, seconds));
  chain?.start();
  if (chain?.rpcPool) {
    const pool = chain.rpcPool;
    log.info({ providers: pool.status().map((p) => p.label), selected: pool.selected() }, 'Solana RPC providers (preference order)');
  }
  const ctx: AppContext = {
    config,
    db: db.prisma,
    log,
    chain,
    now: () => new Date(),
    dbPing: db.ping,
    dbPool: db.poolStats,
    dbStatements: () => db.statements.count,
    readRouter: db.readRouter,
    metrics,
    draining: () => lifecycle.isStopping,
    // PGlite: one process owns the database, so a stale lease can only be this process's dead predecessor
    ...(db.kind === 'pglite' ? { leaderHolder: `pglite:${config.dataDir}` } : {}),
  };
  // the composition root builds every module; the app maps the contract's routes onto them
  services = composeServices(ctx);
  // issue 28 item 3: the full-text index search runs on, as the search module detected it (README "Search index")
  const searchIndex = await run(services.marketplace.repo.searchIndex());
  log.info({ searchIndex }, `search index: ${searchIndex}`);
  if (db.readRouter.settings.enabled) {
    // issue 27 item 4: sample the standby's replay lag every second (db/read-routing.ts); close() stops it
    db.readRouter.start();
    log.info({ maxLagMs: db.readRouter.settings.maxLagMs }, 'standby reads on: anonymous search and listing reads go to a standby within the lag bound');
  }
  if (chain?.rpcPool) {
    const pool = chain.rpcPool;
    registerRpcProviderGauges(services.metrics, () => pool.status());
  }
  const app = createApp(ctx, services);
  http = createHttpServer(app, config.http, log);
  const listening = http.server;
  await run(
    new Promise<void>((resolve, reject) => {
      listening.once('error', reject);
      listening.listen(config.port, config.host, () => {
        listening.off('error', reject);
        resolve();
      });
    }),
  );
  lifecycle.checkpoint();
  if (config.metrics?.port !== null && config.metrics?.port !== undefined) {
    const m = config.metrics;
    const server = createMetricsServer({ metrics: services.metrics, token: m.token ?? undefined, log });
    metricsServer = server;
    await run(
      new Promise<void>((resolve, reject) => {
        server.once('error', (err: NodeJS.ErrnoException) =>
          reject(
            err.code === 'EADDRINUSE'
              ? new StartupError(`the metrics port ${m.host}:${m.port} is already in use: stop what runs there or set METRICS_PORT to a free port`, 'METRICS_PORT')
              : err,
          ),
        );
        server.listen(m.port!, m.host, () => {
          server.off('error', reject);
          resolve();
        });
      }),
    );
    log.info({ url: `http://${m.host}:${m.port}${METRICS_PATH}`, token: m.token ? 'required' : 'none' }, 'metrics listening');
  }
  lifecycle.checkpoint();
  log.info(
    { url: `http://${config.host}:${config.port}`, public: config.publicBaseUrl, limits: config.http, trust_proxy: config.trustProxy, client_ip: clientIpNote(config.trustProxy) },
    'bazaar listening',
  );
  await run(services.start());
  lifecycle.checkpoint();

  return {
    server: listening,
    lifecycle,
    config,
    async shutdown() {
      const code = await lifecycle.stop('shutdown');
      if (code !== 0) throw new Error(`shutdown did not finish within ${lifecycle.deadlineMs} ms`);
    },
  };
}

const isEntry = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isEntry || process.env.BAZAAR_MAIN === '1') {
  let config: Config;
  try {
    config = loadServerConfig(process.env);
  } catch (err) {
    reportStartupFailure(err);
    process.exit(1);
  }
  const log = createLogger(config.logLevel, { traceIds: !!config.tracing });
  const lifecycle = new Lifecycle(log, config.shutdownTimeoutMs);
  lifecycle.installSignalHandlers();
  log.info({ pid: process.pid, shutdown_timeout_ms: config.shutdownTimeoutMs }, 'starting');
  main(process.env, { lifecycle, config, log }).catch((err) => {
    if (err instanceof StartAborted) return; // the signal handler exits when the stop is done
    if (startupFailureLine(err, config)) reportStartupFailure(err, config);
    else log.error({ err }, 'start-up failed');
    void lifecycle.stop('start-up failed').then(() => process.exit(1));
  });
}
