/**
 * Record before send: the service's one crash-safe way to send a transaction it signs, shared by the
 * orders module (escrow instructions, `chain_intents` rows), custody (withdrawals, sweeps, custodial
 * order funding, `custody_transfers` rows) and listings (token mint and renames, `chain_intents` rows).
 * Each module keeps its own record and what settling it means (an order patch, a journal entry, a
 * listing row); the protocol and the reading of outcomes are here:
 *
 *  1. a record exists before anything is signed (the module's row, under its own guard or lease);
 *  2. after signing and before the first send, the attempt (signature, blockhash, its
 *     `lastValidBlockHeight`) is stored on the record by a compare-and-set (`recordAttempt`); a lost
 *     compare-and-set throws `AttemptSuperseded` and nothing is sent (another process or the
 *     reconciler moved the record first);
 *  3. send and confirm (./tx.ts);
 *  4. whenever the outcome is unknown (a timeout, a crash, another process), the recorded attempt is
 *     judged by `transactionOutcome` only: `landed` (settle), `dead` (rejected, or its blockhash
 *     expired without it landing: it never will; fail / release), `in_flight` (wait). A signed
 *     transaction is never signed again nor re-sent by a reconciler.
 *
 * Nothing here knows orders, transfers or listings.
 */
import type { Commitment, Connection } from '@solana/web3.js';
import { rpc } from './tx.js';
import type { RecordedAttempt, TxOutcome } from './types.js';

export type { RecordedAttempt, TxOutcome };

/** Thrown from `onSigned` when the record's compare-and-set was lost: nothing is sent. */
export class AttemptSuperseded extends Error {
  constructor(what: string) {
    super(`${what}: another attempt or the reconciler moved the record first; nothing was sent`);
  }
}

/**
 * The `onSigned` hook of step 2 (./tx.ts `ConfirmOptions.onSigned`): stores the attempt with `store`
 * (a compare-and-set on the record; false = lost) and aborts the send with AttemptSuperseded when it
 * was lost. `what` names the record in the error.
 */
export function recordAttempt(
  what: string,
  store: (attempt: RecordedAttempt) => Promise<boolean>,
): (signature: string, lifetime?: { blockhash: string; lastValidBlockHeight: number }) => Promise<void> {
  return async (signature, lifetime) => {
    if (!lifetime) throw new Error(`${what}: a recorded send needs the blockhash lifetime of its transaction`);
    if (!(await store({ signature, lastValidBlockHeight: lifetime.lastValidBlockHeight, blockhash: lifetime.blockhash }))) {
      throw new AttemptSuperseded(what);
    }
  };
}

/**
 * Whether a transaction on `blockhash` can no longer land: the block height at `commitment` is past
 * `lastValidBlockHeight`, or (with a blockhash) the cluster no longer knows the blockhash as valid.
 * Errors: chain-unavailable (never guesses).
 */
export async function blockhashExpired(
  connection: Connection,
  lifetime: { lastValidBlockHeight: number; blockhash?: string | null },
  commitment: Commitment = 'confirmed',
): Promise<boolean> {
  const action = { action: 'checking a blockhash' };
  const height = await rpc(() => connection.getBlockHeight(commitment), action);
  if (height > lifetime.lastValidBlockHeight) return true;
  if (!lifetime.blockhash) return false;
  const valid = await rpc(() => connection.isBlockhashValid(lifetime.blockhash!, { commitment }), action);
  return !valid.value;
}

/**
 * What became of a recorded attempt (step 4). The blockhash's expiry is read BEFORE the signature's
 * status, so `dead: expired` (no status, and the blockhash already expired) is final: a transaction
 * that landed just before its blockhash expired is seen by the status read that follows. `landed`
 * needs `confirmed` (or a rooted status); `processed` is still `in_flight`. Errors: chain-unavailable.
 */
export async function transactionOutcome(connection: Connection, a: RecordedAttempt, commitment: Commitment = 'confirmed'): Promise<TxOutcome> {
  const expired = await blockhashExpired(connection, a, commitment);
  const st = (
    await rpc(() => connection.getSignatureStatuses([a.signature], { searchTransactionHistory: true }), {
      action: 'reading a transaction status',
    })
  ).value[0];
  if (st) {
    if (st.err) return { state: 'dead', reason: 'rejected' };
    if (st.confirmationStatus === 'confirmed' || st.confirmationStatus === 'finalized' || st.confirmations === null) {
      return { state: 'landed', slot: st.slot };
    }
    return { state: 'in_flight' };
  }
  return expired ? { state: 'dead', reason: 'expired' } : { state: 'in_flight' };
}
