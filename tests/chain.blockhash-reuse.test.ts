/**
 * One recent blockhash serves the fund transactions built within SOLANA_BLOCKHASH_REUSE_MS (chain/escrow.ts
 * recentBlockhash): concurrent builds share one getLatestBlockhash + getBlockHeight, a later one asks again,
 * validUntil counts from when the blockhash was asked for, a failed read is not kept, and 0 asks every time.
 */
import escrowIdl from '@bazaar/escrow-idl';
import type { Idl } from '@coral-xyz/anchor';
import { Keypair, type Connection } from '@solana/web3.js';
import { describe, expect, it } from 'vitest';
import { EscrowClient } from '../server/src/chain/escrow';

function fakeConnection() {
  const calls = { getLatestBlockhash: 0, getBlockHeight: 0 };
  const height = 1_000;
  let n = 0;
  let failNext = false;
  const connection = {
    rpcEndpoint: 'http://fake',
    async getLatestBlockhash() {
      calls.getLatestBlockhash += 1;
      await new Promise((r) => setTimeout(r, 20));
      if (failNext) {
        failNext = false;
        throw new TypeError('fetch failed');
      }
      n += 1;
      return { blockhash: `${'1'.repeat(31)}${n}`, lastValidBlockHeight: height + 150 };
    },
    async getBlockHeight() {
      calls.getBlockHeight += 1;
      return height;
    },
  };
  return { connection: connection as unknown as Connection, calls, failOnce: () => (failNext = true) };
}

const client = (connection: Connection, blockhashReuseMs?: number) =>
  new EscrowClient({ connection, idl: escrowIdl as unknown as Idl, service: Keypair.generate(), ...(blockhashReuseMs !== undefined ? { blockhashReuseMs } : {}) });

describe('recent blockhash reuse', () => {
  it('concurrent builds share one read; within the window the same blockhash; after it a new one', async () => {
    const f = fakeConnection();
    const escrow = client(f.connection, 200);
    const before = Date.now();
    const burst = await Promise.all(Array.from({ length: 10 }, () => escrow.recentBlockhash('test')));
    expect(f.calls).toEqual({ getLatestBlockhash: 1, getBlockHeight: 1 });
    expect(new Set(burst.map((b) => b.blockhash)).size).toBe(1);
    expect(burst[0]!.blocksLeft).toBe(150);
    expect(burst[0]!.askedAt).toBeGreaterThanOrEqual(before);
    const again = await escrow.recentBlockhash('test');
    expect(again).toBe(burst[0]);
    expect(f.calls.getLatestBlockhash).toBe(1);
    await new Promise((r) => setTimeout(r, 220));
    const later = await escrow.recentBlockhash('test');
    expect(later.blockhash).not.toBe(burst[0]!.blockhash);
    expect(later.askedAt).toBeGreaterThan(burst[0]!.askedAt);
    expect(f.calls.getLatestBlockhash).toBe(2);
  });

  it('a failed read is not kept: the next build asks again', async () => {
    const f = fakeConnection();
    const escrow = client(f.connection, 10_000);
    f.failOnce();
    await expect(escrow.recentBlockhash('test')).rejects.toMatchObject({ slug: 'chain-unavailable', status: 503 });
    const ok = await escrow.recentBlockhash('test');
    expect(ok.blocksLeft).toBe(150);
    expect(f.calls.getLatestBlockhash).toBe(2);
  });

  it('fresh: a read started after the call, never the kept one (the fee quote\'s retry when a node did not know the kept blockhash)', async () => {
    const f = fakeConnection();
    const escrow = client(f.connection, 10_000);
    const kept = await escrow.recentBlockhash('test');
    const fresh = await escrow.recentBlockhash('test', { fresh: true });
    expect(fresh.blockhash).not.toBe(kept.blockhash);
    expect(fresh.askedAt).toBeGreaterThanOrEqual(kept.askedAt);
    // the fresh one is kept for the next builds
    expect((await escrow.recentBlockhash('test')).blockhash).toBe(fresh.blockhash);
    expect(f.calls.getLatestBlockhash).toBe(2);
  });

  it('0 (the EscrowClient default): a fresh read for every build', async () => {
    const f = fakeConnection();
    const escrow = client(f.connection);
    const [a, b] = [await escrow.recentBlockhash('test'), await escrow.recentBlockhash('test')];
    expect(a.blockhash).not.toBe(b.blockhash);
    expect(f.calls.getLatestBlockhash).toBe(2);
  });
});
