/**
 * Orders module wiring: one call builds the service and its timers from the app's pieces.
 *
 *   const orders = createOrdersModule({ db, chain, listings: listingsPort(listingsService), config, log });
 *   createExpressEndpoints(..., ordersHandlers(orders.http), ...);
 *   await orders.start();   // reconciler pass at start-up, then payment watcher (+ its order-account subscription), auto-release crank and reconciler timers
 *   await orders.stop();
 */
import type { FeeSponsorshipPort } from './sponsorship.js';
import type { OrderChatPort } from './use-cases/context.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { ChainClient } from '../../chain/index.js';
import { AutoReleaseCrank, PaymentWatcher } from './payment-watcher.js';
import { IdempotencyLeases, PrismaIdempotencyStore, type IdempotencyStore } from '../idempotency/index.js';
import { escrowPort, type OrdersBudget } from './orders.escrow.js';
import { checkEscrowIntegrity } from './orders.integrity.js';
import { PrismaOrdersRepo, userOrderStats, type UserOrderStats } from './orders.repo.js';
import type { EscrowMovement } from '../../metrics.js';
import { OrdersService } from './orders.service.js';
import type { OrdersServiceSettings } from './orders.settings.js';
import type { CustodialPaymentsPort, EscrowPort, ListingsPort, Log, OrderRecord, OrderWatchOptions, OrdersRepo, StandingPort } from './orders.types.js';
import { DomainError } from '../../errors.js';
import { orderReviewable, orderStatusOf } from './milestones.js';
import type { OrderStatus } from './order-state.js';
import { withSystemActor } from '../../lib/request-context.js';

export { OrdersService } from './orders.service.js';
export type { PrincipalLike, PaymentInstructions, TrustedOrderTerms } from './orders.service.js';
export type { OrderRecord } from './orders.types.js';
export type { OrdersSettings, OrdersServiceSettings } from './orders.settings.js';
export { PrismaOrdersRepo, type UserOrderStats } from './orders.repo.js';
export { escrowPort, type OrdersBudget } from './orders.escrow.js';
export { checkEscrowIntegrity, compareOrderWithEscrow, type IntegrityReport } from './orders.integrity.js';

/**
 * The orders module's read port for other modules (custody reads the order it funds, reviews the order
 * reviewed, users a user's order stats): built from the database alone, so a module the orders module
 * itself depends on (custody, reviews) gets it at construction.
 */
export function ordersReadPort(db: PrismaClient): {
  get(orderId: string): Promise<OrderRecord | null>;
  /** Every milestone row of order `orderId` (index order; [] when it is not an order's id): what tips read. */
  rowsOf(orderId: string): Promise<OrderRecord[]>;
  userStats(userId: string): Promise<UserOrderStats>;
} {
  const repo = new PrismaOrdersRepo(db);
  return {
    /**
     * The order (its first row; a later milestone's escrow id is not an order: null). A multi-milestone
     * order reads with its order-level status for the reviews module's rule: `completed` once it is
     * reviewable (completed, or ended after a milestone paid the seller: milestones.ts `orderReviewable`),
     * else its derived status (`ended` with nothing paid reads `refunded`).
     */
    async get(orderId) {
      const order = await repo.get(orderId);
      if (!order || order.orderId !== order.id) return null;
      if (order.milestoneCount === 1) return order;
      const rows = (await repo.milestonesOf([orderId])).get(orderId) ?? [order];
      const derived = orderStatusOf(rows);
      const status: OrderStatus = orderReviewable(rows) ? 'completed' : derived === 'ended' ? 'refunded' : derived;
      return { ...order, status };
    },
    async rowsOf(orderId) {
      const order = await repo.get(orderId);
      if (!order || order.orderId !== order.id) return [];
      if (order.milestoneCount === 1) return [order];
      return (await repo.milestonesOf([orderId])).get(orderId) ?? [order];
    },
    userStats: (userId) => userOrderStats(db, userId),
  };
}


/**
 * Replacements of the ports the module builds: each gets the port as built and returns the one the
 * module uses. Tests supply them (a port that fails where a crashed process would stop, e.g. an escrow
 * whose send lands and then throws); production passes none.
 */
export interface OrdersPortDecorators {
  repo?: (built: OrdersRepo) => OrdersRepo;
  escrow?: (built: EscrowPort) => EscrowPort;
}

export interface OrdersModuleOptions {
  db: PrismaClient;
  /** null / a chain without an escrow client (fake chains in HTTP tests): chain calls answer 503 */
  chain: Partial<Pick<ChainClient, 'escrow' | 'currencies'>> | null;
  /** payment currencies (defaults to the chain client's) */
  currencies?: Array<{ code: string; mint: string; decimals: number; tokenProgram?: string }>;
  listings: ListingsPort;
  /** configured categories: the display names orders show (`listing.category_name`) */
  categories?: ReadonlyArray<{ slug: string; name: string }>;
  /** the settings (complete: `Config.orders` + PUBLIC_BASE_URL; defaults only in config.ts ENV_VARS) */
  config: OrdersServiceSettings & {
    /** order-account subscription reconnect back-off and heartbeat (tests) */
    watch?: OrderWatchOptions;
  };
  log?: Log;
  /** port decorators (tests) */
  ports?: OrdersPortDecorators;
  /** test seams */
  repo?: OrdersRepo;
  escrow?: EscrowPort;
  idempotencyStore?: IdempotencyStore;
  hasReview?: (orderId: string) => Promise<boolean>;
  /** the order's conversation (chat module): where a revision request's message is posted */
  chat?: OrderChatPort;
  /** issue 25: the moderation module's standing port (a suspended or banned buyer cannot order) */
  standing?: StandingPort;
  now?: () => Date;
  /** custodial payments (the custody module's service) when custody is enabled */
  custody?: CustodialPaymentsPort;
  /**
   * the service's SOL budget (modules/budget): which missing payee token accounts the service may create
   * before a payout (docs/threat-model.md#who-pays-for-what-on-chain), and the count of the transactions it pays for
   */
  budget?: OrdersBudget;
  /** issue 26 item 5: fee sponsorship (FEE_SPONSORSHIP on); absent: every buyer pays his fee and rent */
  sponsorship?: FeeSponsorshipPort;
  /** told of each committed escrow movement (funded / released / refunded / resolved): the metrics' escrow volume */
  onEscrow?: (m: EscrowMovement) => void;
}

export function createOrdersModule(o: OrdersModuleOptions) {
  const categoryNames = new Map((o.categories ?? []).map((c) => [c.slug, c.name]));
  const builtRepo = o.repo ?? new PrismaOrdersRepo(o.db, { categoryName: (slug) => categoryNames.get(slug), onEscrow: o.onEscrow });
  const builtEscrow = o.escrow ?? (o.chain?.escrow ? escrowPort(o.chain.escrow, { log: o.log, budget: o.budget }) : unavailableEscrow());
  const repo = o.ports?.repo?.(builtRepo) ?? builtRepo;
  const escrow = o.ports?.escrow?.(builtEscrow) ?? builtEscrow;
  const { watch, ...settings } = o.config;
  const idempotencyStore = o.idempotencyStore ?? new PrismaIdempotencyStore(o.db);
  const currencies = o.currencies ?? o.chain?.currencies ?? [];
  const service = new OrdersService({
    repo,
    escrow,
    listings: o.listings,
    currency: (code) => currencies.find((c) => c.code === code),
    settings,
    log: o.log,
    now: o.now,
    custody: o.custody,
    hasReview: o.hasReview,
    chat: o.chat,
    standing: o.standing,
    sponsorship: o.sponsorship,
  });
  const watcher = new PaymentWatcher({
    service,
    repo,
    log: o.log,
    escrow,
    fallbackIntervalMs: settings.watcherFallbackIntervalMs,
    watch,
  });
  const autoRelease = new AutoReleaseCrank({ service, log: o.log });
  const leases = new IdempotencyLeases();
  const watcherMs = settings.watcherIntervalMs;
  const reconcileMs = settings.reconcileIntervalMs;
  let purge: NodeJS.Timeout | null = null;
  const stopLoops = async () => {
    if (purge) clearInterval(purge);
    purge = null;
    await Promise.all([watcher.stop(), autoRelease.stop(), service.reconciler.stop()]);
  };

  return {
    service,
    repo,
    watcher,
    /** the auto-release crank (claims delivered orders past auto_release_at, chain clock) */
    autoRelease,
    reconciler: service.reconciler,
    idempotencyStore,
    /** every order's database state against its escrow account on chain (orders.integrity.ts) */
    checkIntegrity: () => checkEscrowIntegrity({ repo, escrow }),
    http: { service, idempotencyStore, idempotencyLeases: leases, idempotencyLeaseMs: settings.idempotencyLeaseMs, now: o.now },
    /**
     * The background loops (run by the replica holding the leader lease, modules/leader): start-up
     * reconciliation, then the payment watcher, auto-release crank, reconciler and Idempotency-Key
     * purge timers. Callable again after stopLoops() (a replica that wins the lease back).
     */
    async start() {
      await withSystemActor('reconciler', () => service.reconciler.runOnce()).catch((err) => o.log?.error({ err }, 'start-up reconciliation failed'));
      if (reconcileMs > 0) service.reconciler.start(reconcileMs);
      if (watcherMs > 0) {
        watcher.start(watcherMs);
        autoRelease.start(watcherMs);
      }
      if (purge) clearInterval(purge);
      purge = setInterval(() => void idempotencyStore.purgeExpired(new Date()).catch(() => undefined), 3_600_000);
      purge.unref?.();
    },
    /** Stop the background loops, awaiting their passes in progress (the leader lease was lost). */
    stopLoops,
    /** stopLoops(), and the Idempotency-Key lease renewals of this process: call it after the last request finished */
    async stop() {
      leases.stopAll();
      await stopLoops();
    },
  };
}

export type OrdersModule = ReturnType<typeof createOrdersModule>;

/** An EscrowPort for a service running without the escrow program: every call is 503 chain-unavailable. */
export function unavailableEscrow(): EscrowPort {
  const fail = async (): Promise<never> => {
    throw new DomainError('chain-unavailable', 'The escrow program is not configured on this service.');
  };
  return {
    addresses: () => {
      throw new DomainError('chain-unavailable', 'The escrow program is not configured on this service.');
    },
    buildFundTransaction: fail,
    submitSignedTransaction: fail,
    send: fail,
    fetchOrder: fail,
    signatureStatus: fail,
    transactionOutcome: fail,
    feeBps: fail,
    chainNow: fail,
  };
}
