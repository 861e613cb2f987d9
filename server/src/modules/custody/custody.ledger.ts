/**
 * The custody ledger: double-entry bookkeeping in PostgreSQL (tables custody_accounts,
 * custody_journal_entries, custody_postings).
 *
 * Sign convention (classic accounting): a posting amount is a signed integer in base units of its
 * mint, debit > 0, credit < 0, never 0. A journal entry's postings sum to zero per mint (checked here
 * before writing, and again by the deferred constraint trigger `custody_postings_balanced` at COMMIT).
 *
 * Accounts (one row per (user, mint, kind) or (mint, kind) for the system, created on first use):
 *
 * | kind             | owner  | nature (normal side) | meaning                                               |
 * |------------------|--------|----------------------|-------------------------------------------------------|
 * | available        | user   | liability (credit)   | spendable custodial balance                           |
 * | held             | user   | liability (credit)   | reserved for withdrawals in flight                    |
 * | escrow           | user   | liability (credit)   | reserved for / locked in the user's custodial orders  |
 * | deposit_address  | user   | asset (debit)        | credited tokens still at the user's deposit address   |
 * | hot_wallet       | system | asset (debit)        | custodial tokens in the service hot wallet            |
 * | escrow_in_flight | system | asset (debit)        | tokens in escrow vaults of custodial orders           |
 * | withdrawal_fees  | system | revenue (credit)     | withdrawal fees kept by the service                   |
 *
 * `custody_accounts.balance` caches the signed sum of an account's postings and is updated in the
 * transaction that posts (rows locked with SELECT ... FOR UPDATE in a fixed order, so concurrent
 * entries touching one account serialize and never deadlock). A user's liabilities never go below
 * zero (balance <= 0, CHECK constraint) and the code refuses such an entry first
 * (DomainError('insufficient-funds')). `ledgerInvariant()` re-derives everything from the postings.
 *
 * Entries are idempotent by `ref` (unique): posting the same ref twice books it once.
 */
import { randomUUID } from 'node:crypto';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { DomainError } from '../../errors.js';

export type UserAccountKind = 'available' | 'held' | 'escrow' | 'deposit_address';
export type SystemAccountKind = 'hot_wallet' | 'escrow_in_flight' | 'withdrawal_fees';
export type AccountKind = UserAccountKind | SystemAccountKind;

/** Credit-normal user accounts: what the service owes the user. */
export const USER_LIABILITY_KINDS: readonly UserAccountKind[] = ['available', 'held', 'escrow'];
const CREDIT_NORMAL: ReadonlySet<AccountKind> = new Set<AccountKind>(['available', 'held', 'escrow', 'withdrawal_fees']);

export type EntryKind =
  | 'deposit'
  | 'sweep'
  | 'withdrawal_hold'
  | 'withdrawal_settle'
  | 'withdrawal_release'
  | 'order_hold'
  | 'order_fund'
  | 'order_release'
  | 'order_close';

/** An account by owner, mint and kind (userId null for system accounts). */
export type AccountRef = { userId: string; mint: string; kind: UserAccountKind } | { userId: null; mint: string; kind: SystemAccountKind };

/** One line of an entry: `amount` in base units, debit > 0, credit < 0 (zero lines are dropped). */
export interface PostingInput {
  account: AccountRef;
  amount: bigint;
}

export interface EntryInput {
  /** idempotency reference, unique across the journal, e.g. `deposit:<signature>:<token account>` */
  ref: string;
  kind: EntryKind;
  postings: PostingInput[];
  memo?: Record<string, unknown>;
}

export type Tx = Prisma.TransactionClient;

/** Interactive transaction options used for every money movement (PGlite serializes them). */
export const TX_OPTIONS = { maxWait: 15_000, timeout: 30_000 } as const;

export const userAccount = (userId: string, mint: string, kind: UserAccountKind): AccountRef => ({ userId, mint, kind });
export const systemAccount = (mint: string, kind: SystemAccountKind): AccountRef => ({ userId: null, mint, kind });

/** Stable account code: `user:<id>:<kind>:<mint>` or `system:<kind>:<mint>`. */
export function accountCode(a: AccountRef): string {
  return a.userId ? `user:${a.userId}:${a.kind}:${a.mint}` : `system:${a.kind}:${a.mint}`;
}

/** Balance on the account's normal side (what a person reads: positive for money owed to a user). */
export function normalBalance(kind: AccountKind, signed: bigint): bigint {
  return CREDIT_NORMAL.has(kind) ? -signed : signed;
}

const dec = (v: Prisma.Decimal | string | number | bigint): bigint => BigInt(typeof v === 'object' ? v.toFixed() : String(v));

/** The user's custodial balances per mint (normal side, base units). */
export interface UserBalances {
  mint: string;
  available: bigint;
  held: bigint;
  escrow: bigint;
}

export interface InvariantReport {
  ok: boolean;
  /** signed sum of all postings per mint (must be 0) */
  sumByMint: Record<string, bigint>;
  problems: string[];
}

/**
 * Sums of the given postings per mint; throws (programming error) when an entry does not balance.
 * Exposed for tests.
 */
export function assertBalanced(postings: PostingInput[]): void {
  const sums = new Map<string, bigint>();
  for (const p of postings) sums.set(p.account.mint, (sums.get(p.account.mint) ?? 0n) + p.amount);
  for (const [mint, sum] of sums) {
    if (sum !== 0n) throw new Error(`unbalanced journal entry: postings of mint ${mint} sum to ${sum}`);
  }
}

export class Ledger {
  constructor(private readonly db: PrismaClient) {}

  /** Create the accounts when missing; returns code -> id. Runs inside `tx`. */
  async ensureAccounts(tx: Tx, refs: AccountRef[]): Promise<Map<string, string>> {
    const unique = new Map(refs.map((r) => [accountCode(r), r]));
    const codes = [...unique.keys()];
    const existing = await tx.custodyAccount.findMany({ where: { code: { in: codes } }, select: { id: true, code: true } });
    const ids = new Map(existing.map((r) => [r.code, r.id]));
    const missing = codes.filter((c) => !ids.has(c));
    if (missing.length) {
      for (const code of missing) {
        const r = unique.get(code)!;
        // ON CONFLICT: a concurrent transaction may create the same account; never abort ours
        await tx.$executeRaw`
          INSERT INTO custody_accounts (id, code, user_id, mint, kind, balance, updated_at)
          VALUES (${randomUUID()}::uuid, ${code}, ${r.userId}::uuid, ${r.mint}, ${r.kind}, 0, now())
          ON CONFLICT (code) DO NOTHING`;
      }
      const created = await tx.custodyAccount.findMany({ where: { code: { in: missing } }, select: { id: true, code: true } });
      for (const r of created) ids.set(r.code, r.id);
    }
    return ids;
  }

  /**
   * Lock the accounts (SELECT ... FOR UPDATE, ordered by code so concurrent transactions never
   * deadlock) and return their signed balances by code. Runs inside `tx`.
   */
  async lock(tx: Tx, refs: AccountRef[]): Promise<Map<string, { id: string; balance: bigint }>> {
    const ids = await this.ensureAccounts(tx, refs);
    const codes = [...ids.keys()].sort();
    const rows = await tx.$queryRaw<{ id: string; code: string; balance: Prisma.Decimal }[]>`
      SELECT id, code, balance FROM custody_accounts WHERE code IN (${Prisma.join(codes)}) ORDER BY code FOR UPDATE`;
    return new Map(rows.map((r) => [r.code, { id: r.id, balance: dec(r.balance) }]));
  }

  /**
   * Book `entry` inside `tx` (the caller's transaction: a money movement and the state change it
   * belongs to commit together). Returns false, booking nothing, when an entry with this `ref`
   * exists already (replay). Throws DomainError('insufficient-funds') when a user's liability
   * account would go below zero or a deposit address account below zero; throws Error on an
   * unbalanced entry.
   */
  async post(tx: Tx, entry: EntryInput): Promise<boolean> {
    const postings = entry.postings.filter((p) => p.amount !== 0n);
    assertBalanced(postings);
    if (!postings.length) return false;
    const inserted = await tx.$queryRaw<{ id: string }[]>`
      INSERT INTO custody_journal_entries (id, ref, kind, memo)
      VALUES (${randomUUID()}::uuid, ${entry.ref}, ${entry.kind}, ${entry.memo ? JSON.stringify(entry.memo) : null}::jsonb)
      ON CONFLICT (ref) DO NOTHING RETURNING id`;
    if (!inserted.length) return false;
    const entryId = inserted[0].id;
    const locked = await this.lock(tx, postings.map((p) => p.account));
    const after = new Map<string, bigint>();
    for (const p of postings) {
      const code = accountCode(p.account);
      after.set(code, (after.get(code) ?? locked.get(code)!.balance) + p.amount);
    }
    for (const p of postings) {
      const code = accountCode(p.account);
      const b = after.get(code)!;
      const kind = p.account.kind;
      if ((USER_LIABILITY_KINDS as readonly string[]).includes(kind) && b > 0n) {
        throw new DomainError('insufficient-funds', `The custodial ${kind} balance is too low for this operation.`, {
          available_base_units: (-(locked.get(code)!.balance)).toString(),
          mint: p.account.mint,
        });
      }
      if (kind === 'deposit_address' && b < 0n) throw new Error(`deposit address account ${code} would go below zero`);
    }
    for (const [code, balance] of after) {
      await tx.$executeRaw`UPDATE custody_accounts SET balance = ${balance.toString()}::numeric, updated_at = now() WHERE code = ${code}`;
    }
    await tx.custodyPosting.createMany({
      data: postings.map((p) => ({
        entryId,
        accountId: locked.get(accountCode(p.account))!.id,
        mint: p.account.mint,
        amount: p.amount.toString(),
      })),
    });
    return true;
  }

  /** Book one entry in its own transaction (see `post`). */
  postAlone(entry: EntryInput): Promise<boolean> {
    return this.db.$transaction((tx) => this.post(tx, entry), TX_OPTIONS);
  }

  /** A user's balances per mint on the normal side (base units, >= 0). Mints without accounts are absent. */
  async userBalances(userId: string): Promise<UserBalances[]> {
    const rows = await this.db.custodyAccount.findMany({ where: { userId }, select: { mint: true, kind: true, balance: true } });
    const byMint = new Map<string, UserBalances>();
    for (const r of rows) {
      if (!(USER_LIABILITY_KINDS as readonly string[]).includes(r.kind)) continue;
      const b = byMint.get(r.mint) ?? { mint: r.mint, available: 0n, held: 0n, escrow: 0n };
      b[r.kind as 'available' | 'held' | 'escrow'] = normalBalance(r.kind as AccountKind, dec(r.balance));
      byMint.set(r.mint, b);
    }
    return [...byMint.values()];
  }

  /** Signed balance of one account (0 when it does not exist yet). */
  async balance(ref: AccountRef): Promise<bigint> {
    const r = await this.db.custodyAccount.findUnique({ where: { code: accountCode(ref) }, select: { balance: true } });
    return r ? dec(r.balance) : 0n;
  }

  /**
   * The ledger invariants, re-derived from the postings:
   *  1. the sum of all postings per mint is zero;
   *  2. every journal entry sums to zero per mint;
   *  3. each account's cached balance equals the sum of its postings;
   *  4. no user liability (available, held, escrow) below zero, no deposit address account below zero;
   *  5. each posting's mint is its account's mint.
   */
  async ledgerInvariant(): Promise<InvariantReport> {
    const problems: string[] = [];
    const totals = await this.db.$queryRaw<{ mint: string; total: Prisma.Decimal }[]>`
      SELECT mint, COALESCE(SUM(amount), 0) AS total FROM custody_postings GROUP BY mint`;
    const sumByMint: Record<string, bigint> = {};
    for (const t of totals) {
      sumByMint[t.mint] = dec(t.total);
      if (sumByMint[t.mint] !== 0n) problems.push(`postings of mint ${t.mint} sum to ${sumByMint[t.mint]}`);
    }
    const unbalanced = await this.db.$queryRaw<{ ref: string; mint: string; total: Prisma.Decimal }[]>`
      SELECT e.ref, p.mint, SUM(p.amount) AS total FROM custody_postings p JOIN custody_journal_entries e ON e.id = p.entry_id
      GROUP BY e.ref, p.mint HAVING SUM(p.amount) <> 0`;
    for (const u of unbalanced) problems.push(`entry ${u.ref} does not balance for ${u.mint}: ${dec(u.total)}`);
    const drift = await this.db.$queryRaw<{ code: string; balance: Prisma.Decimal; derived: Prisma.Decimal }[]>`
      SELECT a.code, a.balance, COALESCE(SUM(p.amount), 0) AS derived
        FROM custody_accounts a LEFT JOIN custody_postings p ON p.account_id = a.id
       GROUP BY a.id, a.code, a.balance HAVING a.balance <> COALESCE(SUM(p.amount), 0)`;
    for (const d of drift) problems.push(`account ${d.code} caches ${dec(d.balance)} but its postings sum to ${dec(d.derived)}`);
    const negative = await this.db.$queryRaw<{ code: string; balance: Prisma.Decimal }[]>`
      SELECT code, balance FROM custody_accounts
       WHERE (kind IN ('available', 'held', 'escrow') AND balance > 0) OR (kind = 'deposit_address' AND balance < 0)`;
    for (const n of negative) problems.push(`account ${n.code} is below zero (signed balance ${dec(n.balance)})`);
    const wrongMint = await this.db.$queryRaw<{ n: bigint }[]>`
      SELECT COUNT(*)::bigint AS n FROM custody_postings p JOIN custody_accounts a ON a.id = p.account_id WHERE p.mint <> a.mint`;
    if (Number(wrongMint[0]?.n ?? 0) > 0) problems.push(`${wrongMint[0].n} postings carry another mint than their account`);
    return { ok: problems.length === 0, sumByMint, problems };
  }
}
