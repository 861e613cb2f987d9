/**
 * The fund instruction carries the order's fund expiry as `expires_at` (issue 8 item 3): the program
 * refuses the co-signed terms after it. No RPC: the currencies are configured, so the token program
 * is known.
 */
import { randomUUID } from 'node:crypto';
import { BorshInstructionCoder, type Idl } from '@coral-xyz/anchor';
import { Connection, Keypair } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import escrowIdl from '@bazaar/escrow-idl';
import { EscrowClient } from '../server/src/chain/escrow.js';

const USDC = Keypair.generate().publicKey.toBase58();

function client(idl: Idl) {
  return new EscrowClient({
    connection: new Connection('http://127.0.0.1:1'),
    idl,
    service: Keypair.generate(),
    currencies: [{ code: 'USDC', mint: USDC, decimals: 6 }],
  });
}

const terms = (extra: { expiresAt: number }) => ({
  orderId: randomUUID(),
  buyer: Keypair.generate().publicKey.toBase58(),
  seller: Keypair.generate().publicKey.toBase58(),
  mint: USDC,
  amount: 5_000_000n,
  deliveryDeadline: 1_900_000_000,
  reviewWindow: 0,
  ...extra,
});

describe('fund instruction arguments', () => {
  it('the fund terms\' expiresAt is encoded as the instruction\'s expires_at (chain seconds)', async () => {
    const idl = escrowIdl as unknown as Idl;
    const { instruction } = await client(idl).fundInstruction(terms({ expiresAt: 1_800_000_900 }));
    const decoded = new BorshInstructionCoder(idl).decode(Buffer.from(instruction.data))!;
    expect(Object.keys(decoded.data as object).sort()).toEqual(['amount', 'delivery_deadline', 'expires_at', 'order_id', 'review_window']);
    expect(Number((decoded.data as { expires_at: { toString(): string } }).expires_at.toString())).toBe(1_800_000_900);
  });
});
