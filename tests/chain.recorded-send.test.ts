/**
 * The one record-before-send protocol (server/src/chain/recorded-send.ts) that orders, custody and
 * listings share: how a recorded attempt's outcome is read, and the compare-and-set before the send.
 * A scripted Connection (only the three RPC reads the outcome needs) drives each case.
 */
import type { Connection, SignatureStatus } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { AttemptSuperseded, recordAttempt, transactionOutcome } from '../server/src/chain/recorded-send.js';

const SIG = '5'.repeat(88);

/** A cluster at `height` where the attempt's status is `status` (null = never seen); `onHeight` runs when the height is read. */
function cluster(o: { height: number; status?: Partial<SignatureStatus> | null; blockhashValid?: boolean; onHeight?: () => void }) {
  const reads: string[] = [];
  const state = { status: o.status ?? null };
  const connection = {
    async getBlockHeight() {
      reads.push('height');
      o.onHeight?.();
      return o.height;
    },
    async isBlockhashValid() {
      reads.push('blockhash');
      return { context: { slot: 1 }, value: o.blockhashValid ?? true };
    },
    async getSignatureStatuses() {
      reads.push('status');
      return { context: { slot: 1 }, value: [state.status ? ({ slot: 42, confirmations: 1, err: null, ...state.status } as SignatureStatus) : null] };
    },
  } as unknown as Connection;
  return { connection, reads, state };
}

describe('transactionOutcome: what became of a recorded attempt', () => {
  it('landed at confirmed (or rooted); processed is still in flight; an error is dead: rejected', async () => {
    const a = { signature: SIG, lastValidBlockHeight: 100 };
    expect(await transactionOutcome(cluster({ height: 90, status: { confirmationStatus: 'confirmed' } }).connection, a)).toEqual({ state: 'landed', slot: 42 });
    expect(await transactionOutcome(cluster({ height: 90, status: { confirmations: null, confirmationStatus: 'finalized' } }).connection, a)).toEqual({ state: 'landed', slot: 42 });
    expect(await transactionOutcome(cluster({ height: 90, status: { confirmationStatus: 'processed' } }).connection, a)).toEqual({ state: 'in_flight' });
    expect(await transactionOutcome(cluster({ height: 90, status: { err: { InstructionError: [0, 'InvalidArgument'] } } }).connection, a)).toEqual({ state: 'dead', reason: 'rejected' });
  });

  it('never seen: in flight while its blockhash is valid, dead: expired past lastValidBlockHeight or once the cluster forgot the blockhash', async () => {
    expect(await transactionOutcome(cluster({ height: 100 }).connection, { signature: SIG, lastValidBlockHeight: 100 })).toEqual({ state: 'in_flight' });
    expect(await transactionOutcome(cluster({ height: 101 }).connection, { signature: SIG, lastValidBlockHeight: 100 })).toEqual({ state: 'dead', reason: 'expired' });
    const forgotten = cluster({ height: 50, blockhashValid: false });
    expect(await transactionOutcome(forgotten.connection, { signature: SIG, lastValidBlockHeight: 100, blockhash: 'h'.repeat(44) })).toEqual({ state: 'dead', reason: 'expired' });
    // without a recorded blockhash only the height decides
    expect(await transactionOutcome(cluster({ height: 50, blockhashValid: false }).connection, { signature: SIG, lastValidBlockHeight: 100 })).toEqual({ state: 'in_flight' });
  });

  it('reads the expiry before the status, so dead is final: an attempt landing just as its blockhash expires is landed, never dead', async () => {
    const c = cluster({ height: 101, onHeight: () => (c.state.status = { confirmationStatus: 'confirmed' }) });
    expect(await transactionOutcome(c.connection, { signature: SIG, lastValidBlockHeight: 100 })).toEqual({ state: 'landed', slot: 42 });
    expect(c.reads).toEqual(['height', 'status']);
  });
});

describe('recordAttempt: the compare-and-set before the first send', () => {
  it('stores signature, blockhash and lastValidBlockHeight; a lost compare-and-set aborts with AttemptSuperseded', async () => {
    const stored: unknown[] = [];
    const won = recordAttempt('intent 1', async (a) => (stored.push(a), true));
    await won(SIG, { blockhash: 'h'.repeat(44), lastValidBlockHeight: 7 });
    expect(stored).toEqual([{ signature: SIG, blockhash: 'h'.repeat(44), lastValidBlockHeight: 7 }]);
    const lost = recordAttempt('intent 2', async () => false);
    await expect(lost(SIG, { blockhash: 'h'.repeat(44), lastValidBlockHeight: 7 })).rejects.toBeInstanceOf(AttemptSuperseded);
    await expect(won(SIG)).rejects.toThrow(/needs the blockhash lifetime/);
  });
});
