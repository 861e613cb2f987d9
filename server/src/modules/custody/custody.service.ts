/**
 * Custody rules: deposit addresses and instructions, custodial balances, withdrawals, custodial
 * order funding, and the processing of every custody transfer (sign -> record -> send -> confirm ->
 * book). See ./README.md for the ledger entries and the crash-safety argument.
 *
 * Every money path has the same shape:
 *   1. hold first: one DB transaction inserts the transfer (pending) and moves the amount from the
 *      user's `available` to `held` (withdrawal) or `escrow` (order funding) under a row lock; a hold
 *      beyond the available balance is refused (409 insufficient-funds) and nothing is written;
 *   2. claim the transfer (attempt + lease), build and sign the transaction, record its signature and
 *      the blockhash's last valid block height (`onSigned`) BEFORE the first send;
 *   3. send and wait for `confirmed`;
 *   4. settle: one DB transaction moves the transfer to confirmed and books its entry (idempotent by
 *      ref). A rejected or expired transaction moves it to failed and releases the hold instead.
 * A crash anywhere leaves a pending (never sent: safe to send) or submitted (signature known:
 * read its outcome) transfer that `reconcile` converges, so money is never lost nor moved twice.
 */
import type { Balance, CustodyDeposit, Deposit, Withdrawal } from '@bazaar/contract';
import { DomainError } from '../../errors.js';
import { decodeCursor, cursorKey, newestPage } from '../../lib/cursor.js';
import { formatUiAmount, toBaseUnits, toUiNumber } from '../../lib/money.js';
import { AttemptSuperseded } from '../../chain/recorded-send.js';
import type { TxResult } from '../../chain/types.js';
import type { CustodyChainPort, DepositReading } from './custody.chain.js';
import { custodyErrors } from './custody.errors.js';
import type { DepositKeys } from './custody.keys.js';
import { type EntryInput, type Ledger, systemAccount, userAccount } from './custody.ledger.js';
import type { CustodyRepo } from './custody.repo.js';
import {
  type CustodyCurrency,
  type DepositAddressRecord,
  type DepositRecord,
  type Log,
  type OrderView,
  type TransferRecord,
  type TransferStatus,
  silentLog,
} from './custody.types.js';

/** Blocks built on top of a finalized block (what "finalized" means on Solana), shown to depositors. */
export const CONFIRMATIONS_REQUIRED = 32;

/** Test hooks: simulate a process dying at the two dangerous moments. */
export interface CustodyHooks {
  /** after the signature is recorded, before the first send (a throw: the process died before sending) */
  beforeSend?: (t: TransferRecord) => Promise<void> | void;
  /** after the chain confirmed, before the settlement is booked (a throw: the process died) */
  afterSend?: (t: TransferRecord, tx: TxResult) => Promise<void> | void;
}

/** The orders the custody module funds (the orders module's read port, `ordersReadPort`, given at construction). */
export interface CustodyOrdersPort {
  get(orderId: string): Promise<OrderView | null>;
}

export interface CustodyServiceDeps {
  repo: CustodyRepo;
  ledger: Ledger;
  keys: DepositKeys;
  chain: CustodyChainPort;
  currencies: CustodyCurrency[];
  orders?: CustodyOrdersPort;
  log?: Log;
  now?: () => Date;
  hooks?: CustodyHooks;
  /** how long a claim on a pending transfer lasts before another process may take it over (ms, default 60 000) */
  leaseMs?: number;
  /** the service's SOL budget (modules/budget): each withdrawal is charged (per-account daily cap, daily budget) */
  budget?: CustodyBudget;
}

/** What custody needs of the budget module (`ChainBudget.charge`). */
export interface CustodyBudget {
  charge(c: { action: 'withdrawal'; lamports: number; userId?: string | null }): Promise<void>;
  /** sweeps and custodial order fundings: counted, never refused (the users' money must move) */
  record?(c: { action: 'custody_transfer'; lamports: number }): Promise<void>;
}

/** Network fee of one custody transaction the service pays (lamports; one fee-paying signature). */
const WITHDRAWAL_TX_LAMPORTS = 5_000;

/** One custodial balance line: contract `Balance` with source "custodial" and both custodial amounts. */
export type CustodialBalanceView = Balance & { mint: string; source: 'custodial'; held_base_units: string; in_escrow_base_units: string };

/** Contract `Deposit` (POST /wallet/deposit answer). */
export type DepositView = Deposit;

/** Contract `Withdrawal`. */
export type WithdrawalView = Withdrawal;

/** Contract `CustodyDeposit`. */
export type DepositRecordView = CustodyDeposit;

export interface WithdrawInput {
  currency: string;
  /** UI amount (exact decimal, at most the currency decimals) */
  amount?: number;
  /** base units as a decimal string */
  amountBaseUnits?: string;
  destination: string;
}

/** The outcome of processing one transfer. */
export interface ProcessOutcome {
  status: TransferStatus;
  transfer: TransferRecord;
  /** the error that failed it (failed) or left it open (pending/submitted), if any */
  error?: unknown;
}

const TERMINAL_ORDER = new Set(['completed', 'refunded', 'resolved']);

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export class CustodyService {
  readonly currencies: CustodyCurrency[];
  hooks: CustodyHooks;
  readonly orders: CustodyOrdersPort | undefined;
  private readonly log: Log;
  private readonly now: () => Date;
  private readonly inflight = new Map<string, Promise<ProcessOutcome>>();

  constructor(private readonly deps: CustodyServiceDeps) {
    this.currencies = deps.currencies;
    this.hooks = deps.hooks ?? {};
    this.orders = deps.orders;
    this.log = deps.log ?? silentLog;
    this.now = deps.now ?? (() => new Date());
  }

  get hotWallet(): string {
    return this.deps.chain.hotWallet;
  }

  currencyByCode(code: string): CustodyCurrency | undefined {
    return this.currencies.find((c) => c.code === code);
  }

  currencyByMint(mint: string): CustodyCurrency | undefined {
    return this.currencies.find((c) => c.mint === mint);
  }

  // ------------------------------------------------------------------ deposits

  /** The user's deposit address, allocated (index from the DB sequence, key derived) on first use. */
  depositAddress(userId: string): Promise<DepositAddressRecord> {
    return this.deps.repo.ensureAddress(userId, (index) => this.deps.keys.address(index));
  }

  /**
   * Deposit instructions for the user: the deposit address (the owner wallet to send to), the
   * accepted mints with their associated token accounts and minimums, and the commitment awaited.
   * `currency` narrows the answer (and adds a Solana Pay transfer link); 400 validation-error when
   * it is not a custody currency.
   */
  async depositInstructions(userId: string, currency?: string): Promise<DepositView> {
    const picked = currency ? this.currencyByCode(currency) : undefined;
    if (currency && !picked) throw custodyErrors.unsupportedCurrency('body.currency', currency, this.currencies);
    const addr = await this.depositAddress(userId);
    const chain = this.deps.chain;
    const accepted = this.currencies.map((c) => ({
      currency: c.code,
      mint: c.mint,
      decimals: c.decimals,
      token_account: chain.tokenAccount(addr.address, c.mint, c.tokenProgram),
      minimum: toUiNumber(c.minDeposit, c.decimals),
      minimum_base_units: c.minDeposit.toString(),
    }));
    const list = picked ? accepted.filter((a) => a.currency === picked.code) : accepted;
    const mins = list.map((a) => `${formatUiAmount(BigInt(a.minimum_base_units), a.decimals)} ${a.currency}`).join(', ');
    const instructions =
      `Send ${list.map((a) => a.currency).join(' or ')} (SPL tokens) to ${addr.address} (your deposit address; ` +
      'wallets put them in its associated token account). Minimum per transfer: ' +
      `${mins}; smaller transfers are not credited. Deposits are credited once finalized ` +
      `(${CONFIRMATIONS_REQUIRED} confirmations, about 15 s on mainnet). Native SOL sent to the address is not credited. ` +
      'The address is yours alone and does not change.';
    const mine = picked ? list[0] : null;
    return {
      address: addr.address,
      currency: picked?.code ?? null,
      mint: picked?.mint ?? null,
      token_account: mine?.token_account ?? null,
      accepted: list,
      commitment: 'finalized',
      confirmations_required: CONFIRMATIONS_REQUIRED,
      instructions,
      ...(picked
        ? { solana_pay_url: `solana:${addr.address}?spl-token=${picked.mint}&label=${encodeURIComponent('Bazaar deposit')}` }
        : {}),
    };
  }

  /** Custodial balance lines of every custody currency (zero when nothing was ever deposited). */
  async balances(userId: string): Promise<CustodialBalanceView[]> {
    const rows = await this.deps.ledger.userBalances(userId);
    return this.currencies.map((c) => {
      const b = rows.find((r) => r.mint === c.mint) ?? { available: 0n, held: 0n, escrow: 0n };
      return {
        currency: c.code,
        mint: c.mint,
        amount_base_units: b.available.toString(),
        decimals: c.decimals,
        ui_amount: toUiNumber(b.available, c.decimals),
        source: 'custodial' as const,
        held_base_units: b.held.toString(),
        in_escrow_base_units: b.escrow.toString(),
      };
    });
  }

  async listDeposits(userId: string, limit: number, cursor?: string): Promise<{ data: DepositRecordView[]; next_cursor: string | null }> {
    const spec = { sort: 'created_desc', filters: { what: 'deposits' }, keys: [cursorKey.timestamp] };
    const after = cursor ? this.afterOf(decodeCursor(cursor, spec)) : undefined;
    const page = newestPage(await this.deps.repo.listDeposits(userId, limit + 1, after), limit, spec);
    return { data: page.items.map((d) => this.depositView(d)), next_cursor: page.nextCursor };
  }

  depositView(d: DepositRecord): DepositRecordView {
    const decimals = this.currencyByMint(d.mint)?.decimals ?? 0;
    return {
      deposit_id: d.id,
      currency: d.currency,
      mint: d.mint,
      amount: toUiNumber(d.amount, decimals),
      amount_base_units: d.amount.toString(),
      token_account: d.tokenAccount,
      signature: d.signature,
      slot: d.slot,
      status: d.status,
      created_at: d.createdAt.toISOString(),
    };
  }

  private afterOf(c: { keys: unknown[]; id: string }) {
    return { createdAt: new Date(String(c.keys[0])), id: c.id };
  }

  // ------------------------------------------------------------------ withdrawals

  /**
   * Validate, hold and queue a withdrawal; returns it in status pending (processing continues in the
   * background: `processAsync`). Errors: 400 validation-error (`body.currency` unsupported,
   * `body.amount` missing / not positive / too many decimals / below the minimum,
   * `body.destination` a custodial address, a token account or mint, a program, or a wallet without an
   * associated token account of the currency: `token_account_missing`); 409 insufficient-funds (amount +
   * fee > available); 429 rate-limited (CUSTODY_WITHDRAWAL_DAILY_LIMIT); 503 chain-unavailable (destination
   * check) or service-unavailable (the daily chain budget is spent).
   */
  async withdraw(userId: string, input: WithdrawInput): Promise<TransferRecord> {
    const cur = this.currencyByCode(input.currency);
    if (!cur) throw custodyErrors.unsupportedCurrency('body.currency', input.currency, this.currencies);
    const amount = this.parseAmount(input, cur);
    if (amount < cur.minWithdrawal) {
      throw custodyErrors.field('body.amount', 'below_minimum', `must be at least ${formatUiAmount(cur.minWithdrawal, cur.decimals)} ${cur.code}`);
    }
    const destination = input.destination;
    if (destination === this.hotWallet || (await this.deps.repo.addressByOwner(destination))) {
      throw custodyErrors.field('body.destination', 'custodial_address', 'is an address of this service; withdraw to a wallet you control');
    }
    const kind = await this.deps.chain.accountKind(destination);
    if (kind === 'token') {
      throw custodyErrors.field('body.destination', 'token_account', 'is a token account or mint; give the owner wallet address instead');
    }
    if (kind === 'program') throw custodyErrors.field('body.destination', 'program_account', 'is a program, not a wallet');
    // the service never pays the rent of a destination's token account: its owner could close it and keep
    // the rent, once per withdrawal (docs/threat-model.md#who-pays-for-what-on-chain); the owner creates it first
    const destinationTokenAccount = this.deps.chain.tokenAccount(destination, cur.mint, cur.tokenProgram);
    if ((await this.deps.chain.accountKind(destinationTokenAccount)) !== 'token') {
      throw custodyErrors.field(
        'body.destination',
        'token_account_missing',
        `has no ${cur.code} token account: create its associated token account ${destinationTokenAccount} first (the service does not pay its rent)`,
      );
    }
    const total = amount + cur.withdrawalFee;
    const [bal] = (await this.deps.ledger.userBalances(userId)).filter((b) => b.mint === cur.mint);
    if ((bal?.available ?? 0n) < total) throw custodyErrors.insufficientFunds(cur, bal?.available ?? 0n, amount, cur.withdrawalFee);
    // its network fee: within the account's daily cap of withdrawals and the daily budget (429 / 503)
    await this.deps.budget?.charge({ action: 'withdrawal', lamports: WITHDRAWAL_TX_LAMPORTS, userId });
    const t = await this.deps.repo.createTransfer(
      {
        kind: 'withdrawal',
        userId,
        currency: cur.code,
        mint: cur.mint,
        amount,
        fee: cur.withdrawalFee,
        destination,
        destinationTokenAccount,
      },
      (id) => holdEntry({ id, kind: 'withdrawal', userId, mint: cur.mint, amount, fee: cur.withdrawalFee }),
    ).catch((err) => {
      // the balance moved between the read and the locked hold (a concurrent withdrawal won)
      if (err instanceof DomainError && err.slug === 'insufficient-funds') throw custodyErrors.insufficientFunds(cur, null, amount, cur.withdrawalFee);
      throw err;
    });
    this.log.info({ transfer_id: t.id, user_id: userId, amount: amount.toString(), mint: cur.mint }, 'custody: withdrawal held');
    this.processAsync(t.id);
    return t;
  }

  private parseAmount(input: WithdrawInput, cur: CustodyCurrency): bigint {
    if ((input.amount === undefined) === (input.amountBaseUnits === undefined)) {
      throw custodyErrors.field('body.amount', 'invalid_union', 'give exactly one of amount (UI units) or amount_base_units');
    }
    if (input.amountBaseUnits !== undefined) {
      const v = BigInt(input.amountBaseUnits);
      if (v <= 0n) throw custodyErrors.field('body.amount_base_units', 'not_positive', 'must be greater than 0');
      return v;
    }
    const r = toBaseUnits(input.amount!, cur.decimals);
    if (!r.ok) throw custodyErrors.field('body.amount', r.code, r.message);
    return r.value;
  }

  /** The caller's withdrawal; 404 not-found for another user's or an unknown id. */
  async getWithdrawal(userId: string, id: string): Promise<TransferRecord> {
    const t = await this.deps.repo.getTransfer(id);
    if (!t || t.kind !== 'withdrawal' || t.userId !== userId) throw new DomainError('not-found', `Withdrawal ${id} not found.`);
    return t;
  }

  async listWithdrawals(userId: string, limit: number, cursor?: string): Promise<{ data: WithdrawalView[]; next_cursor: string | null }> {
    const spec = { sort: 'created_desc', filters: { what: 'withdrawals' }, keys: [cursorKey.timestamp] };
    const after = cursor ? this.afterOf(decodeCursor(cursor, spec)) : undefined;
    const page = newestPage(await this.deps.repo.listForUser(userId, 'withdrawal', limit + 1, after), limit, spec);
    return { data: page.items.map((t) => this.withdrawalView(t)), next_cursor: page.nextCursor };
  }

  withdrawalView(t: TransferRecord): WithdrawalView {
    const decimals = this.currencyByMint(t.mint)?.decimals ?? 0;
    return {
      withdrawal_id: t.id,
      currency: t.currency,
      mint: t.mint,
      amount: toUiNumber(t.amount, decimals),
      amount_base_units: t.amount.toString(),
      fee_base_units: t.fee.toString(),
      total_debited_base_units: (t.amount + t.fee).toString(),
      destination: t.destination,
      destination_token_account: t.destinationTokenAccount,
      status: t.status,
      signature: t.signature,
      slot: t.slot,
      failure_reason: t.status === 'failed' ? t.error : null,
      created_at: t.createdAt.toISOString(),
      updated_at: t.updatedAt.toISOString(),
      confirmed_at: t.status === 'confirmed' ? iso(t.settledAt) : null,
    };
  }

  // ------------------------------------------------------------------ custodial order funding (orders port)

  /** The on-chain buyer of the user's custodial orders: the user's deposit address. */
  async buyerAddressFor(userId: string): Promise<string> {
    return (await this.depositAddress(userId)).address;
  }

  /** 409 insufficient-funds unless the user's available balance of `mint` covers `amount`; 400 for a non-custody mint. */
  async assertAvailable(userId: string, mint: string, amount: bigint): Promise<void> {
    const cur = this.currencyByMint(mint);
    if (!cur) throw custodyErrors.field('body.payment_source', 'unsupported_currency', 'the listing currency is not held in custody');
    const [bal] = (await this.deps.ledger.userBalances(userId)).filter((b) => b.mint === mint);
    if ((bal?.available ?? 0n) < amount) throw custodyErrors.insufficientFunds(cur, bal?.available ?? 0n, amount, 0n);
  }

  /**
   * Fund `order`'s escrow from the buyer's custodial balance: hold (available -> escrow), then the
   * service's fund transaction (the deposit key is the on-chain buyer). Returns `funded` with the
   * signature, or `pending` when the outcome is not known yet (the reconciler finishes it).
   * Errors: 409 insufficient-funds (nothing held); 502 chain-transaction-failed (the hold is released).
   * Idempotent per order (a second call returns the existing funding's state).
   */
  async payOrder(order: OrderView): Promise<{ status: 'funded'; signature: string; slot: number | null } | { status: 'pending' }> {
    const cur = this.currencyByMint(order.mint);
    if (!cur) throw custodyErrors.field('body.payment_source', 'unsupported_currency', 'the listing currency is not held in custody');
    await this.depositAddress(order.buyerId);
    let t = await this.deps.repo.transferForOrder(order.id);
    if (!t) {
      t = await this.deps.repo.createTransfer(
        {
          kind: 'order_fund',
          userId: order.buyerId,
          currency: cur.code,
          mint: cur.mint,
          amount: order.amount,
          destination: this.deps.chain.escrowAddress(order.id, cur.mint),
          destinationTokenAccount: this.deps.chain.tokenAccount(this.deps.chain.escrowAddress(order.id, cur.mint), cur.mint, cur.tokenProgram),
          orderId: order.id,
        },
        (id) => holdEntry({ id, kind: 'order_fund', userId: order.buyerId, mint: cur.mint, amount: order.amount, fee: 0n }),
      );
      this.log.info({ transfer_id: t.id, order_id: order.id }, 'custody: order funding held');
    }
    const out = t.status === 'pending' ? await this.process(t.id) : { status: t.status, transfer: t };
    if (out.status === 'confirmed') return { status: 'funded', signature: out.transfer.signature!, slot: out.transfer.slot };
    if (out.status === 'failed') {
      throw out.error instanceof DomainError
        ? out.error
        : new DomainError('chain-transaction-failed', `The custodial payment failed: ${out.transfer.error ?? 'unknown error'}`);
    }
    return { status: 'pending' };
  }

  /**
   * Book the escrow outcome of a custodially funded order once it is terminal. The buyer's available
   * balance is credited exactly what the chain recorded as paid out of the order's vault to the buyer
   * (`order.payout`: the instruction acting on that order, its event and the vault transfers, never
   * another order's outcome in the same transaction), whichever token account received it: the
   * program pays the buyer only into a token account owned by `order.buyer` (refund and
   * resolve_dispute check it), which for a custodial order is the deposit key, so the tokens are the
   * user's wherever a seller sent them, and the sweep collects them from every token account of the
   * deposit key. Orders closed before payouts were recorded fall back to the status: refunded -> the
   * amount, resolved -> floor(amount * buyer_bps / 10000), completed -> nothing. Returns true when it
   * booked now.
   */
  async bookOrderOutcome(order: Pick<OrderView, 'id' | 'status' | 'buyerBps' | 'payout'>): Promise<boolean> {
    if (!TERMINAL_ORDER.has(order.status)) return false;
    const t = await this.deps.repo.transferForOrder(order.id);
    if (!t || t.status !== 'confirmed' || t.closedAt) return false;
    const share = await this.buyerShare(order, t);
    const booked = await this.deps.repo.markClosed(t.id, closeEntry(t, share), this.now());
    if (booked) this.log.info({ order_id: order.id, status: order.status, buyer_share: share.toString() }, 'custody: order escrow outcome booked');
    return booked;
  }

  /** Base units of a closed custodial order paid to the buyer, the deposit key (see bookOrderOutcome). */
  private async buyerShare(order: Pick<OrderView, 'id' | 'status' | 'buyerBps' | 'payout'>, t: TransferRecord): Promise<bigint> {
    const payout = order.payout;
    if (!payout) {
      return order.status === 'refunded' ? t.amount : order.status === 'resolved' ? (t.amount * BigInt(order.buyerBps ?? 0)) / 10_000n : 0n;
    }
    if (payout.buyer === 0n) return 0n;
    const cur = this.currencyByMint(t.mint);
    const depositAta = this.deps.chain.tokenAccount((await this.depositAddress(t.userId)).address, t.mint, cur?.tokenProgram);
    if (payout.buyerTokenAccount !== null && payout.buyerTokenAccount !== depositAta) {
      this.log.info(
        { order_id: order.id, paid_to: payout.buyerTokenAccount, deposit_token_account: depositAta, amount: payout.buyer.toString() },
        'custody: the buyer share of a custodial order went to another token account of the deposit key; credited, the sweep collects it',
      );
    }
    return payout.buyer;
  }

  // ------------------------------------------------------------------ processing

  /** Process in the background (errors are logged; the reconciler retries what is left open). */
  processAsync(id: string): void {
    void this.process(id).catch((err) => this.log.warn({ err, transfer_id: id }, 'custody: transfer processing stopped'));
  }

  /** Wait for transfers being processed in this process (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.inflight.size) await Promise.allSettled([...this.inflight.values()]);
  }

  /**
   * Take a pending transfer through claim -> sign (signature recorded) -> send -> confirm -> book.
   * A transfer already being processed in this process is awaited, not started twice. Rethrows only
   * what a test hook throws (a simulated crash); every chain error is returned in the outcome.
   */
  process(id: string): Promise<ProcessOutcome> {
    const running = this.inflight.get(id);
    if (running) return running;
    const p = this.processOnce(id).finally(() => this.inflight.delete(id));
    this.inflight.set(id, p);
    return p;
  }

  private async processOnce(id: string): Promise<ProcessOutcome> {
    const { repo } = this.deps;
    let t = (await repo.getTransfer(id))!;
    if (t.status !== 'pending') return { status: t.status, transfer: t };
    const attempt = await repo.claim(id, this.now(), this.deps.leaseMs ?? 60_000);
    if (attempt === null) return { status: t.status, transfer: t };
    if (t.kind !== 'sweep') {
      // the hot wallet must hold the tokens (deposits reach it with their sweep)
      const hot = await this.deps.ledger.balance(systemAccount(t.mint, 'hot_wallet'));
      if (hot < t.amount) {
        await repo.releaseClaim(id, attempt, 'waiting for deposits to reach the hot wallet');
        return { status: 'pending', transfer: (await repo.getTransfer(id))! };
      }
    }
    const onSigned = async (signature: string, lastValidBlockHeight: number) => {
      if (!(await repo.markSubmitted(id, attempt, signature, lastValidBlockHeight))) {
        throw new AttemptSuperseded(`custody transfer ${id} (claim lost before sending)`);
      }
      t = (await repo.getTransfer(id))!;
      try {
        await this.hooks.beforeSend?.(t);
      } catch (err) {
        throw new HookAbort(err);
      }
    };
    let tx: TxResult;
    try {
      tx = await this.send(t, onSigned);
    } catch (err) {
      if (err instanceof HookAbort) throw err.cause; // a simulated crash: the process "died" here
      const fresh = (await repo.getTransfer(id))!;
      if (err instanceof DomainError && err.slug === 'chain-transaction-failed') {
        // rejected (or its blockhash expired): it will never land
        await repo.fail(id, err.detail, releaseEntry(fresh));
        this.log.warn({ transfer_id: id, kind: t.kind, err: err.detail }, 'custody: transfer failed, hold released');
        return { status: 'failed', transfer: (await repo.getTransfer(id))!, error: err };
      }
      if (fresh.status === 'pending') await repo.releaseClaim(id, attempt, (err as Error)?.message);
      this.log.warn({ err, transfer_id: id, kind: t.kind, status: fresh.status }, 'custody: transfer outcome unknown, left to the reconciler');
      return { status: fresh.status, transfer: fresh, error: err };
    }
    await this.hooks.afterSend?.(t, tx);
    await repo.settle(id, tx.slot, settleEntry(t), this.now());
    const done = (await repo.getTransfer(id))!;
    this.log.info({ transfer_id: id, kind: t.kind, signature: tx.signature }, 'custody: transfer confirmed');
    return { status: done.status, transfer: done };
  }

  private async send(t: TransferRecord, onSigned: (s: string, h: number) => Promise<void>): Promise<TxResult> {
    const { chain, keys, repo } = this.deps;
    if (t.kind === 'withdrawal') return chain.sendWithdrawal({ id: t.id, mint: t.mint, amount: t.amount, destination: t.destination }, onSigned);
    // a sweep or a custodial order funding: its fee (the funding's escrow rent returns to the deposit key)
    await this.deps.budget?.record?.({ action: 'custody_transfer', lamports: WITHDRAWAL_TX_LAMPORTS }).catch((err: unknown) => {
      this.log.warn({ err, transfer_id: t.id }, 'chain budget: custody transfer not counted');
    });
    const addr = await repo.getAddress(t.userId);
    if (!addr) throw new DomainError('chain-transaction-failed', `user ${t.userId} has no deposit address`, { program_error: 'NoDepositKey' });
    const key = keys.keypair(addr.index);
    if (t.kind === 'sweep') return chain.sendSweep({ id: t.id, mint: t.mint, amount: t.amount }, key, onSigned);
    const order = await this.orders?.get(t.orderId!);
    if (!order) throw new DomainError('chain-transaction-failed', `order ${t.orderId} not found`, { program_error: 'OrderNotFound' });
    if (order.status !== 'awaiting_payment') {
      throw new DomainError('chain-transaction-failed', `order ${order.id} is ${order.status}, not awaiting payment`, { program_error: 'OrderNotPayable' });
    }
    return chain.sendOrderFund(
      {
        id: t.id,
        orderId: order.id,
        seller: order.sellerWallet,
        mint: order.mint,
        amount: t.amount,
        deliveryDeadline: order.deliveryDeadline,
        reviewWindow: order.reviewWindow,
        expiresAt: order.fundExpiresAt,
      },
      key,
      onSigned,
    );
  }

  /**
   * Converge one open transfer to the chain: pending (never sent) -> process it; submitted ->
   * confirmed on chain: book it; failed on chain, or unknown after its blockhash expired: fail it and
   * release the hold; unknown before expiry: leave it. Never sends a signed transaction twice.
   */
  async reconcile(t: TransferRecord): Promise<TransferStatus> {
    if (this.inflight.has(t.id)) return (await this.inflight.get(t.id)!).status;
    if (t.status === 'pending') {
      if (t.leaseUntil && t.leaseUntil > this.now()) return 'pending';
      return (await this.process(t.id)).status;
    }
    if (t.status !== 'submitted' || !t.signature) return t.status;
    const { chain, repo } = this.deps;
    // the recorded attempt's outcome (../../chain/recorded-send.ts): the block height is read before the
    // status, so a transfer unknown to the cluster after its blockhash expired can never land
    const outcome = await chain.transactionOutcome({ signature: t.signature, lastValidBlockHeight: t.lastValidBlockHeight ?? Number.MAX_SAFE_INTEGER });
    if (outcome.state === 'landed') {
      await repo.settle(t.id, outcome.slot, settleEntry(t), this.now());
      this.log.info({ transfer_id: t.id, kind: t.kind, signature: t.signature }, 'custody reconciler: transfer confirmed on chain');
    } else if (outcome.state === 'dead') {
      const why = outcome.reason === 'rejected' ? 'failed on chain' : `expired (block height past ${t.lastValidBlockHeight})`;
      await repo.fail(t.id, `transaction ${t.signature} ${why}`, releaseEntry(t));
    }
    return (await repo.getTransfer(t.id))!.status;
  }
}

/** Carries a test hook's throw through the chain sender untouched. */
class HookAbort extends Error {
  constructor(readonly cause: unknown) {
    super('custody test hook aborted the transfer');
  }
}

// ------------------------------------------------------------------ journal entries (see README)

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
