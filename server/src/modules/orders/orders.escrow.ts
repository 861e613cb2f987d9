/**
 * Adapter: chain/escrow.ts EscrowClient -> the orders module's EscrowPort.
 */
import { PublicKey } from '@solana/web3.js';
import type { EscrowClient, EscrowOrder, PayeeAccountPolicy } from '../../chain/escrow.js';
import type { EscrowSettlement } from '../../chain/settlement.js';
import type { EscrowOrderView, EscrowPort, Log, OrderSettlement, SendOptions } from './orders.types.js';

/** The chain's settlement record as the orders module stores it (payout per role + the buyer's token account). */
export function toOrderSettlement(s: EscrowSettlement): OrderSettlement {
  return {
    instruction: s.instruction,
    signature: s.signature,
    slot: s.slot,
    ...(s.buyerBps !== undefined ? { buyerBps: s.buyerBps } : {}),
    payout: { ...s.paid, buyerTokenAccount: s.accounts.buyer, verified: s.verified },
  };
}


/** `log`: where the order-account subscription reports going down and coming back. */
/** The escrow client's decoded order account as the orders module sees it. */
export function toEscrowOrderView(a: EscrowOrder): EscrowOrderView {
  return {
    buyer: a.buyer,
    seller: a.seller,
    mint: a.mint,
    amount: a.amount,
    state: a.state,
    feeBps: a.feeBps,
    fundedAt: a.fundedAt,
    deliveryDeadline: a.deliveryDeadline,
    deliveredAt: a.deliveredAt,
    disputedAt: a.disputedAt,
    reviewWindow: a.reviewWindow,
  };
}

/**
 * What the orders module needs of the budget module (modules/budget `ChainBudget`): the policy for a
 * payee's missing token account (the service pays the rent of the treasury's and, once per wallet and
 * mint, of a seller's; never of a buyer's: docs/threat-model.md#who-pays-for-what-on-chain) and the count of the payout transactions.
 */
export interface OrdersBudget {
  sponsorPayeeAccount: PayeeAccountPolicy;
  record(c: { action: 'order_transaction'; lamports: number }): Promise<void>;
}

/** Network fee of one service-signed order transaction (lamports; one signature). */
const ORDER_TX_LAMPORTS = 5_000;

export function escrowPort(client: EscrowClient, opts: { feeBpsTtlMs?: number; log?: Log; budget?: OrdersBudget } = {}): EscrowPort {
  let fee: { bps: number; at: number } | null = null;
  const ttl = opts.feeBpsTtlMs ?? 60_000;
  const budget = opts.budget;
  const o = (s?: SendOptions) => ({
    ...(s?.onSigned ? { onSigned: s.onSigned } : {}),
    ...(s?.distinctFrom ? { distinctFrom: s.distinctFrom } : {}),
    ...(budget ? { payeeAccounts: budget.sponsorPayeeAccount } : {}),
  });
  return {
    addresses: (orderId, mint, tokenProgram) => client.addresses(orderId, mint, tokenProgram),
    buildFundTransaction: async (t, b) => {
      const built = await client.buildFundTransaction(t, b?.sponsor ? { sponsor: new PublicKey(b.sponsor) } : {});
      return { transaction: built.transaction, validUntil: built.validUntil };
    },
    submitSignedTransaction: (b64) => client.submitSignedTransaction(b64),
    send: async (ix, id, s) => {
      const args = {
        ...(s?.buyerBps !== undefined ? { buyerBps: s.buyerBps } : {}),
        ...(s?.expiresAt !== undefined ? { expiresAt: s.expiresAt } : {}),
        ...(s?.proposedBy !== undefined ? { proposedBy: s.proposedBy } : {}),
        ...(s?.newDeadline !== undefined ? { newDeadline: s.newDeadline } : {}),
      };
      // the agreement instructions (request_revision, extend_deadline, propose/accept/withdraw_settlement) take
      // their arguments here (escrow v2, i24-design section 5); the platform signs for the calling party
      const tx = await client.orderInstruction(ix, id, { ...o(s), ...args });
      // counted, never refused: payouts move users' money; the platform fee pays for them (docs/threat-model.md#who-pays-for-what-on-chain)
      await budget?.record({ action: 'order_transaction', lamports: ORDER_TX_LAMPORTS }).catch((err) => opts.log?.warn({ err }, 'chain budget: order transaction not counted'));
      return tx;
    },
    fetchOrder: async (id) => {
      const a = await client.fetchOrder(id);
      return a ? toEscrowOrderView(a) : null;
    },
    fetchOrders: async (ids) => {
      const accounts = await client.fetchOrders(ids);
      return new Map([...accounts].map(([id, a]) => [id, a ? toEscrowOrderView(a) : null]));
    },
    signatureStatus: (sig) => client.signatureStatus(sig),
    watchOrders: (handlers, w) =>
      client.watchOrders({ ...handlers, onOrder: (id, slot, a) => handlers.onOrder(id, slot, a ? toEscrowOrderView(a) : null) }, { ...w, log: opts.log }),
    transactionOutcome: (attempt) => client.transactionOutcome(attempt),
    tokenBalance: (account) => client.tokenBalance(account),
    fundingNeeds: (terms, b) => client.fundingNeeds(terms, b?.sponsor ? { sponsor: new PublicKey(b.sponsor) } : {}),
    tokenProgramOf: async (mint) => (await client.tokenProgramOf(mint)).toBase58(),
    findSettlement: async (order, signature) => {
      const s = await client.findSettlement(order.id, order.mint, signature ? { signature } : {});
      return s ? toOrderSettlement(s) : null;
    },
    findFundSignature: async (id) => {
      const sigs = await client.connection.getSignaturesForAddress(client.orderAddress(id), { limit: 20 }, 'confirmed');
      const ok = sigs.filter((x) => !x.err);
      const oldest = ok[ok.length - 1];
      return oldest ? { signature: oldest.signature, slot: oldest.slot } : null;
    },
    feeBps: async () => {
      if (fee && Date.now() - fee.at < ttl) return fee.bps;
      const cfg = await client.fetchConfig();
      fee = { bps: cfg?.feeBps ?? 0, at: Date.now() };
      return fee.bps;
    },
    chainNow: () => client.chainNow(),
  };
}
