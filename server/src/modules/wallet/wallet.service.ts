/**
 * Wallet module: on-chain balances of the caller's wallet. Custodial balances, deposits and
 * withdrawals live in modules/custody (enabled by the operator); http/wallet.handlers.ts combines them.
 *
 * Errors: chain-unavailable (503) when the RPC cannot be reached.
 */
import type { Balance } from '@bazaar/contract';
import type { Chain, CurrencyInfo, WalletBalance } from '../../chain/types.js';

/** The wallet's balances (the contract's `Balance` lines, source chain). */
export interface BalancesView {
  wallet: string;
  balances: Balance[];
}

export interface WalletServiceDeps {
  chain: Pick<Chain, 'getWalletBalances'>;
  currencies: CurrencyInfo[];
}

/** A chain balance line as the contract's `Balance` (ui_amount display only). */
export function toBalanceView(b: WalletBalance): Balance {
  return {
    currency: b.currency,
    mint: b.mint,
    amount_base_units: b.amountBaseUnits.toString(),
    decimals: b.decimals,
    ui_amount: Number(b.uiAmount),
    source: 'chain',
  };
}

export function createWalletService(deps: WalletServiceDeps) {
  return {
    /** Native SOL plus each configured currency's associated token account balance of `wallet`. */
    async getBalances(wallet: string): Promise<BalancesView> {
      const lines = await deps.chain.getWalletBalances(wallet, deps.currencies);
      return { wallet, balances: lines.map(toBalanceView) };
    },
  };
}

export type WalletService = ReturnType<typeof createWalletService>;
