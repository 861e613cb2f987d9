/**
 * What a transaction did to ONE escrow order: the terminal instruction that closed it and the tokens
 * that left its vault to each payee, derived only from what the chain recorded about that order.
 *
 * A transaction may hold several escrow instructions for different orders (a buyer can bundle
 * `[refund(C), claim(A)]`), so nothing is taken from the transaction as a whole:
 *  1. instruction: the escrow instruction (top level or CPI) whose own `order` account is this
 *     order's PDA (accounts decoded by the IDL's account list);
 *  2. event: the program event of that kind whose `order` field is this PDA (OrderReleased,
 *     OrderClaimed, OrderRefunded, DisputeResolved; parsed from `Program data:` logs);
 *  3. transfers: the token transfers (CPIs of that instruction) whose source is this order's vault,
 *     per destination, cross-checked with the vault's balance before the transaction
 *     (`preTokenBalances`; the vault is closed afterwards).
 * `paid` comes from the transfers when the RPC reports inner instructions, else from the event
 * (plus the vault surplus the program sweeps: to the buyer on refund, to the treasury otherwise).
 * `verified` is true only when all three agree.
 *
 * Units: base units (bigint). Source standard: Anchor event encoding (8-byte discriminator + borsh,
 * logged as `Program data: <base64>`), SPL Token `Transfer` (3) / `TransferChecked` (12) layouts.
 */
import { type BorshCoder, type Idl, EventParser } from '@coral-xyz/anchor';
import type { BorshInstructionCoder } from '@coral-xyz/anchor';
import type { PublicKey, VersionedTransactionResponse } from '@solana/web3.js';
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from '@solana/spl-token';
import bs58 from 'bs58';

export type TerminalInstruction = 'release' | 'claim' | 'refund' | 'resolve_dispute';
const TERMINAL: ReadonlySet<string> = new Set(['release', 'claim', 'refund', 'resolve_dispute']);

/** Event name (IDL) emitted by each terminal instruction. */
const EVENT_OF: Record<TerminalInstruction, string> = {
  release: 'OrderReleased',
  claim: 'OrderClaimed',
  refund: 'OrderRefunded',
  resolve_dispute: 'DisputeResolved',
};

/** Base units paid out of the vault, per payee role. */
export interface SettlementPayouts {
  buyer: bigint;
  seller: bigint;
  treasury: bigint;
}

/** The settlement of one order by one transaction (see the module comment). */
export interface EscrowSettlement {
  instruction: TerminalInstruction;
  signature: string;
  slot: number;
  /** resolve_dispute only: the split the arbiter chose (basis points to the buyer) */
  buyerBps?: number;
  /** base units that left the vault to each role */
  paid: SettlementPayouts;
  /** token accounts the instruction named for each role (null: the instruction has no such role) */
  accounts: { vault: string; buyer: string | null; seller: string | null; treasury: string | null };
  /** amounts the program's event reports (null: no event for this order in the logs) */
  event: SettlementPayouts | null;
  /** vault balance before the transaction (null: the RPC gave no token balances for it) */
  vaultBefore: bigint | null;
  /** event, transfers and the vault balance all agree */
  verified: boolean;
}

type Tx = Pick<VersionedTransactionResponse, 'slot' | 'meta' | 'transaction'>;

export interface SettlementContext {
  programId: PublicKey;
  idl: Idl;
  coder: BorshCoder;
  /** the order PDA */
  order: PublicKey;
  /** the order's vault (associated token account of the PDA) */
  vault: PublicKey;
}

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

interface RawIx {
  programIndex: number;
  accounts: number[];
  data: Uint8Array;
  /** top-level index this instruction belongs to (itself or the parent of a CPI) */
  top: number;
}

function accountKeysOf(tx: Tx): string[] {
  const msg = tx.transaction.message as VersionedTransactionResponse['transaction']['message'];
  const loaded = tx.meta?.loadedAddresses;
  const keys = msg.getAccountKeys(loaded ? { accountKeysFromLookups: loaded } : undefined);
  const out: string[] = [];
  for (let i = 0; i < keys.length; i++) out.push(keys.get(i)!.toBase58());
  return out;
}

function instructionsOf(tx: Tx): RawIx[] {
  const msg = tx.transaction.message as VersionedTransactionResponse['transaction']['message'];
  const out: RawIx[] = msg.compiledInstructions.map((ix, i) => ({
    programIndex: ix.programIdIndex,
    accounts: [...ix.accountKeyIndexes],
    data: ix.data,
    top: i,
  }));
  for (const group of tx.meta?.innerInstructions ?? []) {
    for (const ix of group.instructions) {
      out.push({ programIndex: ix.programIdIndex, accounts: ix.accounts, data: bs58.decode(ix.data), top: group.index });
    }
  }
  return out;
}

function tokenAmount(tx: Tx, keys: string[], address: string, when: 'pre' | 'post'): bigint | null {
  const list = when === 'pre' ? tx.meta?.preTokenBalances : tx.meta?.postTokenBalances;
  if (!list) return null;
  const b = list.find((x) => keys[x.accountIndex] === address);
  return b ? BigInt(b.uiTokenAmount.amount) : 0n;
}

const TOKEN_PROGRAMS = new Set([TOKEN_PROGRAM_ID.toBase58(), TOKEN_2022_PROGRAM_ID.toBase58()]);

/** Token transfers out of `vault` made under top-level instruction `top`, per destination; null without CPI data. */
function transfersFrom(tx: Tx, keys: string[], all: RawIx[], top: number, vault: string): Map<string, bigint> | null {
  if (!tx.meta?.innerInstructions) return null;
  const out = new Map<string, bigint>();
  for (const ix of all) {
    if (ix.top !== top || !TOKEN_PROGRAMS.has(keys[ix.programIndex]!)) continue;
    const tag = ix.data[0];
    let source: string | undefined;
    let dest: string | undefined;
    if (tag === 12 && ix.data.length >= 10) [source, , dest] = ix.accounts.map((i) => keys[i]!); // TransferChecked
    else if (tag === 3 && ix.data.length >= 9) [source, dest] = ix.accounts.map((i) => keys[i]!); // Transfer
    else continue;
    if (source !== vault || !dest) continue;
    const amount = Buffer.from(ix.data.subarray(1, 9)).readBigUInt64LE(0);
    out.set(dest, (out.get(dest) ?? 0n) + amount);
  }
  return out;
}

/** The `order` field of an event, as base58. */
function eventOrder(data: Record<string, unknown>): string | null {
  const o = data.order as { toBase58?: () => string } | undefined;
  return o?.toBase58?.() ?? null;
}

const big = (v: unknown): bigint => BigInt((v as { toString(): string } | undefined)?.toString() ?? '0');

function eventPayouts(ix: TerminalInstruction, d: Record<string, unknown>): SettlementPayouts {
  switch (ix) {
    case 'refund':
      return { buyer: big(d.amount), seller: 0n, treasury: 0n };
    case 'resolve_dispute':
      return { buyer: big(d.buyerAmount ?? d.buyer_amount), seller: big(d.sellerAmount ?? d.seller_amount), treasury: big(d.fee) };
    default:
      return { buyer: 0n, seller: big(d.sellerAmount ?? d.seller_amount), treasury: big(d.fee) };
  }
}

const total = (p: SettlementPayouts) => p.buyer + p.seller + p.treasury;

/**
 * The settlement of `ctx.order` in `tx`, or null when the transaction failed or holds no terminal
 * escrow instruction acting on that order. When several do (closed, re-funded and closed again in
 * one transaction), the last one is the order's final outcome.
 */
export function settlementFromTransaction(tx: Tx, signature: string, ctx: SettlementContext): EscrowSettlement | null {
  if (!tx.meta || tx.meta.err) return null;
  const keys = accountKeysOf(tx);
  const all = instructionsOf(tx);
  const program = ctx.programId.toBase58();
  const order = ctx.order.toBase58();
  const vault = ctx.vault.toBase58();
  const coder = ctx.coder.instruction as BorshInstructionCoder;

  let found: { name: TerminalInstruction; top: number; named: Record<string, string>; data: Record<string, unknown> } | null = null;
  for (const ix of all) {
    if (keys[ix.programIndex] !== program) continue;
    const decoded = coder.decode(Buffer.from(ix.data));
    if (!decoded) continue;
    const name = snake(decoded.name);
    if (!TERMINAL.has(name)) continue;
    const def = ctx.idl.instructions.find((d) => d.name === name || snake(d.name) === name);
    if (!def) continue;
    const named: Record<string, string> = {};
    def.accounts.forEach((a, i) => {
      const k = ix.accounts[i];
      if ('name' in a && k !== undefined) named[snake(a.name)] = keys[k]!;
    });
    if (named.order !== order) continue; // another order's instruction in the same transaction
    found = { name: name as TerminalInstruction, top: ix.top, named, data: decoded.data as Record<string, unknown> };
  }
  if (!found) return null;

  // the program's own account of what it paid for THIS order
  let event: SettlementPayouts | null = null;
  try {
    const parser = new EventParser(ctx.programId, ctx.coder);
    for (const e of parser.parseLogs(tx.meta.logMessages ?? [])) {
      // the IDL names events in PascalCase; Anchor's Program coder camel-cases them
      if (e.name.toLowerCase() !== EVENT_OF[found.name].toLowerCase() || eventOrder(e.data) !== order) continue;
      event = eventPayouts(found.name, e.data);
    }
  } catch {
    event = null; // logs truncated or not in the expected shape
  }

  const accounts = {
    vault,
    buyer: found.named.buyer_token_account ?? null,
    seller: found.named.seller_token_account ?? null,
    treasury: found.named.treasury_token_account ?? null,
  };
  const vaultBefore = tokenAmount(tx, keys, vault, 'pre');
  const transfers = transfersFrom(tx, keys, all, found.top, vault);

  let paid: SettlementPayouts;
  let transfersMatchRoles = true;
  if (transfers) {
    paid = { buyer: 0n, seller: 0n, treasury: 0n };
    for (const [dest, amount] of transfers) {
      if (dest === accounts.buyer) paid.buyer += amount;
      else if (dest === accounts.seller) paid.seller += amount;
      else if (dest === accounts.treasury) paid.treasury += amount;
      else transfersMatchRoles = false; // not a payee of this instruction: never expected
    }
  } else if (event) {
    // no CPI data: the event, plus the surplus the program sweeps out of the vault
    const surplus = vaultBefore !== null && vaultBefore > total(event) ? vaultBefore - total(event) : 0n;
    paid = { ...event };
    if (found.name === 'refund') paid.buyer += surplus;
    else paid.treasury += surplus;
  } else {
    paid = { buyer: 0n, seller: 0n, treasury: 0n };
  }

  let verified = !!event && !!transfers && transfersMatchRoles && vaultBefore !== null && total(paid) === vaultBefore;
  if (verified && event) {
    // the event excludes the swept surplus: each role got at least its event amount, the surplus went to one role
    const extra = { buyer: paid.buyer - event.buyer, seller: paid.seller - event.seller, treasury: paid.treasury - event.treasury };
    const surplusRole = found.name === 'refund' ? 'buyer' : 'treasury';
    verified = Object.entries(extra).every(([role, v]) => v === 0n || (v > 0n && role === surplusRole));
  }

  const bps = found.name === 'resolve_dispute' ? Number(found.data.buyerBps ?? found.data.buyer_bps) : undefined;
  return {
    instruction: found.name,
    signature,
    slot: tx.slot,
    ...(bps !== undefined && Number.isFinite(bps) ? { buyerBps: bps } : {}),
    paid,
    accounts,
    event,
    vaultBefore,
    verified,
  };
}
