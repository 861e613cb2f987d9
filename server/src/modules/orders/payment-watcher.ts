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
 *  is what RPC providers limit and bill): each written order account queues its order id, and the
 *  queued orders are checked at once in batches (issue 28: no pass waits for another; `pump`).
 *  The full pass (`runOnce`) stays as the fallback poll: every `fallbackIntervalMs` while the
 *  subscription is live (it catches a notification the RPC dropped), every `intervalMs` while it is
 *  not (no subscription configured, socket down); each time the subscription comes (back) up, one
 *  full pass catches up what happened while it was down.
 *
 * AutoReleaseCrank: delivered orders whose auto_release_at has passed (chain clock) are claimed
 * (the lifecycle table's auto_release row; anyone may call claim, the service pays the fee).
 *
 * Buyers reclaim after a missed delivery deadline themselves (POST /orders/{id}/refund).
 *
 * A batch (issue 28: the statements and waits of detection; README "Payment detection"): the rows of all
 * its orders in ONE read (`OrdersRepo.getMany`, or the full pass's one `listByStatus`), the escrow accounts
 * the notifications did not carry in one getMultipleAccounts (`EscrowPort.fetchOrders`), the fund
 * signatures of the funded ones looked up together, then each funding in ONE transaction
 * (`OrdersRepo.fundIf`: row, record, listing, events), at most `TARGETED_CONCURRENCY` at a time across
 * batches. A notification that arrives while batches run starts its own batch (up to `MAX_BATCHES`; then it
 * joins the next one to start) instead of waiting for a running pass to end.
 */
import type { OrdersService } from './orders.service.js';
import type { EscrowOrderView, EscrowPort, Log, OrderRecord, OrderWatch, OrderWatchOptions, OrdersRepo } from './orders.types.js';
import { isTerminal } from './order-state.js';
import { Poller } from '../../lib/poller.js';
import { withSystemActor } from '../../lib/request-context.js';
import type { SubscriptionState } from '../../chain/pubsub.js';


export interface PaymentWatcherDeps {
  service: OrdersService;
  repo: OrdersRepo;
  log?: Log;
  batchSize?: number;
  /** the escrow port whose `watchOrders` drives immediate checks (absent, or no websocket: poll only); `fetchOrders` / `findFundSignature` batch the chain reads */
  escrow?: Pick<EscrowPort, 'watchOrders' | 'fetchOrders' | 'findFundSignature'>;
  /** full-pass interval while the subscription is live, ms (default 10 000) */
  fallbackIntervalMs?: number;
  /** subscription reconnect back-off and heartbeat (chain/pubsub.ts defaults) */
  watch?: OrderWatchOptions;
  /** a funded order whose escrow the RPC does not show yet (a lagging node) is checked again after this, ms (default 500), up to 3 times */
  recheckMs?: number;
}

/** Orders checked (funded, expired) at once, across batches: each is a database transaction (the pool has 10 connections by default). */
const TARGETED_CONCURRENCY = 8;
/** Batches of notified orders in flight at once (each: one read of the rows, one of the escrow accounts). */
const MAX_BATCHES = 4;
/** Notified orders taken into one batch at most. */
const BATCH_MAX = 100;

/** Full-pass interval while the order-account subscription is live (ms). */
export const DEFAULT_WATCHER_FALLBACK_INTERVAL_MS = 10_000;

export interface WatcherPass {
  funded: string[];
  expired: string[];
  /** closed orders whose escrow was funded again and has been refunded */
  strayRefunds: string[];
}

/** A counting semaphore: at most `n` holders; the others wait in order. */
class Slots {
  private free: number;
  private readonly waiting: Array<() => void> = [];
  constructor(n: number) {
    this.free = n;
  }
  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free -= 1;
    else await new Promise<void>((r) => this.waiting.push(r));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free += 1;
    }
  }
}

export class PaymentWatcher {
  private readonly poller = new Poller(
    () => this.runOnce(),
    (err) => this.deps.log?.error({ err }, 'payment watcher pass failed'),
    { actor: 'payment-watcher' },
  );

  /** order ids whose escrow account was written and that no batch has taken yet, with the account as notified */
  private readonly pending = new Map<string, EscrowOrderView | null>();
  /** order ids a batch is checking now (a notification for one of them waits in `pending` until it is done) */
  private readonly inFlight = new Set<string>();
  private readonly batches = new Set<Promise<unknown>>();
  private readonly slots = new Slots(TARGETED_CONCURRENCY);
  private pumpQueued = false;
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
   * The orders named by subscription notifications and not taken by a batch yet, as one batch: an
   * awaiting_payment order is checked (funded or not), a closed one (terminal status) means a fund
   * transaction landed late and the stray-escrow refund runs. Other ids (orders that changed state, other
   * services' orders) are ignored. Also callable from tests after `noteOrder`.
   */
  async runTargeted(): Promise<WatcherPass> {
    const batch = [...this.pending];
    this.pending.clear();
    return this.checkNotified(batch);
  }

  /** Queue an order whose escrow account was written (`view`: as notified); while started, it is checked at once (`pump`). */
  noteOrder(orderId: string, view: EscrowOrderView | null = null): void {
    this.pending.set(orderId, view);
    if (!this.running || this.pumpQueued) return;
    // the notifications of one websocket read arrive in the same turn of the event loop: one batch for them
    this.pumpQueued = true;
    setImmediate(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  /** Start batches for the pending orders (not those in flight) while fewer than MAX_BATCHES run. */
  private pump(): void {
    while (this.running && this.batches.size < MAX_BATCHES) {
      const batch: Array<[string, EscrowOrderView | null]> = [];
      for (const [id, view] of this.pending) {
        if (this.inFlight.has(id)) continue;
        batch.push([id, view]);
        if (batch.length >= BATCH_MAX) break;
      }
      if (batch.length === 0) return;
      for (const [id] of batch) {
        this.pending.delete(id);
        this.inFlight.add(id);
      }
      const done = withSystemActor('payment-watcher', () => this.checkNotified(batch))
        .catch((err) => this.deps.log?.error({ err }, 'payment watcher targeted pass failed'))
        .finally(() => {
          for (const [id] of batch) this.inFlight.delete(id);
          this.batches.delete(done);
          this.pump();
        });
      this.batches.add(done);
    }
  }

  /** One batch of notified orders (see runTargeted). */
  private async checkNotified(batch: ReadonlyArray<[string, EscrowOrderView | null]>): Promise<WatcherPass> {
    const out: WatcherPass = { funded: [], expired: [], strayRefunds: [] };
    if (batch.length === 0) return out;
    const notified = new Map(batch);
    let rows: OrderRecord[] = [];
    try {
      rows = await this.deps.repo.getMany([...notified.keys()]);
    } catch (err) {
      this.deps.log?.warn({ err, orders: notified.size }, 'payment check failed');
      for (const id of notified.keys()) this.recheckLater(id);
      return out;
    }
    const unpaid = rows.filter((o) => o.status === 'awaiting_payment');
    const stray = rows.some((o) => isTerminal(o.status));
    // the notified account is used once; a recheck (view null) reads the chain
    const checked = await this.checkRows(unpaid, notified, out);
    for (const o of unpaid) {
      if (checked.get(o.id) === 'awaiting_payment') this.recheckLater(o.id);
      else this.rechecks.delete(o.id);
    }
    if (stray) {
      try {
        out.strayRefunds = await this.deps.service.refundStrayEscrows(this.deps.batchSize ?? 50);
      } catch (err) {
        this.deps.log?.warn({ err }, 'stray escrow check failed');
      }
    }
    this.lastPassEnd = Date.now();
    return out;
  }

  /**
   * Check awaiting_payment `orders`: their escrow accounts (`known` when notified, the others in one
   * getMultipleAccounts), the fund signatures of the funded ones together, then each order's
   * `checkPayment` (funded -> one transaction; unpaid past its window -> expired) within the shared slots.
   * Returns each order's status after its check (a failed check leaves it awaiting_payment).
   */
  private async checkRows(orders: readonly OrderRecord[], known: ReadonlyMap<string, EscrowOrderView | null>, out: WatcherPass): Promise<Map<string, string>> {
    const { service, escrow } = this.deps;
    const status = new Map<string, string>();
    if (orders.length === 0) return status;
    const views = new Map<string, EscrowOrderView | null>();
    for (const o of orders) {
      const v = known.get(o.id);
      if (v) views.set(o.id, v);
    }
    const unread = orders.filter((o) => !views.has(o.id)).map((o) => o.id);
    if (unread.length && escrow?.fetchOrders) {
      try {
        for (const [id, v] of await escrow.fetchOrders(unread)) views.set(id, v);
      } catch (err) {
        // read one by one below (checkPayment), as without a batch read
        this.deps.log?.warn({ err, orders: unread.length }, 'escrow batch read failed');
      }
    }
    // the fund transactions of the funded orders, looked up together (one RPC each, in parallel)
    const found = new Map<string, { signature: string; slot: number } | null>();
    if (escrow?.findFundSignature) {
      const lookup = escrow.findFundSignature.bind(escrow);
      await Promise.all(
        orders
          .filter((o) => {
            const v = views.get(o.id);
            return v && service.termsMatch(o, v);
          })
          .map(async (o) => found.set(o.id, await lookup(o.id).catch(() => null))),
      );
    }
    await Promise.all(
      orders.map((o) =>
        this.slots.run(async () => {
          try {
            // views.get: an account (use it), null (read: none; checkPayment decides expiry), or not read (read there)
            const s = await service.checkPayment(o, views.has(o.id) ? views.get(o.id)! : undefined, found.has(o.id) ? found.get(o.id) : undefined);
            status.set(o.id, s);
            if (s === 'in_progress') out.funded.push(o.id);
            else if (s === 'expired') out.expired.push(o.id);
          } catch (err) {
            status.set(o.id, 'awaiting_payment');
            this.deps.log?.warn({ err, order_id: o.id }, 'payment check failed');
          }
        }),
      ),
    );
    return status;
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
    // one read of the unpaid rows, one getMultipleAccounts per 100 of them (issue 28)
    await this.checkRows(await repo.listByStatus('awaiting_payment', this.deps.batchSize ?? 100), new Map(), out);
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
    if (this.pending.size) this.pump();
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

  /** Close the subscription, stop the loops and wait for the passes and batches in progress. */
  async stop(): Promise<void> {
    this.running = false;
    const watch = this.watch;
    this.watch = null;
    for (const t of this.recheckTimers) clearTimeout(t);
    this.recheckTimers.clear();
    this.rechecks.clear();
    await watch?.stop();
    await Promise.all([this.poller.stop(), ...this.batches]);
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
