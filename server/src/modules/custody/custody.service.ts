/**
 * Custody facade: ONE object the HTTP handlers, the custody worker and the orders module (as its
 * `CustodialPaymentsPort`) hold, composed of the custody use cases (./use-cases/, one per file; the
 * rule is in docs/design.md "Use cases"). It holds no rule of its own: each method delegates to the
 * use case that owns it, and the constructor is the only place that knows which use case needs which.
 *
 *   deposits-and-balances   deposit address and instructions, balances, deposit history (read and present)
 *   withdraw                validate + hold + queue a withdrawal; the caller's withdrawals
 *   fund-orders             custodial order funding and booking a closed order's outcome (orders port)
 *   process-transfer        the record-before-send pipeline of every transfer, and `reconcile`
 * Journal entries: ./custody.entries.ts. See ./README.md for the ledger and the crash-safety argument.
 */
import type { CustodyCurrency, DepositAddressRecord, DepositRecord, Log, OrderView, TransferRecord, TransferStatus } from './custody.types.js';
import { type CustodyPorts, currencyByCode, currencyByMint, custodyContext, depositAddress, type CustodyContext } from './use-cases/context.js';
import { type CustodialBalanceView, type DepositRecordView, type DepositView, depositsAndBalances } from './use-cases/deposits-and-balances.js';
import { fundOrders } from './use-cases/fund-orders.js';
import { type ProcessOutcome, processTransfers } from './use-cases/process-transfer.js';
import { type WithdrawalView, type WithdrawInput, withdrawals } from './use-cases/withdraw.js';

export { CONFIRMATIONS_REQUIRED } from './use-cases/deposits-and-balances.js';
export type { CustodialBalanceView, DepositRecordView, DepositView } from './use-cases/deposits-and-balances.js';
export type { WithdrawalView, WithdrawInput } from './use-cases/withdraw.js';
export type { ProcessOutcome } from './use-cases/process-transfer.js';
export type { CustodyBudget, CustodyOrdersPort } from './use-cases/context.js';
export { holdEntry, settleEntry, releaseEntry, closeEntry, depositCredit, depositEntry } from './custody.entries.js';

export interface CustodyServiceDeps extends CustodyPorts {
  log?: Log;
  now?: () => Date;
  /** how long a claim on a pending transfer lasts before another process may take it over (ms, default 60 000) */
  leaseMs?: number;
}

export class CustodyService {
  readonly currencies: CustodyCurrency[];
  readonly orders: CustodyPorts['orders'];
  private readonly ctx: CustodyContext;
  private readonly reads;
  private readonly transfers;
  private readonly withdrawals;
  private readonly funding;

  constructor(deps: CustodyServiceDeps) {
    const { log, now, leaseMs, ...ports } = deps;
    const c = (this.ctx = custodyContext(ports, { log, now, leaseMs }));
    this.currencies = c.currencies;
    this.orders = c.orders;
    this.reads = depositsAndBalances(c);
    this.transfers = processTransfers(c);
    this.withdrawals = withdrawals(c, { transfers: this.transfers });
    this.funding = fundOrders(c, { transfers: this.transfers });
  }

  get hotWallet(): string {
    return this.ctx.chain.hotWallet;
  }
  currencyByCode(code: string): CustodyCurrency | undefined {
    return currencyByCode(this.ctx, code);
  }
  currencyByMint(mint: string): CustodyCurrency | undefined {
    return currencyByMint(this.ctx, mint);
  }

  // deposits and balances
  depositAddress(userId: string): Promise<DepositAddressRecord> {
    return depositAddress(this.ctx, userId);
  }
  depositInstructions(userId: string, currency?: string): Promise<DepositView> {
    return this.reads.depositInstructions(userId, currency);
  }
  balances(userId: string): Promise<CustodialBalanceView[]> {
    return this.reads.balances(userId);
  }
  listDeposits(userId: string, limit: number, cursor?: string): Promise<{ data: DepositRecordView[]; next_cursor: string | null }> {
    return this.reads.listDeposits(userId, limit, cursor);
  }
  depositView(d: DepositRecord): DepositRecordView {
    return this.reads.depositView(d);
  }

  // withdraw
  withdraw(userId: string, input: WithdrawInput): Promise<TransferRecord> {
    return this.withdrawals.withdraw(userId, input);
  }
  getWithdrawal(userId: string, id: string): Promise<TransferRecord> {
    return this.withdrawals.getWithdrawal(userId, id);
  }
  listWithdrawals(userId: string, limit: number, cursor?: string): Promise<{ data: WithdrawalView[]; next_cursor: string | null }> {
    return this.withdrawals.listWithdrawals(userId, limit, cursor);
  }
  withdrawalView(t: TransferRecord): WithdrawalView {
    return this.withdrawals.withdrawalView(t);
  }

  // fund custodial orders (the orders module's CustodialPaymentsPort)
  buyerAddressFor(userId: string): Promise<string> {
    return this.funding.buyerAddressFor(userId);
  }
  assertAvailable(userId: string, mint: string, amount: bigint): Promise<void> {
    return this.funding.assertAvailable(userId, mint, amount);
  }
  payOrder(order: OrderView): Promise<{ status: 'funded'; signature: string; slot: number | null } | { status: 'pending' }> {
    return this.funding.payOrder(order);
  }
  bookOrderOutcome(order: Pick<OrderView, 'id' | 'status' | 'buyerBps' | 'payout'>): Promise<boolean> {
    return this.funding.bookOrderOutcome(order);
  }

  // process and reconcile transfers
  processAsync(id: string): void {
    this.transfers.processAsync(id);
  }
  idle(): Promise<void> {
    return this.transfers.idle();
  }
  process(id: string): Promise<ProcessOutcome> {
    return this.transfers.process(id);
  }
  reconcile(t: TransferRecord): Promise<TransferStatus> {
    return this.transfers.reconcile(t);
  }
}
