/**
 * Use case "fund custodial orders" (the orders module's `CustodialPaymentsPort`): the deposit address
 * as the on-chain buyer, the balance check, the order funding (hold available -> escrow, then the
 * record-before-send pipeline), and booking a closed order's escrow outcome into the ledger.
 */
import { DomainError } from '../../../errors.js';
import { closeEntry, holdEntry } from '../custody.entries.js';
import { custodyErrors } from '../custody.errors.js';
import type { OrderView, TransferRecord } from '../custody.types.js';
import { type CustodyContext, currencyByMint, depositAddress } from './context.js';
import type { ProcessTransfers } from './process-transfer.js';

const TERMINAL_ORDER = new Set(['completed', 'refunded', 'resolved']);

export function fundOrders(c: CustodyContext, deps: { transfers: Pick<ProcessTransfers, 'process'> }) {
  /** Base units of a closed custodial order paid to the buyer, the deposit key (see bookOrderOutcome). */
  async function buyerShare(order: Pick<OrderView, 'id' | 'status' | 'buyerBps' | 'payout'>, t: TransferRecord): Promise<bigint> {
    const payout = order.payout;
    if (!payout) {
      return order.status === 'refunded' ? t.amount : order.status === 'resolved' ? (t.amount * BigInt(order.buyerBps ?? 0)) / 10_000n : 0n;
    }
    if (payout.buyer === 0n) return 0n;
    const cur = currencyByMint(c, t.mint);
    const depositAta = c.chain.tokenAccount((await depositAddress(c, t.userId)).address, t.mint, cur?.tokenProgram);
    if (payout.buyerTokenAccount !== null && payout.buyerTokenAccount !== depositAta) {
      c.log.info(
        { order_id: order.id, paid_to: payout.buyerTokenAccount, deposit_token_account: depositAta, amount: payout.buyer.toString() },
        'custody: the buyer share of a custodial order went to another token account of the deposit key; credited, the sweep collects it',
      );
    }
    return payout.buyer;
  }

  return {
    /** The on-chain buyer of the user's custodial orders: the user's deposit address. */
    async buyerAddressFor(userId: string): Promise<string> {
      return (await depositAddress(c, userId)).address;
    },

    /** 409 insufficient-funds unless the user's available balance of `mint` covers `amount`; 400 for a non-custody mint. */
    async assertAvailable(userId: string, mint: string, amount: bigint): Promise<void> {
      const cur = currencyByMint(c, mint);
      if (!cur) throw custodyErrors.field('body.payment_source', 'unsupported_currency', 'the listing currency is not held in custody');
      const [bal] = (await c.ledger.userBalances(userId)).filter((b) => b.mint === mint);
      if ((bal?.available ?? 0n) < amount) throw custodyErrors.insufficientFunds(cur, bal?.available ?? 0n, amount, 0n);
    },

    /**
     * Fund `order`'s escrow from the buyer's custodial balance: hold (available -> escrow), then the
     * service's fund transaction (the deposit key is the on-chain buyer). Returns `funded` with the
     * signature, or `pending` when the outcome is not known yet (the reconciler finishes it).
     * Errors: 409 insufficient-funds (nothing held); 502 chain-transaction-failed (the hold is released).
     * Idempotent per order (a second call returns the existing funding's state).
     */
    async payOrder(order: OrderView): Promise<{ status: 'funded'; signature: string; slot: number | null } | { status: 'pending' }> {
      const cur = currencyByMint(c, order.mint);
      if (!cur) throw custodyErrors.field('body.payment_source', 'unsupported_currency', 'the listing currency is not held in custody');
      await depositAddress(c, order.buyerId);
      let t = await c.repo.transferForOrder(order.id);
      if (!t) {
        t = await c.repo.createTransfer(
          {
            kind: 'order_fund',
            userId: order.buyerId,
            currency: cur.code,
            mint: cur.mint,
            amount: order.amount,
            destination: c.chain.escrowAddress(order.id, cur.mint),
            destinationTokenAccount: c.chain.tokenAccount(c.chain.escrowAddress(order.id, cur.mint), cur.mint, cur.tokenProgram),
            orderId: order.id,
          },
          (id) => holdEntry({ id, kind: 'order_fund', userId: order.buyerId, mint: cur.mint, amount: order.amount, fee: 0n }),
        );
        c.log.info({ transfer_id: t.id, order_id: order.id }, 'custody: order funding held');
      }
      const out = t.status === 'pending' ? await deps.transfers.process(t.id) : { status: t.status, transfer: t };
      if (out.status === 'confirmed') return { status: 'funded', signature: out.transfer.signature!, slot: out.transfer.slot };
      if (out.status === 'failed') {
        throw out.error instanceof DomainError
          ? out.error
          : new DomainError('chain-transaction-failed', `The custodial payment failed: ${out.transfer.error ?? 'unknown error'}`);
      }
      return { status: 'pending' };
    },

    /**
     * Book the escrow outcome of a custodially funded order once it is terminal. The buyer's available
     * balance is credited exactly what the chain recorded as paid out of the order's vault to the buyer
     * (`order.payout`: the instruction acting on that order, its event and the vault transfers, never
     * another order's outcome in the same transaction), whichever token account received it: the
     * program pays the buyer only into a token account owned by `order.buyer` (refund and
     * resolve_dispute check it), which for a custodial order is the deposit key, so the tokens are the
     * user's wherever a seller sent them, and the sweep collects them from every token account of the
     * deposit key. Orders closed before payouts were recorded fall back to the status: refunded -> the
     * amount, resolved -> floor(amount * buyer_bps / 10000), completed -> nothing. Returns true when it
     * booked now.
     */
    async bookOrderOutcome(order: Pick<OrderView, 'id' | 'status' | 'buyerBps' | 'payout'>): Promise<boolean> {
      if (!TERMINAL_ORDER.has(order.status)) return false;
      const t = await c.repo.transferForOrder(order.id);
      if (!t || t.status !== 'confirmed' || t.closedAt) return false;
      const share = await buyerShare(order, t);
      const booked = await c.repo.markClosed(t.id, closeEntry(t, share), c.now());
      if (booked) c.log.info({ order_id: order.id, status: order.status, buyer_share: share.toString() }, 'custody: order escrow outcome booked');
      return booked;
    },
  };
}
