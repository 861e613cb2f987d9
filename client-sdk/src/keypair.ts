/**
 * `@bazaar/client-sdk/keypair`: a MessageSigner over a local ed25519 key, for scripts, tests and
 * server-to-server use (Node). Browser apps sign with the wallet (`{ publicKey, signMessage }` of a wallet
 * adapter) and need not load this entry point or tweetnacl.
 */
import bs58 from 'bs58';
import nacl from 'tweetnacl';
import type { MessageSigner } from './login.js';

/**
 * A MessageSigner over a local ed25519 key (tweetnacl): `secretKey` is a 64-byte secret key (the Solana
 * keypair file format, e.g. `Keypair.secretKey`) or a 32-byte seed. `publicKey` is the base58 address,
 * `publicKeyBytes` its 32 bytes; `signMessage` returns the 64-byte detached signature.
 * Throws (tweetnacl's "bad secret key size" / "bad seed size") for any other length.
 */
export function keypairSigner(secretKey: Uint8Array): MessageSigner & { publicKeyBytes: Uint8Array } {
  const pair =
    secretKey.length === 32 ? nacl.sign.keyPair.fromSeed(secretKey) : nacl.sign.keyPair.fromSecretKey(secretKey);
  return {
    publicKey: bs58.encode(pair.publicKey),
    publicKeyBytes: pair.publicKey,
    signMessage: async (message: Uint8Array) => nacl.sign.detached(message, pair.secretKey),
  };
}
