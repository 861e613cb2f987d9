/**
 * Crash safety: converge the database to the chain for every ChainIntent left `pending` or `sent`
 * (the service records an intent BEFORE sending; a crash between send and the DB write leaves it open).
 *
 * For one open intent:
 *  1. the order already shows the action's target status -> mark the intent confirmed;
 *  2. the intent has a signature -> getSignatureStatuses: confirmed -> apply, failed -> mark failed;
 *  3. otherwise read the order account (fetchOrder):
 *     - terminal actions (release/claim/resolve_dispute/refund) close the account: `null` means the
 *       money already moved. The closing transaction is looked up (newest escrow instruction on the
 *       PDA): ours -> apply, never send it again; another terminal instruction (a party acting
 *       directly) -> converge to that outcome and mark our intent failed;
 *     - mark_delivered / open_dispute: the account state shows Delivered / Disputed -> apply;
 *  4. nothing on chain and the intent is older than `graceSeconds` (past any blockhash lifetime)
 *     -> mark it failed so the action may be retried; younger intents stay open.
 * Applying = one DB transaction (intent confirmed + order patched), then the listing effect.
 *
 * Runs once at start-up and then every `intervalMs`. It never sends a transaction.
 */
import { type Instruction, instructionAction, instructionEscrowState, targetStatus } from '../modules/orders/order-state.js';
import { patchForInstruction } from '../modules/orders/order-patch.js';
import type { ChainIntentRecord, ClosingInstruction, EscrowPort, OrderRecord, OrdersRepo } from '../modules/orders/orders.types.js';
import { Poller } from '../lib/poller.js';

type Log = { info: (...a: unknown[]) => void; warn: (...a: unknown[]) => void; error: (...a: unknown[]) => void };

export interface ReconcilerDeps {
  repo: OrdersRepo;
  escrow: EscrowPort;
  log?: Log;
  /** called after an order changed status (listing effects) */
  onSettled?: (order: OrderRecord, action: Instruction) => Promise<void>;
  /** serialize with the service's per-order lock */
  withOrderLock?: <T>(orderId: string, fn: () => Promise<T>) => Promise<T>;
  now?: () => Date;
  /** intents with nothing on chain older than this are marked failed (default 120 s) */
  graceSeconds?: number;
  /** also compare active orders with their escrow accounts on each pass (default false) */
  syncDrift?: boolean;
}

export type ReconcileOutcome = 'confirmed' | 'failed' | 'open';

const silent: Log = { info() {}, warn() {}, error() {} };

export class Reconciler {
  private readonly poller = new Poller(
    () => this.runOnce(),
    (err) => this.log.error({ err }, 'reconciler pass failed'),
    { immediate: true },
  );
  private readonly log: Log;

  constructor(private readonly deps: ReconcilerDeps) {
    this.log = deps.log ?? silent;
  }

  /** Settle one intent (caller holds the order lock, or use `reconcileIntentLocked`). */
  async reconcileIntent(intent: ChainIntentRecord): Promise<ReconcileOutcome> {
    const { repo, escrow } = this.deps;
    const order = await repo.get(intent.orderId);
    if (!order) {
      await repo.failIntent(intent.id, 'order not found');
      return 'failed';
    }
    const ix = intent.action;
    const action = instructionAction[ix];
    if (ix === 'fund' || !action) {
      await repo.failIntent(intent.id, `not a service-sent instruction: ${ix}`);
      return 'failed';
    }
    if (order.status === targetStatus(action)) {
      await repo.confirmIntent(intent.id, intent.signature, intent.slot, order.id, order.status, {});
      return 'confirmed';
    }

    if (intent.signature) {
      const st = await escrow.signatureStatus(intent.signature);
      if (st === 'failed') {
        await repo.failIntent(intent.id, `transaction ${intent.signature} failed on chain`);
        return 'failed';
      }
      if (st === 'confirmed') return this.apply(intent, order);
    }

    const view = await escrow.fetchOrder(order.id);
    const expected = instructionEscrowState[ix];
    if (expected !== null && view?.state === expected) return this.apply(intent, order, view);
    if (expected === null && view === null) {
      // the account is closed: find out by which instruction (a party may have acted directly)
      const closing = escrow.findClosingInstruction ? await escrow.findClosingInstruction(order.id).catch(() => null) : null;
      if (closing && closing.instruction !== ix) {
        await this.applyClosing(order, closing);
        await repo.failIntent(intent.id, `superseded: the escrow was closed by ${closing.instruction} ${closing.signature}`);
        return 'failed';
      }
      // ours (or not determinable: the only terminal move we asked for is ours)
      const signature = closing?.signature ?? intent.signature;
      return this.apply({ ...intent, signature, slot: closing?.slot ?? intent.slot }, order, null);
    }

    const ageSeconds = ((this.deps.now?.() ?? new Date()).getTime() - intent.createdAt.getTime()) / 1000;
    if (ageSeconds > (this.deps.graceSeconds ?? 120)) {
      await repo.failIntent(intent.id, 'not found on chain after the grace period');
      return 'failed';
    }
    return 'open';
  }

  /** Converge an order to a terminal instruction found on chain (not sent by this intent). */
  private async applyClosing(order: OrderRecord, closing: ClosingInstruction): Promise<boolean> {
    const nowSeconds = await this.deps.escrow.chainNow().catch(() => Math.floor(Date.now() / 1000));
    const params = closing.buyerBps !== undefined ? { buyer_bps: closing.buyerBps } : null;
    const patch = patchForInstruction(closing.instruction, order, params, closing.signature, { nowSeconds });
    const changed = await this.deps.repo.updateIf(order.id, order.status, patch);
    await this.deps.repo.recordConfirmed(order.id, closing.instruction, closing.signature, closing.slot);
    this.log.info({ order_id: order.id, instruction: closing.instruction, signature: closing.signature }, 'reconciler: order closed on chain by another transaction');
    if (changed && this.deps.onSettled) {
      const after = await this.deps.repo.get(order.id);
      if (after) await this.deps.onSettled(after, closing.instruction);
    }
    return changed;
  }

  async reconcileIntentLocked(intent: ChainIntentRecord): Promise<ReconcileOutcome> {
    const lock = this.deps.withOrderLock ?? ((_id, fn) => fn());
    return lock(intent.orderId, async () => {
      const fresh = (await this.deps.repo.listIntents(intent.orderId)).find((i) => i.id === intent.id);
      if (!fresh || (fresh.status !== 'pending' && fresh.status !== 'sent')) return fresh?.status === 'failed' ? 'failed' : 'confirmed';
      return this.reconcileIntent(fresh);
    });
  }

  private async apply(intent: ChainIntentRecord, order: OrderRecord, view?: EscrowOrderViewOrNull): Promise<ReconcileOutcome> {
    const nowSeconds = await this.deps.escrow.chainNow().catch(() => Math.floor(Date.now() / 1000));
    const ix = intent.action as Exclude<Instruction, 'fund'>;
    const v = view === undefined && instructionEscrowState[ix] !== null ? await this.deps.escrow.fetchOrder(order.id) : view;
    const patch = patchForInstruction(ix, order, intent.params, intent.signature, { view: v ?? null, nowSeconds });
    const changed = await this.deps.repo.confirmIntent(intent.id, intent.signature, intent.slot, order.id, order.status, patch);
    this.log.info({ order_id: order.id, action: intent.action, intent_id: intent.id, changed }, 'reconciler: intent confirmed from chain');
    if (changed && this.deps.onSettled) {
      const after = await this.deps.repo.get(order.id);
      if (after) await this.deps.onSettled(after, intent.action);
    }
    return 'confirmed';
  }

  /**
   * Drift: a party may act on the escrow directly with its own wallet (the seller's mark_delivered,
   * a party's open_dispute). Move the order forward when the account shows a later non-terminal
   * state. A closed account without an intent of ours is only logged: release, claim, refund and
   * resolve all close it, so the outcome is not knowable from the account alone.
   */
  async syncOrderFromChain(order: OrderRecord): Promise<'delivered' | 'disputed' | 'closed' | null> {
    if (order.status !== 'in_progress' && order.status !== 'delivered' && order.status !== 'disputed') return null;
    if (await this.deps.repo.openIntentFor(order.id)) return null;
    const view = await this.deps.escrow.fetchOrder(order.id);
    const nowSeconds = await this.deps.escrow.chainNow().catch(() => Math.floor(Date.now() / 1000));
    if (view === null) {
      const closing = this.deps.escrow.findClosingInstruction ? await this.deps.escrow.findClosingInstruction(order.id).catch(() => null) : null;
      if (closing) {
        await this.applyClosing(order, closing);
        return 'closed';
      }
      this.log.warn({ order_id: order.id, status: order.status }, 'reconciler: escrow account closed outside the service, closing transaction not found');
      return null;
    }
    const ix = view.state === 'disputed' && order.status !== 'disputed' ? 'open_dispute' : view.state === 'delivered' && order.status === 'in_progress' ? 'mark_delivered' : null;
    if (!ix) return null;
    const patch = patchForInstruction(ix, order, null, null, { view, nowSeconds });
    const changed = await this.deps.repo.updateIf(order.id, order.status, patch);
    if (changed) this.log.info({ order_id: order.id, state: view.state }, 'reconciler: order moved forward from the chain');
    return changed ? (view.state as 'delivered' | 'disputed') : null;
  }

  /** One pass over all open intents. Returns the outcome per intent id. */
  async runOnce(limit = 100): Promise<Record<string, ReconcileOutcome>> {
    const out: Record<string, ReconcileOutcome> = {};
    for (const intent of await this.deps.repo.listOpenIntents(limit)) {
      try {
        out[intent.id] = await this.reconcileIntentLocked(intent);
      } catch (err) {
        this.log.warn({ err, intent_id: intent.id }, 'reconciler: intent left open');
        out[intent.id] = 'open';
      }
    }
    if (this.deps.syncDrift) {
      const lock = this.deps.withOrderLock ?? ((_id, fn) => fn());
      for (const status of ['in_progress', 'delivered', 'disputed'] as const) {
        for (const order of await this.deps.repo.listByStatus(status, limit)) {
          await lock(order.id, async () => {
            const fresh = await this.deps.repo.get(order.id);
            if (fresh) await this.syncOrderFromChain(fresh);
          }).catch((err) => this.log.warn({ err, order_id: order.id }, 'reconciler: drift check failed'));
        }
      }
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

type EscrowOrderViewOrNull = Awaited<ReturnType<EscrowPort['fetchOrder']>>;
