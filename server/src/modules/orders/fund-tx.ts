/**
 * Checks that a buyer-signed transaction is exactly the fund transaction the service issued for an
 * order: same fee payer, same instructions (program, accounts with signer/writable flags, data);
 * only the recent blockhash may differ. All required signatures must be present and valid.
 */
import { Transaction, VersionedTransaction } from '@solana/web3.js';
import bs58 from 'bs58';

export interface NormalizedIx {
  programId: string;
  keys: string[]; // "<pubkey>:<s|->:<w|->"
  data: string; // hex
}

export interface NormalizedTx {
  feePayer: string;
  instructions: NormalizedIx[];
  signaturesValid: boolean;
  signature: string | null;
}

export function normalizeTransaction(base64: string): NormalizedTx {
  const raw = Buffer.from(base64, 'base64');
  try {
    const tx = Transaction.from(raw);
    return {
      feePayer: tx.feePayer?.toBase58() ?? '',
      instructions: tx.instructions.map((ix) => ({
        programId: ix.programId.toBase58(),
        keys: ix.keys.map((k) => `${k.pubkey.toBase58()}:${k.isSigner ? 's' : '-'}:${k.isWritable ? 'w' : '-'}`),
        data: Buffer.from(ix.data).toString('hex'),
      })),
      signaturesValid: safe(() => tx.verifySignatures(true)),
      signature: tx.signature ? bs58encode(tx.signature) : null,
    };
  } catch (legacyErr) {
    const vtx = VersionedTransaction.deserialize(raw);
    const msg = vtx.message;
    const keys = msg.staticAccountKeys;
    const header = msg.header;
    const n = keys.length;
    const isSigner = (i: number) => i < header.numRequiredSignatures;
    const isWritable = (i: number) =>
      i < header.numRequiredSignatures
        ? i < header.numRequiredSignatures - header.numReadonlySignedAccounts
        : i < n - header.numReadonlyUnsignedAccounts;
    return {
      feePayer: keys[0]?.toBase58() ?? '',
      instructions: msg.compiledInstructions.map((ix) => ({
        programId: keys[ix.programIdIndex].toBase58(),
        keys: ix.accountKeyIndexes.map((i) => `${keys[i].toBase58()}:${isSigner(i) ? 's' : '-'}:${isWritable(i) ? 'w' : '-'}`),
        data: Buffer.from(ix.data).toString('hex'),
      })),
      signaturesValid: vtx.signatures.every((s) => s.some((b) => b !== 0)),
      signature: vtx.signatures[0] ? bs58encode(vtx.signatures[0]) : null,
    };
  }
}

function safe(f: () => boolean): boolean {
  try {
    return f();
  } catch {
    return false;
  }
}

function bs58encode(bytes: Uint8Array): string {
  return bs58.encode(bytes);
}

/** Returns null when `signed` matches `expected`, else what differs. */
export function compareFundTransaction(signed: NormalizedTx, expected: NormalizedTx): string | null {
  if (signed.feePayer !== expected.feePayer) return `fee payer ${signed.feePayer} is not the buyer ${expected.feePayer}`;
  if (signed.instructions.length !== expected.instructions.length) return 'instruction count differs';
  for (let i = 0; i < expected.instructions.length; i++) {
    const a = signed.instructions[i];
    const b = expected.instructions[i];
    if (a.programId !== b.programId) return `instruction ${i}: program differs`;
    if (a.data !== b.data) return `instruction ${i}: data differs`;
    if (a.keys.join(',') !== b.keys.join(',')) return `instruction ${i}: accounts differ`;
  }
  if (!signed.signaturesValid) return 'missing or invalid signatures';
  return null;
}
