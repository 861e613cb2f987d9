/**
 * Listing tokens: one Token-2022 NFT per listing, paid for by the service keypair.
 *
 * Mint layout: MetadataPointer extension (authority = service, pointer = the mint itself) and the
 * token-metadata extension (name, symbol, uri; update authority = service), decimals 0, freeze
 * authority none. Supply 1 is minted to the seller's Token-2022 associated token account and the
 * mint authority is revoked in the same atomic transaction, so the supply is fixed at 1 forever.
 *
 * Sizes: name <= 32, symbol <= 10, uri <= 200 UTF-8 bytes (wallet conventions; keeps the single
 * transaction under the 1232-byte packet limit).
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
import { DomainError } from '../errors.js';
import type { ListingTokenInput, TxResult } from './types.js';
import { rpc, sendAndConfirm, type ConfirmOptions } from './tx.js';

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

/** Mint the listing NFT; returns the mint address and the transaction's signature and slot. */
export async function mintListingToken(deps: ListingMintDeps, input: ListingTokenInput): Promise<TxResult & { mint: string }> {
  checkField('name', input.name);
  checkField('symbol', input.symbol);
  checkField('uri', input.uri);
  const { connection, service } = deps;
  const owner = new PublicKey(input.owner);
  const mint = Keypair.generate();
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
  tx.feePayer = service.publicKey;
  const res = await sendAndConfirm(connection, tx, [service, mint], {
    commitment: deps.commitment,
    ...deps.confirm,
    errors: { action: 'minting the listing token' },
  });
  return { mint: mint.publicKey.toBase58(), ...res };
}

/**
 * Update `name` and/or `uri` of a listing token's metadata (service = update authority). Tops up the
 * mint account's rent first when the metadata grows. Returns null when nothing changes.
 */
export async function updateListingToken(
  deps: ListingMintDeps,
  mintAddress: string,
  fields: { name?: string; uri?: string },
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
  tx.feePayer = service.publicKey;
  return sendAndConfirm(connection, tx, [service], {
    commitment: deps.commitment,
    ...deps.confirm,
    errors: { action: 'updating the listing token' },
  });
}
