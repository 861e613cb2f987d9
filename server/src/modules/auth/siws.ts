/**
 * Sign In With Solana, server side. Pure functions (no I/O): build the input the wallet signs, and
 * check a signed message against the input we issued.
 *
 * `verifySignIn` from @solana/wallet-standard-util re-derives the message from the parsed fields and
 * compares it with the issued input, but skips domain/address when absent and never checks times,
 * so we always pass the stored input (domain and address included) and check the clock ourselves.
 */
import { randomBytes } from 'node:crypto';
import bs58 from 'bs58';
import {
  deriveSignInMessageText,
  parseSignInMessage,
  verifyMessageSignature,
} from '@solana/wallet-standard-util';
import type { SolanaSignInInput } from '@solana/wallet-standard-features';
import type { SignInInput } from '@bazaar/contract';

export const SIWS_STATEMENT = 'Sign in to Bazaar';
const ALPHANUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** 24 alphanumerics from the CSPRNG (rejection sampling: no modulo bias), ~143 bits. */
export function newNonce(length = 24): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += ALPHANUM[b % 62];
    }
  }
  return out;
}

export interface IssuedNonce {
  nonce: string;
  address: string;
  domain: string;
  issuedAt: Date;
  expiresAt: Date;
}

export interface SiwsSettings {
  domain: string;
  uri: string;
  chainId: string;
}

export function signInInputFor(n: IssuedNonce, s: SiwsSettings): SignInInput {
  return {
    domain: n.domain,
    address: n.address,
    statement: SIWS_STATEMENT,
    uri: s.uri,
    version: '1',
    chainId: s.chainId,
    nonce: n.nonce,
    issuedAt: n.issuedAt.toISOString(),
    expirationTime: n.expiresAt.toISOString(),
  };
}

export type SiwsCheck =
  | { ok: true }
  | { ok: false; check: string };

/**
 * Check `signedMessage` + `signature` against the issued input (exact field match), the wallet
 * signature (ed25519 over the exact bytes) and the message times.
 */
export function verifySignedMessage(
  input: SignInInput,
  signedMessage: Uint8Array,
  signature: Uint8Array,
  now: Date,
  skewSeconds: number,
): SiwsCheck {
  const parsed = parseSignInMessage(signedMessage);
  if (!parsed) return { ok: false, check: 'message malformed' };
  if (parsed.domain !== input.domain) return { ok: false, check: 'domain mismatch' };
  if (parsed.address !== input.address) return { ok: false, check: 'address mismatch' };
  if (parsed.nonce !== input.nonce) return { ok: false, check: 'nonce mismatch' };
  let publicKey: Uint8Array;
  try {
    publicKey = bs58.decode(input.address);
  } catch {
    return { ok: false, check: 'address mismatch' };
  }
  if (signature.length !== 64) return { ok: false, check: 'signature invalid' };
  const output = {
    account: { address: input.address, publicKey, chains: [], features: [] },
    signedMessage,
    signature,
  } as Parameters<typeof deriveSignInMessageText>[1];
  const expected = deriveSignInMessageText(input as SolanaSignInInput, output);
  if (expected === null || new TextDecoder().decode(signedMessage) !== expected) {
    return { ok: false, check: 'message does not match the issued sign-in input' };
  }
  const t = now.getTime();
  const skew = skewSeconds * 1000;
  if (parsed.expirationTime && Date.parse(parsed.expirationTime) <= t) return { ok: false, check: 'message expired' };
  if (parsed.notBefore && Date.parse(parsed.notBefore) > t + skew) return { ok: false, check: 'message not yet valid' };
  if (parsed.issuedAt && Date.parse(parsed.issuedAt) > t + skew) return { ok: false, check: 'message issued in the future' };
  if (!verifyMessageSignature({ message: new TextEncoder().encode(expected), signedMessage, signature, publicKey })) {
    return { ok: false, check: 'signature invalid' };
  }
  return { ok: true };
}
