/**
 * What every handler and module gets: configuration, the Prisma client, the logger and the chain
 * client (null when the service runs without a chain, e.g. most HTTP tests pass a fake).
 */
import type { ChainClient } from './chain/index.js';
import type { Config } from './config.js';
import type { PrismaClient } from './db/client.js';
import type { Logger } from './logger.js';

export interface AppContext {
  config: Config;
  db: PrismaClient;
  log: Logger;
  chain: ChainClient | null;
  /** injectable clock (tests) */
  now: () => Date;
}
