/**
 * Wallet module (non-custodial): balances are read from the chain for the caller's wallet.
 * Deposits and withdrawals exist only with custodial accounts, which this service does not run:
 * both answer DomainError('custody-disabled') (404).
 *
 * Errors: chain-unavailable (503) when the RPC cannot be reached.
 */
import { DomainError } from '../../errors.js';
import type { Chain, CurrencyInfo, WalletBalance } from '../../chain/types.js';

/** One balance line as the API shows it (contract Balance schema). */
export interface BalanceView {
  currency: string;
  mint: string | null;
  amount_base_units: string;
  decimals: number;
  /** display only: amount_base_units / 10^decimals */
  ui_amount: number;
  source: 'chain' | 'custodial';
}

export interface BalancesView {
  wallet: string;
  balances: BalanceView[];
}

export interface WalletServiceDeps {
  chain: Pick<Chain, 'getWalletBalances'>;
  currencies: CurrencyInfo[];
}

export function toBalanceView(b: WalletBalance): BalanceView {
  return {
    currency: b.currency,
    mint: b.mint,
    amount_base_units: b.amountBaseUnits.toString(),
    decimals: b.decimals,
    ui_amount: Number(b.uiAmount),
    source: 'chain',
  };
}

export class WalletService {
  constructor(private readonly deps: WalletServiceDeps) {}

  /** Native SOL plus each configured currency's associated token account balance of `wallet`. */
  async getBalances(wallet: string): Promise<BalancesView> {
    const lines = await this.deps.chain.getWalletBalances(wallet, this.deps.currencies);
    return { wallet, balances: lines.map(toBalanceView) };
  }

  createDeposit(): never {
    throw new DomainError('custody-disabled', 'this service is non-custodial: pay from your own wallet; no deposits are held');
  }

  createWithdrawal(): never {
    throw new DomainError('custody-disabled', 'this service is non-custodial: funds stay in your own wallet; nothing to withdraw');
  }
}
