/**
 * The record-before-send pipeline of one service-signed escrow instruction on an order (deliver,
 * confirm, claim, dispute, resolve, refund), as steps; the caller holds the order's mutex:
 *   1. settle: a left-over open intent of the order is reconciled first, so state is current
 *      (an intent in flight in another process is waited for up to `inflightWaitMs`, then 409);
 *   2. check: a repeat whose result is already there returns the order, nothing sent; otherwise the
 *      table's `refusal` (state, actor, timing on its clock);
 *   3. record: a ChainIntent `pending` (DB guard: one open intent per order);
 *   4. send: sign as the platform authority, mark the intent `sent` with the signature and the
 *      blockhash's lifetime BEFORE the first send (`recordAttempt`), send and confirm.
 *      Compensation: nothing signed (RPC down) -> the intent `failed` at once (retry at once);
 *      rejected -> `failed` and the escrow checked for drift; unknown -> left open for the reconciler;
 *   5. apply: one DB transaction, intent `confirmed` + the order patch (payout read back for terminal
 *      instructions); then the listing effect and the custodial booking. A failure here after the
 *      chain confirmed is ChainActionLandedError (the intent stays `sent`: the reconciler applies it).
 * A crash between 4 and 5 is what the reconciler heals (../../escrow-reconciler.ts).
 */
import { ChainActionLandedError, DomainError } from '../../../../errors.js';
import { AttemptSuperseded, type RecordedAttempt, recordAttempt } from '../../../../chain/recorded-send.js';
import type { EscrowReconciler } from '../../escrow-reconciler.js';
import { formulaPayout, patchForInstruction } from '../../order-patch.js';
import {
  type ChainAction,
  type Instruction,
  type OrderRole,
  actionInstruction,
  actionMovesListing,
  closesEscrow,
  needsChainClock,
  refusal,
  repeatByKey,
  targetStatus,
} from '../../order-state.js';
import { orderErrors } from '../../orders.errors.js';
import type { ChainIntentRecord, InstructionArgs, OrderRecord, OrderSettlement, TxResult } from '../../orders.types.js';
import { type OrdersContext, applyListingEffect, bookCustodial, clocks } from '../context.js';

/** The blockhash lifetime of a recorded attempt (recordAttempt always has its blockhash). */
export const lifetimeOf = (a: RecordedAttempt) => ({ blockhash: a.blockhash!, lastValidBlockHeight: a.lastValidBlockHeight });

/**
 * Runs steps 1-5 for `action` on `orderId` as `role`; the caller holds the order's mutex. `check`: a
 * further refusal on the order as read in step 2 (after the table's), e.g. the terms an acceptance names
 * against the pending proposal.
 */
export type PerformLocked = (
  orderId: string,
  role: OrderRole,
  action: ChainAction,
  params: Record<string, unknown> | null,
  check?: (order: OrderRecord) => DomainError | null,
) => Promise<OrderRecord>;

/** The instruction arguments an intent's params carry (InstructionArgs; stored with the intent, so a recovery sends nothing new). */
export function instructionArgs(params: Record<string, unknown> | null): InstructionArgs {
  const a: InstructionArgs = {};
  if (typeof params?.buyer_bps === 'number') a.buyerBps = params.buyer_bps;
  if (typeof params?.expires_at === 'number') a.expiresAt = params.expires_at;
  if (typeof params?.new_deadline === 'number') a.newDeadline = params.new_deadline;
  if (params?.proposed_by === 'buyer' || params?.proposed_by === 'seller') a.proposedBy = params.proposed_by;
  return a;
}

export function recordBeforeSend(c: OrdersContext, reconciler: EscrowReconciler): PerformLocked {
  /** Steps 1-3: the order as it is, once no other intent is open and this one is recorded; or the order itself for a repeat. */
  async function settleCheckRecord(
    orderId: string,
    role: OrderRole,
    action: ChainAction,
    params: Record<string, unknown> | null,
    check?: (order: OrderRecord) => DomainError | null,
  ): Promise<{ repeat: OrderRecord } | { order: OrderRecord; intent: ChainIntentRecord }> {
    const { repo } = c;
    // settle an intent left over by a crash or in flight in another process (reconcile from the
    // chain, or wait up to inflightWaitMs), then check and claim the order with a new intent
    const deadline = Date.now() + c.settings.inflightWaitMs;
    const ix = actionInstruction[action];
    for (;;) {
      const open = await repo.openIntentFor(orderId);
      if (open) {
        const outcome = await reconciler.reconcileIntent(open).catch(() => 'open' as const);
        if (outcome === 'open') {
          if (Date.now() >= deadline) throw orderErrors.actionInProgress(orderId, open.action);
          await new Promise((r) => setTimeout(r, 200));
        }
        continue;
      }
      const order = (await repo.get(orderId))!;
      // a repeat: nothing to send (rows with `repeat: 'key'` are repeated through their Idempotency-Key instead)
      if (!repeatByKey(action) && order.status === targetStatus(action)) return { repeat: order };
      // the table: source state, actor, timing rule (on the chain clock where the rule says so), requirement
      const refused =
        refusal(order, role, action, await clocks(c, needsChainClock(order.status, role, action)), c.settings.paymentGraceSeconds) ?? check?.(order) ?? null;
      if (refused) throw refused;
      const intent = await repo.beginIntent(orderId, order.status, ix, params);
      if (intent) return { order, intent };
      if (Date.now() >= deadline) throw orderErrors.actionInProgress(orderId, action);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  return async function performLocked(orderId, role, action, params, check) {
    const { repo, escrow } = c;
    const ix = actionInstruction[action];
    const recorded = await settleCheckRecord(orderId, role, action, params, check);
    if ('repeat' in recorded) return recorded.repeat;
    const { order, intent } = recorded;

    // step 4: send, the attempt recorded before it (a reconciler, here or in another process, may have
    // settled the unsent intent meanwhile: then the compare-and-set is lost and nothing is sent)
    let signed = false;
    // an instruction the escrow took before (mark_delivered after a revision, withdraw_settlement after a new
    // proposal) signed on the same blockhash IS that earlier transaction: the cluster drops it as processed and
    // the escrow does not move. Signed on a newer blockhash instead (chain/tx.ts `distinctFrom`).
    const sentBefore = new Set((await repo.listIntents(orderId)).flatMap((i) => (i.signature ? [i.signature] : [])));
    const o = {
      onSigned: recordAttempt(`order ${orderId} ${ix}`, async (a) => (signed = await repo.markIntentSent(intent.id, a.signature, lifetimeOf(a)))),
      distinctFrom: sentBefore,
    };
    let tx: TxResult;
    try {
      tx = await escrow.send(ix, orderId, { ...o, ...instructionArgs(params) });
    } catch (err) {
      // compensation of step 3, by what is known of the send
      if (err instanceof AttemptSuperseded) throw orderErrors.actionInProgress(orderId, action);
      const rejected = err instanceof DomainError && err.slug === 'chain-transaction-failed';
      if (!signed && !rejected && !(err instanceof DomainError && err.slug === 'conflict')) {
        // failed before anything was signed (e.g. the RPC is down): nothing can land, the action may be retried at once
        await repo.failIntent(intent.id, `not sent: ${(err as Error).message}`).catch(() => undefined);
        throw err;
      }
      if (rejected) {
        await repo.failIntent(intent.id, err.message);
        // the escrow may have moved without us (a party acting with its own wallet): catch up
        const moved = await reconciler.syncOrderFromChain(order).catch(() => null);
        if (moved && moved !== 'flagged') {
          const fresh = (await repo.get(orderId))!;
          if (!repeatByKey(action) && fresh.status === targetStatus(action)) return fresh;
          throw orderErrors.invalidTransition(orderId, fresh.status, action);
        }
      } // otherwise the outcome is unknown: the intent stays open for the reconciler
      throw err;
    }

    // step 5: apply
    const nowSeconds = await escrow.chainNow().catch(() => Math.floor(c.now().getTime() / 1000));
    const view = action === 'deliver' || action === 'dispute' || action === 'request_revision' ? await escrow.fetchOrder(orderId).catch(() => null) : null;
    const settlement = await settlementOf(c, order, ix, tx, params);
    const patch = patchForInstruction(ix, order, params, tx.signature, { view, nowSeconds, settlement });
    let after: OrderRecord;
    try {
      await repo.confirmIntent(intent.id, tx.signature, tx.slot, orderId, order.status, patch);
      after = (await repo.get(orderId))!;
    } catch (err) {
      // landed on chain, not recorded: the intent stays `sent` with this signature for the reconciler
      throw new ChainActionLandedError(err, { action, order_id: orderId, signature: tx.signature });
    }
    c.log.info({ order_id: orderId, action, signature: tx.signature, status: after.status }, 'order action confirmed');
    // a refund because another order took the listing must not free that other order's listing; a row
    // without a listing effect (a delivery, a revision, a proposal) leaves the listing alone
    if (params?.reason !== 'listing-taken' && actionMovesListing(action)) await applyListingEffect(c, after);
    await bookCustodial(c, after);
    return after;
  };
}

/**
 * The payout of a terminal instruction the service just sent, as the chain recorded it for this
 * order (read back by signature); if the transaction cannot be read, the program's split for our
 * own single instruction (formulaPayout). null for non-terminal instructions.
 */
async function settlementOf(
  c: OrdersContext,
  order: OrderRecord,
  ix: Instruction,
  tx: TxResult,
  params: Record<string, unknown> | null,
): Promise<OrderSettlement | null> {
  if (!closesEscrow(ix)) return null;
  const read = c.escrow.findSettlement
    ? await c.escrow.findSettlement({ id: order.id, mint: order.mint }, tx.signature).catch((err) => {
        c.log.warn({ err, order_id: order.id }, 'settlement not readable; using the program split');
        return null;
      })
    : null;
  if (read) return read;
  const bps = typeof params?.buyer_bps === 'number' ? params.buyer_bps : null;
  return { instruction: ix, signature: tx.signature, slot: tx.slot, payout: formulaPayout(ix, order, bps) };
}
