/**
 * Use case "deposits and balances" (read and present): the deposit address and its instructions
 * (POST /wallet/deposit), the custodial balance lines, the deposit history, and the contract's
 * `CustodyDeposit` of a record. Writes only the deposit address, on first use.
 */
import type { Balance, CustodyDeposit, Deposit } from '@bazaar/contract';
import { cursorKey, decodeCursor, newestPage } from '../../../lib/cursor.js';
import { formatUiAmount, toUiNumber } from '../../../lib/money.js';
import { custodyErrors } from '../custody.errors.js';
import type { DepositRecord } from '../custody.types.js';
import { type CustodyContext, currencyByCode, currencyByMint, depositAddress } from './context.js';

/** Blocks built on top of a finalized block (what "finalized" means on Solana), shown to depositors. */
export const CONFIRMATIONS_REQUIRED = 32;

/** One custodial balance line: contract `Balance` with source "custodial" and both custodial amounts. */
export type CustodialBalanceView = Balance & { mint: string; source: 'custodial'; held_base_units: string; in_escrow_base_units: string };

/** Contract `Deposit` (POST /wallet/deposit answer). */
export type DepositView = Deposit;

/** Contract `CustodyDeposit`. */
export type DepositRecordView = CustodyDeposit;

/** The keyset position of a decoded cursor (newest first). */
export const afterOf = (cur: { keys: unknown[]; id: string }) => ({ createdAt: new Date(String(cur.keys[0])), id: cur.id });

export function depositsAndBalances(c: CustodyContext) {
  function depositView(d: DepositRecord): DepositRecordView {
    const decimals = currencyByMint(c, d.mint)?.decimals ?? 0;
    return {
      deposit_id: d.id,
      currency: d.currency,
      mint: d.mint,
      amount: toUiNumber(d.amount, decimals),
      amount_base_units: d.amount.toString(),
      token_account: d.tokenAccount,
      signature: d.signature,
      slot: d.slot,
      status: d.status,
      created_at: d.createdAt.toISOString(),
    };
  }

  return {
    depositView,

    /**
     * Deposit instructions for the user: the deposit address (the owner wallet to send to), the
     * accepted mints with their associated token accounts and minimums, and the commitment awaited.
     * `currency` narrows the answer (and adds a Solana Pay transfer link); 400 validation-error when
     * it is not a custody currency.
     */
    async depositInstructions(userId: string, currency?: string): Promise<DepositView> {
      const picked = currency ? currencyByCode(c, currency) : undefined;
      if (currency && !picked) throw custodyErrors.unsupportedCurrency('body.currency', currency, c.currencies);
      const addr = await depositAddress(c, userId);
      const chain = c.chain;
      const accepted = c.currencies.map((cur) => ({
        currency: cur.code,
        mint: cur.mint,
        decimals: cur.decimals,
        token_account: chain.tokenAccount(addr.address, cur.mint, cur.tokenProgram),
        minimum: toUiNumber(cur.minDeposit, cur.decimals),
        minimum_base_units: cur.minDeposit.toString(),
      }));
      const list = picked ? accepted.filter((a) => a.currency === picked.code) : accepted;
      const mins = list.map((a) => `${formatUiAmount(BigInt(a.minimum_base_units), a.decimals)} ${a.currency}`).join(', ');
      const instructions =
        `Send ${list.map((a) => a.currency).join(' or ')} (SPL tokens) to ${addr.address} (your deposit address; ` +
        'wallets put them in its associated token account). Minimum per transfer: ' +
        `${mins}; smaller transfers are not credited. Deposits are credited once finalized ` +
        `(${CONFIRMATIONS_REQUIRED} confirmations, about 15 s on mainnet). Native SOL sent to the address is not credited. ` +
        'The address is yours alone and does not change.';
      const mine = picked ? list[0] : null;
      return {
        address: addr.address,
        currency: picked?.code ?? null,
        mint: picked?.mint ?? null,
        token_account: mine?.token_account ?? null,
        accepted: list,
        commitment: 'finalized',
        confirmations_required: CONFIRMATIONS_REQUIRED,
        instructions,
        ...(picked
          ? { solana_pay_url: `solana:${addr.address}?spl-token=${picked.mint}&label=${encodeURIComponent('Bazaar deposit')}` }
          : {}),
      };
    },

    /** Custodial balance lines of every custody currency (zero when nothing was ever deposited). */
    async balances(userId: string): Promise<CustodialBalanceView[]> {
      const rows = await c.ledger.userBalances(userId);
      return c.currencies.map((cur) => {
        const b = rows.find((r) => r.mint === cur.mint) ?? { available: 0n, held: 0n, escrow: 0n };
        return {
          currency: cur.code,
          mint: cur.mint,
          amount_base_units: b.available.toString(),
          decimals: cur.decimals,
          ui_amount: toUiNumber(b.available, cur.decimals),
          source: 'custodial' as const,
          held_base_units: b.held.toString(),
          in_escrow_base_units: b.escrow.toString(),
        };
      });
    },

    /** The user's deposits, newest first, cursor pagination. */
    async listDeposits(userId: string, limit: number, cursor?: string): Promise<{ data: DepositRecordView[]; next_cursor: string | null }> {
      const spec = { sort: 'created_desc', filters: { what: 'deposits' }, keys: [cursorKey.timestamp] };
      const after = cursor ? afterOf(decodeCursor(cursor, spec)) : undefined;
      const page = newestPage(await c.repo.listDeposits(userId, limit + 1, after), limit, spec);
      return { data: page.items.map((d) => depositView(d)), next_cursor: page.nextCursor };
    },
  };
}
