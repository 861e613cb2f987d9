/**
 * Orders module wiring: one call builds the service and its timers from the app's pieces.
 *
 *   const orders = createOrdersModule({ db, chain, listings: listingsPort(listingsService), config, log });
 *   createExpressEndpoints(..., ordersHandlers(orders.http), ...);
 *   await orders.start();   // reconciler pass at start-up, then watcher + reconciler timers
 *   await orders.stop();
 */
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { ChainClient } from '../../chain/index.js';
import { PaymentWatcher } from '../../chain/payment-watcher.js';
import { PrismaIdempotencyStore, type IdempotencyStore } from '../idempotency/index.js';
import { escrowPort } from './orders.escrow.js';
import { PrismaOrdersRepo } from './orders.repo.js';
import { OrdersService, type OrdersConfig, type OrdersHooks } from './orders.service.js';
import type { EscrowPort, ListingsPort, OrdersRepo } from './orders.types.js';

export { OrdersService } from './orders.service.js';
export type { OrdersConfig, PrincipalLike } from './orders.service.js';
export { PrismaOrdersRepo } from './orders.repo.js';
export { MemoryOrdersRepo } from './orders.repo.memory.js';
export { escrowPort } from './orders.escrow.js';

type Log = { info: (...a: unknown[]) => void; warn: (...a: unknown[]) => void; error: (...a: unknown[]) => void };

export interface OrdersModuleOptions {
  db: PrismaClient;
  chain: Pick<ChainClient, 'escrow' | 'currencies'>;
  listings: ListingsPort;
  config?: Partial<OrdersConfig> & {
    /** watcher + crank poll interval (default 2000 ms); 0 disables the timers (tests drive them) */
    watcherIntervalMs?: number;
    /** reconciler interval (default 30 000 ms); 0 = only the start-up pass */
    reconcileIntervalMs?: number;
  };
  log?: Log;
  hooks?: OrdersHooks;
  /** test seams */
  repo?: OrdersRepo;
  escrow?: EscrowPort;
  idempotencyStore?: IdempotencyStore;
  hasReview?: (orderId: string) => Promise<boolean>;
  now?: () => Date;
}

export function createOrdersModule(o: OrdersModuleOptions) {
  const repo = o.repo ?? new PrismaOrdersRepo(o.db);
  const escrow = o.escrow ?? escrowPort(o.chain.escrow);
  const idempotencyStore = o.idempotencyStore ?? new PrismaIdempotencyStore(o.db);
  const currencies = o.chain.currencies;
  const service = new OrdersService({
    repo,
    escrow,
    listings: o.listings,
    currency: (code) => currencies.find((c) => c.code === code),
    config: o.config,
    log: o.log,
    hooks: o.hooks,
    now: o.now,
  });
  const watcher = new PaymentWatcher({ service, repo, log: o.log });
  const watcherMs = o.config?.watcherIntervalMs ?? 2_000;
  const reconcileMs = o.config?.reconcileIntervalMs ?? 30_000;
  let purge: NodeJS.Timeout | null = null;

  return {
    service,
    repo,
    watcher,
    reconciler: service.reconciler,
    idempotencyStore,
    http: { service, repo, idempotencyStore, hasReview: o.hasReview },
    /** start-up reconciliation, then the timers */
    async start() {
      await service.reconciler.runOnce().catch((err) => o.log?.error({ err }, 'start-up reconciliation failed'));
      if (reconcileMs > 0) service.reconciler.start(reconcileMs);
      if (watcherMs > 0) watcher.start(watcherMs);
      purge = setInterval(() => void idempotencyStore.purgeExpired(new Date()).catch(() => undefined), 3_600_000);
      purge.unref?.();
    },
    async stop() {
      if (purge) clearInterval(purge);
      await Promise.all([watcher.stop(), service.reconciler.stop()]);
    },
  };
}

export type OrdersModule = ReturnType<typeof createOrdersModule>;
