/**
 * Integrity check: every order's database state against its escrow account on chain.
 *
 *  - in_progress / delivered / disputed: the order account exists, its state is funded / delivered /
 *    disputed, and its terms (buyer, seller, mint, amount) are the order's;
 *  - awaiting_payment: no account yet (an account = a payment the watcher has not picked up);
 *  - completed / resolved / refunded / expired: no account (an account = money in escrow for an order
 *    the database calls closed, e.g. a re-funded closed order not refunded yet);
 *  - an order flagged for an operator (`attention`) is reported as such.
 * Meant for quiet moments (end of the end-to-end suites, an operator's check): an action in flight
 * shows as a transient mismatch. Reads only; amounts are base units.
 */
import { escrowStateOf, type OrderStatus } from './order-state.js';
import type { EscrowOrderView, EscrowPort, OrderRecord, OrdersRepo } from './orders.types.js';

export interface IntegrityMismatch {
  orderId: string;
  status: OrderStatus;
  /** what the database implies for the escrow account */
  expected: string;
  /** what the chain shows */
  found: string;
}

export interface IntegrityReport {
  checked: number;
  mismatches: IntegrityMismatch[];
}

const ACCOUNT_STATE: Partial<Record<OrderStatus, EscrowOrderView['state']>> = {
  in_progress: 'funded',
  delivered: 'delivered',
  disputed: 'disputed',
};

/** One order against its escrow account (null: consistent). */
export function compareOrderWithEscrow(order: OrderRecord, view: EscrowOrderView | null): IntegrityMismatch | null {
  const wanted = ACCOUNT_STATE[order.status];
  const at = (expected: string, found: string): IntegrityMismatch => ({ orderId: order.id, status: order.status, expected, found });
  if (order.attention) return at('no operator flag', `attention ${order.attention.reason}: ${order.attention.detail}`);
  if (!wanted) return view ? at(`no escrow account (${escrowStateOf[order.status]})`, `account in state ${view.state} holding ${view.amount}`) : null;
  if (!view) return at(`account in state ${wanted}`, 'no escrow account');
  if (view.state !== wanted) return at(`account in state ${wanted}`, `account in state ${view.state}`);
  const terms = (v: { buyer: string; seller: string; mint: string; amount: bigint }) => `${v.buyer}/${v.seller}/${v.mint}/${v.amount}`;
  const mine = terms({ buyer: order.buyerWallet, seller: order.sellerWallet, mint: order.mint, amount: order.amount });
  if (terms(view) !== mine) return at(`terms ${mine}`, `terms ${terms(view)}`);
  return null;
}

/** Check every order (keyset pages of `pageSize`). Throws chain-unavailable when the RPC is down. */
export async function checkEscrowIntegrity(deps: { repo: Pick<OrdersRepo, 'scan'>; escrow: Pick<EscrowPort, 'fetchOrder'> }, pageSize = 100): Promise<IntegrityReport> {
  const out: IntegrityReport = { checked: 0, mismatches: [] };
  let after: string | null = null;
  for (;;) {
    const page = await deps.repo.scan(after, pageSize);
    if (!page.length) return out;
    for (const order of page) {
      out.checked++;
      const mismatch = compareOrderWithEscrow(order, await deps.escrow.fetchOrder(order.id));
      if (mismatch) out.mismatches.push(mismatch);
    }
    after = page[page.length - 1]!.id;
  }
}
