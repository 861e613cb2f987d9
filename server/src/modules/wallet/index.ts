/**
 * Wallet module: on-chain balances of the caller's wallet (see wallet.service.ts).
 */
export { WalletService, toBalanceView, type BalancesView, type WalletServiceDeps } from './wallet.service.js';
