/**
 * Test helper: the terms a (signed or unsigned) fund transaction carries, decoded with the escrow
 * client's IDL coder (what the program will read). null when the transaction has no `fund` instruction.
 */
import type { BN, BorshInstructionCoder } from '@coral-xyz/anchor';
import { Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import type { EscrowClient } from '../../server/src/chain/escrow.js';
import { bytesToUuid } from '../../server/src/chain/pda.js';

export function decodeFundTransaction(
  escrow: EscrowClient,
  base64: string,
): { orderId: string; amount: bigint; deliveryDeadline: number; reviewWindow: number; expiresAt: number; signature: string | null } | null {
  const tx = Transaction.from(Buffer.from(base64, 'base64'));
  for (const ix of tx.instructions) {
    if (!ix.programId.equals(escrow.programId)) continue;
    const decoded = (escrow.program.coder.instruction as BorshInstructionCoder).decode(Buffer.from(ix.data));
    if (!decoded || decoded.name !== 'fund') continue;
    const d = decoded.data as { orderId: number[]; amount: BN; deliveryDeadline: BN; reviewWindow: BN; expiresAt: BN };
    return {
      orderId: bytesToUuid(d.orderId),
      amount: BigInt(d.amount.toString()),
      deliveryDeadline: Number(d.deliveryDeadline.toString()),
      reviewWindow: Number(d.reviewWindow.toString()),
      expiresAt: Number(d.expiresAt.toString()),
      signature: tx.signature ? bs58.encode(tx.signature) : null,
    };
  }
  return null;
}
