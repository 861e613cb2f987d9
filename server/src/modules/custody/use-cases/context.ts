/**
 * What every custody use case is given: the module's ports (repo, ledger, deposit keys, chain, the
 * orders it funds, the budget), the custody currencies, the clock and the log, plus the small lookups
 * more than one use case makes. A use case imports this file, `../custody.types.ts`,
 * `../custody.errors.ts`, `../custody.entries.ts`, the shared libraries and another use case's factory
 * result passed in by the facade, never the facade (`../custody.service.ts`).
 */
import type { CustodyChainPort } from '../custody.chain.js';
import type { DepositKeys } from '../custody.keys.js';
import type { Ledger } from '../custody.ledger.js';
import type { CustodyRepo } from '../custody.repo.js';
import { type CustodyCurrency, type DepositAddressRecord, type Log, type OrderView, silentLog } from '../custody.types.js';

/** The orders the custody module funds (the orders module's read port, `ordersReadPort`, given at construction). */
export interface CustodyOrdersPort {
  get(orderId: string): Promise<OrderView | null>;
}

/** What custody needs of the budget module (`ChainBudget.charge`). */
export interface CustodyBudget {
  charge(c: { action: 'withdrawal'; lamports: number; userId?: string | null }): Promise<void>;
  /** sweeps and custodial order fundings: counted, never refused (the users' money must move) */
  record?(c: { action: 'custody_transfer'; lamports: number }): Promise<void>;
}

/** The ports of the custody module. */
export interface CustodyPorts {
  repo: CustodyRepo;
  ledger: Ledger;
  keys: DepositKeys;
  chain: CustodyChainPort;
  currencies: CustodyCurrency[];
  orders?: CustodyOrdersPort;
  /** the service's SOL budget (modules/budget): each withdrawal is charged (per-account daily cap, daily budget) */
  budget?: CustodyBudget;
}

export interface CustodyContext extends CustodyPorts {
  log: Log;
  now: () => Date;
  /** how long a claim on a pending transfer lasts before another process may take it over, ms */
  leaseMs: number;
}

export function custodyContext(ports: CustodyPorts, o: { log?: Log; now?: () => Date; leaseMs?: number } = {}): CustodyContext {
  return { ...ports, log: o.log ?? silentLog, now: o.now ?? (() => new Date()), leaseMs: o.leaseMs ?? 60_000 };
}

/** Network fee of one custody transaction the service pays (lamports; one fee-paying signature). */
export const CUSTODY_TX_LAMPORTS = 5_000;

export const currencyByCode = (c: Pick<CustodyContext, 'currencies'>, code: string): CustodyCurrency | undefined => c.currencies.find((x) => x.code === code);

export const currencyByMint = (c: Pick<CustodyContext, 'currencies'>, mint: string): CustodyCurrency | undefined => c.currencies.find((x) => x.mint === mint);

/** The user's deposit address, allocated (index from the DB sequence, key derived) on first use. */
export function depositAddress(c: CustodyContext, userId: string): Promise<DepositAddressRecord> {
  return c.repo.ensureAddress(userId, (index) => c.keys.address(index));
}
