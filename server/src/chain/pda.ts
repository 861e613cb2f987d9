/**
 * Program-derived addresses of the escrow program, mirroring programs/escrow/src/constants.rs:
 *   config PDA = ["config"]
 *   order PDA  = ["order", order_id (16 bytes = the API order UUID)]
 *   vault      = associated token account of (owner = order PDA, mint, token program)
 *   ProgramData = [program id] under the BPF upgradeable loader (initialize_config checks its upgrade authority)
 * `tests/chain.pda.test.ts` checks these against the seeds declared in the escrow IDL.
 *
 * Every derivation here is remembered (`derived`): a program-derived address costs one SHA-256 and one
 * ed25519 curve check (@noble/curves, pure JavaScript, ~0.2 ms on the development machine) per bump tried,
 * and the order path derived the config PDA, the order PDA and the token accounts several times per order
 * (issue 28: ~3 ms of server CPU per flash-sale buyer). The result depends only on the inputs, so a bounded
 * memo (lru-cache, `PDA_MEMO_MAX` entries) returns the same addresses.
 */
import { PublicKey } from '@solana/web3.js';
import { LRUCache } from 'lru-cache';
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

/** Entries the derivation memo keeps (each ~0.3 kB); past it the least recently used goes. */
export const PDA_MEMO_MAX = 20_000;
const memo = new LRUCache<string, PublicKey>({ max: PDA_MEMO_MAX });

const text = (k: PublicKey | string) => (typeof k === 'string' ? k : k.toBase58());

/** `derive()` for `key`, remembered (see the module's docs); PublicKey has no mutating method, so the object is shared. */
function derived(key: string, derive: () => PublicKey): PublicKey {
  let address = memo.get(key);
  if (!address) {
    address = derive();
    memo.set(key, address);
  }
  return address;
}

/** How many derivations the memo holds (tests). */
export function derivedCount(): number {
  return memo.size;
}

/** The escrow config PDA (seeds ["config"]). */
export function configPda(programId: PublicKey | string): PublicKey {
  return derived(`config:${text(programId)}`, () => PublicKey.findProgramAddressSync([CONFIG_SEED], toPublicKey(programId))[0]);
}

/**
 * The program's ProgramData account (seeds [program id] under the BPF upgradeable loader): where
 * the loader records the upgrade authority that `initialize_config` requires as signer.
 */
export function programDataAddress(programId: PublicKey | string): PublicKey {
  return derived(`programdata:${text(programId)}`, () => PublicKey.findProgramAddressSync([toPublicKey(programId).toBuffer()], BPF_LOADER_UPGRADEABLE_PROGRAM_ID)[0]);
}

/** The order (escrow) PDA (seeds ["order", order_id]); `orderId` is a UUID string or its 16 bytes. */
export function orderPda(programId: PublicKey | string, orderId: Uint8Array | number[] | string): PublicKey {
  const id = Buffer.from(orderIdBytes(orderId));
  return derived(`order:${text(programId)}:${id.toString('hex')}`, () => PublicKey.findProgramAddressSync([ORDER_SEED, id], toPublicKey(programId))[0]);
}

/** The vault: associated token account of the order PDA (off-curve owner) for `mint` under `tokenProgram`. */
export function vaultAddress(
  order: PublicKey | string,
  mint: PublicKey | string,
  tokenProgram: PublicKey | string = TOKEN_PROGRAM_ID,
): PublicKey {
  return associatedTokenAddress(order, mint, tokenProgram);
}

/**
 * The associated token account of `owner` for `mint` under `tokenProgram` (SPL Associated Token Account:
 * seeds [owner, token program, mint] under the ATA program), any owner (on or off the curve, like
 * `getAssociatedTokenAddressSync(mint, owner, true, tokenProgram)`), remembered.
 */
export function associatedTokenAddress(
  owner: PublicKey | string,
  mint: PublicKey | string,
  tokenProgram: PublicKey | string = TOKEN_PROGRAM_ID,
): PublicKey {
  return derived(`ata:${text(owner)}:${text(mint)}:${text(tokenProgram)}`, () =>
    getAssociatedTokenAddressSync(toPublicKey(mint), toPublicKey(owner), true, toPublicKey(tokenProgram), ASSOCIATED_TOKEN_PROGRAM_ID),
  );
}
