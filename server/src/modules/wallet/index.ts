/**
 * Wallet module: on-chain balances of the caller's wallet (see wallet.service.ts).
 */
export { createWalletService, toBalanceView, type WalletService, type BalancesView, type WalletServiceDeps } from './wallet.service.js';
