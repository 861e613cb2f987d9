/**
 * Custody module wiring (only built when CUSTODY_ENABLED is on):
 *
 *   const custody = createCustodyModule({ db, chain, config, orders: ordersReadPort(db), log });
 *   await custody.start();                    // worker pass at start-up, then every pollIntervalMs
 *   await custody.stop();                     // stops the timer, waits for transfers in flight
 */
import type { Connection, Keypair } from '@solana/web3.js';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { EscrowClient } from '../../chain/escrow.js';
import type { CurrencyInfo } from '../../chain/types.js';
import { toBaseUnits } from '../../lib/money.js';
import { CustodyChain, type CustodyChainPort } from './custody.chain.js';
import { DepositKeys } from './custody.keys.js';
import { Ledger } from './custody.ledger.js';
import { CustodyRepo } from './custody.repo.js';
import { type CustodyBudget, type CustodyOrdersPort, CustodyService } from './custody.service.js';
import type { CustodyCurrency, Log } from './custody.types.js';
import { CustodyWorker } from './custody.worker.js';

export { CustodyService, holdEntry, settleEntry, releaseEntry, closeEntry, depositEntry } from './custody.service.js';
export type { CustodyOrdersPort, WithdrawalView, DepositView, CustodialBalanceView } from './custody.service.js';
export { Ledger, accountCode, normalBalance, userAccount, systemAccount } from './custody.ledger.js';
export { CustodyRepo } from './custody.repo.js';
export { CustodyChain } from './custody.chain.js';
export { CustodyWorker } from './custody.worker.js';
export { DepositKeys, depositPath, parseSeedHex } from './custody.keys.js';
export { custodyErrors } from './custody.errors.js';
export type * from './custody.types.js';

/** Custody settings (config.ts reads them from the environment). UI amounts are decimal text per currency code. */
export interface CustodySettings {
  /** hex master seed (16..64 bytes) */
  seed: string;
  minDeposit?: Record<string, string>;
  minWithdrawal?: Record<string, string>;
  withdrawalFee?: Record<string, string>;
  /** worker interval in ms; 0 = only the start-up pass (default 5 000) */
  pollIntervalMs?: number;
  /** claim lease of a pending transfer, ms (default 60 000) */
  leaseMs?: number;
}

/** Default minimum deposit and withdrawal: 0.01 of the currency (at least 1 base unit); default fee 0. */
export function custodyCurrencies(currencies: CurrencyInfo[], s: Pick<CustodySettings, 'minDeposit' | 'minWithdrawal' | 'withdrawalFee'>): CustodyCurrency[] {
  const amount = (table: Record<string, string> | undefined, c: CurrencyInfo, name: string, dflt: bigint): bigint => {
    const text = table?.[c.code];
    if (text === undefined) return dflt;
    if (/^0+(\.0*)?$/.test(text)) return 0n;
    const r = toBaseUnits(text, c.decimals);
    if (!r.ok) throw new Error(`${name} for ${c.code}: ${r.message}`);
    return r.value;
  };
  return currencies.map((c) => {
    const cent = c.decimals >= 2 ? 10n ** BigInt(c.decimals - 2) : 1n;
    return {
      code: c.code,
      mint: c.mint,
      decimals: c.decimals,
      ...(c.tokenProgram ? { tokenProgram: c.tokenProgram } : {}),
      minDeposit: amount(s.minDeposit, c, 'CUSTODY_MIN_DEPOSIT', cent),
      minWithdrawal: amount(s.minWithdrawal, c, 'CUSTODY_MIN_WITHDRAWAL', cent),
      withdrawalFee: amount(s.withdrawalFee, c, 'CUSTODY_WITHDRAWAL_FEE', 0n),
    };
  });
}

/**
 * Replacements of the ports the module builds: each gets the port as built and returns the one the
 * module uses. Tests supply them (a repository whose write fails where a crashed process would stop);
 * production passes none.
 */
export interface CustodyPortDecorators {
  repo?: (built: CustodyRepo) => CustodyRepo;
  chain?: (built: CustodyChainPort) => CustodyChainPort;
}

export interface CustodyModuleOptions {
  db: PrismaClient;
  /** the chain client's pieces: RPC connection, the service keypair (hot wallet), the escrow client */
  chain: { connection: Connection; service: Keypair; escrow: EscrowClient };
  currencies: CurrencyInfo[];
  settings: CustodySettings;
  orders?: CustodyOrdersPort;
  log?: Log;
  now?: () => Date;
  /** port decorators (tests) */
  ports?: CustodyPortDecorators;
  /** the service's SOL budget (modules/budget): withdrawals are charged to it */
  budget?: CustodyBudget;
  /** test seam: another chain port */
  chainPort?: CustodyChainPort;
}

export function createCustodyModule(o: CustodyModuleOptions) {
  const currencies = custodyCurrencies(o.currencies, o.settings);
  const ledger = new Ledger(o.db);
  const builtRepo = new CustodyRepo(o.db, ledger);
  const repo = o.ports?.repo?.(builtRepo) ?? builtRepo;
  const keys = new DepositKeys(o.settings.seed);
  const builtChain =
    o.chainPort ??
    new CustodyChain({
      connection: o.chain.connection,
      service: o.chain.service,
      escrow: o.chain.escrow,
      tokenPrograms: Object.fromEntries(currencies.filter((c) => c.tokenProgram).map((c) => [c.mint, c.tokenProgram!])),
    });
  const chain = o.ports?.chain?.(builtChain) ?? builtChain;
  const service = new CustodyService({
    repo,
    ledger,
    keys,
    chain,
    currencies,
    orders: o.orders,
    log: o.log,
    now: o.now,
    leaseMs: o.settings.leaseMs,
    budget: o.budget,
  });
  // events (outbox): deposits and withdrawals as the API shows them
  repo.eventViews = { deposit: (d) => service.depositView(d), withdrawal: (t) => service.withdrawalView(t) };
  const worker = new CustodyWorker({ service, repo, chain, log: o.log });
  const intervalMs = o.settings.pollIntervalMs ?? 5_000;
  return {
    service,
    repo,
    ledger,
    keys,
    chain,
    worker,
    currencies,
    /** the ledger invariants (see Ledger.ledgerInvariant) */
    ledgerInvariant: () => ledger.ledgerInvariant(),
    /** start-up pass (reconcile, deposits, sweeps, order outcomes), then the timer */
    async start() {
      worker.start(intervalMs);
    },
    /** stop the worker's timer and await its pass in progress (the leader lease was lost; modules/leader) */
    async stopLoops() {
      await worker.stop();
    },
    async stop() {
      await worker.stop();
      await service.idle();
    },
  };
}

export type CustodyModule = ReturnType<typeof createCustodyModule>;
