/**
 * Program-derived addresses of the escrow program, mirroring programs/escrow/src/constants.rs:
 *   config PDA = ["config"]
 *   order PDA  = ["order", order_id (16 bytes = the API order UUID)]
 *   vault      = associated token account of (owner = order PDA, mint, token program)
 *   ProgramData = [program id] under the BPF upgradeable loader (initialize_config checks its upgrade authority)
 * `tests/chain.pda.test.ts` checks these against the seeds declared in the escrow IDL.
 */
import { PublicKey } from '@solana/web3.js';
import { ASSOCIATED_TOKEN_PROGRAM_ID, TOKEN_PROGRAM_ID, getAssociatedTokenAddressSync } from '@solana/spl-token';

export const CONFIG_SEED = Buffer.from('config');
export const ORDER_SEED = Buffer.from('order');
/** The BPF upgradeable loader (web3.js 1.x does not export its id). */
export const BPF_LOADER_UPGRADEABLE_PROGRAM_ID = new PublicKey('BPFLoaderUpgradeab1e11111111111111111111111');

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** 16 bytes of a UUID string (any version; case-insensitive, with dashes). Throws on malformed input. */
export function uuidToBytes(uuid: string): Uint8Array {
  if (!UUID_RE.test(uuid)) throw new TypeError(`not a UUID: ${uuid}`);
  return Uint8Array.from(Buffer.from(uuid.replace(/-/g, ''), 'hex'));
}

/** Lower-case dashed UUID string of 16 bytes. */
export function bytesToUuid(bytes: Uint8Array | number[]): string {
  const b = Uint8Array.from(bytes);
  if (b.length !== 16) throw new TypeError(`order id must be 16 bytes, got ${b.length}`);
  const h = Buffer.from(b).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** An order id as the 16 bytes stored on chain; accepts a UUID string or 16 bytes. */
export function orderIdBytes(orderId: Uint8Array | number[] | string): Uint8Array {
  if (typeof orderId === 'string') return uuidToBytes(orderId);
  const b = Uint8Array.from(orderId);
  if (b.length !== 16) throw new TypeError(`order id must be 16 bytes, got ${b.length}`);
  return b;
}

export function toPublicKey(k: PublicKey | string): PublicKey {
  return typeof k === 'string' ? new PublicKey(k) : k;
}

/** The escrow config PDA (seeds ["config"]). */
export function configPda(programId: PublicKey | string): PublicKey {
  return PublicKey.findProgramAddressSync([CONFIG_SEED], toPublicKey(programId))[0];
}

/**
 * The program's ProgramData account (seeds [program id] under the BPF upgradeable loader): where
 * the loader records the upgrade authority that `initialize_config` requires as signer.
 */
export function programDataAddress(programId: PublicKey | string): PublicKey {
  return PublicKey.findProgramAddressSync([toPublicKey(programId).toBuffer()], BPF_LOADER_UPGRADEABLE_PROGRAM_ID)[0];
}

/** The order (escrow) PDA (seeds ["order", order_id]); `orderId` is a UUID string or its 16 bytes. */
export function orderPda(programId: PublicKey | string, orderId: Uint8Array | number[] | string): PublicKey {
  return PublicKey.findProgramAddressSync([ORDER_SEED, Buffer.from(orderIdBytes(orderId))], toPublicKey(programId))[0];
}

/** The vault: associated token account of the order PDA (off-curve owner) for `mint` under `tokenProgram`. */
export function vaultAddress(
  order: PublicKey | string,
  mint: PublicKey | string,
  tokenProgram: PublicKey | string = TOKEN_PROGRAM_ID,
): PublicKey {
  return getAssociatedTokenAddressSync(
    toPublicKey(mint),
    toPublicKey(order),
    true,
    toPublicKey(tokenProgram),
    ASSOCIATED_TOKEN_PROGRAM_ID,
  );
}
