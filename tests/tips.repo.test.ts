/**
 * Tips storage over the real schema (PGlite; also PostgreSQL when TEST_DATABASE_URL is set): the pending
 * cap holds under concurrent requests, one signature confirms one tip, a confirmation appends tip.received
 * once, and a seller's received tips are summed per currency from confirmed tips only.
 */
import { randomUUID } from 'node:crypto';
import { Keypair } from '@solana/web3.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_PENDING_TIPS_PER_ORDER } from '@bazaar/contract';
import { createDb, type Db } from '../server/src/db/client.js';
import { createTipsRepo, type NewTip } from '../server/src/modules/tips/index.js';
import { TEST_DATABASE_URL, freshPGlite, freshPostgres } from './helpers/db.js';

const targets: Array<[string, () => Promise<{ db: Db; drop: () => Promise<void> }>]> = [
  ['PGlite', async () => ({ db: await createDb({ pglite: await freshPGlite() }), drop: async () => undefined })],
];
if (TEST_DATABASE_URL) {
  targets.push([
    'PostgreSQL',
    async () => {
      const pg = await freshPostgres();
      return { db: await createDb({ databaseUrl: pg.url }), drop: pg.drop };
    },
  ]);
}

const wallet = () => Keypair.generate().publicKey.toBase58();

describe.each(targets)('tips storage on %s', (_name, open) => {
  let db: Db;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    ({ db, drop } = await open());
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  const tip = (orderId: string, sellerId: string, buyerId: string, amount: bigint, currency = 'USDC'): NewTip => ({
    id: randomUUID(),
    orderId,
    buyerId,
    sellerId,
    buyerWallet: wallet(),
    sellerWallet: wallet(),
    currency,
    mint: wallet(),
    decimals: currency === 'SOL' ? 9 : 6,
    amount,
    sourceTokenAccount: wallet(),
    destinationTokenAccount: wallet(),
    message: 'bWVzc2FnZQ==',
    blockhash: wallet(),
    lastValidBlockHeight: 1_000,
    validUntil: new Date(Date.now() + 60_000),
  });

  it('at most 3 tips of an order pending, also when 10 requests race', async () => {
    const repo = createTipsRepo(db.prisma);
    const [orderId, seller, buyer] = [randomUUID(), randomUUID(), randomUUID()];
    const made = await Promise.all(Array.from({ length: 10 }, () => repo.createPending(tip(orderId, seller, buyer, 1n), MAX_PENDING_TIPS_PER_ORDER)));
    expect(made.filter(Boolean)).toHaveLength(MAX_PENDING_TIPS_PER_ORDER);
    // an expired one frees a slot; another order is not affected
    expect(await repo.expire(made.find(Boolean)!.id)).toBe(true);
    expect(await repo.createPending(tip(orderId, seller, buyer, 1n), MAX_PENDING_TIPS_PER_ORDER)).not.toBeNull();
    expect(await repo.createPending(tip(orderId, seller, buyer, 1n), MAX_PENDING_TIPS_PER_ORDER)).toBeNull();
    expect(await repo.createPending(tip(randomUUID(), seller, buyer, 1n), MAX_PENDING_TIPS_PER_ORDER)).not.toBeNull();
  });

  it('one signature confirms one tip; a confirmation is written once with its tip.received event', async () => {
    const repo = createTipsRepo(db.prisma);
    const [orderId, seller, buyer] = [randomUUID(), randomUUID(), randomUUID()];
    const a = (await repo.createPending(tip(orderId, seller, buyer, 5n), 3))!;
    const b = (await repo.createPending(tip(orderId, seller, buyer, 5n), 3))!;
    const signature = 'sig-' + randomUUID();
    const first = await repo.confirm(a.id, { signature, slot: 7, at: new Date() });
    expect(first).toMatchObject({ state: 'confirmed', tip: { status: 'confirmed', signature, slot: 7 } });
    expect(await repo.confirm(b.id, { signature, slot: 7, at: new Date() })).toEqual({ state: 'used' });
    expect((await repo.get(b.id))!.status).toBe('pending');
    // a replay of the same confirmation changes nothing and writes no second event
    expect(await repo.confirm(a.id, { signature, slot: 7, at: new Date() })).toMatchObject({ state: 'not_pending', tip: { signature } });
    const events = await db.prisma.event.findMany({ where: { resourceType: 'tip', resourceId: a.id } });
    expect(events.map((e) => [e.type, [...e.audience].sort()])).toEqual([['tip.received', [buyer, seller].sort()]]);
    expect(await db.prisma.event.count({ where: { resourceType: 'tip', resourceId: b.id } })).toBe(0);
    // an expired tip is never confirmed afterwards
    expect(await repo.expire(b.id)).toBe(true);
    expect(await repo.confirm(b.id, { signature: 'sig-' + randomUUID(), slot: 8, at: new Date() })).toMatchObject({ state: 'not_pending' });
  });

  it('a seller\'s received tips: confirmed ones, per currency, in base units', async () => {
    const repo = createTipsRepo(db.prisma);
    const [seller, buyer] = [randomUUID(), randomUUID()];
    const orderId = randomUUID();
    const confirm = async (t: NewTip) => {
      const made = (await repo.createPending(t, 3))!;
      await repo.confirm(made.id, { signature: 'sig-' + randomUUID(), slot: 1, at: new Date() });
    };
    await confirm(tip(orderId, seller, buyer, 18_446_744_073_709_551_615n / 4n));
    await confirm(tip(orderId, seller, buyer, 1_000_000n));
    await confirm(tip(randomUUID(), seller, buyer, 5n, 'SOL'));
    await repo.createPending(tip(randomUUID(), seller, buyer, 999n), 3); // pending: not counted
    expect(await repo.receivedBySeller(seller)).toEqual([
      { currency: 'SOL', amountBaseUnits: '5', decimals: 9 },
      { currency: 'USDC', amountBaseUnits: (18_446_744_073_709_551_615n / 4n + 1_000_000n).toString(), decimals: 6 },
    ]);
    expect(await repo.receivedBySeller(randomUUID())).toEqual([]);
  });
});
