/**
 * The service's SOL budget (docs/threat-model.md#who-pays-for-what-on-chain): every action that makes the service keypair pay rent or
 * a network fee goes through here before its transaction is signed.
 *
 *  - `charge` (actions a user starts: listing mint, listing rename, withdrawal, fee sponsorship): counts
 *    the action against the caller's caps of the UTC day (per user, per client IP) and adds its lamports
 *    to the day's spending, refusing when a cap or the daily budget would be passed. One database
 *    transaction of conditional UPSERTs (tables `chain_spend_usage`, `chain_spend_days`): replicas share
 *    the caps and the budget, and a refused charge writes nothing.
 *  - `record` (payouts and refunds of users' money, custody transfers): counted, never refused (the money
 *    is the users'; the platform fee pays for them, see the minimum price).
 *  - `sponsorPayeeAccount`: whether the service may create (and pay the rent of) a payee's associated
 *    token account before a payout. The treasury's: yes. A buyer's: never (it existed when the buyer
 *    funded the escrow; missing now means the buyer closed it and kept its rent). A seller's: once per
 *    (wallet, mint), ever, within the budget (table `chain_sponsored_accounts`). Any party's for an
 *    arbiter's `resolve_dispute` (a closed account must not block a ruling; one per dispute a human
 *    resolves). Otherwise 409 `token-account-required`.
 *  - `state`: the day's figures for operators (`/readyz` body `chain_budget`); crossing 50 %, 80 % and
 *    100 % of the budget logs a warning (`chain budget threshold crossed`), once per crossing.
 *
 * Lamports are upper-bound estimates made before sending (`SPEND_ESTIMATES`), not read back from the
 * chain; a charge is not returned when its transaction then fails (the budget errs on the spent side).
 *
 * Errors: 429 `rate-limited` (a per-user or per-IP cap; `Retry-After` = seconds to the next UTC day,
 * members `action`, `limit`, `scope`), 503 `service-unavailable` (daily budget spent; `reason`
 * `chain_budget_exhausted`, `Retry-After` to the next UTC day), 409 `token-account-required`.
 */
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { DomainError } from '../../errors.js';
import type { Log } from '../../lib/log.js';

/** The costly actions, as counted and capped (`chain_spend_usage.action`). */
export type SpendAction =
  | 'listing_mint'
  | 'listing_rename'
  | 'withdrawal'
  | 'payout_account'
  | 'order_transaction'
  | 'custody_transfer'
  | 'fee_sponsorship';

/** Network fee per signature (lamports; Solana's base fee, no priority fee). */
export const LAMPORTS_PER_SIGNATURE = 5_000;
/** Rent of a 165-byte SPL token account (USDC, wrapped SOL), lamports at the default rent rate. */
export const TOKEN_ACCOUNT_RENT = 2_039_280;

/**
 * Upper bounds of what one action costs the service (lamports), charged before its transaction:
 *  - listing_mint: the Token-2022 mint with its metadata at the largest name (32 B) and uri (200 B)
 *    (~688 bytes with the account header: 4,788,480) + the seller's Token-2022 associated token account
 *    (170 B: 2,074,080) + 2 signatures;
 *  - listing_rename: 1 signature + the rent top-up of a name growing by up to 32 bytes;
 *  - withdrawal, order_transaction, custody_transfer: 1 signature (no account creation: a withdrawal to
 *    an address without a token account is refused);
 *  - payout_account: one token account's rent + 0 (created inside the payout transaction).
 */
export const SPEND_ESTIMATES: Record<Exclude<SpendAction, 'fee_sponsorship'>, number> = {
  listing_mint: 4_788_480 + 2_074_080 + 2 * LAMPORTS_PER_SIGNATURE,
  listing_rename: LAMPORTS_PER_SIGNATURE + 32 * 6_960,
  withdrawal: LAMPORTS_PER_SIGNATURE,
  order_transaction: LAMPORTS_PER_SIGNATURE,
  custody_transfer: LAMPORTS_PER_SIGNATURE,
  payout_account: TOKEN_ACCOUNT_RENT,
};

/** Per-day caps of one action: per user (`user:<id>`) and per client IP (`ip:<address>`); undefined = none. */
export interface ActionCaps {
  perUser?: number;
  perIp?: number;
}

export interface ChainBudgetSettings {
  /** lamports the service may spend per UTC day on charged and recorded actions together */
  dailyLamports: number;
  caps: Partial<Record<SpendAction, ActionCaps>>;
  /**
   * Fee sponsorship (issue 26 item 5): the dedicated sponsor key's own daily budget (lamports of fees +
   * escrow rent) and its counts per account and per client network; kept apart from `dailyLamports`
   * (the service keypair's). Absent: `chargeSponsorship` refuses everything.
   */
  sponsorship?: { dailyLamports: number; perUser: number; perIp: number };
}

/** The day's spending as `/readyz` shows it (`chain_budget`). */
export interface ChainBudgetState {
  /** UTC day, YYYY-MM-DD */
  day: string;
  budget_lamports: number;
  spent_lamports: number;
  remaining_lamports: number;
  /** spent / budget, percent (0..100+, one decimal) */
  used_percent: number;
  /** ok below 80 %, warning from 80 %, exhausted when no charge of the smallest size fits */
  level: 'ok' | 'warning' | 'exhausted';
  /** start of the next UTC day (ISO 8601), when the budget and the caps reset */
  resets_at: string;
  by_action: Record<string, { count: number; lamports: number }>;
}

/** Fractions of the daily budget whose crossing logs a warning. */
export const BUDGET_WARN_THRESHOLDS = [0.5, 0.8, 1] as const;

export interface ChainBudgetDeps {
  db: PrismaClient;
  settings: ChainBudgetSettings;
  log?: Pick<Log, 'warn'>;
  /** clock (tests); the UTC day of `now()` is the budget's day */
  now?: () => Date;
}

function utcDay(d: Date): string {
  return d.toISOString().slice(0, 10);
}

function nextUtcDay(d: Date): Date {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1));
}

export function createChainBudget(deps: ChainBudgetDeps) {
  const { db, settings } = deps;
  const now = deps.now ?? (() => new Date());
  const budget = BigInt(Math.max(0, Math.floor(settings.dailyLamports)));

  function secondsToReset(at: Date): number {
    return Math.max(1, Math.ceil((nextUtcDay(at).getTime() - at.getTime()) / 1000));
  }

  function warnCrossings(day: string, before: bigint, after: bigint, action: SpendAction) {
    if (budget <= 0n) return;
    for (const t of BUDGET_WARN_THRESHOLDS) {
      const line = (budget * BigInt(Math.round(t * 100))) / 100n;
      if (before < line && after >= line) {
        deps.log?.warn(
          { day, threshold_percent: t * 100, spent_lamports: Number(after), budget_lamports: Number(budget), action },
          'chain budget threshold crossed',
        );
      }
    }
  }

  /** +count/+lamports on one usage row; with `cap`, only while below it. Returns false when the cap is reached. */
  async function bump(tx: Prisma.TransactionClient, day: string, subject: string, action: SpendAction, lamports: bigint, cap?: number) {
    const rows = cap === undefined
      ? await tx.$queryRaw<{ count: number }[]>`
          INSERT INTO chain_spend_usage AS u (day, subject, action, count, lamports)
          VALUES (${day}::date, ${subject}, ${action}, 1, ${lamports}::bigint)
          ON CONFLICT (day, subject, action) DO UPDATE SET count = u.count + 1, lamports = u.lamports + EXCLUDED.lamports
          RETURNING count`
      : await tx.$queryRaw<{ count: number }[]>`
          INSERT INTO chain_spend_usage AS u (day, subject, action, count, lamports)
          SELECT ${day}::date, ${subject}, ${action}, 1, ${lamports}::bigint WHERE ${cap}::int >= 1
          ON CONFLICT (day, subject, action) DO UPDATE SET count = u.count + 1, lamports = u.lamports + EXCLUDED.lamports
            WHERE u.count < ${cap}::int
          RETURNING count`;
    return rows.length > 0;
  }

  /** Adds to the day's total; with `enforce`, only while it stays within the budget. Returns [before, after] or null. */
  async function addToDay(tx: Prisma.TransactionClient, day: string, lamports: bigint, enforce: boolean) {
    const rows = enforce
      ? await tx.$queryRaw<{ lamports: bigint }[]>`
          INSERT INTO chain_spend_days AS d (day, lamports)
          SELECT ${day}::date, ${lamports}::bigint WHERE ${lamports}::bigint <= ${budget}::bigint
          ON CONFLICT (day) DO UPDATE SET lamports = d.lamports + EXCLUDED.lamports
            WHERE d.lamports + EXCLUDED.lamports <= ${budget}::bigint
          RETURNING lamports`
      : await tx.$queryRaw<{ lamports: bigint }[]>`
          INSERT INTO chain_spend_days AS d (day, lamports) VALUES (${day}::date, ${lamports}::bigint)
          ON CONFLICT (day) DO UPDATE SET lamports = d.lamports + EXCLUDED.lamports
          RETURNING lamports`;
    if (!rows[0]) return null;
    const after = BigInt(rows[0].lamports);
    return [after - lamports, after] as const;
  }

  /** `e` with its Retry-After (seconds): the error handler sends the header from `retryAfterSeconds` alone. */
  function withRetryAfter(e: DomainError, seconds: number): DomainError {
    e.retryAfterSeconds = seconds;
    return e;
  }

  function capReached(action: SpendAction, scope: 'user' | 'ip', limit: number, at: Date): DomainError {
    const retry = secondsToReset(at);
    return withRetryAfter(new DomainError(
      'rate-limited',
      `At most ${limit} ${action.replace(/_/g, ' ')} action(s) per ${scope === 'user' ? 'account' : 'client address'} per UTC day; ` +
        `retry after ${retry} s.`,
      { action, limit, scope, retry_after_seconds: retry },
    ), retry);
  }

  function budgetSpent(action: SpendAction, at: Date): DomainError {
    const retry = secondsToReset(at);
    return withRetryAfter(new DomainError(
      'service-unavailable',
      `The service's daily budget for on-chain costs is spent; ${action.replace(/_/g, ' ')} resumes at ${nextUtcDay(at).toISOString()}.`,
      { reason: 'chain_budget_exhausted', retry_after_seconds: retry },
    ), retry);
  }

  async function charge(c: { action: SpendAction; lamports: number; userId?: string | null; ip?: string | null }): Promise<void> {
    const at = now();
    const day = utcDay(at);
    const lamports = BigInt(Math.ceil(c.lamports));
    const caps = settings.caps[c.action] ?? {};
    let crossed: readonly [bigint, bigint] | null = null;
    await db.$transaction(async (tx) => {
      if (c.userId && !(await bump(tx, day, `user:${c.userId}`, c.action, lamports, caps.perUser))) {
        throw capReached(c.action, 'user', caps.perUser!, at);
      }
      if (c.ip && !(await bump(tx, day, `ip:${c.ip}`, c.action, lamports, caps.perIp))) {
        throw capReached(c.action, 'ip', caps.perIp!, at);
      }
      await bump(tx, day, 'all', c.action, lamports);
      crossed = await addToDay(tx, day, lamports, true);
      if (!crossed) throw budgetSpent(c.action, at);
    });
    const [before, after] = crossed as unknown as readonly [bigint, bigint];
    warnCrossings(day, before, after, c.action);
  }

  /**
   * Fee sponsorship: counts one sponsored fund transaction against the buyer's account and client network
   * (`counted`: the order's first sponsored transaction; a re-issue of the same order's transaction is
   * not counted again) and adds its lamports (fees + the escrow rent it commits) to the sponsor's day, all
   * or nothing in one database transaction (replicas share it). The rent comes back to the sponsor when the
   * escrow closes; it is not credited back (the budget bounds what the sponsor commits per day).
   * Throws 429 `sponsorship-limit` (`scope` account | ip, `limit`, `resets_at`, Retry-After) and 503
   * `sponsorship-budget-exhausted` (`reason` daily_budget, `budget_lamports`, `resets_at`, Retry-After).
   */
  async function chargeSponsorship(c: { userId: string; ip?: string | null; lamports: bigint; counted: boolean }): Promise<void> {
    const at = now();
    const day = utcDay(at);
    const s = settings.sponsorship ?? { dailyLamports: 0, perUser: 0, perIp: 0 };
    const retry = secondsToReset(at);
    const resetsAt = nextUtcDay(at).toISOString();
    const limited = (scope: 'account' | 'ip', limit: number) =>
      withRetryAfter(new DomainError(
        'sponsorship-limit',
        `Fee sponsorship is limited to ${limit} order(s) per ${scope === 'account' ? 'account' : 'client network'} per UTC day; it resets at ${resetsAt}.`,
        { scope, limit, resets_at: resetsAt, retry_after_seconds: retry },
      ), retry);
    await db.$transaction(async (tx) => {
      if (c.counted && !(await bump(tx, day, `user:${c.userId}`, 'fee_sponsorship', c.lamports, s.perUser))) throw limited('account', s.perUser);
      if (c.counted && c.ip && !(await bump(tx, day, `ip:${c.ip}`, 'fee_sponsorship', c.lamports, s.perIp))) throw limited('ip', s.perIp);
      const rows = await tx.$queryRaw<{ lamports: bigint }[]>`
        INSERT INTO chain_spend_usage AS u (day, subject, action, count, lamports)
        SELECT ${day}::date, 'sponsor', 'fee_sponsorship', 1, ${c.lamports}::bigint WHERE ${c.lamports}::bigint <= ${BigInt(s.dailyLamports)}::bigint
        ON CONFLICT (day, subject, action) DO UPDATE SET count = u.count + 1, lamports = u.lamports + EXCLUDED.lamports
          WHERE u.lamports + EXCLUDED.lamports <= ${BigInt(s.dailyLamports)}::bigint
        RETURNING lamports`;
      if (!rows.length) {
        throw withRetryAfter(new DomainError(
          'sponsorship-budget-exhausted',
          `The fee sponsor's daily budget (${s.dailyLamports} lamports of fees and escrow rent) is spent; sponsorship resumes at ${resetsAt}.`,
          { reason: 'daily_budget', budget_lamports: s.dailyLamports, resets_at: resetsAt, retry_after_seconds: retry },
        ), retry);
      }
    });
  }

  /** The sponsor's day: lamports committed (fees + rent) and sponsored transactions, against its budget. */
  async function sponsorshipState(): Promise<{ day: string; budget_lamports: number; spent_lamports: number; transactions: number; resets_at: string }> {
    const at = now();
    const day = utcDay(at);
    const rows = await db.$queryRaw<{ count: number; lamports: bigint }[]>`
      SELECT count, lamports FROM chain_spend_usage WHERE day = ${day}::date AND subject = 'sponsor' AND action = 'fee_sponsorship'`;
    return {
      day,
      budget_lamports: settings.sponsorship?.dailyLamports ?? 0,
      spent_lamports: Number(rows[0]?.lamports ?? 0n),
      transactions: Number(rows[0]?.count ?? 0),
      resets_at: nextUtcDay(at).toISOString(),
    };
  }

  async function record(c: { action: SpendAction; lamports: number }): Promise<void> {
    const at = now();
    const day = utcDay(at);
    const lamports = BigInt(Math.ceil(c.lamports));
    const r = await db.$transaction(async (tx) => {
      await bump(tx, day, 'all', c.action, lamports);
      return addToDay(tx, day, lamports, false);
    });
    if (r) warnCrossings(day, r[0], r[1], c.action);
  }

  function accountRequired(p: PayeeAccount, why: string): DomainError {
    return new DomainError(
      'token-account-required',
      `The ${p.role}'s token account ${p.tokenAccount} (owner ${p.owner}, mint ${p.mint}) does not exist and ${why}; ` +
        'create that associated token account (any wallet can, for about 0.00204 SOL of rent that comes back when it is closed), then retry.',
      { token_account: p.tokenAccount, owner: p.owner, mint: p.mint, role: p.role },
    );
  }

  /**
   * May the service create (and pay for) this missing payee token account? Resolves when yes (the rent is
   * charged to the budget; a seller's sponsorship is recorded), throws 409 token-account-required when not.
   */
  async function sponsorPayeeAccount(p: PayeeAccount): Promise<void> {
    // the treasury's is the service's own; an arbiter's resolution needs both parties' accounts and must not
    // be blocked by a party who closed hers (a human decision per dispute bounds it): counted, never refused
    if (p.role === 'treasury' || p.instruction === 'resolve_dispute') {
      return record({ action: 'payout_account', lamports: p.lamports ?? TOKEN_ACCOUNT_RENT });
    }
    if (p.role === 'buyer') throw accountRequired(p, 'the service does not pay it again (it existed when the escrow was funded)');
    const at = now();
    const day = utcDay(at);
    const lamports = BigInt(p.lamports ?? TOKEN_ACCOUNT_RENT);
    let crossed: readonly [bigint, bigint] | null = null;
    // once per (owner, mint); a retry of the same order's payout may take it again (a payout that failed
    // created nothing: the transaction is atomic; one that landed closed the escrow, so it is not retried).
    // Other orders' payouts may take it again only while the first sponsorship is in flight
    // (SPONSORSHIP_IN_FLIGHT_MS after it, never extended by them): a new seller's concurrent releases each
    // carry the idempotent create, and only the first to land pays the rent; after the window a missing
    // account was closed by its owner and is not paid again.
    const inFlightSince = new Date(at.getTime() - SPONSORSHIP_IN_FLIGHT_MS);
    await db.$transaction(async (tx) => {
      const taken = await tx.$queryRaw<{ owner: string }[]>`
        INSERT INTO chain_sponsored_accounts (owner, mint, token_account, role, order_id, lamports, created_at)
        VALUES (${p.owner}, ${p.mint}, ${p.tokenAccount}, ${p.role}, ${p.orderId ?? null}, ${lamports}::bigint, ${at})
        ON CONFLICT (owner, mint) DO UPDATE SET created_at = CASE
            WHEN chain_sponsored_accounts.order_id IS NOT DISTINCT FROM EXCLUDED.order_id THEN EXCLUDED.created_at
            ELSE chain_sponsored_accounts.created_at END
          WHERE chain_sponsored_accounts.order_id IS NOT DISTINCT FROM EXCLUDED.order_id
             OR chain_sponsored_accounts.created_at > ${inFlightSince}
        RETURNING owner`;
      if (!taken.length) throw accountRequired(p, 'the service paid for it once already (it was closed since)');
      await bump(tx, day, 'all', 'payout_account', lamports);
      crossed = await addToDay(tx, day, lamports, true);
      if (!crossed) throw accountRequired(p, "the service's daily budget for on-chain costs is spent");
    });
    const [before, after] = crossed as unknown as readonly [bigint, bigint];
    warnCrossings(day, before, after, 'payout_account');
  }

  async function state(): Promise<ChainBudgetState> {
    const at = now();
    const day = utcDay(at);
    const [days, usage] = await Promise.all([
      db.$queryRaw<{ lamports: bigint }[]>`SELECT lamports FROM chain_spend_days WHERE day = ${day}::date`,
      db.$queryRaw<{ action: string; count: number; lamports: bigint }[]>`
        SELECT action, count, lamports FROM chain_spend_usage WHERE day = ${day}::date AND subject = 'all' ORDER BY action`,
    ]);
    const spent = BigInt(days[0]?.lamports ?? 0n);
    const remaining = budget > spent ? budget - spent : 0n;
    const used = budget > 0n ? Number((spent * 1000n) / budget) / 10 : 100;
    return {
      day,
      budget_lamports: Number(budget),
      spent_lamports: Number(spent),
      remaining_lamports: Number(remaining),
      used_percent: used,
      level: remaining < BigInt(LAMPORTS_PER_SIGNATURE) ? 'exhausted' : used >= 80 ? 'warning' : 'ok',
      resets_at: nextUtcDay(at).toISOString(),
      by_action: Object.fromEntries(usage.map((u) => [u.action, { count: Number(u.count), lamports: Number(u.lamports) }])),
    };
  }

  return { charge, chargeSponsorship, sponsorshipState, record, sponsorPayeeAccount, state, settings };
}

/**
 * How long (ms, by the budget's clock) after a seller's account was first sponsored other orders' payouts may
 * sponsor it again: about the life of a blockhash and a confirmation, so the first payout has landed or
 * failed by then. A seller who closes her account inside the window can have it re-created at most by the
 * payouts of her orders that land inside it (each a funded, released order); never after.
 */
export const SPONSORSHIP_IN_FLIGHT_MS = 90_000;

/** A payee token account missing before a payout (escrow release, claim, refund, resolve). */
export interface PayeeAccount {
  role: 'buyer' | 'seller' | 'treasury';
  owner: string;
  mint: string;
  /** the owner's associated token account for `mint` */
  tokenAccount: string;
  orderId?: string;
  /** the escrow instruction paying out (resolve_dispute: always allowed, see sponsorPayeeAccount) */
  instruction?: string;
  /** its rent (default TOKEN_ACCOUNT_RENT) */
  lamports?: number;
}

export type ChainBudget = ReturnType<typeof createChainBudget>;
