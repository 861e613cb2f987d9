/**
 * Can the buyer wallet pay a fund transaction? (issue 23 item 3). The rule, as the contract states it
 * (problems.ts insufficient-funds): the wallet's token balance of the order's mint covers the amount (at
 * creation also the wallet's other unpaid orders in that mint), and its SOL covers the network fee and
 * the rent of the accounts `fund` creates (order PDA, vault; for wrapped SOL also the amount and the wSOL
 * account's rent), per order. All figures are read from the RPC (`EscrowPort.fundingNeeds`).
 *
 * A shortfall is 409 insufficient-funds with, besides the older `balance` / `required_base_units` /
 * `available_base_units` of the first asset short, `needed` and `available` listing every asset checked
 * in base units and in UI units with its decimals and symbol (contract FundsAmount), so a client can say
 * "you need 16.91 USDC and 0.0042 SOL for fees". Disclosure: only the paying wallet of the caller's own
 * order is read, and only its buyer is answered (docs/threat-model.md, "Text, transport and network").
 *
 * `isLackOfFunds` recognises a transaction the cluster refused because the payer could not pay (simulation
 * or execution): the fee payer has no account (AccountNotFound, a wallet that never held SOL), too little
 * for the fee or rent, or the token program's InsufficientFunds.
 */
import type { FundsAmount } from '@bazaar/contract';
import { DomainError } from '../../errors.js';
import { formatUiAmount } from '../../lib/money.js';
import type { FundingNeeds, FundTerms } from './orders.types.js';

/** Decimals of native SOL (1 SOL = 10^9 lamports). */
export const SOL_DECIMALS = 9;

/** The order's currency as a shortfall names it. */
export interface FundsCurrency {
  code: string;
  decimals: number;
}

/** What one check found: the assets needed and held; `short` the first asset that does not cover. */
export interface FundsCheck {
  needed: FundsAmount[];
  available: FundsAmount[];
  short: 'token' | 'sol' | null;
}

const amountOf = (asset: 'token' | 'sol', currency: string, mint: string | null, decimals: number, base: bigint): FundsAmount => ({
  asset,
  currency,
  mint,
  decimals,
  base_units: base.toString(),
  amount: formatUiAmount(base, decimals),
});

/**
 * Compare what the fund transaction of `terms` needs with the wallet's balances (`needs`, from the RPC),
 * counting `others` (the wallet's other unpaid orders: each needs its own amount in its mint, and the same
 * fee and rent again). Pure.
 */
export function checkWalletFunds(
  terms: Pick<FundTerms, 'mint' | 'amount'>,
  needs: FundingNeeds,
  currency: FundsCurrency,
  others: ReadonlyArray<{ mint: string; amount: bigint }> = [],
): FundsCheck {
  const otherTokens = others.filter((o) => o.mint === terms.mint).reduce((sum, o) => sum + o.amount, 0n);
  const perOrderCost = needs.lamports - needs.amountInLamports;
  const native = needs.tokenBalance === null;
  const lamports = needs.lamports + BigInt(others.length) * perOrderCost + (native ? otherTokens : 0n);
  const needed: FundsAmount[] = [];
  const available: FundsAmount[] = [];
  let short: FundsCheck['short'] = null;
  if (!native) {
    const tokens = terms.amount + otherTokens;
    needed.push(amountOf('token', currency.code, terms.mint, currency.decimals, tokens));
    available.push(amountOf('token', currency.code, terms.mint, currency.decimals, needs.tokenBalance!));
    if (needs.tokenBalance! < tokens) short = 'token';
  }
  needed.push(amountOf('sol', 'SOL', null, SOL_DECIMALS, lamports));
  available.push(amountOf('sol', 'SOL', null, SOL_DECIMALS, needs.lamportsBalance));
  if (!short && needs.lamportsBalance < lamports) short = 'sol';
  return { needed, available, short };
}

/**
 * 409 insufficient-funds for `check` (whose `short` is set, or `refused` when the cluster refused the
 * transaction for it): the detail in words ("needs 16.91 USDC, holds 2 USDC"), the per-asset `needed` and
 * `available`, and the older members of the first asset short.
 */
export function insufficientFunds(wallet: string, check: FundsCheck, refused?: string): DomainError {
  const shortAsset = check.short ?? 'sol';
  const i = Math.max(0, check.needed.findIndex((a) => a.asset === shortAsset));
  const need = check.needed[i]!;
  const have = check.available[i]!;
  const parts = check.needed.map(
    (n, k) => `${n.amount} ${n.currency}${n.asset === 'sol' ? ' for the network fee and account rent' : ''} (holds ${check.available[k]!.amount})`,
  );
  const detail =
    (refused ? `The cluster refused the payment for lack of funds (${refused}). ` : '') +
    `Wallet ${wallet} cannot pay: it needs ${parts.join(' and ')}. Add the missing ${need.currency} to the wallet, then pay again.`;
  return new DomainError('insufficient-funds', detail, {
    balance: need.asset,
    wallet,
    currency: need.currency,
    required_base_units: need.base_units,
    available_base_units: have.base_units,
    needed: check.needed,
    available: check.available,
  });
}

/** Runtime and token-program errors that mean the payer could not pay the transaction. */
const LACK_OF_FUNDS = new Set(['AccountNotFound', 'InsufficientFundsForFee', 'InsufficientFundsForRent', 'InsufficientFunds']);

/** Whether `err` is a chain-transaction-failed whose program error is the payer's lack of funds. */
export function isLackOfFunds(err: unknown): err is DomainError {
  return (
    err instanceof DomainError &&
    err.slug === 'chain-transaction-failed' &&
    LACK_OF_FUNDS.has(String((err.extensions as { program_error?: unknown }).program_error))
  );
}
