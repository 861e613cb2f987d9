/**
 * Wallet: balances of the caller's wallet and, only where the service runs custodial accounts
 * (configuration; off by default), deposits and withdrawals. Without custody, deposit and withdraw
 * answer 404 custody-disabled and balances are read from the chain.
 */
import { z } from 'zod';
import {
  BaseUnits,
  c,
  CurrencyCode,
  IdempotencyHeaders,
  named,
  page,
  PaginationQuery,
  Pubkey,
  Timestamp,
  TxSignature,
  ExplorerUrl,
  UiAmount,
  Uuid,
} from './common.js';
import { access } from './access.js';
import { bodyProblems, routeErrors } from './problems.js';

export const Balance = named(
  'Balance',
  z.object({
    currency: CurrencyCode.describe(
      'Currency code as GET /currencies names it. Wrapped SOL is "SOL" like native SOL: the native line has ' +
        'mint null, the wrapped one (a wSOL token account, listed only when the wallet has one) the native mint',
    ),
    mint: Pubkey.nullable().describe('SPL mint; null for native SOL (lamports)'),
    mint_explorer_url: ExplorerUrl('the mint').nullable(),
    amount_base_units: BaseUnits.describe('chain: the wallet\'s balance; custodial: the available (spendable) balance'),
    decimals: z.number().int().min(0).max(18),
    ui_amount: z.number().describe('amount_base_units / 10^decimals (display only)'),
    source: z.enum(['chain', 'custodial']),
    held_base_units: BaseUnits.optional().describe(
      'custodial lines only: reserved for withdrawals in flight (amount + fee), not spendable',
    ),
    in_escrow_base_units: BaseUnits.optional().describe(
      'custodial lines only: paid from the custodial balance into escrows of orders not yet closed',
    ),
  }),
);

export type Balance = z.infer<typeof Balance>;

export const Balances = named(
  'Balances',
  z.object({
    wallet: Pubkey,
    balances: z.array(Balance),
  }),
  'Per-currency balances: native SOL and each configured currency on chain (source "chain"), then, when custody is ' +
    'enabled, one custodial line per custody currency (source "custodial")',
);
export type Balances = z.infer<typeof Balances>;

export const CreateDepositBody = named(
  'CreateDepositBody',
  z
    .object({ currency: CurrencyCode.optional().describe('Currency to deposit; all custody currencies when absent') })
    .strict(),
);

export const DepositMint = named(
  'DepositMint',
  z.object({
    currency: CurrencyCode,
    mint: Pubkey,
    mint_explorer_url: ExplorerUrl('the mint'),
    decimals: z.number().int().min(0).max(18),
    token_account: Pubkey.describe('Associated token account of the deposit address for this mint (where the tokens land)'),
    minimum: z.number().describe('Smallest credited transfer, UI units'),
    minimum_base_units: BaseUnits.describe('Smallest credited transfer; smaller transfers are recorded but not credited'),
  }),
  'A mint accepted for deposits',
);

export const Deposit = named(
  'Deposit',
  z.object({
    address: Pubkey.describe(
      'The caller\'s own deposit address (one per user, derived from the service seed with SLIP-0010 at ' +
        'm/44\'/501\'/{index}\'/0\', never reused): send SPL tokens to it (its associated token account)',
    ),
    currency: CurrencyCode.nullable().describe('The requested currency; null when none was given'),
    mint: Pubkey.nullable().describe('Mint of the requested currency; null when none was given'),
    mint_explorer_url: ExplorerUrl('the mint').nullable(),
    token_account: Pubkey.nullable().describe('The deposit address\'s token account for the requested currency; null when none was given'),
    accepted: z.array(DepositMint).describe('Mints credited at this address (only the requested one when `currency` was given)'),
    commitment: z
      .literal('finalized')
      .describe('Deposits are credited once their transaction is finalized (the localnet reports finalized at once)'),
    confirmations_required: z
      .number()
      .int()
      .describe('Confirmations behind a finalized block (32); about 15 s on mainnet'),
    instructions: z.string().describe('Human-readable deposit instructions'),
    solana_pay_url: z
      .string()
      .startsWith('solana:')
      .optional()
      .describe('Solana Pay transfer-request link (recipient = the deposit address, spl-token = the mint); only with `currency`'),
  }),
);
export type Deposit = z.infer<typeof Deposit>;

export const CreateWithdrawalBody = named(
  'CreateWithdrawalBody',
  z
    .object({
      currency: CurrencyCode,
      amount: UiAmount.optional().describe(
        'Amount to send in UI units (> 0, at most the currency decimals). Give exactly one of amount / amount_base_units.',
      ),
      amount_base_units: BaseUnits.optional().describe('Amount to send in base units (alternative to `amount`)'),
      destination: Pubkey.describe(
        'Wallet (owner) that receives the tokens in its associated token account (created when missing, the service ' +
          'pays). Not a token account or mint, not a program, not an address of this service.',
      ),
    })
    .strict(),
);
export type CreateWithdrawalBody = z.infer<typeof CreateWithdrawalBody>;

export const WITHDRAWAL_STATUSES = ['pending', 'submitted', 'confirmed', 'failed'] as const;

export const Withdrawal = named(
  'Withdrawal',
  z.object({
    withdrawal_id: Uuid,
    currency: CurrencyCode,
    mint: Pubkey,
    mint_explorer_url: ExplorerUrl('the mint'),
    amount: z.number().describe('UI amount sent to the destination'),
    amount_base_units: BaseUnits.describe('Base units sent to the destination'),
    fee_base_units: BaseUnits.describe('Flat withdrawal fee of the currency, debited on top of the amount'),
    total_debited_base_units: BaseUnits.describe('amount + fee: what leaves the custodial balance'),
    destination: Pubkey,
    destination_token_account: Pubkey.describe('Associated token account of the destination for the mint'),
    status: z
      .enum(WITHDRAWAL_STATUSES)
      .describe(
        'pending: held, not sent yet; submitted: signed and sent (signature known); confirmed: landed (terminal); ' +
          'failed: rejected or expired, the hold is back in the available balance (terminal)',
      ),
    signature: TxSignature.nullable().describe('The transfer transaction; set from status submitted on'),
    explorer_url: ExplorerUrl('the transfer transaction').nullable(),
    slot: z.number().int().min(0).nullable(),
    failure_reason: z.string().nullable().describe('Why it failed (status failed only)'),
    created_at: Timestamp,
    updated_at: Timestamp,
    confirmed_at: Timestamp.nullable(),
  }),
);
export type Withdrawal = z.infer<typeof Withdrawal>;

export const WithdrawalPage = named('WithdrawalPage', page(Withdrawal));

export const CustodyDeposit = named(
  'CustodyDeposit',
  z.object({
    deposit_id: Uuid,
    currency: CurrencyCode,
    mint: Pubkey,
    mint_explorer_url: ExplorerUrl('the mint'),
    amount: z.number().describe('UI amount received'),
    amount_base_units: BaseUnits,
    token_account: Pubkey.describe('The deposit address\'s token account that received it'),
    signature: TxSignature,
    explorer_url: ExplorerUrl('the transfer transaction'),
    slot: z.number().int().min(0),
    status: z
      .enum(['credited', 'below_minimum'])
      .describe('credited to the available balance, or below the currency minimum (not credited, left at the address)'),
    created_at: Timestamp.describe('When the service detected it'),
  }),
  'An incoming transfer detected at the caller\'s deposit address',
);

export type CustodyDeposit = z.infer<typeof CustodyDeposit>;
export const CustodyDepositPage = named('CustodyDepositPage', page(CustodyDeposit));

const WithdrawalIdParams = z.object({ withdrawal_id: Uuid });

const getBalances = routeErrors(access.user('wallet:read'), ['chain-unavailable']);
const createDeposit = routeErrors(access.user('wallet:write'), [...bodyProblems, 'custody-disabled', 'chain-unavailable']);
const createWithdrawal = routeErrors(
  access.user('wallet:write', { money: { capability: 'custody-withdrawal' } }),
  [
    ...bodyProblems,
    'idempotency-key-missing',
    'custody-disabled',
    'insufficient-funds',
    'idempotency-key-in-use',
    'idempotency-key-reused',
    'chain-unavailable',
  ],
  { idempotent: true },
);
const getWithdrawal = routeErrors(access.user('wallet:read'), ['custody-disabled', 'not-found']);
const listWithdrawals = routeErrors(access.user('wallet:read'), ['custody-disabled']);
const listDeposits = routeErrors(access.user('wallet:read'), ['custody-disabled']);

const custodyOnly = 'Only when custody is enabled (otherwise 404 custody-disabled, after the 401 checks). ';

export const wallet = c.router({
  getBalances: {
    method: 'GET',
    path: '/wallet/balances',
    summary: 'Get the caller\'s balances',
    description:
      'Balances of the caller\'s wallet per currency: native SOL and each configured currency read from the ' +
      'chain (source "chain"), then, when custody is enabled, the custodial balance of each custody currency ' +
      '(source "custodial": amount = available, plus held_base_units and in_escrow_base_units). 503 ' +
      'chain-unavailable when the RPC cannot be reached.',
    responses: { 200: Balances, ...getBalances.responses },
    metadata: getBalances.metadata,
  },
  createDeposit: {
    method: 'POST',
    path: '/wallet/deposit',
    summary: 'Get the caller\'s deposit address and instructions (custodial only)',
    description:
      custodyOnly +
      'Returns the caller\'s own deposit address (allocated on the first call, then always the same), the ' +
      'accepted mints with their token accounts and minimums, and the commitment awaited. A transfer of an ' +
      'accepted SPL token to the address is detected on chain, credited once to the available custodial ' +
      'balance when finalized, and swept to the service hot wallet. Transfers below the minimum and native SOL ' +
      'are not credited. 400 validation-error for a currency that is not held in custody.',
    body: CreateDepositBody,
    responses: { 200: Deposit, ...createDeposit.responses },
    metadata: createDeposit.metadata,
  },
  listDeposits: {
    method: 'GET',
    path: '/wallet/deposits',
    query: PaginationQuery,
    summary: 'List deposits detected at the caller\'s address (custodial only)',
    description: custodyOnly + 'Newest first; cursor pagination (limit 1..100, default 20).',
    responses: { 200: CustodyDepositPage, ...listDeposits.responses },
    metadata: listDeposits.metadata,
  },
  createWithdrawal: {
    method: 'POST',
    path: '/wallet/withdraw',
    headers: IdempotencyHeaders,
    summary: 'Withdraw custodial funds to a wallet (custodial only)',
    description:
      custodyOnly +
      'Requires Idempotency-Key (a replay returns the stored 202; 422 idempotency-key-reused with another ' +
      'body). Validates the request (400 validation-error with field paths: `body.currency` not a custody ' +
      'currency; `body.amount` missing, not positive, too many decimals or below the currency minimum; ' +
      '`body.destination` malformed, a token account or mint, a program or an address of this service), then ' +
      'holds amount + the flat fee of the currency from the available balance (409 insufficient-funds when it ' +
      'does not cover both; the balance never goes below zero, also under concurrent requests) and answers 202 ' +
      'with the withdrawal in status pending. The service then signs, records and sends the transfer and settles ' +
      'it once confirmed; a rejected or expired transaction releases the hold (status failed). Poll getWithdrawal.',
    body: CreateWithdrawalBody,
    responses: { 202: Withdrawal, ...createWithdrawal.responses },
    metadata: createWithdrawal.metadata,
  },
  listWithdrawals: {
    method: 'GET',
    path: '/wallet/withdrawals',
    query: PaginationQuery,
    summary: 'List the caller\'s withdrawals (custodial only)',
    description: custodyOnly + 'Newest first; cursor pagination (limit 1..100, default 20).',
    responses: { 200: WithdrawalPage, ...listWithdrawals.responses },
    metadata: listWithdrawals.metadata,
  },
  getWithdrawal: {
    method: 'GET',
    path: '/wallet/withdrawals/:withdrawal_id',
    pathParams: WithdrawalIdParams,
    summary: 'Get one of the caller\'s withdrawals (custodial only)',
    description: custodyOnly + 'Status, signature and amounts; 404 not-found for another user\'s or an unknown id.',
    responses: { 200: Withdrawal, ...getWithdrawal.responses },
    metadata: getWithdrawal.metadata,
  },
});
