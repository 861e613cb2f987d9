/**
 * Custody storage over Prisma: deposit addresses, detected deposits, scan cursors and custody
 * transfers. No rules here; the guards the service relies on are conditional updates and the
 * transactions that pair a state change with its ledger entry:
 *
 *  - `createTransfer`: the transfer row and its hold entry commit together (the ledger refuses a
 *    hold larger than the available balance under a row lock: DomainError('insufficient-funds'));
 *  - `claim` / `markSubmitted`: only the holder of the latest claim (`attempt`) may record a
 *    signature, so two processes never both sign and send one transfer;
 *  - `settle` / `fail` / `markClosed`: conditional on the current status, each paired with its
 *    ledger entry (idempotent by ref), so a replay never books twice.
 */
import { appendEvents, notifyAppended } from '../events/index.js';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { type EntryInput, type Ledger, type Tx, TX_OPTIONS } from './custody.ledger.js';
import type { DepositAddressRecord, DepositRecord, DepositStatus, TransferKind, TransferRecord, TransferStatus } from './custody.types.js';

type TransferRow = Prisma.CustodyTransferGetPayload<object>;
type DepositRow = Prisma.CustodyDepositGetPayload<object>;

const big = (d: Prisma.Decimal) => BigInt(d.toFixed());
const num = (b: bigint | null) => (b === null ? null : Number(b));

function toTransfer(r: TransferRow): TransferRecord {
  return {
    id: r.id,
    kind: r.kind as TransferKind,
    userId: r.userId,
    currency: r.currency,
    mint: r.mint,
    amount: big(r.amount),
    fee: big(r.fee),
    destination: r.destination,
    destinationTokenAccount: r.destinationTokenAccount,
    orderId: r.orderId,
    status: r.status as TransferStatus,
    signature: r.signature,
    slot: num(r.slot),
    lastValidBlockHeight: num(r.lastValidBlockHeight),
    attempt: r.attempt,
    leaseUntil: r.leaseUntil,
    error: r.error,
    closedAt: r.closedAt,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    settledAt: r.settledAt,
  };
}

function toDeposit(r: DepositRow): DepositRecord {
  return {
    id: r.id,
    userId: r.userId,
    address: r.address,
    tokenAccount: r.tokenAccount,
    mint: r.mint,
    currency: r.currency,
    amount: big(r.amount),
    signature: r.signature,
    slot: Number(r.slot),
    status: r.status as DepositStatus,
    createdAt: r.createdAt,
  };
}

export interface NewTransfer {
  kind: TransferKind;
  userId: string;
  currency: string;
  mint: string;
  amount: bigint;
  fee?: bigint;
  destination: string;
  destinationTokenAccount: string;
  orderId?: string | null;
}

/** A deposit to record: a DepositRecord before the database gives it an id and a time. */
export type NewDeposit = Omit<DepositRecord, 'id' | 'createdAt'>;

export class CustodyRepo {
  /**
   * The API views of deposits and withdrawals, the data of their events (deposit.credited,
   * withdrawal.created|confirmed|failed), appended in the transaction of the change (outbox.ts).
   * Unset: no events (unit tests of the ledger).
   */
  eventViews: { deposit: (d: DepositRecord) => unknown; withdrawal: (t: TransferRecord) => unknown } | null = null;

  /** Append the withdrawal event of transfer `id` (withdrawals only) inside `tx`. */
  private async withdrawalEvent(tx: Tx, id: string, type: 'withdrawal.created' | 'withdrawal.confirmed' | 'withdrawal.failed'): Promise<boolean> {
    if (!this.eventViews) return false;
    const t = toTransfer(await tx.custodyTransfer.findUniqueOrThrow({ where: { id } }));
    if (t.kind !== 'withdrawal') return false;
    await appendEvents(tx, [{ type, resourceType: 'withdrawal', resourceId: id, audience: [t.userId], data: this.eventViews.withdrawal(t) }]);
    return true;
  }

  constructor(
    private readonly db: PrismaClient,
    readonly ledger: Ledger,
  ) {}

  /** Run `fn` in one interactive transaction (money movements use this). */
  tx<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
    return this.db.$transaction(fn, TX_OPTIONS);
  }

  // ------------------------------------------------------------------ deposit addresses

  /** The user's deposit address, or null before the first deposit request / custodial order. */
  async getAddress(userId: string): Promise<DepositAddressRecord | null> {
    const r = await this.db.custodyDepositAddress.findUnique({ where: { userId } });
    return r ? { userId: r.userId, index: r.derivationIndex, address: r.address, createdAt: r.createdAt } : null;
  }

  /** The deposit address record of `address` (base58), or null when it is not one of ours. */
  async addressByOwner(address: string): Promise<DepositAddressRecord | null> {
    const r = await this.db.custodyDepositAddress.findUnique({ where: { address } });
    return r ? { userId: r.userId, index: r.derivationIndex, address: r.address, createdAt: r.createdAt } : null;
  }

  /**
   * The user's address, allocating one when missing: the next value of the derivation-index
   * sequence is taken first (never handed out twice, even when this insert loses a race), the
   * address derived from it, then inserted; a concurrent insert for the same user wins and its row
   * is returned.
   */
  async ensureAddress(userId: string, derive: (index: number) => string): Promise<DepositAddressRecord> {
    const existing = await this.getAddress(userId);
    if (existing) return existing;
    const [{ index }] = await this.db.$queryRaw<{ index: number }[]>`
      SELECT nextval(pg_get_serial_sequence('custody_deposit_addresses', 'derivation_index'))::int AS index`;
    const address = derive(index);
    await this.db.$executeRaw`
      INSERT INTO custody_deposit_addresses (user_id, derivation_index, address)
      VALUES (${userId}::uuid, ${index}, ${address}) ON CONFLICT (user_id) DO NOTHING`;
    return (await this.getAddress(userId))!;
  }

  /** Deposit addresses in user id order (keyset after `afterUserId`). */
  async listAddresses(limit: number, afterUserId?: string): Promise<DepositAddressRecord[]> {
    const rows = await this.db.custodyDepositAddress.findMany({
      where: afterUserId ? { userId: { gt: afterUserId } } : {},
      orderBy: { userId: 'asc' },
      take: limit,
    });
    return rows.map((r) => ({ userId: r.userId, index: r.derivationIndex, address: r.address, createdAt: r.createdAt }));
  }

  // ------------------------------------------------------------------ deposits

  /**
   * Record a detected deposit and (when `credit` is given) book its credit, in one transaction.
   * Returns false when (signature, token account) was recorded before: nothing is booked twice.
   */
  async recordDeposit(d: NewDeposit, credit: EntryInput | null): Promise<boolean> {
    return this.tx(async (tx) => {
      const rows = await tx.$queryRaw<{ id: string }[]>`
        INSERT INTO custody_deposits (id, user_id, address, token_account, mint, currency, amount, signature, slot, status)
        VALUES (gen_random_uuid(), ${d.userId}::uuid, ${d.address}, ${d.tokenAccount}, ${d.mint}, ${d.currency},
                ${d.amount.toString()}::numeric, ${d.signature}, ${BigInt(d.slot)}, ${d.status})
        ON CONFLICT (signature, token_account) DO NOTHING RETURNING id`;
      if (!rows.length) return false;
      if (credit) await this.ledger.post(tx, credit);
      if (credit && this.eventViews) {
        const dep = toDeposit(await tx.custodyDeposit.findUniqueOrThrow({ where: { id: rows[0]!.id } }));
        await appendEvents(tx, [{ type: 'deposit.credited', resourceType: 'deposit', resourceId: dep.id, audience: [dep.userId], data: this.eventViews.deposit(dep) }]);
      }
      return true;
    }).then((r) => {
      if (r) notifyAppended();
      return r;
    });
  }

  /** The user's detected deposits, newest first (keyset after (createdAt, id)). */
  async listDeposits(userId: string, limit: number, after?: { createdAt: Date; id: string }): Promise<DepositRecord[]> {
    const rows = await this.db.custodyDeposit.findMany({
      where: {
        userId,
        ...(after ? { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] } : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit,
    });
    return rows.map(toDeposit);
  }

  /** (user, mint, deposit address) whose deposit_address ledger account holds credited, unswept tokens. */
  async listUnswept(limit: number): Promise<Array<{ userId: string; mint: string; address: string }>> {
    return this.db.$queryRaw<Array<{ userId: string; mint: string; address: string }>>`
      SELECT a.user_id AS "userId", a.mint, d.address FROM custody_accounts a
        JOIN custody_deposit_addresses d ON d.user_id = a.user_id
       WHERE a.kind = 'deposit_address' AND a.balance > 0
       ORDER BY a.updated_at LIMIT ${limit}`;
  }

  /** Newest signature already scanned for a deposit token account (null: scan its whole history). */
  async getCursor(tokenAccount: string): Promise<string | null> {
    return (await this.db.custodyScanCursor.findUnique({ where: { tokenAccount } }))?.lastSignature ?? null;
  }

  /** Remember the newest scanned signature of a deposit token account. */
  async setCursor(tokenAccount: string, lastSignature: string): Promise<void> {
    await this.db.custodyScanCursor.upsert({ where: { tokenAccount }, create: { tokenAccount, lastSignature }, update: { lastSignature } });
  }

  // ------------------------------------------------------------------ transfers

  /**
   * Insert a transfer (status pending) and book `hold` in the same transaction. The ledger refuses a
   * hold beyond the available balance (DomainError('insufficient-funds'), nothing written).
   */
  async createTransfer(t: NewTransfer, hold: ((id: string) => EntryInput) | null): Promise<TransferRecord> {
    let notify = false;
    return this.tx(async (tx) => {
      const row = await tx.custodyTransfer.create({
        data: {
          kind: t.kind,
          userId: t.userId,
          currency: t.currency,
          mint: t.mint,
          amount: t.amount.toString(),
          fee: (t.fee ?? 0n).toString(),
          destination: t.destination,
          destinationTokenAccount: t.destinationTokenAccount,
          orderId: t.orderId ?? null,
        },
      });
      if (hold) await this.ledger.post(tx, hold(row.id));
      if (await this.withdrawalEvent(tx, row.id, 'withdrawal.created')) notify = true;
      return toTransfer(row);
    }).finally(() => notify && notifyAppended());
  }

  /**
   * Sweep guard: in one transaction, lock the user's deposit_address account, refuse when an open
   * sweep of that token account exists, and insert a sweep of min(`onChain`, credited-not-swept).
   * Returns null when there is nothing to sweep or a sweep is already open.
   */
  async createSweep(
    t: Omit<NewTransfer, 'kind' | 'amount'>,
    onChain: bigint,
    clearing: (tx: Tx) => Promise<bigint>,
  ): Promise<TransferRecord | null> {
    return this.tx(async (tx) => {
      const credited = await clearing(tx);
      const amount = credited < onChain ? credited : onChain;
      if (amount <= 0n) return null;
      const open = await tx.custodyTransfer.count({
        where: { kind: 'sweep', userId: t.userId, mint: t.mint, status: { in: ['pending', 'submitted'] } },
      });
      if (open > 0) return null;
      const row = await tx.custodyTransfer.create({
        data: {
          kind: 'sweep',
          userId: t.userId,
          currency: t.currency,
          mint: t.mint,
          amount: amount.toString(),
          destination: t.destination,
          destinationTokenAccount: t.destinationTokenAccount,
        },
      });
      return toTransfer(row);
    });
  }

  /** One transfer by id (any kind, any user), or null. */
  async getTransfer(id: string): Promise<TransferRecord | null> {
    const r = await this.db.custodyTransfer.findUnique({ where: { id } });
    return r ? toTransfer(r) : null;
  }

  /** The order_fund transfer of an order (at most one: order_id is unique), or null. */
  async transferForOrder(orderId: string): Promise<TransferRecord | null> {
    const r = await this.db.custodyTransfer.findUnique({ where: { orderId } });
    return r ? toTransfer(r) : null;
  }

  /** pending and submitted transfers, oldest first */
  async listOpen(limit: number, kinds?: TransferKind[]): Promise<TransferRecord[]> {
    const rows = await this.db.custodyTransfer.findMany({
      where: { status: { in: ['pending', 'submitted'] }, ...(kinds ? { kind: { in: kinds } } : {}) },
      orderBy: { createdAt: 'asc' },
      take: limit,
    });
    return rows.map(toTransfer);
  }

  /** confirmed order fundings whose escrow outcome is not booked yet */
  async listFundedOpenOrders(limit: number): Promise<TransferRecord[]> {
    const rows = await this.db.custodyTransfer.findMany({
      where: { kind: 'order_fund', status: 'confirmed', closedAt: null },
      orderBy: { createdAt: 'asc' },
      take: limit,
    });
    return rows.map(toTransfer);
  }

  /**
   * Which of `tokenAccounts` are escrow vaults of custodial orders (the destination token account of
   * an order funding, whatever its status): the known vaults whose payouts are never deposits.
   */
  async orderVaults(tokenAccounts: string[]): Promise<Set<string>> {
    if (tokenAccounts.length === 0) return new Set();
    const rows = await this.db.custodyTransfer.findMany({
      where: { kind: 'order_fund', destinationTokenAccount: { in: [...new Set(tokenAccounts)] } },
      select: { destinationTokenAccount: true },
    });
    return new Set(rows.map((r: { destinationTokenAccount: string }) => r.destinationTokenAccount));
  }

  /** A user's transfers of one kind, newest first (keyset after (createdAt, id)). */
  async listForUser(userId: string, kind: TransferKind, limit: number, after?: { createdAt: Date; id: string }): Promise<TransferRecord[]> {
    const rows = await this.db.custodyTransfer.findMany({
      where: {
        userId,
        kind,
        ...(after ? { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] } : {}),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit,
    });
    return rows.map(toTransfer);
  }

  /**
   * Claim a pending transfer for signing: bumps `attempt` and sets a lease; null when it is not
   * pending or another process holds an unexpired lease.
   */
  async claim(id: string, now: Date, leaseMs: number): Promise<number | null> {
    const rows = await this.db.$queryRaw<{ attempt: number }[]>`
      UPDATE custody_transfers SET attempt = attempt + 1, lease_until = ${new Date(now.getTime() + leaseMs)}, updated_at = now()
       WHERE id = ${id}::uuid AND status = 'pending' AND (lease_until IS NULL OR lease_until < ${now})
       RETURNING attempt`;
    return rows[0]?.attempt ?? null;
  }

  /** Give a claim back (nothing was signed), so the next pass may retry at once. */
  async releaseClaim(id: string, attempt: number, error?: string): Promise<void> {
    await this.db.custodyTransfer.updateMany({
      where: { id, status: 'pending', attempt },
      data: { leaseUntil: null, ...(error ? { error: error.slice(0, 1000) } : {}) },
    });
  }

  /**
   * pending -> submitted with the signature and the blockhash's last valid block height, only for
   * the latest claim. False = the claim was lost (the caller must not send).
   */
  async markSubmitted(id: string, attempt: number, signature: string, lastValidBlockHeight: number): Promise<boolean> {
    const r = await this.db.custodyTransfer.updateMany({
      where: { id, status: 'pending', attempt },
      data: { status: 'submitted', signature, lastValidBlockHeight: BigInt(lastValidBlockHeight), leaseUntil: null },
    });
    return r.count === 1;
  }

  /** submitted -> confirmed (+ slot) with its settlement entry, once. False when already settled or failed. */
  async settle(id: string, slot: number | null, entry: EntryInput | null, now: Date): Promise<boolean> {
    return this.tx(async (tx) => {
      const r = await tx.custodyTransfer.updateMany({
        where: { id, status: 'submitted' },
        data: { status: 'confirmed', settledAt: now, error: null, ...(slot !== null ? { slot: BigInt(slot) } : {}) },
      });
      if (r.count !== 1) return false;
      if (entry) await this.ledger.post(tx, entry);
      await this.withdrawalEvent(tx, id, 'withdrawal.confirmed');
      return true;
    }).then((r) => (r && notifyAppended(), r));
  }

  /** pending|submitted -> failed with its release entry, once. False when already settled or failed. */
  async fail(id: string, error: string, entry: EntryInput | null): Promise<boolean> {
    return this.tx(async (tx) => {
      const r = await tx.custodyTransfer.updateMany({
        where: { id, status: { in: ['pending', 'submitted'] } },
        data: { status: 'failed', error: error.slice(0, 1000), leaseUntil: null },
      });
      if (r.count !== 1) return false;
      if (entry) await this.ledger.post(tx, entry);
      await this.withdrawalEvent(tx, id, 'withdrawal.failed');
      return true;
    }).then((r) => (r && notifyAppended(), r));
  }

  /** An order funding's escrow outcome: closed_at + its entry, once. */
  async markClosed(id: string, entry: EntryInput, now: Date): Promise<boolean> {
    return this.tx(async (tx) => {
      const r = await tx.custodyTransfer.updateMany({ where: { id, status: 'confirmed', closedAt: null }, data: { closedAt: now } });
      if (r.count !== 1) return false;
      await this.ledger.post(tx, entry);
      return true;
    });
  }
}
