/**
 * ts-rest handlers of `contract.wallet`.
 *  - getBalances: the caller's wallet (from the authenticated principal) read from the chain:
 *    native SOL + each configured currency (source "chain"); 503 chain-unavailable when the RPC is down.
 *  - createDeposit / createWithdrawal: the service is non-custodial, both answer 404 custody-disabled.
 */
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import { DomainError } from '../errors.js';
import type { WalletService } from '../modules/wallet/wallet.service.js';

export interface WalletHttpDeps {
  service: WalletService;
}

function walletOf(req: unknown): string {
  const p = (req as { principal?: { wallet?: string | null } }).principal;
  if (!p) throw new DomainError('unauthorized', 'No credential was sent.');
  if (!p.wallet) throw new DomainError('forbidden', 'The credential is not linked to a wallet.');
  return p.wallet;
}

export function walletHandlers(deps: WalletHttpDeps) {
  const s = initServer();
  return s.router(contract.wallet, {
    getBalances: async ({ req }) => {
      const body = await deps.service.getBalances(walletOf(req));
      return { status: 200 as const, body };
    },
    createDeposit: async () => deps.service.createDeposit(),
    createWithdrawal: async () => deps.service.createWithdrawal(),
  });
}
