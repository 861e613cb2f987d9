/**
 * Composition root of the HTTP API: builds every module from the AppContext and combines the
 * per-group ts-rest handlers into one router for `createExpressEndpoints(contract, router, ...)`.
 */
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import type { ChainClient } from '../chain/index.js';
import type { AppContext } from '../context.js';
import { DomainError } from '../errors.js';
import { createAuthRepo, createAuthService, createTokensService, credentialSignal } from '../modules/auth/index.js';
import { createListingsModule, listingsReadPort } from '../modules/listings/index.js';
import { createBudgetModule, defaultSpending } from '../modules/budget/index.js';
import { createMarketplaceModule } from '../modules/marketplace/index.js';
import { createEventsModule, EventRetention } from '../modules/events/index.js';
import { createWebhooksModule } from '../modules/webhooks/index.js';
import { createChatModule } from '../modules/chat/index.js';
import { createCustodyModule, type CustodyModule } from '../modules/custody/index.js';
import { BACKGROUND_LEASE, createLeaderRepo, LEADER_LEASE_DEFAULTS, LeaderElection } from '../modules/leader/index.js';
import { PrismaIdempotencyStore } from '../modules/idempotency/index.js';
import { createOrdersModule, ordersReadPort, type OrdersModule } from '../modules/orders/index.js';
import { createReviewsModule } from '../modules/reviews/index.js';
import { createUsersRepo, createUsersService } from '../modules/users/index.js';
import { createWalletService } from '../modules/wallet/index.js';
import { authHandlers } from './auth.handlers.js';
import { eventsHandlers } from './events.handlers.js';
import { webhooksHandlers } from './webhooks.handlers.js';
import { chatHandlers } from './chat.handlers.js';
import { tokensHandlers } from './tokens.handlers.js';
import { networkHandlers } from './network.handlers.js';
import { listingsHandlers } from './listings.handlers.js';
import { marketplaceHandlers } from './marketplace.handlers.js';
import { ordersHandlers } from './orders.handlers.js';
import { reviewsHandlers } from './reviews.handlers.js';
import { usersHandlers } from './users.handlers.js';
import { walletHandlers } from './wallet.handlers.js';
import { PrismaRateLimitStore, purgeRateLimitHits } from './rate-limit-store.js';

const chainMissing = () => {
  throw new DomainError('chain-unavailable', 'The service runs without a Solana connection; order routes are unavailable.');
};

/** Routes of a group that cannot work in this configuration (no escrow client). */
function unavailableRouter<T extends Record<string, unknown>>(group: T) {
  return Object.fromEntries(Object.keys(group).map((k) => [k, chainMissing])) as never;
}

export function buildServices(ctx: AppContext) {
  const { config, db, log } = ctx;
  const currencies = config.currencies.length ? config.currencies : (ctx.chain?.currencies ?? []);
  const listingsConfig = { currencies, categories: config.categories, publicBaseUrl: config.publicBaseUrl };

  const reviews = createReviewsModule({ db, orders: ordersReadPort(db) });
  const users = createUsersService({
    repo: createUsersRepo(db),
    // a profile's statistics, each from the module that owns it
    listings: listingsReadPort(db),
    orders: ordersReadPort(db),
    reviews,
    decimalsOf: (code) => currencies.find((c) => c.code === code)?.decimals,
    custodyEnabled: config.custodyEnabled,
  });
  const authRepo = createAuthRepo(db);
  const auth = createAuthService({
    repo: authRepo,
    settings: config,
    now: ctx.now,
    presentUser: (u) => users.privateView(u),
  });
  const chain = ctx.chain;
  // what the service keypair may spend on chain (docs/threat-model.md#who-pays-for-what-on-chain): listings, custody and payouts charge it
  const spending = config.spending ?? defaultSpending();
  const budget = createBudgetModule({ db, spending, log, now: ctx.now });
  const listings = createListingsModule({
    db,
    chain,
    config: { ...listingsConfig, minPrice: spending.listingMinPrice },
    log,
    budget,
    ...ctx.listings,
  });
  const marketplace = createMarketplaceModule({ db, config: listingsConfig });
  // streams and webhooks re-check their credential: at once on a revocation here (credentialSignal),
  // periodically for revocations elsewhere (they are in the database)
  const events = createEventsModule({ db, log, databaseUrl: config.databaseUrl, stream: config.eventStreams, credentialChanges: credentialSignal });
  const chat = createChatModule({ db, now: ctx.now, rateLimitPerMinute: config.chatRateLimitPerMinute });
  const webhooks = createWebhooksModule({ db, settings: config.webhooks, log, now: ctx.now, credentialChanges: credentialSignal, ...ctx.webhooks });
  const wallet = createWalletService({
    chain: chain ?? { getWalletBalances: chainMissing },
    currencies,
  });
  // custody (operator setting, off by default): needs the chain client's connection and service keypair
  let custody: CustodyModule | null = null;
  const chainClient = chain as (typeof chain & Partial<Pick<ChainClient, 'connection' | 'service'>>) | null;
  if (config.custodyEnabled && chainClient?.escrow && chainClient.connection && chainClient.service) {
    if (!config.custodySeed) throw new Error('CUSTODY_ENABLED needs CUSTODY_SEED (or DATA_DIR/keys/custody-seed)');
    custody = createCustodyModule({
      db,
      chain: { connection: chainClient.connection, service: chainClient.service, escrow: chainClient.escrow },
      currencies,
      settings: {
        seed: config.custodySeed,
        minDeposit: config.custodyMinDeposit,
        minWithdrawal: config.custodyMinWithdrawal,
        withdrawalFee: config.custodyWithdrawalFee,
        pollIntervalMs: config.custodyPollIntervalMs,
        leaseMs: ctx.custody?.leaseMs,
      },
      // the orders it funds, read through the orders module's port (the orders module gets custody below)
      orders: ordersReadPort(db),
      hooks: ctx.custody?.hooks,
      budget,
      log,
      now: ctx.now,
    });
  }
  let orders: OrdersModule | null = null;
  if (chain?.escrow) {
    orders = createOrdersModule({
      db,
      chain: { escrow: chain.escrow, currencies: chain.currencies ?? currencies },
      listings: listings.port,
      categories: config.categories,
      config: { publicBaseUrl: config.publicBaseUrl, ...config.orders, ...(ctx.orders ?? {}) },
      log,
      hasReview: reviews.hasReview,
      now: ctx.now,
      custody: custody?.service,
      budget: { sponsorPayeeAccount: (p) => budget.sponsorPayeeAccount(p), record: (c) => budget.record(c) },
    });
  }

  const idempotencyStore = orders?.idempotencyStore ?? new PrismaIdempotencyStore(db);
  const s = initServer();
  const router = s.router(contract, {
    auth: authHandlers({ service: auth, secureCookie: config.publicBaseUrl.startsWith('https://') }),
    users: usersHandlers({ service: users }),
    listings: listingsHandlers({ ...listings.http, idempotencyStore, idempotencyLeases: orders?.http.idempotencyLeases }),
    marketplace: marketplaceHandlers(marketplace.http),
    orders: orders ? ordersHandlers(orders.http) : unavailableRouter(contract.orders),
    reviews: reviewsHandlers(reviews.http),
    wallet: walletHandlers({
      service: wallet,
      custody: custody?.service ?? null,
      custodyWithoutChain: config.custodyEnabled && !custody,
      idempotencyStore,
    }),
    events: eventsHandlers({ ...events.http, refresh: auth.refreshPrincipal }),
    webhooks: webhooksHandlers(webhooks.http),
    chat: chatHandlers({ ...chat.http, rateLimitStore: new PrismaRateLimitStore(db, 'chat:sender') }),
    tokens: tokensHandlers({ service: createTokensService(db, ctx.now) }),
    network: networkHandlers(config),
  });

  const retention = config.eventsRetentionDays
    ? new EventRetention({
        repo: events.repo,
        retentionDays: config.eventsRetentionDays,
        holdBack: [() => webhooks.repo.oldestNeededSeq()],
        alsoPurge: [(cutoff, batch) => webhooks.repo.purgeFinishedBefore(cutoff, batch)],
        now: ctx.now,
        log,
      })
    : null;
  // Background loops: on exactly one replica at a time, the holder of the leader lease
  // (modules/leader). Every replica runs the per-process work itself: the SSE hub (its own
  // streams) and the webhook worker (claims with FOR UPDATE SKIP LOCKED, safe on N replicas).
  let nonceTimer: NodeJS.Timeout | null = null;
  const loops = {
    async start() {
      const purge = () => {
        void authRepo.purgeNonces(new Date(ctx.now().getTime() - 86_400_000)).catch((err) => log.warn({ err }, 'nonce purge failed'));
        void authRepo.purgeRevokedAccessTokens(ctx.now()).catch((err) => log.warn({ err }, 'revoked token purge failed'));
        void purgeRateLimitHits(db, new Date(Date.now() - 3_600_000)).catch((err) => log.warn({ err }, 'rate-limit purge failed'));
      };
      purge();
      if (nonceTimer) clearInterval(nonceTimer);
      nonceTimer = setInterval(purge, 3_600_000);
      nonceTimer.unref?.();
      retention?.start();
      await listings.start();
      await orders?.start();
      await custody?.start();
    },
    async stop() {
      if (nonceTimer) clearInterval(nonceTimer);
      nonceTimer = null;
      await Promise.all([custody?.stopLoops(), orders?.stopLoops(), listings.stop(), retention?.stop()]);
    },
  };
  const lease = config.leaderLease ?? LEADER_LEASE_DEFAULTS;
  const leader = new LeaderElection({
    repo: createLeaderRepo(db),
    name: BACKGROUND_LEASE,
    holder: ctx.leaderHolder,
    ttlMs: lease.ttlMs,
    renewMs: lease.renewMs,
    onElected: () => loops.start(),
    onDeposed: () => loops.stop(),
    log,
  });

  return {
    router,
    /** the service's SOL budget of the day (modules/budget; /readyz `chain_budget`) */
    budget,
    auth,
    users,
    listings,
    marketplace,
    reviews,
    orders,
    wallet,
    events,
    webhooks,
    chat,
    /** the custody module (CUSTODY_ENABLED), else null */
    custody,
    /** the leader lease of the background loops (modules/leader): `leader.isLeader`, `leader.holder` */
    leader,
    /**
     * background work; main.ts calls these, tests usually do not. Every replica: the SSE hub and the
     * webhook worker. The lease holder only: purges, listing recovery, the orders' watcher, crank and
     * reconciler, the custody worker (the first lease attempt and, when won, their start-up passes are
     * awaited).
     */
    async start() {
      await events.start();
      await webhooks.start();
      await leader.start();
    },
    /** stop the loops (awaiting their passes), release the lease, stop the per-process work */
    async stop() {
      await leader.stop();
      await custody?.stop();
      await orders?.stop();
      await listings.stop();
      await webhooks.stop();
      await events.stop();
    },
  };
}

export type Services = ReturnType<typeof buildServices>;
