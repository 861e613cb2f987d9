/**
 * Pure unit tests of chain/errors.ts (RPC failure and program error translation). The exact decimal
 * parser they once shared this file with is lib/money.ts `parseUnits` (server/src/lib/money.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { DomainError } from '../server/src/errors';
import { isNetworkError, parseLogs, parseTransactionError, translateChainError } from '../server/src/chain/errors';

const ESCROW = 'AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r';
const TOKEN = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
const ctx = { programId: ESCROW, programErrors: new Map([[6003, 'MintNotAllowed'], [6010, 'OrderNotFunded']]) };

const ext = (e: DomainError) => (e as unknown as { extensions?: Record<string, unknown> }).extensions ?? {};
const slug = (e: DomainError) => (e as unknown as { slug: string }).slug;

describe('RPC failures -> chain-unavailable', () => {
  it('recognises refused connections, DNS failures, fetch failures and timeouts', () => {
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }) });
    expect(isNetworkError(refused)).toBe(true);
    expect(isNetworkError(new Error('failed to get recent blockhash: TypeError: fetch failed'))).toBe(true);
    expect(isNetworkError(Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }))).toBe(true);
    expect(isNetworkError(new Error('503 Service Unavailable:  '))).toBe(true);
    expect(isNetworkError(new Error('custom program error: 0x1'))).toBe(false);
    const e = translateChainError(refused, { action: 'reading balances' });
    expect(e).toBeInstanceOf(DomainError);
    expect(slug(e)).toBe('chain-unavailable');
  });

  it('passes DomainErrors through unchanged', () => {
    const d = new DomainError('not-found', 'x');
    expect(translateChainError(d)).toBe(d);
  });
});

describe('program errors -> chain-transaction-failed with the Anchor error name', () => {
  it('reads AnchorError lines from preflight logs', () => {
    const logs = [
      `Program ${ESCROW} invoke [1]`,
      'Program log: Instruction: Fund',
      'Program log: AnchorError thrown in programs/escrow/src/instructions/fund.rs:73. Error Code: DeliveryDeadlineInPast. Error Number: 6005. Error Message: The delivery deadline is in the past.',
      `Program ${ESCROW} failed: custom program error: 0x1775`,
    ];
    expect(parseLogs(logs, ctx)).toMatchObject({ program_error: 'DeliveryDeadlineInPast', program_error_code: 6005 });
    const e = translateChainError(Object.assign(new Error('Simulation failed.'), { logs }), ctx);
    expect(slug(e)).toBe('chain-transaction-failed');
    expect(ext(e)).toMatchObject({ program_error: 'DeliveryDeadlineInPast', program_error_code: 6005 });
    expect(ext(e).logs).toHaveLength(4);
  });

  it('reads Anchor account-constraint errors', () => {
    const logs = ['Program log: AnchorError caused by account: order. Error Code: AccountNotInitialized. Error Number: 3012. Error Message: The program expected this account to be already initialized.'];
    expect(parseLogs(logs, ctx)).toMatchObject({ program_error: 'AccountNotInitialized', program_error_code: 3012 });
  });

  it('attributes custom codes to the failing program: escrow IDL errors vs SPL Token errors', () => {
    expect(parseLogs([`Program ${TOKEN} failed: custom program error: 0x1`], ctx)).toMatchObject({ program_error: 'InsufficientFunds', program_id: TOKEN });
    expect(parseLogs([`Program ${ESCROW} failed: custom program error: 0x1773`], ctx)).toMatchObject({ program_error: 'MintNotAllowed', program_error_code: 6003 });
    expect(parseTransactionError({ InstructionError: [1, { Custom: 6010 }] }, ctx, [TOKEN, ESCROW])).toMatchObject({
      program_error: 'OrderNotFunded',
      instruction_index: 1,
    });
    expect(parseTransactionError({ InstructionError: [0, { Custom: 1 }] }, ctx, [TOKEN])).toMatchObject({ program_error: 'InsufficientFunds' });
    expect(parseTransactionError({ InstructionError: [0, { Custom: 2006 }] }, ctx, [ESCROW])).toMatchObject({ program_error: 'ConstraintSeeds' });
    expect(parseTransactionError('AccountNotFound')).toEqual({ program_error: 'AccountNotFound' });
  });
});

describe('runtime transaction errors', () => {
  it('names the runtime error of a failed preflight without program logs', () => {
    const e = translateChainError(
      new Error('failed to send transaction: Transaction simulation failed: Attempt to debit an account but found no record of a prior credit.'),
    );
    expect(slug(e)).toBe('chain-transaction-failed');
    expect(ext(e)).toMatchObject({ program_error: 'AccountNotFound' });
    expect(ext(translateChainError(new Error('Transaction simulation failed: Blockhash not found')))).toMatchObject({ program_error: 'BlockhashNotFound' });
    expect(ext(translateChainError(new Error('something odd')))).toMatchObject({ program_error: 'TransactionFailed' });
  });
});
