/**
 * Use case "confirm tips from the chain": the submission route (POST /orders/{id}/tips/{tip_id}/transaction)
 * and the background check of pending tips (../tips.watcher.ts). A tip is confirmed only by
 * ../tip-detection.ts `tipPaidBy` over the chain's record of a transaction; one signature confirms one tip
 * (the repository's unique signature). Never sends anything but the buyer-signed transaction it issued.
 */
import { Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { tipMemo } from '@bazaar/contract';
import { DomainError } from '../../../errors.js';
import type { TransactionEffects } from '../../../chain/transaction-effects.js';
import { tipPaidBy } from '../tip-detection.js';
import { tipErrors } from '../tips.errors.js';
import type { TipRecord } from '../tips.types.js';
import { type TipsCaller, type TipsContext, roleOn, visibleOrder } from './context.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What every tip memo starts with (contract `tipMemo`). */
const TIP_MEMO_PREFIX = tipMemo('');
/** Parsed transactions kept across background passes (a confirmed transaction never changes). */
const EFFECTS_CACHE_SIZE = 2_000;

export function confirmTip(c: TipsContext) {
  /**
   * Confirm `tip` by the transaction `signature` when its record proves the payment (`fx`: already read).
   * Returns the tip as it is afterwards; `paid` false when the transaction does not pay it (or is unknown).
   */
  async function confirmBy(tip: TipRecord, signature: string, fx?: TransactionEffects | null): Promise<{ tip: TipRecord; paid: boolean }> {
    const effects = fx === undefined ? await c.chain.readTransaction(signature) : fx;
    if (!effects) return { tip, paid: false };
    const proof = tipPaidBy(effects, tip);
    if (!proof.paid) {
      c.log?.info({ tip_id: tip.id, signature, why: proof.why }, 'transaction does not pay the tip');
      return { tip, paid: false };
    }
    const out = await c.repo.confirm(tip.id, { signature, slot: effects.slot, at: c.now() });
    if (out.state === 'confirmed') {
      c.log?.info({ tip_id: tip.id, signature }, 'tip received');
      return { tip: out.tip, paid: true };
    }
    if (out.state === 'used') {
      c.log?.warn({ tip_id: tip.id, signature }, 'the transaction confirmed another tip already');
      return { tip, paid: false };
    }
    return { tip: out.tip ?? tip, paid: out.tip?.signature === signature };
  }

  /** Parse and check the buyer-signed transaction against the one issued for `tip`; its signature. */
  function verifySigned(tip: TipRecord, signedBase64: string): string {
    let tx: Transaction;
    try {
      tx = Transaction.from(Buffer.from(signedBase64, 'base64'));
    } catch {
      throw tipErrors.transactionMismatch('not a serialized Solana transaction');
    }
    if (tx.serializeMessage().toString('base64') !== tip.message) throw tipErrors.transactionMismatch('its message differs from the one issued for this tip');
    let valid = false;
    try {
      valid = tx.verifySignatures(true);
    } catch {
      valid = false;
    }
    if (!valid || !tx.signature) throw tipErrors.transactionMismatch('the buyer wallet\'s signature is missing or invalid');
    return bs58.encode(tx.signature);
  }

  const cache = new Map<string, TransactionEffects>();
  /** A transaction's record, parsed; from the cache when read before (only found ones are kept). */
  async function effectsOf(signature: string): Promise<TransactionEffects | null> {
    const known = cache.get(signature);
    if (known) return known;
    const fx = await c.chain.readTransaction(signature);
    if (fx) {
      cache.set(signature, fx);
      if (cache.size > EFFECTS_CACHE_SIZE) cache.delete(cache.keys().next().value!);
    }
    return fx;
  }

  /** Read a just-sent transaction a few times: a load-balanced RPC may not return it at once. */
  async function readBack(signature: string): Promise<TransactionEffects | null> {
    for (let i = 0; i < 5; i++) {
      const fx = await c.chain.readTransaction(signature).catch(() => null);
      if (fx) return fx;
      await sleep(200 * (i + 1));
    }
    return null;
  }

  return {
    confirmBy,

    /** POST /orders/{order_id}/tips/{tip_id}/transaction (see the contract). */
    async submit(p: TipsCaller, orderId: string, tipId: string, signedBase64: string): Promise<TipRecord> {
      const order = await visibleOrder(c, p, orderId);
      const tip = await c.repo.get(tipId);
      if (!tip || tip.orderId !== order.id) throw tipErrors.notFound(`Tip ${tipId}`);
      if (roleOn(order, p) !== 'buyer') throw tipErrors.notBuyer();
      const signature = verifySigned(tip, signedBase64);
      // a repeat after confirmation: the tip as it is, nothing sent
      if (tip.status === 'confirmed') return tip;
      if (tip.status === 'expired') throw tipErrors.expired(tip.id);
      try {
        await c.chain.submit(signedBase64, tip.lastValidBlockHeight);
      } catch (err) {
        // the buyer may have sent it herself (wallet + API): if it landed, it counts
        const landed = await confirmBy(tip, signature, await c.chain.readTransaction(signature).catch(() => null));
        if (landed.paid) return landed.tip;
        throw err;
      }
      const done = await confirmBy(tip, signature, await readBack(signature));
      if (!done.paid && done.tip.status === 'pending') {
        // landed but not readable yet, or not a payment of the tip: the background check decides
        c.log?.warn({ tip_id: tip.id, signature }, 'submitted tip transaction not confirmed as a payment yet');
      }
      return (await c.repo.get(tip.id)) ?? done.tip;
    },

    /**
     * One pass over pending tips (the background check): the block height is read first; then for each
     * seller token account with pending tips its recent transactions (`signaturesPerAccount`, newest first)
     * are matched against each tip (a node that reports memos lets the pass skip transactions without a tip
     * memo; parsed transactions are kept across passes, they never change); a tip that nothing paid and whose
     * blockhash's last valid block height is below that height can no longer be paid by its transaction: it
     * expires. Returns how many were confirmed and expired.
     */
    async checkPending(limit = 100, signaturesPerAccount = 50): Promise<{ confirmed: number; expired: number }> {
      const pending = await c.repo.pending(limit);
      if (pending.length === 0) return { confirmed: 0, expired: 0 };
      const height = await c.chain.blockHeight();
      const byAccount = new Map<string, TipRecord[]>();
      for (const t of pending) byAccount.set(t.destinationTokenAccount, [...(byAccount.get(t.destinationTokenAccount) ?? []), t]);
      let confirmed = 0;
      let expired = 0;
      for (const [account, tips] of byAccount) {
        try {
          const sigs = (await c.chain.signaturesFor(account, signaturesPerAccount)).filter((s) => !s.failed && (s.memo === null || s.memo.includes(TIP_MEMO_PREFIX)));
          for (const t of tips) {
            let paid = false;
            for (const s of sigs) {
              const r = await confirmBy(t, s.signature, await effectsOf(s.signature));
              if (r.paid) {
                paid = true;
                confirmed++;
                break;
              }
            }
            if (!paid && height > t.lastValidBlockHeight && (await c.repo.expire(t.id))) {
              expired++;
              c.log?.info({ tip_id: t.id }, 'tip expired unpaid');
            }
          }
        } catch (err) {
          if (!(err instanceof DomainError)) throw err;
          c.log?.warn({ err, account }, 'tip check failed; retried next pass');
        }
      }
      return { confirmed, expired };
    },
  };
}
