/**
 * What a transaction signature in an answer must be, asserted instead of `toBeTruthy()`: a base58
 * ed25519 signature (64 bytes, Solana's transaction id) of a transaction the chain knows, confirmed
 * (or finalized) without error.
 */
import type { Connection } from '@solana/web3.js';
import bs58 from 'bs58';
import { expect } from 'vitest';
import { eventually } from './eventually';

/** the base58 alphabet (Bitcoin's, which Solana uses) */
export const BASE58 = /^[1-9A-HJ-NP-Za-km-z]+$/;

/** Assert `sig` is a base58 string that decodes to 64 bytes (a transaction signature); returns it typed. */
export function expectSignatureShape(sig: unknown, what = 'signature'): string {
  expect(sig, `${what} is a base58 string`).toEqual(expect.stringMatching(BASE58));
  expect(bs58.decode(sig as string), `${what} decodes to 64 bytes`).toHaveLength(64);
  return sig as string;
}

/**
 * Assert `sig` is a transaction signature that `connection`'s chain has confirmed without error
 * (getSignatureStatuses with the transaction history; waits up to `timeoutMs` for confirmation).
 */
export async function expectConfirmedSignature(connection: Connection, sig: unknown, what = 'signature', timeoutMs = 15_000): Promise<void> {
  const s = expectSignatureShape(sig, what);
  const status = await eventually(
    async () => {
      const st = (await connection.getSignatureStatuses([s], { searchTransactionHistory: true })).value[0];
      return st && (st.err || st.confirmationStatus === 'confirmed' || st.confirmationStatus === 'finalized') ? st : null;
    },
    { what: `${what} ${s} confirmed on chain`, timeoutMs, intervalMs: 100 },
  );
  expect(status.err, `${what} ${s} failed on chain`).toBeNull();
}
