/**
 * The tips module's side of Solana: builds the buyer's tip transaction, relays the signed one, and reads
 * the chain's record of transactions touching a seller's token account (detection: ./tip-detection.ts).
 * Over @solana/web3.js 1.x and ../../chain (tx.ts: polling confirmation; recorded-send.ts: blockhash
 * expiry; transaction-effects.ts: the one parser).
 *
 * The service pays nothing here: the buyer is the fee payer of the tip transaction and pays the rent of the
 * seller's associated token account when it is created (docs/threat-model.md "Who pays for what on chain").
 *
 * Errors: DomainError('chain-unavailable') when the RPC cannot be reached; 'chain-transaction-failed' when
 * the cluster rejects a submitted transaction.
 */
import { type Commitment, type Connection, type Finality, PublicKey, SystemProgram, Transaction, TransactionInstruction } from '@solana/web3.js';
import {
  createAssociatedTokenAccountIdempotentInstruction,
  createSyncNativeInstruction,
  createTransferCheckedInstruction,
  getAssociatedTokenAddressSync,
  NATIVE_MINT,
} from '@solana/spl-token';
import { tipMemo } from '@bazaar/contract';
import { parseTransaction, type TransactionEffects } from '../../chain/transaction-effects.js';
import { rpc, sendRawAndConfirm, type ConfirmOptions } from '../../chain/tx.js';
import type { TxResult } from '../../chain/types.js';
import { MEMO_PROGRAM_IDS } from './tip-detection.js';
import type { IssuedTipTransaction, SignatureInfo } from './tips.types.js';

/** SPL Memo v2: the memo of a tip's transaction. */
export const MEMO_PROGRAM_ID = new PublicKey([...MEMO_PROGRAM_IDS][0]!);

/** Milliseconds per block assumed when turning blocks left into a time (conservative, as the escrow client's). */
const MS_PER_BLOCK = 350;

/** What the tips module asks of the chain. */
export interface TipsChainPort {
  /**
   * The buyer's unsigned tip transaction (fee payer the buyer): [the seller's associated token account,
   * created idempotently at the buyer's expense when missing] + [for wrapped SOL: the buyer's wSOL account
   * created if missing, the amount wrapped] + transfer_checked buyer ATA -> seller ATA + memo.
   */
  buildTipTransaction(t: { tipId: string; buyer: string; seller: string; mint: string; decimals: number; amount: bigint }): Promise<IssuedTipTransaction>;
  /** Send signed wire bytes (base64) and wait for confirmation (or until the blockhash's last valid block height). */
  submit(signedBase64: string, lastValidBlockHeight: number): Promise<TxResult>;
  /** The chain's record of a transaction, parsed; null when the node does not know it (yet). */
  readTransaction(signature: string): Promise<TransactionEffects | null>;
  /** Signatures touching `account`, newest first (at most `limit`). */
  signaturesFor(account: string, limit: number): Promise<SignatureInfo[]>;
  /**
   * The block height: a transaction whose blockhash's last valid block height is below it can no longer land
   * (read BEFORE the transactions a decision rests on, so one that landed before expiry is seen).
   */
  blockHeight(): Promise<number>;
}

export interface TipsChainDeps {
  connection: Connection;
  commitment?: Commitment;
  /** the token program owning `mint` (the escrow client's cached read) */
  tokenProgramOf(mint: string): Promise<PublicKey>;
  confirm?: ConfirmOptions;
}

export function createTipsChain(deps: TipsChainDeps): TipsChainPort {
  const { connection } = deps;
  const commitment = deps.commitment ?? 'confirmed';
  const ctx = (action: string) => ({ action });
  // history reads take a finality: confirmed unless the service reads at finalized
  const finality: Finality = commitment === 'finalized' ? 'finalized' : 'confirmed';
  return {
    async buildTipTransaction(t) {
      const buyer = new PublicKey(t.buyer);
      const seller = new PublicKey(t.seller);
      const mint = new PublicKey(t.mint);
      const tokenProgram = await deps.tokenProgramOf(t.mint);
      const source = getAssociatedTokenAddressSync(mint, buyer, true, tokenProgram);
      const destination = getAssociatedTokenAddressSync(mint, seller, true, tokenProgram);
      const [destinationInfo, latest, height] = await rpc(
        () => Promise.all([connection.getAccountInfo(destination, commitment), connection.getLatestBlockhash(commitment), connection.getBlockHeight(commitment)]),
        ctx('building the tip transaction'),
      );
      const asked = Date.now();
      const ixs: TransactionInstruction[] = [];
      // the seller's token account, paid by the buyer (the fee payer), only when missing
      if (!destinationInfo) ixs.push(createAssociatedTokenAccountIdempotentInstruction(buyer, destination, seller, mint, tokenProgram));
      if (mint.equals(NATIVE_MINT)) {
        ixs.push(
          createAssociatedTokenAccountIdempotentInstruction(buyer, source, buyer, mint, tokenProgram),
          SystemProgram.transfer({ fromPubkey: buyer, toPubkey: source, lamports: t.amount }),
          createSyncNativeInstruction(source, tokenProgram),
        );
      }
      ixs.push(
        createTransferCheckedInstruction(source, mint, destination, buyer, t.amount, t.decimals, [], tokenProgram),
        new TransactionInstruction({ programId: MEMO_PROGRAM_ID, keys: [], data: Buffer.from(tipMemo(t.tipId), 'utf8') }),
      );
      const tx = new Transaction({ feePayer: buyer, blockhash: latest.blockhash, lastValidBlockHeight: latest.lastValidBlockHeight }).add(...ixs);
      const blocksLeft = Math.max(0, latest.lastValidBlockHeight - height);
      return {
        transaction: tx.serialize({ requireAllSignatures: false, verifySignatures: false }).toString('base64'),
        message: tx.serializeMessage().toString('base64'),
        blockhash: latest.blockhash,
        lastValidBlockHeight: latest.lastValidBlockHeight,
        validUntil: new Date(asked + Math.max(0, blocksLeft * MS_PER_BLOCK - 2_000)),
        sourceTokenAccount: source.toBase58(),
        destinationTokenAccount: destination.toBase58(),
      };
    },

    async submit(signedBase64, lastValidBlockHeight) {
      const raw = Buffer.from(signedBase64, 'base64');
      const tx = Transaction.from(raw);
      return sendRawAndConfirm(connection, raw, {
        commitment,
        ...deps.confirm,
        lastValidBlockHeight,
        programIds: tx.instructions.map((i) => i.programId.toBase58()),
        errors: ctx('sending the tip transaction'),
      });
    },

    async readTransaction(signature) {
      const record = await rpc(
        () => connection.getTransaction(signature, { commitment: finality, maxSupportedTransactionVersion: 0 }),
        ctx('reading a tip transaction'),
      );
      return record ? parseTransaction(record) : null;
    },

    async signaturesFor(account, limit) {
      const rows = await rpc(
        () => connection.getSignaturesForAddress(new PublicKey(account), { limit }, finality),
        ctx('reading the signatures of a token account'),
      );
      return rows.map((r) => ({ signature: r.signature, failed: !!r.err, slot: r.slot, memo: r.memo ?? null }));
    },

    blockHeight: () => rpc(() => connection.getBlockHeight(commitment), ctx('reading the block height')),
  };
}
