/**
 * Wallet: balances of the caller's wallet and, only where the service runs custodial accounts
 * (configuration; off by default), deposits and withdrawals. Without custody, deposit and withdraw
 * answer 404 custody-disabled and balances are read from the chain.
 */
import { z } from 'zod';
import { BaseUnits, c, CurrencyCode, IdempotencyHeaders, named, Pubkey, Timestamp, TxSignature, UiAmount, Uuid } from './common';
import { bodyProblems, routeErrors } from './problems';

export const Balance = named(
  'Balance',
  z.object({
    currency: CurrencyCode,
    mint: Pubkey.nullable().describe('SPL mint; null for native SOL'),
    amount_base_units: BaseUnits,
    decimals: z.number().int().min(0).max(18),
    ui_amount: z.number().describe('amount_base_units / 10^decimals (display only)'),
    source: z.enum(['chain', 'custodial']),
  }),
);

export const Balances = named(
  'Balances',
  z.object({
    wallet: Pubkey,
    balances: z.array(Balance),
  }),
  'Per-currency balances: native SOL and each configured currency on chain, plus custodial balances if enabled',
);
export type Balances = z.infer<typeof Balances>;

export const CreateDepositBody = z
  .object({ currency: CurrencyCode.optional().describe('Currency to deposit; any configured currency when absent') })
  .strict();

export const Deposit = named(
  'Deposit',
  z.object({
    currency: CurrencyCode.nullable(),
    address: Pubkey.describe('Deposit address (the user\'s custodial account owner; send SPL tokens to its ATA)'),
    mint: Pubkey.nullable(),
    instructions: z.string().describe('Human-readable deposit instructions'),
    solana_pay_url: z.string().startsWith('solana:').optional().describe('Solana Pay transfer-request link'),
  }),
);
export type Deposit = z.infer<typeof Deposit>;

export const CreateWithdrawalBody = z
  .object({
    currency: CurrencyCode,
    amount: UiAmount.describe('> 0, UI units, at most the currency decimals'),
    destination: Pubkey.describe('Wallet that receives the tokens (its associated token account)'),
  })
  .strict();
export type CreateWithdrawalBody = z.infer<typeof CreateWithdrawalBody>;

export const Withdrawal = named(
  'Withdrawal',
  z.object({
    withdrawal_id: Uuid,
    currency: CurrencyCode,
    mint: Pubkey,
    amount: z.number(),
    amount_base_units: BaseUnits,
    destination: Pubkey,
    status: z.enum(['pending', 'submitted', 'confirmed', 'failed']),
    signature: TxSignature.nullable(),
    created_at: Timestamp,
  }),
);
export type Withdrawal = z.infer<typeof Withdrawal>;

const getBalances = routeErrors('user', ['chain-unavailable']);
const createDeposit = routeErrors('user', [...bodyProblems, 'custody-disabled']);
const createWithdrawal = routeErrors(
  'user',
  [
    ...bodyProblems,
    'idempotency-key-missing',
    'custody-disabled',
    'insufficient-funds',
    'idempotency-key-in-use',
    'idempotency-key-reused',
  ],
  { idempotent: true },
);

export const wallet = c.router({
  getBalances: {
    method: 'GET',
    path: '/wallet/balances',
    summary: 'Get the caller\'s balances',
    description:
      'Balances of the caller\'s wallet per currency: native SOL and each configured currency read from the ' +
      'chain (source "chain"), plus custodial balances (source "custodial") when custody is enabled. 503 ' +
      'chain-unavailable when the RPC cannot be reached.',
    responses: { 200: Balances, ...getBalances.responses },
    metadata: getBalances.metadata,
  },
  createDeposit: {
    method: 'POST',
    path: '/wallet/deposit',
    summary: 'Get deposit instructions (custodial only)',
    description:
      'Only when custody is enabled (404 custody-disabled otherwise): the address to send funds to and ' +
      'instructions. Deposits are credited after confirmation on chain.',
    body: CreateDepositBody,
    responses: { 200: Deposit, ...createDeposit.responses },
    metadata: createDeposit.metadata,
  },
  createWithdrawal: {
    method: 'POST',
    path: '/wallet/withdraw',
    headers: IdempotencyHeaders,
    summary: 'Withdraw custodial funds (custodial only)',
    description:
      'Only when custody is enabled (404 custody-disabled otherwise). Requires Idempotency-Key. Debits the ' +
      'custodial balance (409 insufficient-funds) and queues an on-chain transfer to `destination`; 202 with ' +
      'the withdrawal in status pending. amount > 0 in UI units with at most the currency decimals.',
    body: CreateWithdrawalBody,
    responses: { 202: Withdrawal, ...createWithdrawal.responses },
    metadata: createWithdrawal.metadata,
  },
});
