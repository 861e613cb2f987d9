/**
 * Tips (issue 24 item 8): after an order paid the seller, its buyer may tip the seller.
 *
 * A tip is a plain token transfer the buyer's wallet signs: `POST /orders/{order_id}/tips` records the tip
 * (status `pending`) and returns an unsigned transaction for the buyer's wallet (fee payer = the buyer):
 *  1. when the seller has no associated token account of the order's mint yet, the associated token account
 *     program's idempotent create, paid by the BUYER (never the service: docs/threat-model.md "Who pays for
 *     what on chain");
 *  2. for wrapped SOL, the buyer's own wSOL account is created if missing and the amount wrapped (as in the
 *     fund transaction), so the wallet only needs native SOL;
 *  3. SPL Token `transfer_checked` of exactly the tip from the buyer's associated token account to the
 *     seller's associated token account of the order's mint;
 *  4. an SPL Memo `bazaar:tip:<tip_id>` naming the tip.
 * It is valid until its blockhash expires (`transaction.expires_at`, about a minute). The buyer signs it and
 * submits it (`POST /orders/{order_id}/tips/{tip_id}/transaction`) or sends it herself.
 *
 * Why no escrow instruction: a tip is the buyer's own money paid to the seller at once. There is nothing to
 * hold, no deadline, no party whose consent is pending and no outcome to bound, which is what the escrow
 * program is for; a program instruction would add an account, rent and compute units for no one's
 * protection. No platform fee is taken on a tip.
 *
 * Confirmation comes from the chain only (server/src/chain/transaction-effects.ts): a tip is `confirmed` by
 * a successful transaction that carries its memo AND a real transfer of exactly `amount_base_units` of the
 * order's mint from a token account owned by the buyer wallet into the seller's token account (whose balance
 * rose by at least that much). The memo alone proves nothing (anyone can write one); a transfer of another
 * amount, from another owner or to another account confirms nothing; one transaction signature confirms one
 * tip only. The service checks after a submission and in a background pass (a tip the buyer sent herself is
 * seen too); a tip whose transaction's blockhash expired without such a transaction is `expired` (tip again).
 * `tip.received` is emitted to both parties when a tip is confirmed; the seller's profile counts confirmed
 * tips in `stats.tips_received`.
 *
 * Who may tip (eligibility): the buyer of an order that paid its seller: status completed, or resolved with a
 * share for the seller (a settled milestone with a seller payout, once orders have milestones). Custodial
 * orders (paid from the custodial balance): refused (409 tip-not-allowed, `why` custodial): a tip from the
 * custodial balance would be a payment no wallet signs (a money capability of its own); the buyer may tip
 * from a wallet order. The amount is positive, has at most the currency's decimals and is at most
 * TIP_MAX_PERCENT_OF_ORDER percent of the order's amount (default 100); at most 3 tips of an order may be
 * pending at once.
 */
import { z } from 'zod';
import { Base64, BaseUnits, c, CurrencyCode, IdempotencyHeaders, named, page, PaginationQuery, Pubkey, Timestamp, TxSignature, ExplorerUrl, UiAmount, Uuid } from './common.js';
import { access } from './access.js';
import { bodyProblems, routeErrors } from './problems.js';

export const TIP_STATUSES = ['pending', 'confirmed', 'expired'] as const;
export const TipStatus = z.enum(TIP_STATUSES);
export type TipStatus = z.infer<typeof TipStatus>;

/** Tip events (resource `tip`): `tip.received` when a tip is confirmed on chain (to the buyer and the seller). */
export const TIP_EVENTS = ['tip.received'] as const;

/** At most this many tips of one order may be pending (issued, not confirmed nor expired) at once. */
export const MAX_PENDING_TIPS_PER_ORDER = 3;

/** Memo text of a tip's transaction: `bazaar:tip:<tip_id>`. */
export const tipMemo = (tipId: string): string => `bazaar:tip:${tipId}`;

export const Tip = named(
  'Tip',
  z.object({
    tip_id: Uuid,
    order_id: Uuid,
    buyer_wallet: Pubkey.describe('The paying wallet (the order\'s buyer wallet)'),
    seller_wallet: Pubkey.describe('The payee (the order\'s seller wallet)'),
    currency: CurrencyCode,
    mint: Pubkey.describe('The order\'s payment mint'),
    mint_explorer_url: ExplorerUrl('the payment mint'),
    amount: z.number().describe('UI amount'),
    amount_base_units: BaseUnits,
    source_token_account: Pubkey.describe('The buyer\'s associated token account of the mint'),
    destination_token_account: Pubkey.describe('The seller\'s associated token account of the mint'),
    status: TipStatus.describe(
      'pending: issued, not seen on chain yet; confirmed: the transfer landed (signature); expired: its transaction can no longer land',
    ),
    signature: TxSignature.nullable().describe('The transaction that paid the tip (confirmed tips)'),
    explorer_url: ExplorerUrl('the transaction that paid the tip').nullable(),
    expires_at: Timestamp.describe('Until about then the issued transaction can land (its blockhash\'s lifetime)'),
    created_at: Timestamp,
    confirmed_at: Timestamp.nullable(),
  }),
  'A tip from an order\'s buyer to its seller',
);
export type Tip = z.infer<typeof Tip>;

export const TipTransaction = named(
  'TipTransaction',
  z.object({
    transaction: Base64.describe('Serialized unsigned transaction; fee payer = the buyer wallet (see the tips overview)'),
    expires_at: Timestamp.describe('Last moment the transaction can land (its blockhash expires)'),
  }),
);

export const TipWithPayment = named('TipWithPayment', Tip.extend({ payment: TipTransaction }), 'A new tip and the transaction that pays it');
export type TipWithPayment = z.infer<typeof TipWithPayment>;

export const CreateTipBody = named(
  'CreateTipBody',
  z
    .object({
      amount: UiAmount.describe(
        'UI amount in the order\'s currency: positive, at most its decimals, at most TIP_MAX_PERCENT_OF_ORDER % of the order\'s amount',
      ),
    })
    .strict(),
);
export type CreateTipBody = z.infer<typeof CreateTipBody>;

export const SubmitTipTransactionBody = named(
  'SubmitTipTransactionBody',
  z.object({ signed_transaction: Base64.describe('The tip transaction, signed by the buyer wallet') }).strict(),
);

export const TipPage = named('TipPage', page(Tip), 'Tips of an order, newest first');

const OrderIdParams = z.object({ order_id: Uuid });
const TipParams = z.object({ order_id: Uuid, tip_id: Uuid });

// the buyer's wallet signs the transfer: the signature, not the token, is the consent (no money scope)
const createTip = routeErrors(
  access.user('orders:write'),
  [
    ...bodyProblems,
    'idempotency-key-missing',
    'idempotency-key-in-use',
    'idempotency-key-reused',
    'forbidden',
    'not-found',
    'tip-not-allowed',
    'chain-unavailable',
  ],
  { actors: ['buyer'], idempotent: true },
);
const submitTipTransaction = routeErrors(
  access.user('orders:write'),
  [...bodyProblems, 'forbidden', 'not-found', 'tip-not-allowed', 'chain-unavailable', 'chain-transaction-failed'],
  { actors: ['buyer'] },
);
const listOrderTips = routeErrors(access.user('orders:read'), ['not-found'], { actors: ['buyer', 'seller', 'admin'] });

export const tips = c.router({
  createTip: {
    method: 'POST',
    path: '/orders/:order_id/tips',
    pathParams: OrderIdParams,
    headers: IdempotencyHeaders,
    summary: 'Tip the seller of an order',
    description:
      'Buyer only (403 forbidden for the seller; 404 not-found for others). Requires Idempotency-Key (a replay ' +
      'returns the stored 201). Records a pending tip and returns `payment`: an unsigned transaction for the buyer ' +
      'wallet (fee payer the buyer): the seller\'s associated token account created idempotently at the buyer\'s ' +
      'expense when missing, `transfer_checked` of the amount from the buyer\'s to the seller\'s associated token ' +
      'account of the order\'s mint, and the memo `bazaar:tip:<tip_id>`; valid until its blockhash expires ' +
      '(`payment.expires_at`). 409 tip-not-allowed (`why`): `not_paid_out` until the order paid its seller ' +
      '(completed, or resolved with a seller share), `custodial` for an order paid from the custodial balance, ' +
      '`too_many_pending` with 3 tips of the order pending, `above_maximum` above TIP_MAX_PERCENT_OF_ORDER % of ' +
      'the order\'s amount (`max_amount`). 400 validation-error for an amount of more decimals than the currency ' +
      'has (`too_many_decimals`) or not positive. The service confirms the tip from the chain (see the tips ' +
      'overview in the contract).',
    body: CreateTipBody,
    responses: { 201: TipWithPayment, ...createTip.responses },
    metadata: createTip.metadata,
  },
  submitTipTransaction: {
    method: 'POST',
    path: '/orders/:order_id/tips/:tip_id/transaction',
    pathParams: TipParams,
    summary: 'Submit the signed tip transaction',
    description:
      'Buyer only. Accepts exactly the transaction createTip issued for this tip, signed by the buyer wallet (400 ' +
      'validation-error otherwise), sends it, waits for confirmation and reads it back: the tip is confirmed only ' +
      'when the chain shows the transfer (see the tips overview). A repeat after confirmation returns the tip, ' +
      'nothing is sent. 409 tip-not-allowed (`why` expired) once the tip expired; 502 chain-transaction-failed when ' +
      'the cluster rejects it (e.g. the buyer lacks the tokens). Clients that send the transaction themselves need ' +
      'not call this: the service detects it.',
    body: SubmitTipTransactionBody,
    responses: { 200: Tip, ...submitTipTransaction.responses },
    metadata: submitTipTransaction.metadata,
  },
  listOrderTips: {
    method: 'GET',
    path: '/orders/:order_id/tips',
    pathParams: OrderIdParams,
    query: PaginationQuery,
    summary: 'List the tips of an order',
    description:
      'Buyer, seller or admin (404 not-found for others). Every tip of the order, pending, confirmed and expired, ' +
      'newest first; cursor pagination (limit 1..100, default 20).',
    responses: { 200: TipPage, ...listOrderTips.responses },
    metadata: listOrderTips.metadata,
  },
});
