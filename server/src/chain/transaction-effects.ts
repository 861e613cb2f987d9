/**
 * What a transaction did, from the node's record of it: the one parser the service reads chain
 * history with (escrow settlements in ./settlement.ts, custody deposits in
 * ../modules/custody/custody.chain.ts). Pure: no RPC, no clock.
 *
 * Input: a `getTransaction` result in the `json` encoding, as @solana/web3.js 1.x returns it
 * (`VersionedTransactionResponse`, `maxSupportedTransactionVersion: 0`), legacy or version 0.
 * Output (`TransactionEffects`):
 *  - `accountKeys`: every account of the transaction, the static keys followed by the addresses
 *    loaded from address lookup tables (`meta.loadedAddresses`, writable then readonly): the order
 *    every instruction, inner instruction and token balance index refers to;
 *  - `instructions`: the top-level instructions and every CPI (`meta.innerInstructions`, all depths),
 *    with program id and accounts as addresses;
 *  - `invokedPrograms`: every program those name, top level or by CPI, wherever its id was listed;
 *  - `tokenMovements`: every SPL Token / Token-2022 transfer, mint and burn among them, with the
 *    source and destination token accounts, their owners and the mint (from the token balances the
 *    node recorded), amount in base units;
 *  - `tokenBalances`: pre and post balance of each token account the node reported;
 *  - `programData`: the `Program data:` logs (Anchor events) with the program that logged them,
 *    CPIs included.
 * `keysResolved` is false when the message uses lookup tables and the node did not say what they
 * loaded; `innerInstructionsKnown` false when it recorded no CPIs (then movements made by CPI are
 * missing). A reader that must not miss anything checks both.
 *
 * Source standards: Solana JSON-RPC `getTransaction` (json encoding, `loadedAddresses`,
 * `innerInstructions` with `stackHeight`), SPL Token instruction layouts (Transfer = 3, MintTo = 7,
 * Burn = 8, TransferChecked = 12, MintToChecked = 14, BurnChecked = 15: tag u8, amount u64 LE),
 * Token-2022 TransferCheckedWithFee (26/1: amount u64, decimals u8, fee u64).
 */
import type { TokenBalance, VersionedTransactionResponse } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import bs58 from 'bs58';

/** The part of a `getTransaction` result (json encoding) the parser reads. */
export type TransactionRecord = Pick<VersionedTransactionResponse, 'slot' | 'meta' | 'transaction'>;

/** One instruction the transaction ran: top level (`depth` 1) or a CPI (`depth` >= 2). */
export interface ExecutedInstruction {
  /** program id (base58); `undefined` only when its index points into unresolved lookups */
  programId: string | undefined;
  /** account addresses in instruction order (`undefined` where the index is unresolved) */
  accounts: Array<string | undefined>;
  data: Uint8Array;
  /** index of the top-level instruction it belongs to (itself, or the one whose CPIs these are) */
  top: number;
  /** invocation depth: 1 top level, 2 a CPI of it, ... (`stackHeight`; 2 when the node omits it) */
  depth: number;
}

export type TokenMovementKind = 'transfer' | 'mint' | 'burn';

/** Tokens moved by one token-program instruction (top level or CPI). */
export interface TokenMovement {
  kind: TokenMovementKind;
  /** SPL Token or Token-2022 program id */
  tokenProgram: string;
  /** token account debited (null for a mint) */
  source: string | null;
  /** owner of `source` as the node's token balances record it (null: not recorded) */
  sourceOwner: string | null;
  /** token account credited (null for a burn) */
  destination: string | null;
  /** owner of `destination` (null: not recorded) */
  destinationOwner: string | null;
  /** the mint (from the instruction, else from the token balances; null: unknown) */
  mint: string | null;
  /** base units debited from the source / credited to the destination (for a transfer with a Token-2022 fee: before the fee) */
  amount: bigint;
  /** the instruction's `top` and `depth` (see ExecutedInstruction) */
  top: number;
  depth: number;
}

/** Balance of one token account before and after the transaction, base units. */
export interface TokenBalanceChange {
  account: string;
  mint: string;
  owner: string | null;
  /** 0 when the account did not exist (or was not a token account) before */
  pre: bigint;
  /** 0 when the account was closed */
  post: bigint;
}

/** One `Program data:` log line (what Anchor's `emit!` writes) and the program that was running when it was logged. */
export interface ProgramDataLog {
  programId: string;
  /** the text after `Program data: ` (base64 fields separated by spaces) */
  data: string;
  /** invocation depth of the program that logged it (1 = top level) */
  depth: number;
}

/** See the module comment. */
export interface TransactionEffects {
  slot: number;
  /** the transaction failed: nothing it did took effect (`meta.err`) */
  failed: boolean;
  accountKeys: Array<string | undefined>;
  instructions: ExecutedInstruction[];
  invokedPrograms: ReadonlySet<string>;
  tokenMovements: TokenMovement[];
  /** by token account; empty when the node reported no token balances (`tokenBalancesKnown`) */
  tokenBalances: ReadonlyMap<string, TokenBalanceChange>;
  tokenBalancesKnown: boolean;
  /** every lookup-table index was resolved (`meta.loadedAddresses` present, or no lookups) */
  keysResolved: boolean;
  /** the node recorded CPIs (`meta.innerInstructions` present) */
  innerInstructionsKnown: boolean;
  /** `Program data:` logs attributed to the program running at that point, CPIs included (`meta.logMessages`) */
  programData: ProgramDataLog[];
}

const INVOKE = /^Program ([1-9A-HJ-NP-Za-km-z]+) invoke \[(\d+)\]$/;
const END = /^Program ([1-9A-HJ-NP-Za-km-z]+) (success|failed)/;
const DATA = 'Program data: ';

/**
 * `Program data:` lines with the program that logged them, by the invoke/success stack of the
 * runtime's log (every depth: an event of a program reached by CPI is attributed to that program,
 * which Anchor's own EventParser does not do). Stops at a line it cannot place (truncated logs).
 */
function programDataOf(logs: readonly string[] | null | undefined): ProgramDataLog[] {
  const out: ProgramDataLog[] = [];
  const stack: string[] = [];
  for (const line of logs ?? []) {
    const inv = INVOKE.exec(line);
    if (inv) {
      if (Number(inv[2]) !== stack.length + 1) break; // not the runtime's stack: do not guess
      stack.push(inv[1]!);
      continue;
    }
    const end = END.exec(line);
    if (end) {
      if (stack[stack.length - 1] !== end[1]) break;
      stack.pop();
      continue;
    }
    if (line.startsWith(DATA) && stack.length > 0) out.push({ programId: stack[stack.length - 1]!, data: line.slice(DATA.length), depth: stack.length });
  }
  return out;
}

/** SPL Token and Token-2022 program ids (base58). */
export const TOKEN_PROGRAM_IDS: ReadonlySet<string> = new Set([TOKEN_PROGRAM_ID.toBase58(), TOKEN_2022_PROGRAM_ID.toBase58()]);

type Message = VersionedTransactionResponse['transaction']['message'];

/** Static keys, then loaded writable, then loaded readonly (the runtime's account order). */
function accountKeysOf(tx: TransactionRecord): { keys: Array<string | undefined>; resolved: boolean } {
  const msg = tx.transaction.message as Message;
  const keys: Array<string | undefined> = msg.staticAccountKeys.map((k) => k.toBase58());
  const lookups = 'addressTableLookups' in msg ? msg.addressTableLookups : [];
  const loaded = tx.meta?.loadedAddresses;
  if (loaded) {
    for (const k of [...loaded.writable, ...loaded.readonly]) keys.push(k.toBase58());
  }
  const wanted = lookups.reduce((n, l) => n + l.writableIndexes.length + l.readonlyIndexes.length, 0);
  return { keys, resolved: wanted === 0 || (!!loaded && loaded.writable.length + loaded.readonly.length === wanted) };
}

const u64At = (data: Uint8Array, at: number): bigint | null =>
  data.length >= at + 8 ? Buffer.from(data.buffer, data.byteOffset, data.byteLength).readBigUInt64LE(at) : null;

/** The token movement of one token-program instruction, or null when it moves nothing we track. */
function tokenMovementOf(ix: ExecutedInstruction, balances: Map<string, TokenBalanceChange>): TokenMovement | null {
  if (!ix.programId || !TOKEN_PROGRAM_IDS.has(ix.programId)) return null;
  const d = ix.data;
  const a = ix.accounts;
  let kind: TokenMovementKind;
  let source: string | undefined;
  let destination: string | undefined;
  let mint: string | undefined;
  let amount: bigint | null;
  switch (d[0]) {
    case 3: // Transfer: [source, destination, authority]
      [kind, source, destination, amount] = ['transfer', a[0], a[1], u64At(d, 1)];
      break;
    case 12: // TransferChecked: [source, mint, destination, authority]
      [kind, source, mint, destination, amount] = ['transfer', a[0], a[1], a[2], u64At(d, 1)];
      break;
    case 26: // Token-2022 TransferFeeExtension
      if (d[1] !== 1) return null; // 1 = TransferCheckedWithFee: [source, mint, destination, authority]
      [kind, source, mint, destination, amount] = ['transfer', a[0], a[1], a[2], u64At(d, 2)];
      break;
    case 7: // MintTo: [mint, account, authority]
    case 14: // MintToChecked
      [kind, mint, destination, amount] = ['mint', a[0], a[1], u64At(d, 1)];
      break;
    case 8: // Burn: [account, mint, authority]
    case 15: // BurnChecked
      [kind, source, mint, amount] = ['burn', a[0], a[1], u64At(d, 1)];
      break;
    default:
      return null;
  }
  if (amount === null) return null;
  const src = source ? balances.get(source) : undefined;
  const dst = destination ? balances.get(destination) : undefined;
  return {
    kind,
    tokenProgram: ix.programId,
    source: source ?? null,
    sourceOwner: src?.owner ?? null,
    destination: destination ?? null,
    destinationOwner: dst?.owner ?? null,
    mint: mint ?? src?.mint ?? dst?.mint ?? null,
    amount,
    top: ix.top,
    depth: ix.depth,
  };
}

/**
 * Parse a `getTransaction` result (see the module comment). Never throws on a well-formed
 * response; indexes the node could not resolve come out as `undefined` addresses.
 */
export function parseTransaction(tx: TransactionRecord): TransactionEffects {
  const { keys, resolved } = accountKeysOf(tx);
  const msg = tx.transaction.message as Message;
  const meta = tx.meta;

  const instructions: ExecutedInstruction[] = [];
  msg.compiledInstructions.forEach((ix, i) => {
    instructions.push({ programId: keys[ix.programIdIndex], accounts: ix.accountKeyIndexes.map((k) => keys[k]), data: ix.data, top: i, depth: 1 });
    for (const group of meta?.innerInstructions ?? []) {
      if (group.index !== i) continue;
      for (const inner of group.instructions) {
        const stackHeight = (inner as { stackHeight?: number | null }).stackHeight;
        instructions.push({
          programId: keys[inner.programIdIndex],
          accounts: inner.accounts.map((k) => keys[k]),
          data: bs58.decode(inner.data),
          top: i,
          depth: typeof stackHeight === 'number' && stackHeight >= 2 ? stackHeight : 2,
        });
      }
    }
  });

  const tokenBalances = new Map<string, TokenBalanceChange>();
  const note = (list: TokenBalance[] | null | undefined, when: 'pre' | 'post') => {
    for (const b of list ?? []) {
      const account = keys[b.accountIndex];
      if (!account) continue;
      const entry = tokenBalances.get(account) ?? { account, mint: b.mint, owner: b.owner ?? null, pre: 0n, post: 0n };
      entry[when] = BigInt(b.uiTokenAmount.amount);
      entry.owner ??= b.owner ?? null;
      tokenBalances.set(account, entry);
    }
  };
  note(meta?.preTokenBalances, 'pre');
  note(meta?.postTokenBalances, 'post');

  const tokenMovements: TokenMovement[] = [];
  for (const ix of instructions) {
    const m = tokenMovementOf(ix, tokenBalances);
    if (m) tokenMovements.push(m);
  }

  return {
    slot: tx.slot,
    failed: !meta || !!meta.err,
    accountKeys: keys,
    instructions,
    invokedPrograms: new Set(instructions.map((ix) => ix.programId).filter((p): p is string => !!p)),
    tokenMovements,
    tokenBalances,
    tokenBalancesKnown: !!meta?.preTokenBalances && !!meta?.postTokenBalances,
    keysResolved: resolved,
    innerInstructionsKnown: !!meta?.innerInstructions,
    programData: programDataOf(meta?.logMessages),
  };
}

/** Net change of `account`'s token balance in base units (post - pre; 0 when not reported). */
export function tokenDelta(fx: TransactionEffects, account: string): bigint {
  const b = fx.tokenBalances.get(account);
  return b ? b.post - b.pre : 0n;
}
