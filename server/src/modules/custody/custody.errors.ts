/**
 * Custody errors in the contract's problem vocabulary (contract/src/problems.ts):
 * 404 custody-disabled, 400 validation-error with field paths, 409 insufficient-funds.
 */
import { DomainError } from '../../errors.js';
import { formatUiAmount } from '../../lib/money.js';
import type { CustodyCurrency } from './custody.types.js';

export const custodyErrors = {
  /** 404: the operator runs the service without custodial accounts (CUSTODY_ENABLED=false). */
  disabled: () =>
    new DomainError(
      'custody-disabled',
      'Custodial accounts are disabled on this service (CUSTODY_ENABLED=false): pay from your own wallet; nothing is deposited or withdrawn.',
    ),
  /** 400 validation-error on one field (`path` like "body.amount"; `code` machine-readable). */
  field: (path: string, code: string, message: string) =>
    new DomainError('validation-error', `${path.replace(/^body\./, '')} ${message}.`, { errors: [{ path, message, code }] }),
  unsupportedCurrency: (path: string, code: string, currencies: CustodyCurrency[]) =>
    custodyErrors.field(path, 'unsupported_currency', `${code} is not held in custody (one of ${currencies.map((c) => c.code).join(', ')})`),
  /** 409: amount + fee exceed the available custodial balance (`available` null when unknown). */
  insufficientFunds: (cur: CustodyCurrency, available: bigint | null, amount: bigint, fee: bigint) =>
    new DomainError(
      'insufficient-funds',
      `The custodial ${cur.code} balance${available === null ? '' : ` (${formatUiAmount(available, cur.decimals)})`} does not cover ` +
        `${formatUiAmount(amount, cur.decimals)}${fee > 0n ? ` + ${formatUiAmount(fee, cur.decimals)} fee` : ''} ${cur.code}.`,
      {
        currency: cur.code,
        required_base_units: (amount + fee).toString(),
        ...(available === null ? {} : { available_base_units: available.toString() }),
      },
    ),
};
