/**
 * ts-rest handlers of `contract.wallet`.
 *  - getBalances: the caller's wallet read from the chain (native SOL + each configured currency,
 *    source "chain"; 503 chain-unavailable when the RPC is down), then, with custody enabled, the
 *    caller's custodial balances (source "custodial").
 *  - createDeposit, listDeposits, createWithdrawal (Idempotency-Key required), listWithdrawals,
 *    getWithdrawal: only with custody enabled (modules/custody); otherwise 404 custody-disabled,
 *    before any other check (no Idempotency-Key is asked for a route that does not exist here).
 *    Custody enabled on a service without a chain client: 503 chain-unavailable.
 * Custodial routes act for a user: a service API key without a user gets 403.
 */
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import { DomainError } from '../errors.js';
import { idempotency, type IdempotencyStore } from '../modules/idempotency/index.js';
import { custodyErrors } from '../modules/custody/index.js';
import type { CustodyService } from '../modules/custody/index.js';
import type { WalletService } from '../modules/wallet/index.js';
import type { Principal } from '../modules/auth/index.js';

export interface WalletHttpDeps {
  service: WalletService;
  /** the custody service (custody enabled); null: custodial routes answer 404 custody-disabled */
  custody: CustodyService | null;
  /** custody is enabled but the service runs without a chain client: custodial routes answer 503 */
  custodyWithoutChain?: boolean;
  idempotencyStore: IdempotencyStore;
}

const principal = (req: unknown): Principal => {
  const p = (req as { principal?: Principal }).principal;
  if (!p) throw new DomainError('unauthorized', 'No credential was sent.');
  return p;
};

function walletOf(req: unknown): string {
  const p = principal(req);
  if (!p.wallet) throw new DomainError('forbidden', 'The credential is not linked to a wallet.');
  return p.wallet;
}

function userOf(req: unknown): string {
  const p = principal(req);
  if (!p.userId) throw new DomainError('forbidden', 'Custodial accounts belong to users: use a user token or an API key acting for a user.');
  return p.userId;
}

export function walletHandlers(deps: WalletHttpDeps) {
  const s = initServer();
  const custody = (): CustodyService => {
    if (deps.custodyWithoutChain) {
      throw new DomainError('chain-unavailable', 'Custody is enabled but the service runs without a Solana connection.');
    }
    if (!deps.custody) throw custodyErrors.disabled();
    return deps.custody;
  };
  const withdrawHandler = async ({ body, req }: { body: { currency: string; amount?: number; amount_base_units?: string; destination: string }; req: unknown }) => {
    const c = custody();
    const t = await c.withdraw(userOf(req), {
      currency: body.currency,
      amount: body.amount,
      amountBaseUnits: body.amount_base_units,
      destination: body.destination,
    });
    return { status: 202 as const, body: c.withdrawalView(t) };
  };
  return s.router(contract.wallet, {
    getBalances: async ({ req }) => {
      const body = await deps.service.getBalances(walletOf(req));
      if (deps.custody) {
        const userId = principal(req).userId;
        if (userId) body.balances.push(...(await deps.custody.balances(userId)));
      }
      return { status: 200 as const, body };
    },
    createDeposit: async ({ body, req }) => {
      const c = custody();
      return { status: 200 as const, body: await c.depositInstructions(userOf(req), body.currency) };
    },
    listDeposits: async ({ query, req }) => {
      const c = custody();
      return { status: 200 as const, body: await c.listDeposits(userOf(req), query.limit, query.cursor) };
    },
    // the idempotency middleware only exists when the route does (custody enabled)
    createWithdrawal: deps.custody
      ? { middleware: [idempotency({ store: deps.idempotencyStore, required: true }) as never], handler: withdrawHandler }
      : withdrawHandler,
    listWithdrawals: async ({ query, req }) => {
      const c = custody();
      return { status: 200 as const, body: await c.listWithdrawals(userOf(req), query.limit, query.cursor) };
    },
    getWithdrawal: async ({ params, req }) => {
      const c = custody();
      return { status: 200 as const, body: c.withdrawalView(await c.getWithdrawal(userOf(req), params.withdrawal_id)) };
    },
  });
}
