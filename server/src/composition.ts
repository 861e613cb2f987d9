/**
 * Composition root: the one place that knows every module. `composeServices(ctx)` builds each module
 * from the AppContext (configuration, database, logger, chain client, clock), hands each the ports of
 * the others it needs (docs/design.md "Module edges"), and owns the background work: the per-process
 * workers (SSE hub, webhook worker) and the loops that run on one replica at a time under the leader
 * lease (purges, event retention, listing recovery, the orders' watcher, crank and reconciler, the
 * custody worker, the tips' background check).
 *
 * Who calls it: main.ts (then `start()` after listen, `stop()` on SIGTERM through lifecycle.ts), and
 * `createApp(ctx)` when no services are given (tests). The HTTP layer only maps contract routes onto
 * what this returns (http/router.ts).
 */
import { createExplorer } from './lib/explorer.js';
import type { PublicKey } from '@solana/web3.js';
import type { FeeSponsorshipPort } from './modules/orders/sponsorship.js';
import type { ChainClient } from './chain/index.js';
import type { AppContext } from './context.js';
import { DomainError } from './errors.js';
import { createAuthRepo, createAuthService, createRolesService, createTokensService, credentialSignal, type AuthRepo } from './modules/auth/index.js';
import { createListingsModule, listingsReadPort, type ListingsModule } from './modules/listings/index.js';
import { createListingActions } from './modules/actions/listing-actions.js';
import { createBudgetModule, defaultSpending } from './modules/budget/index.js';
import { createMarketplaceModule } from './modules/marketplace/index.js';
import { createEventsModule, EventRetention } from './modules/events/index.js';
import { createWebhooksModule, type WebhooksModule } from './modules/webhooks/index.js';
import { createChatModule } from './modules/chat/index.js';
import { createOffersModule } from './modules/offers/index.js';
import { countDisputesNeedingAttention, createDisputesModule } from './modules/disputes/index.js';
import { createModerationModule, standingPort } from './modules/moderation/index.js';
import { createCustodyModule, type CustodyModule } from './modules/custody/index.js';
import { BACKGROUND_LEASE, createLeaderRepo, LEADER_LEASE_DEFAULTS, LeaderElection } from './modules/leader/index.js';
import { PrismaIdempotencyStore } from './modules/idempotency/index.js';
import { createOrdersModule, ordersReadPort, type OrdersModule } from './modules/orders/index.js';
import { createReviewsModule } from './modules/reviews/index.js';
import { createAuditModule } from './modules/audit/index.js';
import { withSystemActor } from './lib/request-context.js';
import { createUsersRepo, createUsersService } from './modules/users/index.js';
import { createWalletService } from './modules/wallet/index.js';
import { purgeRateLimitHits } from './http/rate-limit-store.js';
import { createReportsModule } from './modules/reports/index.js';
import { createTipsChain, createTipsModule, tipsReadPort, type TipOrder, type TipsModule } from './modules/tips/index.js';
import type { OrderRecord } from './modules/orders/orders.types.js';
import { attentionFlagCounts } from './modules/orders/orders.repo.js';
import { cachedRead, createMetrics, METRIC_PREFIX, registerStandbyReadGauges, type Metrics } from './metrics.js';
import { createOrderActions, type OrderActions } from './modules/actions/order-actions.js';
import { orderActionNonceStore } from './modules/actions/order-action-nonces.js';
import { clusterBlockchainId } from './http/actions/cluster.js';

/**
 * An order as the tips module reads it (modules/tips TipOrdersPort), from the orders module's read port.
 * `rows`: every milestone row of the order (issue 24), first row first: a tip needs one settled milestone that paid the seller.
 */
export function tipOrderOf(rows: readonly OrderRecord[]): TipOrder {
  const o = rows[0]!;
  return {
    id: o.id,
    buyerId: o.buyerId,
    sellerId: o.sellerId,
    buyerWallet: o.buyerWallet,
    sellerWallet: o.sellerWallet,
    paymentSource: o.paymentSource,
    currency: o.currency,
    mint: o.mint,
    decimals: o.decimals,
    amount: rows.reduce((sum, r) => sum + r.amount, 0n),
    milestones: rows.map((r) => ({ status: r.status, sellerPayout: r.payout?.seller ?? null, buyerBps: r.buyerBps })),
  };
}

/** What a route or port needing the chain does when the service runs without one: 503 chain-unavailable. */
export const chainMissing = (): never => {
  throw new DomainError('chain-unavailable', 'The service runs without a Solana connection; order routes are unavailable.');
};

/** Build every module (nothing runs until `start()`). */
export function composeServices(ctx: AppContext) {
  const { config, db, log } = ctx;
  const metrics = ctx.metrics ?? createMetrics();
  const currencies = config.currencies.length ? config.currencies : (ctx.chain?.currencies ?? []);
  const listingsConfig = { currencies, categories: config.categories, publicBaseUrl: config.publicBaseUrl };

  const reviews = createReviewsModule({ db, orders: ordersReadPort(db) });
  // issue 25: an account's standing, read by every path that lists or orders and by login (modules/moderation)
  const standing = standingPort(db, ctx.now);
  const users = createUsersService({
    repo: createUsersRepo(db),
    // a profile's statistics, each from the module that owns it
    listings: listingsReadPort(db),
    orders: ordersReadPort(db),
    reviews,
    tips: tipsReadPort(db),
    decimalsOf: (code) => currencies.find((c) => c.code === code)?.decimals,
    custodyEnabled: config.custodyEnabled,
  });
  const authRepo = createAuthRepo(db);
  const auth = createAuthService({
    repo: authRepo,
    settings: config,
    now: ctx.now,
    presentUser: (u, isNew) => users.privateView(u, isNew),
    standing,
  });
  const tokens = createTokensService(db, ctx.now);
  // operator roles (issue 25): a change drops this process's reusable principals of the user at once
  const roles = createRolesService({ db, now: ctx.now, onChanged: (userId) => auth.forgetUser(userId) });
  const chain = ctx.chain;
  // what the service keypair may spend on chain (docs/threat-model.md#who-pays-for-what-on-chain): listings, custody and payouts charge it
  const spending = config.spending ?? defaultSpending();
  const sponsorshipSettings = config.feeSponsorship?.enabled ? config.feeSponsorship : null;
  const budget = createBudgetModule({
    db,
    spending,
    log,
    now: ctx.now,
    ...(sponsorshipSettings ? { sponsorship: { dailyLamports: sponsorshipSettings.dailyLamports, perUser: sponsorshipSettings.perUser, perIp: sponsorshipSettings.perIp } } : {}),
  });
  const listings = createListingsModule({
    db,
    readDb: ctx.readRouter?.readDb,
    chain,
    config: { ...listingsConfig, minPrice: spending.listingMinPrice },
    log,
    budget,
    standing,
    ...ctx.listings,
  });
  const marketplace = createMarketplaceModule({ db, readDb: ctx.readRouter?.readDb, config: listingsConfig });
  // revenue reports (issue 25 part 6): read-only sums of the money events
  const reports = createReportsModule({ db, currencies: () => currencies, now: ctx.now });
  // streams and webhooks re-check their credential: at once on a revocation here (credentialSignal),
  // periodically for revocations elsewhere (they are in the database)
  // explorer links in events as in every answer (lib/explorer.ts): added when an event is read, streamed or delivered
  const explorer = createExplorer(config);
  const events = createEventsModule({ db, log, databaseUrl: config.databaseUrl, stream: config.eventStreams, credentialChanges: credentialSignal, explorer });
  const chat = createChatModule({ db, now: ctx.now, rateLimitPerMinute: config.chatRateLimitPerMinute });
  const webhooks = createWebhooksModule({
    db,
    settings: config.webhooks,
    log,
    now: ctx.now,
    credentialChanges: credentialSignal,
    ...ctx.webhooks,
    worker: { onAttempt: (outcome) => metrics.webhookAttempts.inc({ outcome }), explorer, ...ctx.webhooks?.worker },
  });
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
      ports: ctx.custody?.ports,
      budget,
      log,
      now: ctx.now,
    });
  }
  // fee sponsorship (issue 26 item 5, modules/orders/sponsorship.ts): on, with the chain client holding the sponsor key
  const sponsorKey = sponsorshipSettings ? (chain?.escrow as { sponsorAddress?: PublicKey | null } | undefined)?.sponsorAddress ?? null : null;
  const sponsorEscrow = chain?.escrow as { lamportsOf?: (a: PublicKey) => Promise<bigint> } | undefined;
  const sponsorship: FeeSponsorshipPort | undefined =
    sponsorKey && sponsorEscrow?.lamportsOf
      ? {
          address: sponsorKey.toBase58(),
          balance: () => sponsorEscrow.lamportsOf!(sponsorKey),
          charge: (c) => budget.chargeSponsorship(c),
        }
      : undefined;
  let orders: OrdersModule | null = null;
  if (chain?.escrow) {
    const { ports: orderPorts, ...orderOverrides } = ctx.orders ?? {};
    orders = createOrdersModule({
      db,
      chain: { escrow: chain.escrow, currencies: chain.currencies ?? currencies },
      listings: listings.port,
      categories: config.categories,
      config: { publicBaseUrl: config.publicBaseUrl, ...config.orders, ...orderOverrides },
      ports: orderPorts,
      log,
      hasReview: reviews.hasReview,
      // a revision request's message goes into the order's conversation, posted as the buyer
      chat: { postOrderMessage: (p, orderId, body) => chat.service.sendOrderMessage(p as Parameters<typeof chat.service.sendOrderMessage>[0], orderId, body) },
      now: ctx.now,
      custody: custody?.service,
      budget: { sponsorPayeeAccount: (p) => budget.sponsorPayeeAccount(p), record: (c) => budget.record(c) },
      standing,
      sponsorship,
      onEscrow: (m) => metrics.recordEscrow(m),
    });
  }
  // tips (issue 24 item 8): plain transfers the buyer's wallet signs; confirmed from the chain's record
  let tips: TipsModule | null = null;
  if (orders && chainClient?.escrow && chainClient.connection) {
    const escrow = chainClient.escrow;
    const ordersRead = ordersReadPort(db);
    tips = createTipsModule({
      db,
      chain: createTipsChain({ connection: chainClient.connection, tokenProgramOf: (mint) => escrow.tokenProgramOf(mint) }),
      orders: { get: async (id) => ((rows) => (rows.length ? tipOrderOf(rows) : null))(await ordersRead.rowsOf(id)) },
      settings: config.tips,
      log,
      now: ctx.now,
    });
  }
  // one Idempotency-Key store for orders, listings and withdrawals
  const idempotencyStore = orders?.idempotencyStore ?? new PrismaIdempotencyStore(db);
  // custom offers (issue 24): sent in a conversation, accepted into an order through the orders module
  const offers = createOffersModule({
    db,
    chat: chat.repo,
    listings: listings.port,
    orders: orders?.service ?? null,
    currencies,
    minPrice: spending.listingMinPrice,
    now: ctx.now,
    standing,
    idempotencyStore,
    idempotencyLeases: orders?.http.idempotencyLeases,
    idempotencyLeaseMs: orders?.http.idempotencyLeaseMs,
  });

  // the dispute desk (issue 25 part 3): evidence, the arbiter's queue, rulings with a rationale (the split: orders)
  const disputes = createDisputesModule({ db, orders: orders?.service ?? null, chat: chat.repo, settings: config.disputes, now: ctx.now, log });
  // issue 25: reports, the moderators' queue, takedowns (stored by the listings module), account standing
  const moderation = createModerationModule({ db, listings: listings.moderation, standing, now: ctx.now });
  // issue 26: the buyer's order actions (Solana Actions sign-message); needs the orders module (the chain)
  const orderActions: OrderActions | null = orders
    ? createOrderActions({
        nonces: orderActionNonceStore(db),
        orders: orders.service,
        readOrder: (id) => ordersReadPort(db).get(id),
        userOf: async (id) => ((u) => (u ? { id: u.id, wallet: u.wallet } : null))(await authRepo.getUser(id)),
        standing,
        disputes: disputes.service,
        settings: { publicBaseUrl: config.publicBaseUrl, chainId: clusterBlockchainId(config.siwsChainId, ctx.chain) },
        now: ctx.now,
      })
    : null;

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
  const leader = leaderLoops(ctx, { authRepo, retention, listings, orders, custody, tips });
  // Solana Actions (issue 26 item 1): listing cards and buys for blink clients, through the same modules
  const publicBase = config.publicBaseUrl.replace(/\/+$/, '');
  const listingActions = createListingActions({
    listing: (id) => listings.repo.get(id),
    sellerRestricted: (sellerId) => standing.isRestricted(sellerId),
    decimalsOf: (code) => currencies.find((c) => c.code === code)?.decimals,
    principalForWallet: (wallet) => auth.principalForWallet(wallet),
    orders: orders
      ? {
          list: (p, q) => orders!.service.list(p, q),
          create: (p, input) => orders!.service.create(p, input),
          refreshPayment: (p, orderId) => orders!.service.refreshPayment(p, orderId),
          row: (orderId) => orders!.repo.get(orderId),
          checkPayment: (order) => orders!.service.checkPayment(order),
        }
      : null,
    publicBaseUrl: publicBase,
    icon: config.orders?.solanaPayIcon ?? `${publicBase}/icon.svg`,
    now: ctx.now,
  });
  // the audit log (issue 25): written by the outbox (appendEvents) and appendAudit; read by admins
  const audit = createAuditModule({ db });
  serviceMetrics(ctx, metrics, { leader, orders, webhooks });
  if (sponsorship) {
    // the fee sponsor's balance (issue 26 item 5): alert before it runs dry; cached like the database reads
    const sponsorBalance = cachedRead(metrics.scrapeCacheMs, () => sponsorship.balance());
    metrics.registerGauge({
      name: `${METRIC_PREFIX}fee_sponsor_balance_lamports`,
      help: 'Lamports the fee sponsor key holds (FEE_SPONSORSHIP on): it pays the fee and escrow rent of sponsored fund transactions; the rent comes back when each escrow closes',
      labelNames: ['sponsor'] as const,
      async collect(g) {
        const v = await sponsorBalance();
        if (v !== null) g.set({ sponsor: sponsorship.address }, Number(v));
      },
    });
    const spent = cachedRead(metrics.scrapeCacheMs, () => budget.sponsorshipState());
    metrics.registerGauge({
      name: `${METRIC_PREFIX}fee_sponsorship_committed_lamports`,
      help: 'Lamports of fees and escrow rent the fee sponsor committed today (UTC), against FEE_SPONSORSHIP_DAILY_LAMPORTS (label budget)',
      labelNames: ['budget'] as const,
      async collect(g) {
        const v = await spent();
        if (v) g.set({ budget: String(v.budget_lamports) }, v.spent_lamports);
      },
    });
  }
  // the dispute desk's flag (issue 25): disputes unresolved past DISPUTE_ATTENTION_HOURS, in bazaar_attention_flags
  const unresolved = cachedRead(metrics.scrapeCacheMs, () =>
    countDisputesNeedingAttention(db, { now: ctx.now(), attentionHours: disputes.settings.attentionHours }),
  );
  metrics.addAttentionFlags(async () => ({ 'dispute-unresolved': (await unresolved()) ?? 0 }));

  return {
    /** the app's Prometheus metrics (metrics.ts; GET /metrics, http/metrics.ts) */
    metrics,
    /** the service's SOL budget of the day (modules/budget; /readyz `chain_budget`) */
    budget,
    /** fee sponsorship (FEE_SPONSORSHIP on and a sponsor key), else undefined: the start banner shows its balance */
    sponsorship,
    auth,
    /** personal access tokens (modules/auth personal-tokens.ts) */
    tokens,
    roles,
    users,
    listings,
    marketplace,
    reviews,
    /** the orders module when the chain client has the escrow program, else null (order routes: 503) */
    orders,
    wallet,
    events,
    webhooks,
    chat,
    /** custom offers (issue 24 item 6) */
    offers,
    /** the dispute desk (issue 25 part 3) */
    disputes,
    /** Solana Actions (issue 26 item 1): the listing actions (http/actions) */
    actions: { listings: listingActions },
    /** moderation (issue 25): reports, queue, takedowns, account standing */
    moderation,
    /** the buyer's order actions (issue 26, Solana Actions sign-message), null without the orders module */
    orderActions,
    /** the custody module (CUSTODY_ENABLED), else null */
    custody,
    /** the tips module when the chain client has a connection and the escrow program, else null (tip routes: 503) */
    tips,
    /** revenue reports (issue 25 part 6) */
    reports,
    /** the audit log (GET /admin/audit-log, verification) */
    audit,
    idempotencyStore,
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
      await tips?.stop();
      await custody?.stop();
      await orders?.stop();
      await listings.stop();
      await webhooks.stop();
      await events.stop();
    },
  };
}

export type Services = ReturnType<typeof composeServices>;

/**
 * The gauges read at scrape time (metrics.ts; README "Metrics and traces" lists them): the database pool,
 * the leader lease, the payment watcher (in-process state, no query), and the webhook backlog and
 * attention flags (bounded index reads, cached for `metrics.scrapeCacheMs`).
 */
function serviceMetrics(
  ctx: AppContext,
  metrics: Metrics,
  m: { leader: LeaderElection; orders: OrdersModule | null; webhooks: WebhooksModule },
): void {
  const p = METRIC_PREFIX;
  // issue 27 item 4: the standby's replay lag and where public reads go (DATABASE_STANDBY_READS=on)
  const router = ctx.readRouter;
  if (router?.settings.enabled) {
    registerStandbyReadGauges(metrics, () => ({
      lagMs: router.last?.lagMs ?? null,
      inRecovery: router.last ? router.last.inRecovery : null,
      pool: router.standbyUsable() ? 'standby' : 'primary',
      served: router.served,
    }));
  }
  const statements = ctx.dbStatements;
  if (statements) {
    // issue 28: "SQL statements per buyer" is read from the service (npm run bench:flash reads this counter)
    metrics.registerCounter({
      name: `${p}db_statements_total`,
      help: 'SQL statements this process sent to the database through Prisma since it started: every query, plus the BEGIN and COMMIT/ROLLBACK of each transaction (db/statement-counter.ts; PGlite adds SET CONSTRAINTS ALL IMMEDIATE per commit)',
      read: statements,
    });
  }
  const pool = ctx.dbPool;
  if (pool) {
    metrics.registerGauge({
      name: `${p}db_pool_connections`,
      help: 'PostgreSQL pool connections by state: in_use (checked out by a query or transaction), idle, max (DB_POOL_MAX); absent on PGlite (no pool)',
      labelNames: ['state'] as const,
      collect(g) {
        const s = pool();
        if (!s) return;
        g.set({ state: 'in_use' }, s.total - s.idle);
        g.set({ state: 'idle' }, s.idle);
        g.set({ state: 'max' }, s.max);
      },
    });
    metrics.registerGauge({
      name: `${p}db_pool_waiting`,
      help: 'Queries waiting for a free PostgreSQL pool connection (bounded by DB_POOL_QUEUE_MAX: past it they fail with 503)',
      collect(g) {
        const s = pool();
        if (s) g.set(s.waiting);
      },
    });
  }
  const { leader } = m;
  metrics.registerGauge({
    name: `${p}leader_is_leader`,
    help: '1 while this replica holds the leader lease of the background loops (payment watcher, crank, reconcilers, purges), else 0',
    collect: (g) => g.set(leader.isLeader ? 1 : 0),
  });
  metrics.registerGauge({
    name: `${p}leader_lease_term`,
    help: 'Term of the leader lease as this replica last saw it (grows by one each time the lease changes hands), labelled by its holder (host:pid:random)',
    labelNames: ['holder'] as const,
    collect(g) {
      const seen = leader.lastSeen;
      if (seen) g.set({ holder: seen.holder }, Number(seen.term));
    },
  });
  const watcher = m.orders?.watcher;
  if (watcher) {
    metrics.registerGauge({
      name: `${p}payment_watcher_lag_seconds`,
      help: 'Seconds since the payment watcher last finished a pass (funding not yet seen can be at most about this old plus a pass); exported only by the replica running it (the leader)',
      collect(g) {
        const s = watcher.stats();
        if (s.running && s.lastPassEndMs !== null) g.set(Math.max(0, (Date.now() - s.lastPassEndMs) / 1000));
      },
    });
    metrics.registerGauge({
      name: `${p}payment_watcher_pending_orders`,
      help: 'Orders whose escrow account a subscription notification named, waiting for the payment watcher\'s targeted pass',
      collect(g) {
        const s = watcher.stats();
        if (s.running) g.set(s.pending);
      },
    });
  }
  const BACKLOG_CAP = 10_000;
  const backlog = cachedRead(metrics.scrapeCacheMs, () => m.webhooks.repo.backlog(BACKLOG_CAP));
  metrics.registerGauge({
    name: `${p}webhook_backlog`,
    help: `Webhook outbox backlog: kind=pending_deliveries (deliveries not yet delivered nor given up, counted up to ${BACKLOG_CAP}), kind=unfanned_events (committed events the fan-out has not turned into deliveries yet); refreshed at most every scrape cache period`,
    labelNames: ['kind'] as const,
    async collect(g) {
      const b = await backlog();
      if (!b) return;
      g.set({ kind: 'pending_deliveries' }, b.pending);
      g.set({ kind: 'unfanned_events' }, b.unfanned);
    },
  });
  if (m.orders) {
    const flags = cachedRead(metrics.scrapeCacheMs, () => attentionFlagCounts(ctx.db));
    metrics.addAttentionFlags(async () => (await flags()) ?? {});
  }
}

/**
 * The loops that run on exactly one replica at a time, the holder of the leader lease
 * (modules/leader): hourly purges of login nonces, order action nonces, revoked access tokens and rate-limit counters, event
 * retention, listing recovery, the orders' watcher, crank and reconciler, the custody worker. Every
 * replica runs the per-process work itself (the SSE hub: its own streams; the webhook worker: claims
 * with FOR UPDATE SKIP LOCKED, safe on N replicas). Returns the election: `start()` makes the first
 * lease attempt (and, when won, awaits the loops' start-up passes), `stop()` stops the loops and
 * releases the lease.
 */
function leaderLoops(
  ctx: AppContext,
  m: {
    authRepo: AuthRepo;
    retention: EventRetention | null;
    listings: ListingsModule;
    orders: OrdersModule | null;
    custody: CustodyModule | null;
    tips: TipsModule | null;
  },
): LeaderElection {
  const { config, db, log } = ctx;
  let purgeTimer: NodeJS.Timeout | null = null;
  const loops = {
    async start() {
      const purge = () => {
        void m.authRepo.purgeNonces(new Date(ctx.now().getTime() - 86_400_000)).catch((err) => log.warn({ err }, 'nonce purge failed'));
        void m.authRepo.purgeRevokedAccessTokens(ctx.now()).catch((err) => log.warn({ err }, 'revoked token purge failed'));
        void purgeRateLimitHits(db, new Date(Date.now() - 3_600_000)).catch((err) => log.warn({ err }, 'rate-limit purge failed'));
        void orderActionNonceStore(db).purgeExpired(new Date(ctx.now().getTime() - 86_400_000)).catch((err) => log.warn({ err }, 'order action nonce purge failed'));
      };
      purge();
      if (purgeTimer) clearInterval(purgeTimer);
      purgeTimer = setInterval(purge, 3_600_000);
      purgeTimer.unref?.();
      m.retention?.start();
      await m.listings.start();
      await m.orders?.start();
      await m.custody?.start();
      await m.tips?.start();
    },
    async stop() {
      if (purgeTimer) clearInterval(purgeTimer);
      purgeTimer = null;
      await Promise.all([m.custody?.stopLoops(), m.orders?.stopLoops(), m.tips?.stop(), m.listings.stop(), m.retention?.stop()]);
    },
  };
  const lease = config.leaderLease ?? LEADER_LEASE_DEFAULTS;
  return new LeaderElection({
    repo: createLeaderRepo(db),
    name: BACKGROUND_LEASE,
    holder: ctx.leaderHolder,
    ttlMs: lease.ttlMs,
    renewMs: lease.renewMs,
    // the loops' start-up passes run as `leader` unless a loop names itself (Poller actor, withSystemActor)
    onElected: () => withSystemActor('leader', () => loops.start()),
    onDeposed: () => loops.stop(),
    log,
  });
}
