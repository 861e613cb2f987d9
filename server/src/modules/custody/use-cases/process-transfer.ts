/**
 * The record-before-send pipeline of one custody transfer (withdrawal, sweep, custodial order funding),
 * as steps; a transfer is recorded `pending` with its hold by the use case that creates it:
 *   1. claim: attempt + lease on the pending transfer (another process's live claim: leave it); the
 *      hot wallet must hold the tokens (else the claim is released, the transfer waits);
 *   2. sign and record: the signature and the blockhash's last valid block height are stored
 *      (`markSubmitted`, only by the latest claim) BEFORE the first send;
 *   3. send and confirm;
 *   4. settle: one DB transaction, transfer `confirmed` + its entry (idempotent by ref).
 *   Compensation of the hold: rejected or expired -> `failed` and the hold released (releaseEntry);
 *   unknown outcome -> left `submitted` for `reconcile`; nothing signed -> the claim released.
 * A crash anywhere leaves a pending (never sent: safe to send) or submitted (signature known: read its
 * outcome) transfer that `reconcile` converges, so money is never lost nor moved twice.
 */
import { DomainError } from '../../../errors.js';
import { AttemptSuperseded } from '../../../chain/recorded-send.js';
import type { TxResult } from '../../../chain/types.js';
import { releaseEntry, settleEntry } from '../custody.entries.js';
import { systemAccount } from '../custody.ledger.js';
import type { TransferRecord, TransferStatus } from '../custody.types.js';
import { type CustodyContext, CUSTODY_TX_LAMPORTS } from './context.js';

/** The outcome of processing one transfer. */
export interface ProcessOutcome {
  status: TransferStatus;
  transfer: TransferRecord;
  /** the error that failed it (failed) or left it open (pending/submitted), if any */
  error?: unknown;
}

export function processTransfers(c: CustodyContext) {
  const inflight = new Map<string, Promise<ProcessOutcome>>();

  /** Step 3's transaction for the transfer's kind, signed by the hot wallet (and the deposit key for sweeps and fundings). */
  async function send(t: TransferRecord, onSigned: (s: string, h: number) => Promise<void>): Promise<TxResult> {
    const { chain, keys, repo } = c;
    if (t.kind === 'withdrawal') return chain.sendWithdrawal({ id: t.id, mint: t.mint, amount: t.amount, destination: t.destination }, onSigned);
    // a sweep or a custodial order funding: its fee (the funding's escrow rent returns to the deposit key)
    await c.budget?.record?.({ action: 'custody_transfer', lamports: CUSTODY_TX_LAMPORTS }).catch((err: unknown) => {
      c.log.warn({ err, transfer_id: t.id }, 'chain budget: custody transfer not counted');
    });
    const addr = await repo.getAddress(t.userId);
    if (!addr) throw new DomainError('chain-transaction-failed', `user ${t.userId} has no deposit address`, { program_error: 'NoDepositKey' });
    const key = keys.keypair(addr.index);
    if (t.kind === 'sweep') return chain.sendSweep({ id: t.id, mint: t.mint, amount: t.amount }, key, onSigned);
    const order = await c.orders?.get(t.orderId!);
    if (!order) throw new DomainError('chain-transaction-failed', `order ${t.orderId} not found`, { program_error: 'OrderNotFound' });
    if (order.status !== 'awaiting_payment') {
      throw new DomainError('chain-transaction-failed', `order ${order.id} is ${order.status}, not awaiting payment`, { program_error: 'OrderNotPayable' });
    }
    return chain.sendOrderFund(
      {
        id: t.id,
        orderId: order.id,
        seller: order.sellerWallet,
        mint: order.mint,
        amount: t.amount,
        deliveryDeadline: order.deliveryDeadline,
        reviewWindow: order.reviewWindow,
        expiresAt: order.fundExpiresAt,
      },
      key,
      onSigned,
    );
  }

  async function processOnce(id: string): Promise<ProcessOutcome> {
    const { repo } = c;
    let t = (await repo.getTransfer(id))!;
    if (t.status !== 'pending') return { status: t.status, transfer: t };
    // step 1: claim
    const attempt = await repo.claim(id, c.now(), c.leaseMs);
    if (attempt === null) return { status: t.status, transfer: t };
    if (t.kind !== 'sweep') {
      // the hot wallet must hold the tokens (deposits reach it with their sweep)
      const hot = await c.ledger.balance(systemAccount(t.mint, 'hot_wallet'));
      if (hot < t.amount) {
        await repo.releaseClaim(id, attempt, 'waiting for deposits to reach the hot wallet');
        return { status: 'pending', transfer: (await repo.getTransfer(id))! };
      }
    }
    // step 2: record the signature before the first send (only the latest claim may)
    const onSigned = async (signature: string, lastValidBlockHeight: number) => {
      if (!(await repo.markSubmitted(id, attempt, signature, lastValidBlockHeight))) {
        throw new AttemptSuperseded(`custody transfer ${id} (claim lost before sending)`);
      }
      t = (await repo.getTransfer(id))!;
    };
    // step 3: send and confirm
    let tx: TxResult;
    try {
      tx = await send(t, onSigned);
    } catch (err) {
      // compensation, by what is known of the send
      const fresh = (await repo.getTransfer(id))!;
      if (err instanceof DomainError && err.slug === 'chain-transaction-failed') {
        // rejected (or its blockhash expired): it will never land
        await repo.fail(id, err.detail, releaseEntry(fresh));
        c.log.warn({ transfer_id: id, kind: t.kind, err: err.detail }, 'custody: transfer failed, hold released');
        return { status: 'failed', transfer: (await repo.getTransfer(id))!, error: err };
      }
      if (fresh.status === 'pending') await repo.releaseClaim(id, attempt, (err as Error)?.message);
      c.log.warn({ err, transfer_id: id, kind: t.kind, status: fresh.status }, 'custody: transfer outcome unknown, left to the reconciler');
      return { status: fresh.status, transfer: fresh, error: err };
    }
    // step 4: settle
    await repo.settle(id, tx.slot, settleEntry(t), c.now());
    const done = (await repo.getTransfer(id))!;
    c.log.info({ transfer_id: id, kind: t.kind, signature: tx.signature }, 'custody: transfer confirmed');
    return { status: done.status, transfer: done };
  }

  /**
   * Take a pending transfer through claim -> sign (signature recorded) -> send -> confirm -> book.
   * A transfer already being processed in this process is awaited, not started twice. Every chain
   * error is returned in the outcome; a storage error while settling (the process cannot book what
   * landed) is thrown, and the transfer stays `submitted` for `reconcile`.
   */
  function process(id: string): Promise<ProcessOutcome> {
    const running = inflight.get(id);
    if (running) return running;
    const p = processOnce(id).finally(() => inflight.delete(id));
    inflight.set(id, p);
    return p;
  }

  return {
    process,

    /** Process in the background (errors are logged; the reconciler retries what is left open). */
    processAsync(id: string): void {
      void process(id).catch((err) => c.log.warn({ err, transfer_id: id }, 'custody: transfer processing stopped'));
    },

    /** Wait for transfers being processed in this process (shutdown, tests). */
    async idle(): Promise<void> {
      while (inflight.size) await Promise.allSettled([...inflight.values()]);
    },

    /**
     * Converge one open transfer to the chain: pending (never sent) -> process it; submitted ->
     * confirmed on chain: book it; failed on chain, or unknown after its blockhash expired: fail it and
     * release the hold; unknown before expiry: leave it. Never sends a signed transaction twice.
     */
    async reconcile(t: TransferRecord): Promise<TransferStatus> {
      if (inflight.has(t.id)) return (await inflight.get(t.id)!).status;
      if (t.status === 'pending') {
        if (t.leaseUntil && t.leaseUntil > c.now()) return 'pending';
        return (await process(t.id)).status;
      }
      if (t.status !== 'submitted' || !t.signature) return t.status;
      const { chain, repo } = c;
      // the recorded attempt's outcome (../../../chain/recorded-send.ts): the block height is read before the
      // status, so a transfer unknown to the cluster after its blockhash expired can never land
      const outcome = await chain.transactionOutcome({ signature: t.signature, lastValidBlockHeight: t.lastValidBlockHeight ?? Number.MAX_SAFE_INTEGER });
      if (outcome.state === 'landed') {
        await repo.settle(t.id, outcome.slot, settleEntry(t), c.now());
        c.log.info({ transfer_id: t.id, kind: t.kind, signature: t.signature }, 'custody reconciler: transfer confirmed on chain');
      } else if (outcome.state === 'dead') {
        const why = outcome.reason === 'rejected' ? 'failed on chain' : `expired (block height past ${t.lastValidBlockHeight})`;
        await repo.fail(t.id, `transaction ${t.signature} ${why}`, releaseEntry(t));
      }
      return (await repo.getTransfer(t.id))!.status;
    },
  };
}

export type ProcessTransfers = ReturnType<typeof processTransfers>;
