/**
 * Adapter: chain/escrow.ts EscrowClient -> the orders module's EscrowPort.
 */
import type { BorshInstructionCoder } from '@coral-xyz/anchor';
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
        feeBps: a.feeBps,
        fundedAt: a.fundedAt,
        deliveryDeadline: a.deliveryDeadline,
        deliveredAt: a.deliveredAt,
        disputedAt: a.disputedAt,
        reviewWindow: a.reviewWindow,
      };
    },
    signatureStatus: (sig) => client.signatureStatus(sig),
    findClosingInstruction: async (id) => {
      const sigs = await client.connection.getSignaturesForAddress(client.orderAddress(id), { limit: 20 }, 'confirmed');
      for (const s of sigs) {
        if (s.err) continue;
        const tx = await client.connection.getTransaction(s.signature, { commitment: 'confirmed', maxSupportedTransactionVersion: 0 });
        if (!tx) continue;
        const msg = tx.transaction.message;
        const keys = msg.staticAccountKeys;
        for (const ix of msg.compiledInstructions) {
          if (!keys[ix.programIdIndex]?.equals(client.programId)) continue;
          const decoded = (client.program.coder.instruction as BorshInstructionCoder).decode(Buffer.from(ix.data));
          const name = decoded?.name.replace(/[A-Z]/g, (c: string) => `_${c.toLowerCase()}`);
          if (name === 'release' || name === 'claim' || name === 'refund' || name === 'resolve_dispute') {
            const data = decoded!.data as { buyerBps?: number; buyer_bps?: number };
            const bps = data.buyerBps ?? data.buyer_bps;
            return { instruction: name, signature: s.signature, slot: s.slot, ...(bps !== undefined ? { buyerBps: Number(bps) } : {}) };
          }
        }
      }
      return null;
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
