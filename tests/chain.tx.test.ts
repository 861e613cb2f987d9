/**
 * sendRawAndConfirm's polling state machine against a scripted RPC (no validator): confirmation,
 * on-chain failure attribution, confirmation timeout (chain-unavailable with the signature),
 * blockhash expiry, re-sending while unconfirmed, onSigned before the first send.
 */
import { Keypair, SystemProgram, Transaction, type Connection } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sendAndConfirm, sendRawAndConfirm } from '../server/src/chain/tx';

const ESCROW = 'AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r';

function signedTx() {
  const payer = Keypair.generate();
  const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }));
  tx.feePayer = payer.publicKey;
  tx.recentBlockhash = Keypair.generate().publicKey.toBase58();
  tx.sign(payer);
  return { raw: tx.serialize(), signature: bs58.encode(tx.signature!), payer };
}

/** A fake Connection: `statuses` is consumed one poll at a time (the last one repeats). */
function fakeConnection(statuses: unknown[], opts: { blockHeight?: number; sendError?: Error } = {}) {
  const calls: string[] = [];
  let i = 0;
  const conn = {
    commitment: 'confirmed',
    async sendRawTransaction(raw: Uint8Array) {
      calls.push('send');
      if (opts.sendError) throw opts.sendError;
      return bs58.encode(raw.subarray(1, 65));
    },
    async getSignatureStatuses() {
      calls.push('status');
      const v = statuses[Math.min(i++, statuses.length - 1)];
      return { context: { slot: 1 }, value: [v ?? null] };
    },
    async getBlockHeight() {
      return opts.blockHeight ?? 0;
    },
    async getTransaction() {
      return null;
    },
    async getLatestBlockhash() {
      return { blockhash: Keypair.generate().publicKey.toBase58(), lastValidBlockHeight: 100 };
    },
  };
  return { conn: conn as unknown as Connection, calls };
}

describe('sendRawAndConfirm', () => {
  it('returns signature and slot once the wanted commitment is reached', async () => {
    const { raw, signature } = signedTx();
    const { conn } = fakeConnection([null, { slot: 7, confirmationStatus: 'processed', err: null }, { slot: 8, confirmationStatus: 'confirmed', err: null }]);
    await expect(sendRawAndConfirm(conn, raw, { pollIntervalMs: 1 })).resolves.toEqual({ signature, slot: 8 });
  });

  it('calls onSigned with the signature before the first send; a throwing onSigned sends nothing', async () => {
    const { raw, signature } = signedTx();
    const { conn, calls } = fakeConnection([{ slot: 3, confirmationStatus: 'finalized', err: null }]);
    const seen: string[] = [];
    await sendRawAndConfirm(conn, raw, { onSigned: (s) => void seen.push(`${s}@${calls.length}`) });
    expect(seen).toEqual([`${signature}@0`]);
    const second = fakeConnection([null]);
    await expect(sendRawAndConfirm(second.conn, raw, { onSigned: () => Promise.reject(new Error('db down')) })).rejects.toThrow('db down');
    expect(second.calls).toEqual([]);
  });

  it('attributes an on-chain Custom error to the escrow IDL error of the failing instruction', async () => {
    const { raw, signature } = signedTx();
    const { conn } = fakeConnection([{ slot: 9, confirmationStatus: 'confirmed', err: { InstructionError: [0, { Custom: 6019 }] } }]);
    await expect(
      sendRawAndConfirm(conn, raw, {
        programIds: [ESCROW],
        errors: { programId: ESCROW, programErrors: new Map([[6019, 'ReviewWindowNotElapsed']]) },
      }),
    ).rejects.toMatchObject({ slug: 'chain-transaction-failed', extensions: { program_error: 'ReviewWindowNotElapsed', signature, instruction_index: 0 } });
  });

  // the waits below run on vitest's fake clock (Date.now and setTimeout): no wall time passes
  afterEach(() => {
    vi.useRealTimers();
  });

  it('gives up after timeoutMs with chain-unavailable carrying the signature, re-sending meanwhile', async () => {
    vi.useFakeTimers();
    const { raw, signature } = signedTx();
    const { conn, calls } = fakeConnection([null]);
    const started = Date.now();
    const outcome = sendRawAndConfirm(conn, raw, { timeoutMs: 300, pollIntervalMs: 10, resendIntervalMs: 50 }).catch((e: unknown) => e);
    await vi.runAllTimersAsync();
    expect(await outcome).toMatchObject({
      slug: 'chain-unavailable',
      extensions: { signature },
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(300);
    expect(calls.filter((c) => c === 'send').length).toBeGreaterThan(2);
  });

  it('stops when the blockhash has expired and the signature is unknown (BlockhashExpired)', async () => {
    vi.useFakeTimers();
    const { raw } = signedTx();
    const { conn } = fakeConnection([null], { blockHeight: 500 });
    const outcome = sendRawAndConfirm(conn, raw, { lastValidBlockHeight: 100, pollIntervalMs: 50, timeoutMs: 10_000 }).catch((e: unknown) => e);
    await vi.runAllTimersAsync();
    expect(await outcome).toMatchObject({
      slug: 'chain-transaction-failed',
      extensions: { program_error: 'BlockhashExpired' },
    });
  });

  it('translates a refused connection while sending into chain-unavailable', async () => {
    const { raw } = signedTx();
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
    const { conn } = fakeConnection([null], { sendError: refused });
    await expect(sendRawAndConfirm(conn, raw)).rejects.toMatchObject({ slug: 'chain-unavailable' });
  });
});

describe('sendAndConfirm', () => {
  it('sets a fresh blockhash and the first signer as fee payer, signs and confirms', async () => {
    const payer = Keypair.generate();
    const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: Keypair.generate().publicKey, lamports: 1 }));
    const { conn } = fakeConnection([{ slot: 2, confirmationStatus: 'confirmed', err: null }]);
    const res = await sendAndConfirm(conn, tx, [payer]);
    expect(tx.feePayer?.equals(payer.publicKey)).toBe(true);
    expect(tx.verifySignatures()).toBe(true);
    expect(res).toEqual({ signature: bs58.encode(tx.signature!), slot: 2 });
  });

  it('distinctFrom: a transaction that would repeat one already sent (same blockhash) is signed again on a newer blockhash', async () => {
    const payer = Keypair.generate();
    const to = Keypair.generate().publicKey;
    const transfer = () => new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1 }));
    const [older, newer] = [Keypair.generate().publicKey.toBase58(), Keypair.generate().publicKey.toBase58()];
    // the transaction sent before: the same instruction and signer on `older`
    const before = transfer();
    before.feePayer = payer.publicKey;
    before.recentBlockhash = older;
    before.sign(payer);
    const sentBefore = bs58.encode(before.signature!);
    const { conn, calls } = fakeConnection([{ slot: 2, confirmationStatus: 'confirmed', err: null }]);
    const answers = [older, older, newer]; // the node answers the older blockhash twice more
    (conn as unknown as { getLatestBlockhash: () => unknown }).getLatestBlockhash = async () => ({ blockhash: answers.shift() ?? newer, lastValidBlockHeight: 100 });
    const onSigned = vi.fn();
    const tx = transfer();
    const res = await sendAndConfirm(conn, tx, [payer], { distinctFrom: new Set([sentBefore]), pollIntervalMs: 1, onSigned });
    expect(tx.recentBlockhash).toBe(newer);
    expect(res.signature).not.toBe(sentBefore);
    expect(onSigned).toHaveBeenCalledTimes(1);
    expect(onSigned.mock.calls[0]![0]).toBe(res.signature);
    expect(calls.filter((c) => c === 'send')).toHaveLength(1);
    // without distinctFrom the same inputs give the very transaction sent before
    const again = transfer();
    (conn as unknown as { getLatestBlockhash: () => unknown }).getLatestBlockhash = async () => ({ blockhash: older, lastValidBlockHeight: 100 });
    expect((await sendAndConfirm(conn, again, [payer])).signature).toBe(sentBefore);
  });

  it('distinctFrom: no newer blockhash within timeoutMs -> chain-unavailable, nothing signed for sending', async () => {
    const payer = Keypair.generate();
    const to = Keypair.generate().publicKey;
    const blockhash = Keypair.generate().publicKey.toBase58();
    const before = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1 }));
    before.feePayer = payer.publicKey;
    before.recentBlockhash = blockhash;
    before.sign(payer);
    const { conn, calls } = fakeConnection([{ slot: 2, confirmationStatus: 'confirmed', err: null }]);
    (conn as unknown as { getLatestBlockhash: () => unknown }).getLatestBlockhash = async () => ({ blockhash, lastValidBlockHeight: 100 });
    const onSigned = vi.fn();
    const tx = new Transaction().add(SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: to, lamports: 1 }));
    await expect(
      sendAndConfirm(conn, tx, [payer], { distinctFrom: new Set([bs58.encode(before.signature!)]), pollIntervalMs: 1, timeoutMs: 30, onSigned }),
    ).rejects.toMatchObject({ slug: 'chain-unavailable' });
    expect(onSigned).not.toHaveBeenCalled();
    expect(calls).not.toContain('send');
  });
});
