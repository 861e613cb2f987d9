/**
 * What a transaction did to ONE escrow order: the terminal instruction that closed it and the tokens
 * that left its vault to each payee, derived only from what the chain recorded about that order.
 *
 * A transaction may hold several escrow instructions for different orders (a buyer can bundle
 * `[refund(C), claim(A)]`), so nothing is taken from the transaction as a whole:
 *  1. instruction: the escrow instruction (top level or CPI) whose own `order` account is this
 *     order's PDA (accounts decoded by the IDL's account list);
 *  2. event: the program event of that kind whose `order` field is this PDA (OrderReleased,
 *     OrderClaimed, OrderRefunded, DisputeResolved, SettlementAccepted; parsed from the `Program data:` logs the escrow
 *     wrote, at any depth);
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
import type { BorshCoder, Idl } from '@coral-xyz/anchor';
import type { BorshInstructionCoder } from '@coral-xyz/anchor';
import type { PublicKey } from '@solana/web3.js';
import { type TransactionEffects, type TransactionRecord, parseTransaction } from './transaction-effects.js';

export type TerminalInstruction = 'release' | 'claim' | 'refund' | 'resolve_dispute' | 'accept_settlement';
const TERMINAL: ReadonlySet<string> = new Set(['release', 'claim', 'refund', 'resolve_dispute', 'accept_settlement']);

/** Event name (IDL) emitted by each terminal instruction. */
const EVENT_OF: Record<TerminalInstruction, string> = {
  release: 'OrderReleased',
  claim: 'OrderClaimed',
  refund: 'OrderRefunded',
  resolve_dispute: 'DisputeResolved',
  accept_settlement: 'SettlementAccepted',
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
  /** resolve_dispute: the split the arbiter chose; accept_settlement: the split both parties agreed (basis points to the buyer) */
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

/** The escrow program and its IDL: what decoding its instructions needs. */
export interface EscrowProgramContext {
  programId: PublicKey;
  idl: Idl;
  coder: BorshCoder;
}

export interface SettlementContext extends EscrowProgramContext {
  /** the order PDA */
  order: PublicKey;
  /** the order's vault (associated token account of the PDA) */
  vault: PublicKey;
}

const snake = (s: string) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** One escrow instruction a transaction ran (top level or CPI), decoded with the IDL. */
export interface EscrowInstruction {
  /** snake_case instruction name (`refund`, `fund`, ...) */
  name: string;
  /** its accounts by their IDL names in snake_case (`order`, `vault`, `buyer_token_account`, ...) */
  named: Record<string, string>;
  /** decoded arguments */
  data: Record<string, unknown>;
  /** the top-level instruction it ran under, and its depth (1 = top level) */
  top: number;
  depth: number;
}

/**
 * Every instruction of the escrow program in the transaction, wherever it ran: top level or by a
 * CPI from any program, its program id listed statically or loaded from a lookup table
 * (./transaction-effects.ts). Instructions whose data does not decode are left out.
 */
export function escrowInstructions(fx: TransactionEffects, ctx: EscrowProgramContext): EscrowInstruction[] {
  const program = ctx.programId.toBase58();
  const coder = ctx.coder.instruction as BorshInstructionCoder;
  const out: EscrowInstruction[] = [];
  for (const ix of fx.instructions) {
    if (ix.programId !== program) continue;
    let decoded: ReturnType<BorshInstructionCoder['decode']>;
    try {
      decoded = coder.decode(Buffer.from(ix.data));
    } catch {
      decoded = null;
    }
    if (!decoded) continue;
    const name = snake(decoded.name);
    const def = ctx.idl.instructions.find((d) => d.name === name || snake(d.name) === name);
    if (!def) continue;
    const named: Record<string, string> = {};
    def.accounts.forEach((a, i) => {
      const k = ix.accounts[i];
      if ('name' in a && k !== undefined) named[snake(a.name)] = k;
    });
    out.push({ name, named, data: decoded.data as Record<string, unknown>, top: ix.top, depth: ix.depth });
  }
  return out;
}

/** Token transfers out of `vault` made under top-level instruction `top`, per destination; null without CPI data. */
function transfersFrom(fx: TransactionEffects, top: number, vault: string): Map<string, bigint> | null {
  if (!fx.innerInstructionsKnown) return null;
  const out = new Map<string, bigint>();
  for (const m of fx.tokenMovements) {
    if (m.top !== top || m.kind !== 'transfer' || m.source !== vault || !m.destination) continue;
    out.set(m.destination, (out.get(m.destination) ?? 0n) + m.amount);
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
    case 'accept_settlement':
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
export function settlementFromTransaction(tx: TransactionRecord, signature: string, ctx: SettlementContext): EscrowSettlement | null {
  if (!tx.meta || tx.meta.err) return null;
  const fx = parseTransaction(tx);
  const program = ctx.programId.toBase58();
  const order = ctx.order.toBase58();
  const vault = ctx.vault.toBase58();

  let found: { name: TerminalInstruction; top: number; named: Record<string, string>; data: Record<string, unknown> } | null = null;
  for (const ix of escrowInstructions(fx, ctx)) {
    if (!TERMINAL.has(ix.name)) continue;
    if (ix.named.order !== order) continue; // another order's instruction in the same transaction
    found = { name: ix.name as TerminalInstruction, top: ix.top, named: ix.named, data: ix.data };
  }
  if (!found) return null;

  // the program's own account of what it paid for THIS order
  // (logged by the escrow at whatever depth it ran: a CPI from another program counts the same)
  let event: SettlementPayouts | null = null;
  for (const log of fx.programData) {
    if (log.programId !== program) continue;
    let e: { name: string; data: Record<string, unknown> } | null;
    try {
      e = ctx.coder.events.decode(log.data) as typeof e;
    } catch {
      e = null; // not an event of this IDL
    }
    // the IDL names events in PascalCase; Anchor's coder camel-cases them
    if (!e || e.name.toLowerCase() !== EVENT_OF[found.name].toLowerCase() || eventOrder(e.data) !== order) continue;
    event = eventPayouts(found.name, e.data);
  }

  const accounts = {
    vault,
    buyer: found.named.buyer_token_account ?? null,
    seller: found.named.seller_token_account ?? null,
    treasury: found.named.treasury_token_account ?? null,
  };
  const vaultBefore = fx.tokenBalancesKnown ? (fx.tokenBalances.get(vault)?.pre ?? 0n) : null;
  const transfers = transfersFrom(fx, found.top, vault);

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

  const bps = found.name === 'resolve_dispute' || found.name === 'accept_settlement' ? Number(found.data.buyerBps ?? found.data.buyer_bps) : undefined;
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
