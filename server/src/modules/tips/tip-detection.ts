/**
 * Did a transaction pay a tip? The one rule the service confirms tips by, read from the chain's record
 * of the transaction through the service's one parser (../../chain/transaction-effects.ts: lookup
 * tables resolved, CPIs included). Pure.
 *
 * A transaction pays tip T when all of these hold:
 *  - it succeeded, and its accounts are all known (lookup tables resolved);
 *  - it carries T's memo `bazaar:tip:<T.id>` (SPL Memo, any version): the buyer named the tip it pays
 *    (attribution only: the memo proves nothing by itself);
 *  - it made a real token transfer (top level or CPI) of exactly T's amount of T's mint, from a token
 *    account whose owner (as the node recorded it) is T's buyer wallet, into T's destination token
 *    account (the seller's associated token account);
 *  - the destination's balance rose by at least that amount in the transaction (when the node reported
 *    balances): a transfer fee or a debit in the same transaction cannot pass for a tip.
 * That one signature confirms one tip only is the repository's rule (a unique signature).
 */
import { tipMemo } from '@bazaar/contract';
import { type TransactionEffects, tokenDelta } from '../../chain/transaction-effects.js';
import type { TipRecord } from './tips.types.js';

/** SPL Memo v2 and v1 program ids. */
export const MEMO_PROGRAM_IDS: ReadonlySet<string> = new Set(['MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr', 'Memo1UhkJRfHyvLMcVucJwxXeuD728EqVDDwQDxFMNo']);

export type TipProof = { paid: true } | { paid: false; why: string };

/** The memo texts of the transaction (every SPL Memo instruction, any depth). */
export function memosOf(fx: TransactionEffects): string[] {
  return fx.instructions.filter((ix) => ix.programId && MEMO_PROGRAM_IDS.has(ix.programId)).map((ix) => Buffer.from(ix.data).toString('utf8'));
}

/** Whether `fx` pays `tip` (see the module comment), and why not. */
export function tipPaidBy(fx: TransactionEffects, tip: Pick<TipRecord, 'id' | 'buyerWallet' | 'mint' | 'amount' | 'destinationTokenAccount'>): TipProof {
  if (fx.failed) return { paid: false, why: 'the transaction failed' };
  if (!fx.keysResolved) return { paid: false, why: 'the node did not resolve the lookup tables' };
  if (!memosOf(fx).includes(tipMemo(tip.id))) return { paid: false, why: 'no memo names the tip' };
  const transfer = fx.tokenMovements.find(
    (m) =>
      m.kind === 'transfer' &&
      m.mint === tip.mint &&
      m.destination === tip.destinationTokenAccount &&
      m.sourceOwner === tip.buyerWallet &&
      m.amount === tip.amount,
  );
  if (!transfer) return { paid: false, why: 'no transfer of the amount from the buyer wallet to the seller\'s token account' };
  if (fx.tokenBalancesKnown && tokenDelta(fx, tip.destinationTokenAccount) < tip.amount) {
    return { paid: false, why: 'the seller\'s token account did not rise by the amount' };
  }
  return { paid: true };
}
