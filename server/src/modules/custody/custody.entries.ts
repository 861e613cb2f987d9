/**
 * The custody journal entries (see ./README.md): pure functions from a transfer or a deposit to the
 * double-entry postings the ledger books. Every use case that moves money books through these.
 */
import type { DepositReading } from './custody.chain.js';
import { type EntryInput, systemAccount, userAccount } from './custody.ledger.js';
import type { TransferRecord } from './custody.types.js';

type HoldInput = { id: string; kind: 'withdrawal' | 'order_fund'; userId: string; mint: string; amount: bigint; fee: bigint };

/** withdrawal: available -> held (amount + fee); order_fund: available -> escrow (amount). */
export function holdEntry(h: HoldInput): EntryInput {
  const total = h.amount + h.fee;
  const to = h.kind === 'withdrawal' ? 'held' : 'escrow';
  return {
    ref: `transfer:${h.id}:hold`,
    kind: h.kind === 'withdrawal' ? 'withdrawal_hold' : 'order_hold',
    postings: [
      { account: userAccount(h.userId, h.mint, 'available'), amount: total },
      { account: userAccount(h.userId, h.mint, to), amount: -total },
    ],
  };
}

/** The entry booked when a transfer confirms on chain. */
export function settleEntry(t: TransferRecord): EntryInput {
  const ref = `transfer:${t.id}:settle`;
  if (t.kind === 'withdrawal') {
    return {
      ref,
      kind: 'withdrawal_settle',
      memo: { signature: t.signature, destination: t.destination },
      postings: [
        { account: userAccount(t.userId, t.mint, 'held'), amount: t.amount + t.fee },
        { account: systemAccount(t.mint, 'hot_wallet'), amount: -t.amount },
        { account: systemAccount(t.mint, 'withdrawal_fees'), amount: -t.fee },
      ],
    };
  }
  if (t.kind === 'sweep') {
    return {
      ref,
      kind: 'sweep',
      memo: { signature: t.signature },
      postings: [
        { account: systemAccount(t.mint, 'hot_wallet'), amount: t.amount },
        { account: userAccount(t.userId, t.mint, 'deposit_address'), amount: -t.amount },
      ],
    };
  }
  return {
    ref,
    kind: 'order_fund',
    memo: { signature: t.signature, order_id: t.orderId },
    postings: [
      { account: systemAccount(t.mint, 'escrow_in_flight'), amount: t.amount },
      { account: systemAccount(t.mint, 'hot_wallet'), amount: -t.amount },
    ],
  };
}

/** The entry booked when a transfer fails: the hold goes back to available (sweeps hold nothing). */
export function releaseEntry(t: TransferRecord): EntryInput | null {
  if (t.kind === 'sweep') return null;
  const total = t.amount + t.fee;
  return {
    ref: `transfer:${t.id}:release`,
    kind: t.kind === 'withdrawal' ? 'withdrawal_release' : 'order_release',
    postings: [
      { account: userAccount(t.userId, t.mint, t.kind === 'withdrawal' ? 'held' : 'escrow'), amount: total },
      { account: userAccount(t.userId, t.mint, 'available'), amount: -total },
    ],
  };
}

/**
 * A custodial order's escrow closed: the escrow commitment leaves the books (escrow_in_flight and the
 * user's escrow), and the buyer's share (refund / split) comes back as available, its tokens at the
 * deposit address (swept later).
 */
export function closeEntry(t: TransferRecord, buyerShare: bigint): EntryInput {
  return {
    ref: `order:${t.orderId}:close`,
    kind: 'order_close',
    memo: { order_id: t.orderId, buyer_share: buyerShare.toString() },
    postings: [
      { account: userAccount(t.userId, t.mint, 'escrow'), amount: t.amount },
      { account: systemAccount(t.mint, 'escrow_in_flight'), amount: -t.amount },
      { account: userAccount(t.userId, t.mint, 'deposit_address'), amount: buyerShare },
      { account: userAccount(t.userId, t.mint, 'available'), amount: -buyerShare },
    ],
  };
}

/**
 * The deposit in one transaction's rise of a deposit token account, base units: the rise minus
 * every token movement into it that an escrow vault paid out (a vault of a custodial order the
 * service funded, `knownVaults`, or any account an escrow instruction of the transaction names as
 * its `vault`). An escrow payout is the order's outcome, booked once through the order
 * (`order:<id>:close`), never a deposit, however the program was reached (top level, a CPI from any
 * program, its id in a lookup table). `fromEscrow` is what was left out.
 *
 * null when the reading cannot be attributed (a lookup table unresolved, or the escrow invoked and
 * no CPIs reported): nothing is credited and the scan stops there, to read it again next pass.
 */
export function depositCredit(r: DepositReading, knownVaults: ReadonlySet<string>): { credit: bigint; fromEscrow: bigint } | null {
  if (r.failed || r.delta <= 0n) return { credit: 0n, fromEscrow: 0n };
  if (!r.attributable) return null;
  let fromEscrow = 0n;
  for (const i of r.inflows) {
    if (i.source !== null && (knownVaults.has(i.source) || r.escrowVaults.has(i.source))) fromEscrow += i.amount;
  }
  const credit = r.delta - fromEscrow;
  return { credit: credit > 0n ? credit : 0n, fromEscrow };
}

/** A detected deposit: tokens at the deposit address (asset) owed to the user (available). */
export function depositEntry(d: { signature: string; tokenAccount: string; userId: string; mint: string; amount: bigint }): EntryInput {
  return {
    ref: `deposit:${d.signature}:${d.tokenAccount}`,
    kind: 'deposit',
    memo: { signature: d.signature, token_account: d.tokenAccount },
    postings: [
      { account: userAccount(d.userId, d.mint, 'deposit_address'), amount: d.amount },
      { account: userAccount(d.userId, d.mint, 'available'), amount: -d.amount },
    ],
  };
}
