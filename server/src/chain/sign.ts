/**
 * The service's ed25519 signatures (RFC 8032) of legacy transactions, made by Node's crypto (OpenSSL)
 * instead of @solana/web3.js 1.x's pure-JavaScript @noble/curves. Ed25519 signing is deterministic, so the
 * bytes are the ones `Transaction.partialSign` / `Transaction.sign` would write (tests/chain.sign.test.ts
 * compares them); the CPU is about a tenth (issue 28: ~0.6 ms -> ~0.07 ms per signature on the development
 * machine; every fund transaction the service hands out carries its signature).
 *
 * Both functions keep web3.js's semantics: signers are deduplicated by public key, a signer that is not a
 * required signer of the compiled message throws (`unknown signer: <address>`), `signTransaction` clears every
 * signature first and, with no fee payer set, makes the first signer the fee payer.
 */
import { createPrivateKey, sign as cryptoSign, type KeyObject } from 'node:crypto';
import type { Signer, Transaction } from '@solana/web3.js';

/** PKCS #8 DER header of an Ed25519 private key (RFC 8410): the 32-byte seed follows. */
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** OpenSSL key objects of the signers seen (a Keypair lives as long as the service; building one costs ~20 µs). */
const keyObjects = new WeakMap<Signer, KeyObject>();

function keyOf(signer: Signer): KeyObject {
  let key = keyObjects.get(signer);
  if (!key) {
    // a Solana secret key is seed (32 bytes) || public key (32 bytes)
    key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, signer.secretKey.subarray(0, 32)]), format: 'der', type: 'pkcs8' });
    keyObjects.set(signer, key);
  }
  return key;
}

/** The 64-byte ed25519 signature of `message` by `signer` (RFC 8032, pure Ed25519). */
export function ed25519Sign(message: Uint8Array, signer: Signer): Buffer {
  return cryptoSign(null, message, keyOf(signer));
}

function unique(signers: readonly Signer[]): Signer[] {
  if (signers.length === 0) throw new Error('No signers');
  const out: Signer[] = [];
  for (const s of signers) if (!out.some((o) => o.publicKey.equals(s.publicKey))) out.push(s);
  return out;
}

/** Like `tx.partialSign(...signers)`: add the signers' signatures, keep the others already on `tx`. */
export function partialSignTransaction(tx: Transaction, ...signers: Signer[]): void {
  const list = unique(signers);
  // compiles the message and (re)creates tx.signatures when the required signers changed, as web3.js does
  const message = tx.serializeMessage();
  for (const s of list) {
    const slot = tx.signatures.find((p) => p.publicKey.equals(s.publicKey));
    if (!slot) throw new Error(`unknown signer: ${s.publicKey.toBase58()}`);
    slot.signature = ed25519Sign(message, s);
  }
}

/** Like `tx.sign(...signers)`: every signature cleared, then the signers' made (the first signer pays the fee when `tx.feePayer` is unset). */
export function signTransaction(tx: Transaction, ...signers: Signer[]): void {
  const list = unique(signers);
  tx.signatures = list.map((s) => ({ signature: null, publicKey: s.publicKey }));
  partialSignTransaction(tx, ...list);
}
