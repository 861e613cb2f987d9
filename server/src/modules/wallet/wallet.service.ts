/**
 * Wallet module: on-chain balances of the caller's wallet. Custodial balances, deposits and
 * withdrawals live in modules/custody (enabled by the operator); http/wallet.handlers.ts combines them.
 *
 * Errors: chain-unavailable (503) when the RPC cannot be reached.
 */
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
  /** custodial lines only: held for withdrawals in flight, base units */
  held_base_units?: string;
  /** custodial lines only: in escrows of custodial orders, base units */
  in_escrow_base_units?: string;
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
}
