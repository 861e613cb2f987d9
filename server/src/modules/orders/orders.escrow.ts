/**
 * Adapter: chain/escrow.ts EscrowClient -> the orders module's EscrowPort.
 */
import type { EscrowClient } from '../../chain/escrow.js';
import type { EscrowPort, SendOptions } from './orders.types.js';

export function escrowPort(client: EscrowClient, opts: { feeBpsTtlMs?: number } = {}): EscrowPort {
  let fee: { bps: number; at: number } | null = null;
  const ttl = opts.feeBpsTtlMs ?? 60_000;
  const o = (s?: SendOptions) => (s?.onSigned ? { onSigned: s.onSigned } : {});
  return {
    addresses: (orderId, mint, tokenProgram) => client.addresses(orderId, mint, tokenProgram),
    buildFundTransaction: async (t) => (await client.buildFundTransaction(t)).transaction,
    submitSignedTransaction: (b64) => client.submitSignedTransaction(b64),
    markDelivered: (id, s) => client.markDelivered(id, o(s)),
    release: (id, s) => client.release(id, o(s)),
    claim: (id, s) => client.claim(id, o(s)),
    openDispute: (id, s) => client.openDispute(id, o(s)),
    resolveDispute: (id, bps, s) => client.resolveDispute(id, bps, o(s)),
    refund: (id, s) => client.refund(id, o(s)),
    fetchOrder: async (id) => {
      const a = await client.fetchOrder(id);
      if (!a) return null;
      return {
        buyer: a.buyer,
        seller: a.seller,
        mint: a.mint,
        amount: a.amount,
        state: a.state,
        fundedAt: a.fundedAt,
        deliveryDeadline: a.deliveryDeadline,
        deliveredAt: a.deliveredAt,
        disputedAt: a.disputedAt,
        reviewWindow: a.reviewWindow,
      };
    },
    signatureStatus: (sig) => client.signatureStatus(sig),
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
