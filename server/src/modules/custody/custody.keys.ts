/**
 * Deposit keys: one ed25519 keypair per user, derived deterministically from the service's custody
 * seed with SLIP-0010 (micro-key-producer's `slip10`, built on @noble/curves + @noble/hashes; no
 * hand-rolled crypto here) along the Solana path `m/44'/501'/{index}'/0'` (all levels hardened, as
 * SLIP-0010 requires for ed25519; the same scheme wallets such as Phantom and `solana-keygen
 * --derivation-path` use, so a seed can be audited with standard tools).
 *
 * `index` is the user's `custody_deposit_addresses.derivation_index`, taken from a database sequence:
 * unique per user, never reused. The derived private key is the 32-byte ed25519 seed of the Solana
 * keypair (`Keypair.fromSeed`).
 */
import { HDKey } from 'micro-key-producer/slip10.js';
import { Keypair } from '@solana/web3.js';

/** SLIP-0044 coin type of Solana. */
export const SOLANA_COIN_TYPE = 501;
/** Largest hardened child index (2^31 - 1). */
export const MAX_DERIVATION_INDEX = 0x7fffffff;

/** `m/44'/501'/{index}'/0'` for index 0..2^31-1; throws RangeError otherwise. */
export function depositPath(index: number): string {
  if (!Number.isInteger(index) || index < 0 || index > MAX_DERIVATION_INDEX) throw new RangeError(`derivation index out of range: ${index}`);
  return `m/44'/${SOLANA_COIN_TYPE}'/${index}'/0'`;
}

/** Hex text (16..64 bytes, i.e. 128..512 bits as SLIP-0010 allows) -> bytes; throws Error otherwise. */
export function parseSeedHex(hex: string): Uint8Array {
  const clean = hex.trim().toLowerCase().replace(/^0x/, '');
  if (!/^([0-9a-f]{2}){16,64}$/.test(clean)) throw new Error('CUSTODY_SEED must be 16..64 bytes of hex (32 bytes recommended)');
  return Uint8Array.from(Buffer.from(clean, 'hex'));
}

/** Derives (and caches) deposit keypairs from one master seed. */
export class DepositKeys {
  private readonly master: HDKey;
  private readonly cache = new Map<number, Keypair>();

  /** `seed`: hex text or bytes (16..64 bytes). */
  constructor(seed: string | Uint8Array) {
    this.master = HDKey.fromMasterSeed(typeof seed === 'string' ? parseSeedHex(seed) : seed);
  }

  /** The Solana keypair at `depositPath(index)`. */
  keypair(index: number): Keypair {
    let kp = this.cache.get(index);
    if (!kp) {
      kp = Keypair.fromSeed(this.master.derive(depositPath(index)).privateKey);
      if (this.cache.size > 10_000) this.cache.clear();
      this.cache.set(index, kp);
    }
    return kp;
  }

  /** Base58 public key (the deposit address) at `depositPath(index)`. */
  address(index: number): string {
    return this.keypair(index).publicKey.toBase58();
  }
}
