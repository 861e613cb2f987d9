/** TipRecord -> the contract's Tip (also the `data` of tip.received events). */
import type { Tip } from '@bazaar/contract';
import { toUiNumber } from '../../lib/money.js';
import type { TipRecord } from './tips.types.js';

export function presentTip(t: TipRecord): Tip {
  return {
    tip_id: t.id,
    order_id: t.orderId,
    buyer_wallet: t.buyerWallet,
    seller_wallet: t.sellerWallet,
    currency: t.currency,
    mint: t.mint,
    amount: toUiNumber(t.amount, t.decimals),
    amount_base_units: t.amount.toString(),
    source_token_account: t.sourceTokenAccount,
    destination_token_account: t.destinationTokenAccount,
    status: t.status,
    signature: t.signature,
    expires_at: t.validUntil.toISOString(),
    created_at: t.createdAt.toISOString(),
    confirmed_at: t.confirmedAt ? t.confirmedAt.toISOString() : null,
  };
}
