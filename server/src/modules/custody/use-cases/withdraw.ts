/**
 * Use case "withdraw": validate, hold (available -> held, amount + fee, with the transfer `pending` in
 * one DB transaction) and hand the transfer to the record-before-send pipeline (./process-transfer.ts)
 * in the background; plus the caller's withdrawals as the contract's `Withdrawal`.
 */
import type { Withdrawal } from '@bazaar/contract';
import { DomainError } from '../../../errors.js';
import { cursorKey, decodeCursor, newestPage } from '../../../lib/cursor.js';
import { formatUiAmount, toBaseUnits, toUiNumber } from '../../../lib/money.js';
import { holdEntry } from '../custody.entries.js';
import { custodyErrors } from '../custody.errors.js';
import type { CustodyCurrency, TransferRecord } from '../custody.types.js';
import { type CustodyContext, CUSTODY_TX_LAMPORTS, currencyByCode, currencyByMint } from './context.js';
import { afterOf } from './deposits-and-balances.js';
import type { ProcessTransfers } from './process-transfer.js';

/** Contract `Withdrawal`. */
export type WithdrawalView = Withdrawal;

export interface WithdrawInput {
  currency: string;
  /** UI amount (exact decimal, at most the currency decimals) */
  amount?: number;
  /** base units as a decimal string */
  amountBaseUnits?: string;
  destination: string;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function parseAmount(input: WithdrawInput, cur: CustodyCurrency): bigint {
  if ((input.amount === undefined) === (input.amountBaseUnits === undefined)) {
    throw custodyErrors.field('body.amount', 'invalid_union', 'give exactly one of amount (UI units) or amount_base_units');
  }
  if (input.amountBaseUnits !== undefined) {
    const v = BigInt(input.amountBaseUnits);
    if (v <= 0n) throw custodyErrors.field('body.amount_base_units', 'not_positive', 'must be greater than 0');
    return v;
  }
  const r = toBaseUnits(input.amount!, cur.decimals);
  if (!r.ok) throw custodyErrors.field('body.amount', r.code, r.message);
  return r.value;
}

export function withdrawals(c: CustodyContext, deps: { transfers: Pick<ProcessTransfers, 'processAsync'> }) {
  function withdrawalView(t: TransferRecord): WithdrawalView {
    const decimals = currencyByMint(c, t.mint)?.decimals ?? 0;
    return {
      withdrawal_id: t.id,
      currency: t.currency,
      mint: t.mint,
      amount: toUiNumber(t.amount, decimals),
      amount_base_units: t.amount.toString(),
      fee_base_units: t.fee.toString(),
      total_debited_base_units: (t.amount + t.fee).toString(),
      destination: t.destination,
      destination_token_account: t.destinationTokenAccount,
      status: t.status,
      signature: t.signature,
      slot: t.slot,
      failure_reason: t.status === 'failed' ? t.error : null,
      created_at: t.createdAt.toISOString(),
      updated_at: t.updatedAt.toISOString(),
      confirmed_at: t.status === 'confirmed' ? iso(t.settledAt) : null,
    };
  }

  return {
    withdrawalView,

    /**
     * Validate, hold and queue a withdrawal; returns it in status pending (processing continues in the
     * background: `processAsync`). Errors: 400 validation-error (`body.currency` unsupported,
     * `body.amount` missing / not positive / too many decimals / below the minimum,
     * `body.destination` a custodial address, a token account or mint, a program, or a wallet without an
     * associated token account of the currency: `token_account_missing`); 409 insufficient-funds (amount +
     * fee > available); 429 rate-limited (CUSTODY_WITHDRAWAL_DAILY_LIMIT); 503 chain-unavailable (destination
     * check) or service-unavailable (the daily chain budget is spent).
     */
    async withdraw(userId: string, input: WithdrawInput): Promise<TransferRecord> {
      const cur = currencyByCode(c, input.currency);
      if (!cur) throw custodyErrors.unsupportedCurrency('body.currency', input.currency, c.currencies);
      const amount = parseAmount(input, cur);
      if (amount < cur.minWithdrawal) {
        throw custodyErrors.field('body.amount', 'below_minimum', `must be at least ${formatUiAmount(cur.minWithdrawal, cur.decimals)} ${cur.code}`);
      }
      const destination = input.destination;
      if (destination === c.chain.hotWallet || (await c.repo.addressByOwner(destination))) {
        throw custodyErrors.field('body.destination', 'custodial_address', 'is an address of this service; withdraw to a wallet you control');
      }
      const kind = await c.chain.accountKind(destination);
      if (kind === 'token') {
        throw custodyErrors.field('body.destination', 'token_account', 'is a token account or mint; give the owner wallet address instead');
      }
      if (kind === 'program') throw custodyErrors.field('body.destination', 'program_account', 'is a program, not a wallet');
      // the service never pays the rent of a destination's token account: its owner could close it and keep
      // the rent, once per withdrawal (docs/threat-model.md#who-pays-for-what-on-chain); the owner creates it first
      const destinationTokenAccount = c.chain.tokenAccount(destination, cur.mint, cur.tokenProgram);
      if ((await c.chain.accountKind(destinationTokenAccount)) !== 'token') {
        throw custodyErrors.field(
          'body.destination',
          'token_account_missing',
          `has no ${cur.code} token account: create its associated token account ${destinationTokenAccount} first (the service does not pay its rent)`,
        );
      }
      const total = amount + cur.withdrawalFee;
      const [bal] = (await c.ledger.userBalances(userId)).filter((b) => b.mint === cur.mint);
      if ((bal?.available ?? 0n) < total) throw custodyErrors.insufficientFunds(cur, bal?.available ?? 0n, amount, cur.withdrawalFee);
      // its network fee: within the account's daily cap of withdrawals and the daily budget (429 / 503)
      await c.budget?.charge({ action: 'withdrawal', lamports: CUSTODY_TX_LAMPORTS, userId });
      const t = await c.repo
        .createTransfer(
          {
            kind: 'withdrawal',
            userId,
            currency: cur.code,
            mint: cur.mint,
            amount,
            fee: cur.withdrawalFee,
            destination,
            destinationTokenAccount,
          },
          (id) => holdEntry({ id, kind: 'withdrawal', userId, mint: cur.mint, amount, fee: cur.withdrawalFee }),
        )
        .catch((err) => {
          // the balance moved between the read and the locked hold (a concurrent withdrawal won)
          if (err instanceof DomainError && err.slug === 'insufficient-funds') throw custodyErrors.insufficientFunds(cur, null, amount, cur.withdrawalFee);
          throw err;
        });
      c.log.info({ transfer_id: t.id, user_id: userId, amount: amount.toString(), mint: cur.mint }, 'custody: withdrawal held');
      deps.transfers.processAsync(t.id);
      return t;
    },

    /** The caller's withdrawal; 404 not-found for another user's or an unknown id. */
    async getWithdrawal(userId: string, id: string): Promise<TransferRecord> {
      const t = await c.repo.getTransfer(id);
      if (!t || t.kind !== 'withdrawal' || t.userId !== userId) throw new DomainError('not-found', `Withdrawal ${id} not found.`);
      return t;
    },

    /** The caller's withdrawals, newest first, cursor pagination. */
    async listWithdrawals(userId: string, limit: number, cursor?: string): Promise<{ data: WithdrawalView[]; next_cursor: string | null }> {
      const spec = { sort: 'created_desc', filters: { what: 'withdrawals' }, keys: [cursorKey.timestamp] };
      const after = cursor ? afterOf(decodeCursor(cursor, spec)) : undefined;
      const page = newestPage(await c.repo.listForUser(userId, 'withdrawal', limit + 1, after), limit, spec);
      return { data: page.items.map((t) => withdrawalView(t)), next_cursor: page.nextCursor };
    },
  };
}
