import { DomainError } from '../../errors.js';
import type { TipRefusal } from './eligibility.js';

/** Tip errors in the contract's problem vocabulary (contract/src/problems.ts). */
export const tipErrors = {
  /** unknown order or tip, or the caller is no party of the order (existence not disclosed) */
  notFound: (what: string) => new DomainError('not-found', `${what} not found.`),
  notBuyer: () => new DomainError('forbidden', 'Only the buyer of an order may tip its seller.'),
  refused: (why: TipRefusal, orderId: string, status?: string) =>
    new DomainError(
      'tip-not-allowed',
      why === 'custodial'
        ? `Order ${orderId} was paid from the custodial balance; a tip is a transfer the buyer wallet signs: tip from a wallet order.`
        : `Order ${orderId} has not paid its seller yet (${status ?? 'open'}); a tip follows a completed order or a settled milestone with a seller payout.`,
      { why, ...(status ? { order_status: status } : {}) },
    ),
  tooManyPending: (orderId: string, limit: number) =>
    new DomainError('tip-not-allowed', `Order ${orderId} has ${limit} tips awaiting their transaction already; send or let one expire first.`, {
      why: 'too_many_pending',
      limit,
    }),
  aboveMaximum: (max: { amount: string; baseUnits: bigint; currency: string; percent: number }) =>
    new DomainError('tip-not-allowed', `A tip is at most ${max.percent} % of the order's amount: ${max.amount} ${max.currency}.`, {
      why: 'above_maximum',
      max_amount: max.amount,
      max_amount_base_units: max.baseUnits.toString(),
    }),
  expired: (tipId: string) =>
    new DomainError('tip-not-allowed', `Tip ${tipId} expired: its transaction can no longer land. Tip again.`, { why: 'expired' }),
  invalidAmount: (code: string, message: string) =>
    new DomainError('validation-error', `body.amount ${message}`, { errors: [{ path: 'body.amount', message, code }] }),
  transactionMismatch: (why: string) =>
    new DomainError('validation-error', `signed_transaction is not the transaction issued for this tip: ${why}`, {
      errors: [{ path: 'body.signed_transaction', message: why, code: 'transaction_mismatch' }],
    }),
};
