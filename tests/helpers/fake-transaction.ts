/**
 * `getTransaction` results (json encoding, as @solana/web3.js returns them) built without a node:
 * a legacy or version 0 message compiled by web3.js itself (lookup tables as given), the CPIs the
 * runtime would record under it, token balances and logs. For the pure parsers
 * (server/src/chain/transaction-effects.ts) and the scanners above them.
 */
import {
  AddressLookupTableAccount,
  PublicKey,
  TransactionInstruction,
  TransactionMessage,
  type VersionedTransactionResponse,
} from '@solana/web3.js';
import { TOKEN_PROGRAM_ID } from '@solana/spl-token';
import bs58 from 'bs58';

/** A CPI recorded under the top-level instruction: its instruction and depth (2 = called by the top level). */
export interface FakeCpi {
  ix: TransactionInstruction;
  depth: number;
}

export interface FakeTokenBalance {
  account: PublicKey;
  mint: PublicKey;
  owner: PublicKey;
  /** null: not a token account before (absent from preTokenBalances) */
  pre: bigint | null;
  /** null: closed by the transaction (absent from postTokenBalances) */
  post: bigint | null;
}

export interface FakeTransactionOptions {
  payer: PublicKey;
  /** top-level instructions, each with the CPIs it made */
  instructions: Array<{ ix: TransactionInstruction; cpis?: FakeCpi[] }>;
  /** lookup tables: a version 0 message; none: legacy */
  tables?: AddressLookupTableAccount[];
  tokenBalances?: FakeTokenBalance[];
  logs?: string[];
  slot?: number;
  /** leave `meta.loadedAddresses` out (a node that does not report it) */
  omitLoadedAddresses?: boolean;
  /** leave `meta.innerInstructions` out (a node that records no CPIs) */
  omitInnerInstructions?: boolean;
  failed?: boolean;
}

/** A lookup table account holding `addresses` (its own address random). */
export function fakeTable(addresses: PublicKey[]): AddressLookupTableAccount {
  return new AddressLookupTableAccount({
    key: PublicKey.unique(),
    state: { deactivationSlot: BigInt('18446744073709551615'), lastExtendedSlot: 0, lastExtendedSlotStartIndex: 0, authority: undefined, addresses },
  });
}

/** A `getTransaction` result for `o` (see the module comment). */
export function fakeTransaction(o: FakeTransactionOptions): VersionedTransactionResponse {
  const tm = new TransactionMessage({ payerKey: o.payer, recentBlockhash: bs58.encode(Buffer.alloc(32, 7)), instructions: o.instructions.map((i) => i.ix) });
  const message = o.tables ? tm.compileToV0Message(o.tables) : tm.compileToLegacyMessage();
  const loaded = o.tables ? (message as ReturnType<TransactionMessage['compileToV0Message']>).resolveAddressTableLookups(o.tables) : { writable: [], readonly: [] };
  const all = [...message.staticAccountKeys, ...loaded.writable, ...loaded.readonly].map((k) => k.toBase58());
  const at = (k: PublicKey) => {
    const i = all.indexOf(k.toBase58());
    if (i < 0) throw new Error(`${k.toBase58()} is not an account of the message`);
    return i;
  };
  const innerInstructions = o.instructions
    .map((top, index) => ({
      index,
      instructions: (top.cpis ?? []).map((c) => ({
        programIdIndex: at(c.ix.programId),
        accounts: c.ix.keys.map((k) => at(k.pubkey)),
        data: bs58.encode(c.ix.data),
        stackHeight: c.depth,
      })),
    }))
    .filter((g) => g.instructions.length > 0);
  const balance = (b: FakeTokenBalance, v: bigint) => ({
    accountIndex: at(b.account),
    mint: b.mint.toBase58(),
    owner: b.owner.toBase58(),
    programId: TOKEN_PROGRAM_ID.toBase58(),
    uiTokenAmount: { amount: v.toString(), decimals: 6, uiAmount: Number(v) / 1e6, uiAmountString: String(Number(v) / 1e6) },
  });
  const tb = o.tokenBalances ?? [];
  return {
    slot: o.slot ?? 1000,
    blockTime: 1_800_000_000,
    version: o.tables ? 0 : 'legacy',
    transaction: { message, signatures: [bs58.encode(Buffer.alloc(64, 1))] },
    meta: {
      err: o.failed ? { InstructionError: [0, 'Custom'] } : null,
      fee: 5000,
      preBalances: all.map(() => 0),
      postBalances: all.map(() => 0),
      ...(o.omitInnerInstructions ? {} : { innerInstructions }),
      preTokenBalances: tb.filter((b) => b.pre !== null).map((b) => balance(b, b.pre!)),
      postTokenBalances: tb.filter((b) => b.post !== null).map((b) => balance(b, b.post!)),
      logMessages: o.logs ?? [],
      ...(o.omitLoadedAddresses || !o.tables ? {} : { loadedAddresses: loaded }),
      computeUnitsConsumed: 1000,
    },
  } as unknown as VersionedTransactionResponse;
}

/** SPL Token TransferChecked (12): `amount` base units from `source` to `destination`. */
export function transferChecked(source: PublicKey, mint: PublicKey, destination: PublicKey, authority: PublicKey, amount: bigint, decimals = 6): TransactionInstruction {
  const data = Buffer.alloc(10);
  data[0] = 12;
  data.writeBigUInt64LE(amount, 1);
  data[9] = decimals;
  return new TransactionInstruction({
    programId: TOKEN_PROGRAM_ID,
    keys: [
      { pubkey: source, isSigner: false, isWritable: true },
      { pubkey: mint, isSigner: false, isWritable: false },
      { pubkey: destination, isSigner: false, isWritable: true },
      { pubkey: authority, isSigner: true, isWritable: false },
    ],
    data,
  });
}
