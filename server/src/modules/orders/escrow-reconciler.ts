/**
 * EscrowReconciler (orders module): crash safety for the orders' escrow instructions. Converge the database to the chain for every ChainIntent left `pending` or `sent`
 * (the service records an intent BEFORE sending; a crash between send and the DB write leaves it open).
 *
 * For one open intent:
 *  1. the order already shows the action's target status -> mark the intent confirmed;
 *  2. no signature recorded -> nothing was ever sent (the signature is stored before the first send,
 *     and only while the intent is still pending) -> failed at once, the action may be retried;
 *  3. the recorded attempt's outcome (chain/recorded-send.ts, the protocol custody and listings share):
 *     landed -> apply; rejected -> failed;
 *  4. otherwise the account: mark_delivered / open_dispute show in its state -> apply; terminal
 *     instructions close it, and the settlement is read from the chain's record of THIS order
 *     (chain/settlement.ts: the instruction acting on its PDA, the program event, the transfers out of
 *     its vault): ours -> apply; another party's -> the order takes that outcome, our intent is
 *     marked failed (superseded);
 *  5. the outcome is dead (never seen, and its blockhash expired: block height past
 *     lastValidBlockHeight, or the cluster no longer accepts the blockhash; read before the status, so
 *     final) -> it can never land -> failed at once; intents without a recorded lifetime (older rows)
 *     wait `graceSeconds`.
 * Applying = one DB transaction (intent confirmed + order patched, with the payout the chain recorded),
 * then the listing effect and the custodial booking.
 *
 * Drift (`syncDrift`): orders whose escrow moved without an intent of ours catch up (a party's own
 * wallet). An escrow account that vanished without a transaction that closed it (e.g. a node that lost
 * its history, or funding that was rolled back) is flagged for an operator once (`attention`
 * `escrow-vanished`, with the vault's balance and the fund signature's status) instead of being
 * retried forever; the flag clears when the account shows up again.
 *
 * Runs once at start-up and then every `intervalMs`. It never sends a transaction.
 */
import { type Instruction, type ServiceInstruction, changesStatus, closesEscrow, instructionAction, instructionEscrowState, targetStatus } from './order-state.js';
import { formulaPayout, patchForInstruction } from './order-patch.js';
import type { ChainIntentRecord, EscrowPort, Log, OrderRecord, OrderSettlement, OrdersRepo } from './orders.types.js';
import { Poller } from '../../lib/poller.js';
import { silentLog } from '../../lib/log.js';


export interface ReconcilerDeps {
  repo: OrdersRepo;
  escrow: EscrowPort;
  log?: Log;
  /** called after an order changed status (listing effects, custodial booking) */
  onSettled?: (order: OrderRecord, action: Instruction) => Promise<void>;
  /** serialize with the service's per-order lock */
  withOrderLock?: <T>(orderId: string, fn: () => Promise<T>) => Promise<T>;
  now?: () => Date;
  /** signed intents without a recorded blockhash lifetime and nothing on chain are failed after this (default 120 s) */
  graceSeconds?: number;
  /** also compare active orders with their escrow accounts on each pass (default false) */
  syncDrift?: boolean;
}

export type ReconcileOutcome = 'confirmed' | 'failed' | 'open';


/** An intent the service opened to refund an escrow re-funded after its order was closed (see OrdersService). */
export const isStrayRefund = (intent: Pick<ChainIntentRecord, 'action' | 'params'>) =>
  intent.action === 'refund' && intent.params?.reason === 'stray-escrow';

export class EscrowReconciler {
  private readonly poller = new Poller(
    () => this.runOnce(),
    (err) => this.log.error({ err }, 'reconciler pass failed'),
    { immediate: true, actor: 'reconciler' },
  );
  private readonly log: Log;

  constructor(private readonly deps: ReconcilerDeps) {
    this.log = deps.log ?? silentLog;
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
    const action = ix === 'fund' ? undefined : instructionAction[ix];
    if (!action) {
      await repo.failIntent(intent.id, `not a service-sent instruction: ${ix}`);
      return 'failed';
    }
    const stray = isStrayRefund(intent);
    // a status-keeping instruction (a proposal, an extension) cannot be told done by the status: by its signature only
    if (!stray && changesStatus(action) && order.status === targetStatus(action)) {
      await repo.confirmIntent(intent.id, intent.signature, intent.slot, order.id, order.status, {});
      return 'confirmed';
    }
    if (!intent.signature) {
      // the signature is stored before the first send and only while pending: nothing was sent
      await repo.failIntent(intent.id, 'never signed: nothing was sent');
      this.log.info({ order_id: order.id, action: ix, intent_id: intent.id }, 'reconciler: unsent intent settled as failed');
      return 'failed';
    }

    // the recorded attempt's outcome (chain/recorded-send.ts); intents without a recorded lifetime
    // (older rows) never expire by height and wait `graceSeconds` instead
    const outcome = await escrow.transactionOutcome({
      signature: intent.signature,
      lastValidBlockHeight: intent.lastValidBlockHeight ?? Number.MAX_SAFE_INTEGER,
      blockhash: intent.lastValidBlockHeight !== null ? intent.blockhash : null,
    });
    if (outcome.state === 'dead' && outcome.reason === 'rejected') {
      await repo.failIntent(intent.id, `transaction ${intent.signature} failed on chain`);
      return 'failed';
    }
    if (outcome.state === 'landed') {
      if (stray) {
        await repo.confirmIntent(intent.id, intent.signature, intent.slot, order.id, order.status, {});
        return 'confirmed';
      }
      return this.apply(intent, order);
    }

    if (!stray) {
      const view = await escrow.fetchOrder(order.id);
      const expected = instructionEscrowState[ix];
      if (expected !== null && expected !== undefined && view?.state === expected) return this.apply(intent, order, view);
      if (expected === null && view === null) {
        // the account is closed: by which transaction? (a party may have acted directly)
        const settlement = await this.findSettlement(order);
        if (settlement && settlement.signature === intent.signature) return this.apply(intent, order, null, settlement);
        if (settlement) {
          await this.applySettlement(order, settlement);
          await repo.failIntent(intent.id, `superseded: the escrow was closed by ${settlement.instruction} ${settlement.signature}`);
          return 'failed';
        }
        // closed, and no transaction that closed it is known: never assumed to be ours (see below)
      }
    }

    if (outcome.state === 'dead' || (intent.lastValidBlockHeight === null && this.pastGrace(intent))) {
      await repo.failIntent(intent.id, `transaction ${intent.signature} expired without landing`);
      this.log.info({ order_id: order.id, action: ix, intent_id: intent.id }, 'reconciler: expired intent settled as failed');
      return 'failed';
    }
    return 'open';
  }

  /** An intent without a recorded blockhash lifetime (older rows) is given up after `graceSeconds`. */
  private pastGrace(intent: ChainIntentRecord): boolean {
    const ageSeconds = ((this.deps.now?.() ?? new Date()).getTime() - intent.createdAt.getTime()) / 1000;
    return ageSeconds > (this.deps.graceSeconds ?? 120);
  }

  private async findSettlement(order: OrderRecord, signature?: string): Promise<OrderSettlement | null> {
    if (!this.deps.escrow.findSettlement) return null;
    return this.deps.escrow.findSettlement({ id: order.id, mint: order.mint }, signature).catch((err) => {
      this.log.warn({ err, order_id: order.id }, 'reconciler: settlement not readable');
      return null;
    });
  }

  /** Converge an order to a settlement found on chain (not sent by an intent of ours). */
  private async applySettlement(order: OrderRecord, s: OrderSettlement): Promise<boolean> {
    const nowSeconds = await this.deps.escrow.chainNow().catch(() => Math.floor(Date.now() / 1000));
    const params = s.buyerBps !== undefined ? { buyer_bps: s.buyerBps } : null;
    const patch = patchForInstruction(s.instruction, order, params, s.signature, { nowSeconds, settlement: s });
    const changed = await this.deps.repo.updateIf(order.id, order.status, patch);
    await this.deps.repo.recordConfirmed(order.id, s.instruction, s.signature, s.slot);
    this.log.info(
      { order_id: order.id, instruction: s.instruction, signature: s.signature, payout: stringify(s.payout) },
      'reconciler: order closed on chain by another transaction',
    );
    if (order.attention) await this.deps.repo.clearAttention(order.id);
    if (changed && this.deps.onSettled) {
      const after = await this.deps.repo.get(order.id);
      if (after) await this.deps.onSettled(after, s.instruction);
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

  /** Apply our own confirmed intent; terminal instructions take their payout from the chain's record. */
  private async apply(
    intent: ChainIntentRecord,
    order: OrderRecord,
    view?: EscrowOrderViewOrNull,
    settlement?: OrderSettlement | null,
  ): Promise<ReconcileOutcome> {
    const nowSeconds = await this.deps.escrow.chainNow().catch(() => Math.floor(Date.now() / 1000));
    const ix = intent.action as ServiceInstruction;
    const v = view === undefined && instructionEscrowState[ix] !== null ? await this.deps.escrow.fetchOrder(order.id) : view;
    let s = settlement ?? null;
    if (closesEscrow(ix) && !s && intent.signature) s = await this.findSettlement(order, intent.signature);
    if (closesEscrow(ix) && !s && intent.signature) {
      // our own confirmed transaction (one instruction, this order) that cannot be read back: the program's split
      const bps = typeof intent.params?.buyer_bps === 'number' ? intent.params.buyer_bps : null;
      s = { instruction: ix, signature: intent.signature, slot: intent.slot ?? 0, payout: formulaPayout(ix, order, bps) };
    }
    const patch = patchForInstruction(ix, order, intent.params, intent.signature, { view: v ?? null, nowSeconds, settlement: s });
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
   * a party's open_dispute, a refund, the buyer cranking claim). Move the order forward when the
   * account shows a later non-terminal state, or to the settlement the chain recorded for this order
   * when the account is closed. A closed account with no known closing transaction is flagged for an
   * operator (once), never guessed.
   */
  async syncOrderFromChain(order: OrderRecord): Promise<'delivered' | 'disputed' | 'revised' | 'closed' | 'flagged' | null> {
    if (order.status !== 'in_progress' && order.status !== 'delivered' && order.status !== 'disputed') return null;
    if (await this.deps.repo.openIntentFor(order.id)) return null;
    const view = await this.deps.escrow.fetchOrder(order.id);
    const nowSeconds = await this.deps.escrow.chainNow().catch(() => Math.floor(Date.now() / 1000));
    if (view === null) {
      const settlement = await this.findSettlement(order);
      if (settlement) {
        await this.applySettlement(order, settlement);
        return 'closed';
      }
      return (await this.flagVanished(order)) ? 'flagged' : null;
    }
    if (order.attention?.reason === 'escrow-vanished') {
      await this.deps.repo.clearAttention(order.id);
      this.log.info({ order_id: order.id }, 'reconciler: the escrow account is back; attention flag cleared');
    }
    // a delivered order whose escrow is back in Funded: the buyer requested a revision with her own wallet (issue 24)
    const ix =
      view.state === 'disputed' && order.status !== 'disputed'
        ? 'open_dispute'
        : view.state === 'delivered' && order.status === 'in_progress'
          ? 'mark_delivered'
          : view.state === 'funded' && order.status === 'delivered'
            ? 'request_revision'
            : null;
    if (!ix) return null;
    const patch = patchForInstruction(ix, order, null, null, { view, nowSeconds });
    const changed = await this.deps.repo.updateIf(order.id, order.status, patch);
    if (changed) this.log.info({ order_id: order.id, state: view.state }, 'reconciler: order moved forward from the chain');
    return changed ? (view.state === 'funded' ? 'revised' : (view.state as 'delivered' | 'disputed')) : null;
  }

  /**
   * The escrow account of an active order is gone and no transaction closing it is known: read what
   * the chain says (the vault's balance, the fund signature's status) and flag the order for an
   * operator. Logged once (the flag is set once); true when it was set now.
   */
  private async flagVanished(order: OrderRecord): Promise<boolean> {
    if (order.attention) return false;
    const { escrow } = this.deps;
    const vault = escrow.tokenBalance ? await escrow.tokenBalance(order.vaultAddress).catch(() => null) : null;
    const fund = order.fundSignature ? await escrow.signatureStatus(order.fundSignature).catch(() => null) : null;
    const detail =
      `escrow account ${order.escrowAddress} not found and no transaction closing it; ` +
      `vault ${order.vaultAddress} holds ${vault === null ? 'unknown' : vault.toString()} base units; ` +
      `fund transaction ${order.fundSignature ?? 'unknown'}: ${fund ?? 'not checked'}`;
    const flagged = await this.deps.repo.flagAttention(order.id, { reason: 'escrow-vanished', detail, at: this.deps.now?.() ?? new Date() });
    if (flagged) this.log.error({ order_id: order.id, status: order.status, detail }, 'reconciler: escrow vanished; order flagged for an operator');
    return flagged;
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

const stringify = (p: OrderSettlement['payout']) => ({ ...p, buyer: p.buyer.toString(), seller: p.seller.toString(), treasury: p.treasury.toString() });
