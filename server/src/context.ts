/**
 * What every handler and module gets: configuration, the Prisma client, the logger and the chain
 * client (null when the service runs without a chain, e.g. most HTTP tests pass a fake).
 */
import type { ReadRouter } from './db/read-routing.js';
import type { Chain, ChainClient } from './chain/index.js';
import type { Config } from './config.js';
import type { PoolStats, PrismaClient } from './db/client.js';
import type { Metrics } from './metrics.js';
import type { Logger } from './logger.js';
import type { CustodyPortDecorators } from './modules/custody/index.js';
import type { ListingsHooks } from './modules/listings/index.js';
import type { OrdersPortDecorators } from './modules/orders/index.js';
import type { WebhooksModuleOptions } from './modules/webhooks/index.js';

export interface AppContext {
  config: Config;
  db: PrismaClient;
  log: Logger;
  /** a full ChainClient in production; tests may pass any Chain (e.g. tests/helpers/fake-chain.ts),
   *  in which case the escrow-backed order routes answer 503 chain-unavailable */
  chain: (Chain & Partial<Pick<ChainClient, 'escrow' | 'currencies'>>) | null;
  /** options for the orders module (tests: settings overrides, e.g. timers off; port decorators) */
  orders?: Record<string, unknown> & { ports?: OrdersPortDecorators };
  /** options for the listings module (tests: recovery timer off, crash hooks) */
  listings?: { recoveryIntervalMs?: number; hooks?: ListingsHooks };
  /** options for the custody module (tests: port decorators, lease); settings come from config */
  custody?: { ports?: CustodyPortDecorators; leaseMs?: number };
  /** options for the webhooks module (tests: worker retry delays and thresholds, DNS); settings come from config */
  webhooks?: Pick<WebhooksModuleOptions, 'worker' | 'resolve'>;
  /** injectable clock (tests) */
  now: () => Date;
  /**
   * Readiness probe of the database that never queues behind the shared pool (db/client.ts Db.ping);
   * when absent, /readyz races a Prisma `SELECT 1` against the timeout instead.
   */
  dbPing?: (timeoutMs: number) => Promise<void>;
  /**
   * Directory of the built web app served at /app/ (http/web-app.ts): undefined = web/dist when it holds
   * a build, null = not served.
   */
  webAppDir?: string | null;
  /** true once shutdown began: /readyz answers 503 and responses carry `Connection: close` (main.ts) */
  draining?: () => boolean;
  /**
   * Holder id of this process in the leader lease (modules/leader); default a fresh `host:pid:random`.
   * main.ts passes a fixed id on PGlite: only one process can own the embedded database, so a process
   * restarted after a crash is the same holder and takes its lease back at once.
   */
  leaderHolder?: string;
  /** the app's metrics (metrics.ts); absent: composeServices makes a fresh registry */
  metrics?: Metrics;
  /** the database pool's counts for the metrics (db/client.ts Db.poolStats); absent or null: no pool gauges */
  dbPool?: () => PoolStats | null;
  /**
   * SQL statements the service's Prisma clients sent since the process started (db/client.ts
   * Db.statements.count), exported as `bazaar_db_statements_total`; absent: not exported.
   */
  dbStatements?: () => number;
  /**
   * Where public reads go (db/client.ts Db.readRouter, db/read-routing.ts): search, browse and the anonymous
   * listing reads; absent: the primary (`db`), and no standby gauges.
   */
  readRouter?: ReadRouter;
}
