/**
 * Repeat sales in the listings service (issue 24 item 7), with the in-memory repository: an order outcome
 * moves the stored status by the listing's units (contract `listingMoveOnOrderEvent`), read under the row
 * lock as the orders trigger left them, never by a fixed row: funding fills the capacity or not, a sale
 * frees its unit or sells the stock out, re-applying an outcome is a no-op, and funding a listing that has
 * no unit left for it is refused (the orders module then refunds that order).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { Keypair } from '@solana/web3.js';
import { DomainError } from '../server/src/errors.js';
import { createListingsService, type ListingsService } from '../server/src/modules/listings/listings.service.js';
import type { ListingRecord } from '../server/src/modules/listings/listings.types.js';
import { FakeChain } from './helpers/fake-chain.js';
import { MemoryListingsRepo } from './helpers/memory-listings-repo.js';

const config = {
  currencies: [{ code: 'USDC', mint: Keypair.generate().publicKey.toBase58(), decimals: 6 }],
  categories: [{ slug: 'design', name: 'Design' }],
  publicBaseUrl: 'https://api.bazaar.test',
};
const alice = { userId: 'u-alice', wallet: Keypair.generate().publicKey.toBase58(), isAdmin: false };
const body = { title: 'Weekly coaching call', description: 'Booked again and again', price: 10, currency: 'USDC', category: 'design', duration: 3 };

let repo: MemoryListingsRepo;
let svc: ListingsService;
beforeEach(() => {
  repo = new MemoryListingsRepo();
  svc = createListingsService({ repo, chain: new FakeChain(), config });
});

/** The counts the orders trigger would have left on the listing row. */
function counts(l: ListingRecord, c: { open: number; unpaid?: number; sold?: number }) {
  Object.assign(repo.rows.get(l.id)!, { openOrders: c.open, unpaidOrders: c.unpaid ?? 0, soldCount: c.sold ?? 0 });
}
const status = async (l: ListingRecord) => (await svc.get(l.id, alice)).status;
const slugOf = (p: Promise<unknown>) => p.then(() => 'ok', (e: DomainError) => e.slug);

describe('order outcomes move a listing by its units', () => {
  it('capacity 3: the first two fundings keep it available, the third reserves it; a sale frees a unit; applied twice, nothing more', async () => {
    const l = await svc.create(alice, { ...body, capacity: 3, stock: null });
    expect(l).toMatchObject({ capacity: 3, stock: null });
    counts(l, { open: 1 });
    await svc.applyOrderEvent(l.id, 'order_funded');
    counts(l, { open: 2 });
    await svc.applyOrderEvent(l.id, 'order_funded');
    expect(await status(l)).toBe('available');
    counts(l, { open: 3 });
    await svc.applyOrderEvent(l.id, 'order_funded');
    expect(await status(l)).toBe('reserved');
    counts(l, { open: 2, sold: 1 });
    await svc.applyOrderEvent(l.id, 'order_completed');
    await svc.applyOrderEvent(l.id, 'order_completed'); // the request and the reconciler
    expect(await status(l)).toBe('available');
  });

  it('stock 2: the second sale sells it out; a refund with stock left returns it to available', async () => {
    const l = await svc.create(alice, { ...body, capacity: 1, stock: 2 });
    counts(l, { open: 1 });
    await svc.applyOrderEvent(l.id, 'order_funded');
    counts(l, { open: 0 });
    await svc.applyOrderEvent(l.id, 'order_refunded');
    expect(await status(l)).toBe('available');
    counts(l, { open: 1 });
    await svc.applyOrderEvent(l.id, 'order_funded');
    counts(l, { open: 0, sold: 1 });
    await svc.applyOrderEvent(l.id, 'order_completed');
    expect(await status(l)).toBe('available');
    counts(l, { open: 1, sold: 1 });
    await svc.applyOrderEvent(l.id, 'order_funded');
    expect(await status(l)).toBe('reserved'); // the open order takes the last unit of stock
    counts(l, { open: 0, sold: 2 });
    await svc.applyOrderEvent(l.id, 'order_resolved_partial');
    expect(await status(l)).toBe('sold');
    expect(await slugOf(svc.applyOrderEvent(l.id, 'order_funded'))).toBe('listing-unavailable');
  });

  it('a funding is accepted when a concurrent call already counted it or the capacity was lowered under its hold; refused when nothing explains the reservation', async () => {
    const l = await svc.create(alice, { ...body, capacity: 2, stock: null });
    counts(l, { open: 2 });
    await svc.applyOrderEvent(l.id, 'order_funded'); // both paid orders counted: reserved
    expect(await status(l)).toBe('reserved');
    expect(await slugOf(svc.applyOrderEvent(l.id, 'order_funded'))).toBe('ok'); // the other order's call, after the first moved it
    counts(l, { open: 3 }); // a third order held before the capacity went from 3 to 2: paid too, not refunded
    expect(await slugOf(svc.applyOrderEvent(l.id, 'order_funded'))).toBe('ok');
    const other = await svc.create(alice, { ...body, title: 'Reserved by an operator', capacity: 3, stock: null });
    repo.rows.get(other.id)!.status = 'reserved';
    counts(other, { open: 1 });
    expect(await slugOf(svc.applyOrderEvent(other.id, 'order_funded'))).toBe('listing-unavailable');
  });

  it('an unlisted listing refuses a funding and takes no other outcome (its counts still move)', async () => {
    const l = await svc.create(alice, { ...body, capacity: 2, stock: 5 });
    await svc.update(l.id, alice, { status: 'unlisted' });
    counts(l, { open: 1 });
    expect(await slugOf(svc.applyOrderEvent(l.id, 'order_funded'))).toBe('listing-unavailable');
    counts(l, { open: 0, sold: 1 });
    expect(await slugOf(svc.applyOrderEvent(l.id, 'order_completed'))).toBe('ok');
    expect(await status(l)).toBe('unlisted');
  });
});
