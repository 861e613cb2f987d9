/**
 * Listing tokens: one Token-2022 NFT per listing, paid for by the service keypair (rent of the mint and
 * of the seller's token account, the fees): the listings module charges each mint and rename to the
 * service's daily caps and budget before calling here (modules/budget, docs/threat-model.md#who-pays-for-what-on-chain).
 *
 * Mint layout: MetadataPointer extension (authority = service, pointer = the mint itself) and the
 * token-metadata extension (name, symbol, uri; update authority = service), decimals 0, freeze
 * authority none. Supply 1 is minted to the seller's Token-2022 associated token account and the
 * mint authority is revoked in the same atomic transaction, so the supply is fixed at 1 forever.
 *
 * Sizes: name <= 32, symbol <= 10, uri <= 200 UTF-8 bytes (wallet conventions; keeps the single
 * transaction under the 1232-byte packet limit).
 *
 * Crash safety (the listings module's chain intents, server/src/modules/listings/README.md):
 *  - with `listingId` the mint keypair is derived from the service key and the listing id
 *    (HKDF-SHA256, RFC 5869), so a listing has one possible mint address: sending its mint again can
 *    never create a second token, and the address is known before anything is sent;
 *  - `onSigned` receives the signature, the mint and the blockhash's `lastValidBlockHeight` before the
 *    first send, so the caller can record the attempt and later tell "may still land" from "never will";
 *  - `readListingMint` / `transactionOutcome` read the outcome back without sending anything.
 */
import {
  type Commitment,
  type Connection,
  Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
} from '@solana/web3.js';
import {
  AuthorityType,
  ExtensionType,
  LENGTH_SIZE,
  TOKEN_2022_PROGRAM_ID,
  TYPE_SIZE,
  createAssociatedTokenAccountIdempotentInstruction,
  createInitializeMetadataPointerInstruction,
  createInitializeMintInstruction,
  createMintToInstruction,
  createSetAuthorityInstruction,
  getAssociatedTokenAddressSync,
  getMintLen,
  getTokenMetadata,
} from '@solana/spl-token';
import {
  Field,
  type TokenMetadata,
  createInitializeInstruction,
  createUpdateFieldInstruction,
  pack,
} from '@solana/spl-token-metadata';
import { hkdfSync } from 'node:crypto';
import { DomainError } from '../errors.js';
import { transactionOutcome as recordedOutcome } from './recorded-send.js';
import type { ListingMintAttempt, ListingMintState, ListingTokenInput, SendHooks, TxAttempt, TxOutcome, TxResult } from './types.js';
import { rpc, sendRawAndConfirm, type ConfirmOptions } from './tx.js';
import { signTransaction } from './sign.js';

export const LISTING_TOKEN_LIMITS = { name: 32, symbol: 10, uri: 200 } as const;

function checkField(field: keyof typeof LISTING_TOKEN_LIMITS, value: string) {
  const len = Buffer.byteLength(value, 'utf8');
  if (len > LISTING_TOKEN_LIMITS[field]) {
    throw new DomainError('validation-error', `listing token ${field} is ${len} bytes, at most ${LISTING_TOKEN_LIMITS[field]}`, {
      errors: [{ path: field, message: `at most ${LISTING_TOKEN_LIMITS[field]} bytes`, code: 'too_big' }],
    });
  }
}

export interface ListingMintDeps {
  connection: Connection;
  /** pays every fee and rent; mint authority (until revoked), metadata update authority */
  service: Keypair;
  commitment?: Commitment;
  confirm?: ConfirmOptions;
}

/** HKDF salt of the listing mint derivation; changing it changes every future mint address. */
const MINT_DERIVATION_SALT = 'bazaar/listing-mint/v1';

/**
 * The mint keypair of a listing: ed25519 seed = HKDF-SHA256(ikm = the service key's 32-byte seed,
 * salt = "bazaar/listing-mint/v1", info = listing id, 32 bytes). Deterministic and known only to the
 * service; after the mint it has no authority left (the account belongs to Token-2022).
 */
export function listingMintKeypair(service: Keypair, listingId: string): Keypair {
  const seed = hkdfSync('sha256', service.secretKey.subarray(0, 32), MINT_DERIVATION_SALT, listingId, 32);
  return Keypair.fromSeed(new Uint8Array(seed));
}

/**
 * Sign `tx` with a fresh blockhash, hand the attempt to `onSigned` (a throw aborts before the send),
 * then send and confirm (./tx.ts timeouts). Errors: DomainError chain-unavailable / chain-transaction-failed.
 */
async function signAndSend<A extends TxAttempt>(
  deps: ListingMintDeps,
  tx: Transaction,
  signers: Keypair[],
  action: string,
  onSigned: ((attempt: TxAttempt) => A) | null,
  hooks: SendHooks<A> | undefined,
): Promise<TxResult> {
  const commitment = deps.confirm?.commitment ?? deps.commitment ?? deps.connection.commitment ?? 'confirmed';
  const latest = await rpc(() => deps.connection.getLatestBlockhash(commitment), { action });
  tx.recentBlockhash = latest.blockhash;
  tx.lastValidBlockHeight = latest.lastValidBlockHeight;
  tx.feePayer = deps.service.publicKey;
  signTransaction(tx, ...signers);
  const lastValidBlockHeight = latest.lastValidBlockHeight;
  return sendRawAndConfirm(deps.connection, tx.serialize(), {
    ...deps.confirm,
    commitment,
    lastValidBlockHeight,
    programIds: tx.instructions.map((ix) => ix.programId.toBase58()),
    errors: { action },
    onSigned: hooks?.onSigned
      ? async (signature) => {
          const base = { signature, lastValidBlockHeight };
          await hooks.onSigned!(onSigned ? onSigned(base) : (base as A));
        }
      : undefined,
  });
}

/**
 * Mint the listing NFT; returns the mint address and the transaction's signature and slot.
 * `hooks.onSigned` gets { mint, signature, lastValidBlockHeight } before the first send.
 */
export async function mintListingToken(
  deps: ListingMintDeps,
  input: ListingTokenInput,
  hooks?: SendHooks<ListingMintAttempt>,
): Promise<TxResult & { mint: string }> {
  checkField('name', input.name);
  checkField('symbol', input.symbol);
  checkField('uri', input.uri);
  const { connection, service } = deps;
  const owner = new PublicKey(input.owner);
  const mint = input.listingId ? listingMintKeypair(service, input.listingId) : Keypair.generate();
  const metadata: TokenMetadata = {
    mint: mint.publicKey,
    updateAuthority: service.publicKey,
    name: input.name,
    symbol: input.symbol,
    uri: input.uri,
    additionalMetadata: [],
  };
  const mintLen = getMintLen([ExtensionType.MetadataPointer]);
  const metadataLen = TYPE_SIZE + LENGTH_SIZE + pack(metadata).length;
  const lamports = await rpc(() => connection.getMinimumBalanceForRentExemption(mintLen + metadataLen), {
    action: 'minting the listing token',
  });
  const ata = getAssociatedTokenAddressSync(mint.publicKey, owner, true, TOKEN_2022_PROGRAM_ID);
  const tx = new Transaction().add(
    // allocate only the fixed part; the metadata initialize reallocs into the prepaid rent
    SystemProgram.createAccount({
      fromPubkey: service.publicKey,
      newAccountPubkey: mint.publicKey,
      space: mintLen,
      lamports,
      programId: TOKEN_2022_PROGRAM_ID,
    }),
    createInitializeMetadataPointerInstruction(mint.publicKey, service.publicKey, mint.publicKey, TOKEN_2022_PROGRAM_ID),
    createInitializeMintInstruction(mint.publicKey, 0, service.publicKey, null, TOKEN_2022_PROGRAM_ID),
    createInitializeInstruction({
      programId: TOKEN_2022_PROGRAM_ID,
      metadata: mint.publicKey,
      updateAuthority: service.publicKey,
      mint: mint.publicKey,
      mintAuthority: service.publicKey,
      name: input.name,
      symbol: input.symbol,
      uri: input.uri,
    }),
    createAssociatedTokenAccountIdempotentInstruction(service.publicKey, ata, owner, mint.publicKey, TOKEN_2022_PROGRAM_ID),
    createMintToInstruction(mint.publicKey, ata, service.publicKey, 1, [], TOKEN_2022_PROGRAM_ID),
    createSetAuthorityInstruction(mint.publicKey, service.publicKey, AuthorityType.MintTokens, null, [], TOKEN_2022_PROGRAM_ID),
  );
  const address = mint.publicKey.toBase58();
  const res = await signAndSend(deps, tx, [service, mint], 'minting the listing token', (a) => ({ ...a, mint: address }), hooks);
  return { mint: address, ...res };
}

/**
 * Update `name` and/or `uri` of a listing token's metadata (service = update authority). Tops up the
 * mint account's rent first when the metadata grows. Returns null when nothing changes.
 */
export async function updateListingToken(
  deps: ListingMintDeps,
  mintAddress: string,
  fields: { name?: string; uri?: string },
  hooks?: SendHooks,
): Promise<TxResult | null> {
  if (fields.name !== undefined) checkField('name', fields.name);
  if (fields.uri !== undefined) checkField('uri', fields.uri);
  const { connection, service } = deps;
  const mint = new PublicKey(mintAddress);
  const commitment = deps.commitment ?? 'confirmed';
  const [info, current] = await rpc(
    () => Promise.all([connection.getAccountInfo(mint, commitment), getTokenMetadata(connection, mint, commitment, TOKEN_2022_PROGRAM_ID)]),
    { action: 'reading the listing token' },
  );
  if (!info || !current) throw new DomainError('not-found', `listing token ${mintAddress} has no token metadata`);
  const next: TokenMetadata = { ...current };
  const changes: [Field, string][] = [];
  if (fields.name !== undefined && fields.name !== current.name) {
    changes.push([Field.Name, fields.name]);
    next.name = fields.name;
  }
  if (fields.uri !== undefined && fields.uri !== current.uri) {
    changes.push([Field.Uri, fields.uri]);
    next.uri = fields.uri;
  }
  if (!changes.length) return null;
  const newLen = info.data.length - pack(current).length + pack(next).length;
  const needed = await rpc(() => connection.getMinimumBalanceForRentExemption(newLen), { action: 'updating the listing token' });
  const tx = new Transaction();
  if (needed > info.lamports) {
    tx.add(SystemProgram.transfer({ fromPubkey: service.publicKey, toPubkey: mint, lamports: needed - info.lamports }));
  }
  for (const [field, value] of changes) {
    tx.add(
      createUpdateFieldInstruction({
        programId: TOKEN_2022_PROGRAM_ID,
        metadata: mint,
        updateAuthority: service.publicKey,
        field,
        value,
      }),
    );
  }
  return signAndSend(deps, tx, [service], 'updating the listing token', null, hooks);
}

/** Newest-first signature scan of `address` (RPC pages of 1000); the oldest successful one. */
async function creatingTransaction(connection: Connection, address: PublicKey): Promise<{ signature: string; slot: number } | null> {
  let before: string | undefined;
  let oldest: { signature: string; slot: number } | null = null;
  for (let page = 0; page < 10; page++) {
    const sigs = await connection.getSignaturesForAddress(address, { before, limit: 1000 }, 'confirmed');
    for (const s of sigs) if (!s.err) oldest = { signature: s.signature, slot: s.slot };
    if (sigs.length < 1000) break;
    before = sigs[sigs.length - 1].signature;
  }
  return oldest;
}

/**
 * Is this listing's mint on chain, and if not, can the recorded attempt still land? Reads the mint
 * account, then the attempt's outcome (./recorded-send.ts: block height before signature status): a
 * mint absent while its attempt is dead can never appear any more. Errors: DomainError chain-unavailable.
 */
export async function readListingMint(
  deps: ListingMintDeps,
  q: { mint: string; signature: string | null; lastValidBlockHeight: number | null },
): Promise<ListingMintState> {
  const { connection } = deps;
  const commitment = deps.commitment ?? 'confirmed';
  const mint = new PublicKey(q.mint);
  const action = 'reading the listing token';
  const info = await rpc(() => connection.getAccountInfo(mint, commitment), { action });
  if (info && info.owner.equals(TOKEN_2022_PROGRAM_ID)) {
    const meta = await rpc(() => getTokenMetadata(connection, mint, commitment, TOKEN_2022_PROGRAM_ID), { action });
    let created: { signature: string; slot: number } | null = null;
    if (q.signature) {
      const st = (await rpc(() => connection.getSignatureStatuses([q.signature!], { searchTransactionHistory: true }), { action })).value[0];
      if (st && !st.err) created = { signature: q.signature, slot: st.slot };
    }
    created ??= await rpc(() => creatingTransaction(connection, mint), { action });
    return { state: 'minted', name: meta?.name ?? '', uri: meta?.uri ?? '', signature: created?.signature ?? null, slot: created?.slot ?? null };
  }
  if (!q.signature) return { state: 'absent' };
  const outcome = await recordedOutcome(connection, { signature: q.signature, lastValidBlockHeight: q.lastValidBlockHeight ?? Number.MAX_SAFE_INTEGER }, commitment);
  // landed but the account is not visible at our commitment yet: wait for it
  return outcome.state === 'dead' ? { state: 'absent' } : { state: 'in_flight' };
}

/** What became of a sent transaction (./recorded-send.ts `transactionOutcome`). Errors: chain-unavailable. */
export function transactionOutcome(deps: ListingMintDeps, a: TxAttempt): Promise<TxOutcome> {
  return recordedOutcome(deps.connection, a, deps.commitment ?? 'confirmed');
}
