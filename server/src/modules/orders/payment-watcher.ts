/**
 * The orders module's two timer jobs (each its own poller; interval configurable):
 *
 * PaymentWatcher
 *  - payment detection: every awaiting_payment order whose escrow PDA exists with the quoted terms
 *    (buyer, seller, mint, amount) becomes in_progress (escrow funded) and its listing reserved;
 *    unpaid past payment_expires_at (+ blockhash grace) it becomes expired;
 *  - re-funded closed orders: an escrow account of a recently closed order (a fund transaction issued
 *    earlier landed after the order was closed) is refunded to the buyer (OrdersService.refundStrayEscrows).
 *
 * AutoReleaseCrank: delivered orders whose auto_release_at has passed (chain clock) are claimed
 * (the lifecycle table's auto_release row; anyone may call claim, the service pays the fee).
 *
 * Buyers reclaim after a missed delivery deadline themselves (POST /orders/{id}/refund).
 */
import type { OrdersService } from './orders.service.js';
import type { OrdersRepo } from './orders.types.js';
import { Poller } from '../../lib/poller.js';

type Log = { info: (...a: unknown[]) => void; warn: (...a: unknown[]) => void; error: (...a: unknown[]) => void };

export interface PaymentWatcherDeps {
  service: OrdersService;
  repo: OrdersRepo;
  log?: Log;
  batchSize?: number;
}

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
  );

  constructor(private readonly deps: PaymentWatcherDeps) {}

  /** One pass; safe to call from tests (`await watcher.runOnce()`). */
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
    return out;
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

/** The auto-release crank: claims the delivered orders whose review window is over (chain clock). */
export class AutoReleaseCrank {
  private readonly poller = new Poller(
    () => this.runOnce(),
    (err) => this.deps.log?.error({ err }, 'auto-release crank pass failed'),
  );

  constructor(private readonly deps: { service: OrdersService; log?: Log; batchSize?: number }) {}

  /** One pass: the ids of the orders claimed (completed) now. */
  async runOnce(): Promise<{ claimed: string[] }> {
    try {
      return { claimed: await this.deps.service.claimDue(this.deps.batchSize ?? 50) };
    } catch (err) {
      this.deps.log?.warn({ err }, 'auto-release crank failed');
      return { claimed: [] };
    }
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
