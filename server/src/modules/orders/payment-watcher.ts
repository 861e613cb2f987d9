/**
 * The orders module's two background jobs:
 *
 * PaymentWatcher
 *  - payment detection: every awaiting_payment order whose escrow PDA exists with the quoted terms
 *    (buyer, seller, mint, amount) becomes in_progress (escrow funded) and its listing reserved;
 *    unpaid past payment_expires_at (+ blockhash grace) it becomes expired;
 *  - re-funded closed orders: an escrow account of a recently closed order (a fund transaction issued
 *    earlier landed after the order was closed) is refunded to the buyer (OrdersService.refundStrayEscrows).
 *  Driven by a subscription when the chain has a websocket (`EscrowPort.watchOrders`: ONE
 *  programSubscribe on the escrow program, filtered to Order accounts; per-order accountSubscribe
 *  would need a subscription per unpaid order, created and dropped with each order, and its count
 *  is what RPC providers limit and bill): each written order account queues its order id, and a
 *  coalesced pass (`runTargeted`: at most one running, one more queued) checks just those orders.
 *  The full pass (`runOnce`) stays as the fallback poll: every `fallbackIntervalMs` while the
 *  subscription is live (it catches a notification the RPC dropped), every `intervalMs` while it is
 *  not (no subscription configured, socket down); each time the subscription comes (back) up, one
 *  full pass catches up what happened while it was down.
 *
 * AutoReleaseCrank: delivered orders whose auto_release_at has passed (chain clock) are claimed
 * (the lifecycle table's auto_release row; anyone may call claim, the service pays the fee).
 *
 * Buyers reclaim after a missed delivery deadline themselves (POST /orders/{id}/refund).
 */
import type { OrdersService } from './orders.service.js';
import type { EscrowOrderView, EscrowPort, Log, OrderWatch, OrderWatchOptions, OrdersRepo } from './orders.types.js';
import { isTerminal } from './order-state.js';
import { Poller } from '../../lib/poller.js';
import type { SubscriptionState } from '../../chain/pubsub.js';


export interface PaymentWatcherDeps {
  service: OrdersService;
  repo: OrdersRepo;
  log?: Log;
  batchSize?: number;
  /** the escrow port whose `watchOrders` drives immediate passes (absent, or no websocket: poll only) */
  escrow?: Pick<EscrowPort, 'watchOrders'>;
  /** full-pass interval while the subscription is live, ms (default 10 000) */
  fallbackIntervalMs?: number;
  /** subscription reconnect back-off and heartbeat (chain/pubsub.ts defaults) */
  watch?: OrderWatchOptions;
  /** a funded order whose escrow the RPC does not show yet (a lagging node) is checked again after this, ms (default 500), up to 3 times */
  recheckMs?: number;
}

/** Orders a targeted pass checks at once. */
const TARGETED_CONCURRENCY = 8;

/** Full-pass interval while the order-account subscription is live (ms). */
export const DEFAULT_WATCHER_FALLBACK_INTERVAL_MS = 10_000;

export interface WatcherPass {
  funded: string[];
  expired: string[];
  /** closed orders whose escrow was funded again and has been refunded */
  strayRefunds: string[];
}

export class PaymentWatcher {
  private readonly poller = new Poller(
    () => this.runOnce(),
    (err) => this.deps.log?.error({ err }, 'payment watcher pass failed'),
    { actor: 'payment-watcher' },
  );

  private readonly targeted = new Poller(
    () => this.runTargeted(),
    (err) => this.deps.log?.error({ err }, 'payment watcher targeted pass failed'),
    { actor: 'payment-watcher' },
  );
  /** order ids whose escrow account was written since the last targeted pass, with the account as notified */
  private readonly pending = new Map<string, EscrowOrderView | null>();
  /** rechecks already made per order id (see `recheckMs`) */
  private readonly rechecks = new Map<string, number>();
  private readonly recheckTimers = new Set<NodeJS.Timeout>();
  private watch: OrderWatch | null = null;
  private intervalMs = 0;
  private lastPassEnd: number | null = null;
  private running = false;

  constructor(private readonly deps: PaymentWatcherDeps) {}

  /**
   * For the metrics (no query): whether the loops run in this process (the leader), when the last pass
   * (full or targeted) finished (ms since the epoch, null before the first), and how many notified orders
   * wait for a targeted pass.
   */
  stats(): { running: boolean; lastPassEndMs: number | null; pending: number } {
    return { running: this.running, lastPassEndMs: this.lastPassEnd, pending: this.pending.size };
  }

  /** The order-account subscription: `stopped` when there is none (not started, or no websocket). */
  get subscription(): SubscriptionState {
    return this.watch?.state ?? 'stopped';
  }

  /**
   * The orders named by subscription notifications since the last call: an awaiting_payment order is
   * checked (funded or not), a closed one (terminal status) means a fund transaction landed late and
   * the stray-escrow refund runs. Other ids (orders that changed state, other services' orders) are
   * ignored. Also callable from tests after `noteOrder`.
   */
  async runTargeted(): Promise<WatcherPass> {
    const { service, repo } = this.deps;
    const out: WatcherPass = { funded: [], expired: [], strayRefunds: [] };
    const queue = [...this.pending];
    this.pending.clear();
    let stray = false;
    const one = async ([id, view]: [string, EscrowOrderView | null]) => {
      try {
        const order = await repo.get(id);
        if (!order) return;
        if (order.status === 'awaiting_payment') {
          // the notified account is used once; a recheck reads the chain
          const status = await service.checkPayment(order, view ?? undefined);
          if (status === 'awaiting_payment') return this.recheckLater(id);
          this.rechecks.delete(id);
          if (status === 'in_progress') out.funded.push(id);
          else if (status === 'expired') out.expired.push(id);
        } else if (isTerminal(order.status)) {
          stray = true;
        }
      } catch (err) {
        this.deps.log?.warn({ err, order_id: id }, 'payment check failed');
      }
    };
    // several orders at once: notifications of concurrent payments do not wait for each other
    await Promise.all(Array.from({ length: Math.min(TARGETED_CONCURRENCY, queue.length) }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await one(next);
    }));
    if (stray) {
      try {
        out.strayRefunds = await service.refundStrayEscrows(this.deps.batchSize ?? 50);
      } catch (err) {
        this.deps.log?.warn({ err }, 'stray escrow check failed');
      }
    }
    this.lastPassEnd = Date.now();
    return out;
  }

  /** Queue an order whose escrow account was written (`view`: as notified), and run a targeted pass (coalesced). */
  noteOrder(orderId: string, view: EscrowOrderView | null = null): void {
    this.pending.set(orderId, view);
    this.targeted.trigger();
  }

  /**
   * The notification said the escrow was written, but the order is still unpaid: the RPC node that
   * answered the read may lag the one that notified (load-balanced providers). Look again shortly, a
   * few times, before leaving it to the fallback poll.
   */
  private recheckLater(orderId: string): void {
    const n = this.rechecks.get(orderId) ?? 0;
    if (n >= 3 || this.watch === null) {
      this.rechecks.delete(orderId);
      return;
    }
    this.rechecks.set(orderId, n + 1);
    const t = setTimeout(() => {
      this.recheckTimers.delete(t);
      this.noteOrder(orderId);
    }, this.deps.recheckMs ?? 500);
    t.unref?.();
    this.recheckTimers.add(t);
  }

  /** One full pass; safe to call from tests (`await watcher.runOnce()`). */
  async runOnce(): Promise<WatcherPass> {
    const { service, repo } = this.deps;
    const out: WatcherPass = { funded: [], expired: [], strayRefunds: [] };
    for (const order of await repo.listByStatus('awaiting_payment', this.deps.batchSize ?? 100)) {
      try {
        const status = await service.checkPayment(order);
        if (status === 'in_progress') out.funded.push(order.id);
        if (status === 'expired') out.expired.push(order.id);
      } catch (err) {
        this.deps.log?.warn({ err, order_id: order.id }, 'payment check failed');
      }
    }
    try {
      out.strayRefunds = await service.refundStrayEscrows(this.deps.batchSize ?? 50);
    } catch (err) {
      this.deps.log?.warn({ err }, 'stray escrow check failed');
    }
    this.lastPassEnd = Date.now();
    return out;
  }

  /**
   * Start: the full pass every `intervalMs` milliseconds (see Poller), and the order-account
   * subscription when the escrow port offers one; once it is live the full pass slows down to
   * `fallbackIntervalMs`, and returns to `intervalMs` whenever it goes down.
   */
  start(intervalMs: number): void {
    this.running = true;
    this.intervalMs = intervalMs;
    this.poller.start(intervalMs);
    this.targeted.start(0);
    if (this.watch) return;
    this.watch =
      this.deps.escrow?.watchOrders?.(
        {
          onOrder: (orderId, _slot, view) => this.noteOrder(orderId, view),
          onSubscribed: () => {
            this.poller.reschedule(this.deps.fallbackIntervalMs ?? DEFAULT_WATCHER_FALLBACK_INTERVAL_MS);
            this.poller.trigger(); // what landed while no subscription was live
          },
          onDown: (reason) => {
            this.deps.log?.warn({ reason }, 'payment watcher subscription lost; polling every interval until it is back');
            this.poller.reschedule(this.intervalMs);
            this.poller.trigger();
          },
        },
        this.deps.watch,
      ) ?? null;
    this.watch?.start();
  }

  /** Close the subscription, stop the loops and wait for the passes in progress. */
  async stop(): Promise<void> {
    this.running = false;
    const watch = this.watch;
    this.watch = null;
    for (const t of this.recheckTimers) clearTimeout(t);
    this.recheckTimers.clear();
    this.rechecks.clear();
    await watch?.stop();
    await Promise.all([this.poller.stop(), this.targeted.stop()]);
  }
}

/** The auto-release crank: claims the delivered orders whose review window is over (chain clock). */
export class AutoReleaseCrank {
  private readonly poller = new Poller(
    () => this.runOnce(),
    (err) => this.deps.log?.error({ err }, 'auto-release crank pass failed'),
    { actor: 'auto-release' },
  );

  constructor(private readonly deps: { service: OrdersService; log?: Log; batchSize?: number }) {}

  /** One pass: the ids of the orders claimed (completed) now, and the proposals expired now (issue 24). */
  async runOnce(): Promise<{ claimed: string[]; expired: string[] }> {
    let claimed: string[] = [];
    try {
      claimed = await this.deps.service.claimDue(this.deps.batchSize ?? 50);
    } catch (err) {
      this.deps.log?.warn({ err }, 'auto-release crank failed');
    }
    const expired = await this.deps.service.expireProposals(this.deps.batchSize ?? 50).catch((err) => {
      this.deps.log?.warn({ err }, 'proposal expiry failed');
      return [] as string[];
    });
    return { claimed, expired };
  }

  /** Run `runOnce` every `intervalMs` milliseconds (see Poller). */
  start(intervalMs: number): void {
    this.poller.start(intervalMs);
  }

  /** Stop the loop and wait for a pass in progress. */
  stop(): Promise<void> {
    return this.poller.stop();
  }
}
