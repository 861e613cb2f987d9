/**
 * The order actions' nonce store (server/src/modules/actions/order-action-nonces.ts, table order_action_nonces) on
 * both engines: PGlite always, PostgreSQL too when TEST_DATABASE_URL is set, with two clients on one database
 * (two replicas): a nonce is consumed exactly once whoever races for it, expired rows are purged and others kept,
 * and the table refuses an act the order actions do not have.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { orderActionNonceStore, type OrderActionNonceRow } from '../server/src/modules/actions/order-action-nonces';
import { dbBackends, sharedDatabase } from './helpers/shared-db';

const row = (over: Partial<OrderActionNonceRow> = {}): Omit<OrderActionNonceRow, 'usedAt'> => ({
  nonce: randomUUID().replace(/-/g, ''),
  orderId: randomUUID(),
  act: 'confirm',
  wallet: 'AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r',
  reason: null,
  reasonCode: null,
  domain: 'bazaar.test',
  chainId: 'solana:localnet',
  statement: 'Confirm delivery of order x',
  issuedAt: new Date('2026-11-27T00:00:00Z'),
  expiresAt: new Date('2026-11-27T00:05:00Z'),
  ...over,
});

describe.each(dbBackends)('order action nonces on $name', ({ postgres }) => {
  const shared = sharedDatabase(postgres);

  it('two replicas racing to consume one nonce: exactly one consumes it, the row keeps when', async () => {
    const [a, b] = await Promise.all([shared.client(), shared.client()]);
    const sa = orderActionNonceStore(a.prisma);
    const sb = orderActionNonceStore(b.prisma);
    const r = row({ act: 'dispute', reason: 'The files never arrived', reasonCode: 'not_delivered' });
    await sa.insert(r);
    const at = new Date('2026-11-27T00:01:00Z');
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? sa : sb).consume(r.nonce, at)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await sb.get(r.nonce)).toEqual({ ...r, usedAt: at });
    expect(await sa.consume(r.nonce, at)).toBe(false);
    expect(await sa.get('unknown-nonce')).toBeNull();
  });

  it('purges the rows that expired before the cut-off and keeps the others; refuses an unknown act', async () => {
    const s = orderActionNonceStore((await shared.client()).prisma);
    const old = row({ expiresAt: new Date('2026-11-20T00:00:00Z') });
    const fresh = row({ expiresAt: new Date('2026-11-28T00:00:00Z') });
    await s.insert(old);
    await s.insert(fresh);
    expect(await s.purgeExpired(new Date('2026-11-26T00:00:00Z'))).toBeGreaterThanOrEqual(1);
    expect(await s.get(old.nonce)).toBeNull();
    expect(await s.get(fresh.nonce)).not.toBeNull();
    await expect(s.insert(row({ act: 'refund' as never }))).rejects.toThrow();
  });
});
