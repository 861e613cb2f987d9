/**
 * Server entry point: config from env -> database (PGlite under DATA_DIR or DATABASE_URL) ->
 * migrations -> chain client -> HTTP listen; background work (payment watcher, reconciler) starts
 * after listen. SIGINT/SIGTERM: stop accepting, finish in-flight requests, stop background work,
 * close the database (10 s hard limit).
 */
import { existsSync } from 'node:fs';
import type { Server } from 'node:http';
import { createApp } from './app.js';
import { createChain } from './chain/index.js';
import { readKeypairFile } from './chain/keys.js';
import { loadConfig, type Config } from './config.js';
import type { AppContext } from './context.js';
import { createDb } from './db/client.js';
import { migrateDatabase } from './db/migrate.js';
import { createLogger } from './logger.js';

function chainFor(config: Config, log: ReturnType<typeof createLogger>): AppContext['chain'] {
  if (!existsSync(config.serviceKeypairPath)) {
    log.warn({ path: config.serviceKeypairPath }, 'no service keypair: running without a chain client (run the localnet bootstrap)');
    return null;
  }
  return createChain({
    rpcUrl: config.solanaRpcUrl,
    serviceKeypair: readKeypairFile(config.serviceKeypairPath),
    programId: config.escrowProgramId,
    currencies: config.currencies,
  });
}

export async function main(env: NodeJS.ProcessEnv = process.env): Promise<{ server: Server; shutdown: () => Promise<void> }> {
  const config = loadConfig(env);
  const log = createLogger(config.logLevel);
  const db = await createDb({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const migrated = await migrateDatabase(db.adapter);
  log.info({ applied: migrated.applied, ms: migrated.ms, database: db.kind }, 'database migrated');

  const ctx: AppContext = { config, db: db.prisma, log, chain: chainFor(config, log), now: () => new Date() };
  const app = createApp(ctx);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(config.port, config.host, () => resolve(s)).on('error', reject);
  });
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.requestTimeout = 30_000;
  log.info({ url: `http://${config.host}:${config.port}`, public: config.publicBaseUrl }, 'bazaar listening');
  await app.services.start();

  let closing: Promise<void> | null = null;
  const shutdown = () =>
    (closing ??= (async () => {
      log.info('shutting down');
      const hard = setTimeout(() => process.exit(1), 10_000);
      hard.unref();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections?.();
      await app.services.stop();
      await db.close();
      clearTimeout(hard);
      log.info('stopped');
    })());
  return { server, shutdown };
}

const isEntry = process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href;
if (isEntry || process.env.BAZAAR_MAIN === '1') {
  main()
    .then(({ shutdown }) => {
      for (const sig of ['SIGINT', 'SIGTERM'] as const) {
        process.once(sig, () => void shutdown().then(() => process.exit(0)));
      }
    })
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
