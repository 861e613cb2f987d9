/**
 * Sending transactions and waiting for them by polling `getSignatureStatuses` (no websockets).
 *
 * Timeouts (milliseconds, all overridable per call):
 *  - `timeoutMs` (default 30_000): total wait for the wanted commitment after sending; on expiry
 *    DomainError('chain-unavailable', ..., { signature }) — the transaction may still land, callers
 *    reconcile by signature.
 *  - `pollIntervalMs` (default 250): delay between status polls.
 *  - `resendIntervalMs` (default 2_000): the same signed bytes are re-sent at this interval while
 *    unconfirmed (idempotent: the signature is the transaction id).
 * The wait also stops when the block height passes `lastValidBlockHeight` (the blockhash expired):
 * DomainError('chain-transaction-failed', ..., { program_error: 'BlockhashExpired' }).
 */
import {
  type Commitment,
  type Connection,
  type PublicKey,
  type Signer,
  Transaction,
} from '@solana/web3.js';
import bs58 from 'bs58';
import { DomainError } from '../errors.js';
import { parseTransactionError, translateChainError, type TranslateContext } from './errors.js';
import type { TxResult } from './types.js';
import { partialSignTransaction } from './sign.js';

export interface ConfirmOptions {
  commitment?: Commitment;
  timeoutMs?: number;
  pollIntervalMs?: number;
  resendIntervalMs?: number;
  /** run the preflight simulation (default true: rejected transactions come back with logs) */
  preflight?: boolean;
  /** error-translation context (program id, IDL errors, action label) */
  errors?: TranslateContext;
  /**
   * Called with the transaction signature after signing and before the first send (e.g. to record a
   * pending intent for crash recovery), with the blockhash and its last valid block height when known
   * (past that height a signature the cluster has not seen can never land). A throw aborts before
   * anything is sent.
   */
  onSigned?: (signature: string, lifetime?: { blockhash: string; lastValidBlockHeight: number }) => Promise<void> | void;
  /**
   * Signatures of transactions already sent that this one must not repeat (sendAndConfirm only). The same
   * instructions signed by the same keys on the same blockhash ARE the same transaction (ed25519 signatures
   * are deterministic): the cluster drops it as already processed, and the service's records see the earlier
   * attempt. When the signature comes out as one of these, the transaction is signed again on a newer
   * blockhash (polled every `pollIntervalMs`, until `timeoutMs`: then chain-unavailable, nothing sent).
   * E.g. the refund of an escrow funded again after its order was refunded, built in the slot of that refund.
   */
  distinctFrom?: ReadonlySet<string>;
}

export const DEFAULT_CONFIRM_TIMEOUT_MS = 30_000;
export const DEFAULT_POLL_INTERVAL_MS = 250;
export const DEFAULT_RESEND_INTERVAL_MS = 2_000;

const RANK: Record<string, number> = { processed: 0, recent: 0, single: 0, confirmed: 1, singleGossip: 1, finalized: 2, max: 2, root: 2 };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Send already-signed wire bytes and poll until `commitment` (default: the connection's, else 'confirmed').
 * `programIds` (program id per instruction index) lets `InstructionError` codes be attributed.
 */
export async function sendRawAndConfirm(
  connection: Connection,
  raw: Uint8Array,
  opts: ConfirmOptions & { lastValidBlockHeight?: number; blockhash?: string; programIds?: string[] } = {},
): Promise<TxResult> {
  const commitment = opts.commitment ?? connection.commitment ?? 'confirmed';
  const timeoutMs = opts.timeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS;
  const poll = opts.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const resendEvery = opts.resendIntervalMs ?? DEFAULT_RESEND_INTERVAL_MS;
  const sendOpts = { skipPreflight: opts.preflight === false, preflightCommitment: commitment, maxRetries: 0 };
  let signature: string;
  // wire format: compact-u16 signature count (1 byte below 128) then the 64-byte signatures; the first is the id
  if (opts.onSigned) {
    const lifetime =
      opts.blockhash !== undefined && opts.lastValidBlockHeight !== undefined
        ? { blockhash: opts.blockhash, lastValidBlockHeight: opts.lastValidBlockHeight }
        : undefined;
    await opts.onSigned(bs58.encode(raw.subarray(1, 65)), lifetime);
  }
  try {
    signature = await connection.sendRawTransaction(raw, sendOpts);
  } catch (err) {
    throw translateChainError(err, opts.errors);
  }
  const ctx = { ...opts.errors, signature };
  const started = Date.now();
  let lastSend = started;
  let lastHeightCheck = started;
  let polls = 0;
  for (;;) {
    let status;
    try {
      status = (await connection.getSignatureStatuses([signature])).value[0];
    } catch (err) {
      throw translateChainError(err, ctx);
    }
    if (status) {
      if (status.err) {
        const info = parseTransactionError(status.err, ctx, opts.programIds);
        // try to enrich with logs (not every RPC keeps transaction history)
        const logs = await connection
          .getTransaction(signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 })
          .then((t) => t?.meta?.logMessages ?? undefined)
          .catch(() => undefined);
        if (logs?.length) throw translateChainError(Object.assign(new Error('transaction failed'), { logs }), ctx);
        throw new DomainError('chain-transaction-failed', `the transaction was rejected (${info.program_error})`, {
          ...info,
          signature,
        });
      }
      const reached = status.confirmationStatus ? RANK[status.confirmationStatus] : status.confirmations === null ? 2 : 1;
      if (reached >= (RANK[commitment] ?? 1)) return { signature, slot: status.slot };
    }
    const now = Date.now();
    if (now - started > timeoutMs) {
      throw new DomainError('chain-unavailable', `transaction ${signature} not confirmed within ${timeoutMs} ms`, { signature });
    }
    if (opts.lastValidBlockHeight !== undefined && now - lastHeightCheck >= 1_000) {
      lastHeightCheck = now;
      const height = await connection.getBlockHeight(commitment).catch(() => undefined);
      if (height !== undefined && height > opts.lastValidBlockHeight) {
        // one last look: it may have landed right before expiry
        const last = (await connection.getSignatureStatuses([signature], { searchTransactionHistory: true }).catch(() => null))?.value[0];
        if (!last) {
          throw new DomainError('chain-transaction-failed', 'the transaction expired before it was confirmed', {
            program_error: 'BlockhashExpired',
            signature,
          });
        }
        continue;
      }
    }
    if (now - lastSend >= resendEvery) {
      lastSend = now;
      await connection.sendRawTransaction(raw, { skipPreflight: true, maxRetries: 0 }).catch(() => undefined);
    }
    polls++;
    await sleep(polls < 8 ? Math.min(poll, 100) : poll);
  }
}

/**
 * Set fee payer (first signer unless already set) and a fresh blockhash, sign with `signers`
 * (partial signatures already on `tx` are kept) and send + confirm by polling.
 */
export async function sendAndConfirm(
  connection: Connection,
  tx: Transaction,
  signers: Signer[],
  opts: ConfirmOptions = {},
): Promise<TxResult> {
  const commitment = opts.commitment ?? connection.commitment ?? 'confirmed';
  const latestBlockhash = async () => {
    try {
      return await connection.getLatestBlockhash(commitment);
    } catch (err) {
      throw translateChainError(err, opts.errors);
    }
  };
  if (!tx.feePayer) tx.feePayer = signers[0].publicKey;
  let latest = await latestBlockhash();
  const started = Date.now();
  for (;;) {
    tx.recentBlockhash = latest.blockhash;
    tx.lastValidBlockHeight = latest.lastValidBlockHeight;
    partialSignTransaction(tx, ...signers);
    if (!opts.distinctFrom?.has(bs58.encode(tx.signature!))) break;
    // the very transaction sent before: wait for the next block's blockhash
    const used = latest.blockhash;
    while (latest.blockhash === used) {
      if (Date.now() - started > (opts.timeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS)) {
        throw new DomainError('chain-unavailable', `no blockhash newer than ${used} within ${opts.timeoutMs ?? DEFAULT_CONFIRM_TIMEOUT_MS} ms`);
      }
      await sleep(Math.min(opts.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS, 100));
      latest = await latestBlockhash();
    }
  }
  const programIds = tx.instructions.map((ix) => ix.programId.toBase58());
  return sendRawAndConfirm(connection, tx.serialize(), {
    ...opts,
    commitment,
    lastValidBlockHeight: latest.lastValidBlockHeight,
    blockhash: latest.blockhash,
    programIds,
  });
}

/** Run an RPC read, translating failures (network -> chain-unavailable). */
export async function rpc<T>(fn: () => Promise<T>, ctx?: TranslateContext): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw translateChainError(err, ctx);
  }
}

export type { PublicKey };
