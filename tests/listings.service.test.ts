/**
 * Listings service rules with an in-memory repository and the fake chain (no HTTP, no database):
 * mint-then-insert ordering, validation, visibility, edits and the order-lifecycle transitions.
 * (Crash safety of the chain steps: listings.recovery.test.ts.)
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { Keypair } from '@solana/web3.js';
import { listingTransitions } from '@bazaar/contract';
import { DomainError } from '../server/src/errors.js';
import { createListingsService, tokenName, type ListingsService } from '../server/src/modules/listings/listings.service.js';
import { FakeChain } from './helpers/fake-chain.js';
import { MemoryListingsRepo } from './helpers/memory-listings-repo.js';

const config = {
  currencies: [
    { code: 'USDC', mint: Keypair.generate().publicKey.toBase58(), decimals: 6 },
    { code: 'SOL', mint: 'So11111111111111111111111111111111111111112', decimals: 9 },
  ],
  categories: [
    { slug: 'design', name: 'Design' },
    { slug: 'writing', name: 'Writing' },
  ],
  publicBaseUrl: 'https://api.bazaar.test',
};
const alice = { userId: 'u-alice', wallet: Keypair.generate().publicKey.toBase58(), isAdmin: false };
const bob = { userId: 'u-bob', wallet: Keypair.generate().publicKey.toBase58(), isAdmin: false };
const body = { title: 'Logo design in three days', description: 'A clean logo', price: 25.5, currency: 'USDC', category: 'design', duration: 3 };

async function slugOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (e instanceof DomainError) return e.slug;
    throw e;
  }
  throw new Error('expected a DomainError');
}

let repo: MemoryListingsRepo;
let chain: FakeChain;
let svc: ListingsService;
beforeEach(() => {
  repo = new MemoryListingsRepo();
  chain = new FakeChain();
  svc = createListingsService({ repo, chain, config });
});

describe('creating a listing', () => {
  it('mints the token with the listing id in its metadata uri, then stores the row', async () => {
    const l = await svc.create(alice, body);
    expect(l.priceBaseUnits).toBe(25_500_000n);
    expect(l.status).toBe('available');
    const token = chain.tokens.get(l.tokenMint)!;
    expect(token).toMatchObject({ owner: alice.wallet, symbol: 'BZR', name: body.title });
    expect(token.uri).toBe(`https://api.bazaar.test/api/v1/listings/${l.id}/token-metadata.json`);
  });

  it('stores nothing when the chain is unreachable', async () => {
    chain.down = true;
    expect(await slugOf(svc.create(alice, body))).toBe('chain-unavailable');
    expect(repo.rows.size).toBe(0);
  });

  it('refuses unknown currency/category and extra decimals before touching the chain', async () => {
    const e = await svc.create(alice, { ...body, currency: 'EUR', category: 'cooking' }).then(() => { throw new Error("expected failure"); }, (x: unknown) => x as DomainError);
    expect(e.slug).toBe('validation-error');
    expect((e.extensions.errors as { path: string }[]).map((x) => x.path).sort()).toEqual(['body.category', 'body.currency']);
    const d = await svc.create(alice, { ...body, price: 1.0000001 }).then(() => { throw new Error("expected failure"); }, (x: unknown) => x as DomainError);
    expect(d.extensions.errors).toEqual([expect.objectContaining({ path: 'body.price', code: 'too_many_decimals' })]);
    expect(chain.calls).toHaveLength(0);
  });

  it('truncates the token name to 32 characters and 32 UTF-8 bytes', () => {
    expect(tokenName('x'.repeat(40))).toHaveLength(32);
    const name = tokenName('é'.repeat(40));
    expect(Buffer.byteLength(name)).toBeLessThanOrEqual(32);
    expect(name).toBe('é'.repeat(16));
  });
});

describe('editing a listing', () => {
  it('only the seller may edit; a title change renames the token on chain', async () => {
    const l = await svc.create(alice, body);
    expect(await slugOf(svc.update(l.id, bob, { title: 'Stolen' }))).toBe('forbidden');
    const u = await svc.update(l.id, alice, { title: 'Brand identity pack', price: 30 });
    expect(u.priceBaseUnits).toBe(30_000_000n);
    expect(chain.tokens.get(l.tokenMint)!.name).toBe('Brand identity pack');
  });

  it('does not call the chain when only the description changes', async () => {
    const l = await svc.create(alice, body);
    const before = chain.calls.length;
    await svc.update(l.id, alice, { description: 'Now with two revisions' });
    expect(chain.calls.length).toBe(before);
  });

  it('unlist/relist by the seller; unlisted hidden from others', async () => {
    const l = await svc.create(alice, body);
    await svc.update(l.id, alice, { status: 'unlisted' });
    expect(await slugOf(svc.get(l.id, bob))).toBe('not-found');
    expect((await svc.get(l.id, alice)).status).toBe('unlisted');
    expect(await slugOf(svc.update(l.id, bob, { title: 'x y z' }))).toBe('not-found');
    await svc.update(l.id, alice, { status: 'available' });
    expect((await svc.get(l.id, bob)).status).toBe('available');
  });

  it('reserved and sold listings cannot be edited (409)', async () => {
    const l = await svc.create(alice, body);
    await svc.applyOrderEvent(l.id, 'order_funded');
    expect(await slugOf(svc.update(l.id, alice, { status: 'unlisted' }))).toBe('invalid-state-transition');
    await svc.applyOrderEvent(l.id, 'order_completed');
    expect(await slugOf(svc.update(l.id, alice, { price: 1 }))).toBe('invalid-state-transition');
  });
});

describe('listing listings (the in-memory repository honours the filter)', () => {
  it('filters by seller, status and category, shows unlisted only to their seller, newest first in pages', async () => {
    const a1 = await svc.create(alice, body);
    const a2 = await svc.create(alice, { ...body, title: 'Blog post writing', category: 'writing' });
    const b1 = await svc.create(bob, { ...body, title: 'Another logo' });
    const a3 = await svc.create(alice, { ...body, title: 'Poster design' });
    await svc.update(a3.id, alice, { status: 'unlisted' });
    await svc.applyOrderEvent(b1.id, 'order_funded');
    // distinct creation times (the fake stamps `now`): a1 oldest ... a3 newest
    [a1, a2, b1, a3].forEach((l, i) => (repo.rows.get(l.id)!.createdAt = new Date(Date.UTC(2026, 0, 1 + i))));
    const ids = async (input: Parameters<ListingsService['list']>[0], viewer: Parameters<ListingsService['list']>[1] = null) =>
      (await svc.list(input, viewer)).items.map((l) => l.id);

    expect(await ids({ limit: 20 })).toEqual([b1.id, a2.id, a1.id]);
    expect(await ids({ limit: 20 }, { ...alice, isAdmin: false })).toEqual([a3.id, b1.id, a2.id, a1.id]);
    expect(await ids({ limit: 20, sellerWallet: alice.wallet })).toEqual([a2.id, a1.id]);
    expect(await ids({ limit: 20, category: 'writing' })).toEqual([a2.id]);
    expect(await ids({ limit: 20, status: 'active' })).toEqual([a2.id, a1.id]);
    expect(await ids({ limit: 20, status: 'reserved' })).toEqual([b1.id]);
    expect(await ids({ limit: 20, status: 'unlisted' }, { ...bob, isAdmin: false })).toEqual([]);
    const first = await svc.list({ limit: 2 }, null);
    expect(first.items.map((l) => l.id)).toEqual([b1.id, a2.id]);
    expect(await ids({ limit: 2, cursor: first.nextCursor! })).toEqual([a1.id]);
  });
});

describe('order lifecycle transitions', () => {
  it('funded -> refunded -> funded -> completed; funding twice is listing-unavailable', async () => {
    const l = await svc.create(alice, body);
    await svc.applyOrderEvent(l.id, 'order_funded');
    expect(await slugOf(svc.applyOrderEvent(l.id, 'order_funded'))).toBe('listing-unavailable');
    await svc.applyOrderEvent(l.id, 'order_refunded');
    await svc.applyOrderEvent(l.id, 'order_refunded'); // idempotent
    expect((await svc.get(l.id, null)).status).toBe('available');
    expect(await slugOf(svc.applyOrderEvent(l.id, 'order_completed'))).toBe('invalid-state-transition');
    await svc.applyOrderEvent(l.id, 'order_funded');
    await svc.applyOrderEvent(l.id, 'order_completed');
    await svc.applyOrderEvent(l.id, 'order_completed'); // idempotent
    expect((await svc.get(l.id, null)).status).toBe('sold');
    expect(await slugOf(svc.applyOrderEvent(l.id, 'order_refunded'))).toBe('invalid-state-transition');
    expect(await slugOf(svc.applyOrderEvent('00000000-0000-4000-8000-000000000000', 'order_funded'))).toBe('not-found');
  });

  it.each(listingTransitions.filter((t) => t.by === 'system'))('$event: $from -> $to; applied again it is refused only when it reserves', async (row) => {
    const l = await svc.create(alice, body);
    if (row.from === 'reserved') await svc.applyOrderEvent(l.id, 'order_funded');
    await svc.applyOrderEvent(l.id, row.event);
    expect((await svc.get(l.id, alice)).status).toBe(row.to);
    const again = await svc.applyOrderEvent(l.id, row.event).then(() => 'ok', (e: DomainError) => e.slug);
    expect(again).toBe(row.to === 'reserved' ? 'listing-unavailable' : 'ok');
    expect((await svc.get(l.id, alice)).status).toBe(row.to);
  });

  it.each(listingTransitions.filter((t) => t.by === 'seller' && t.from))('the seller $event: $from -> $to (PATCH status)', async (row) => {
    const l = await svc.create(alice, body);
    if (row.from !== 'available') await svc.update(l.id, alice, { status: row.from as 'unlisted' });
    expect((await svc.update(l.id, alice, { status: row.to as 'available' | 'unlisted' })).status).toBe(row.to);
  });

  it('token metadata JSON carries the name, symbol and category, and nothing else of the listing (issue 21 item 9)', async () => {
    const l = await svc.create(alice, body);
    const m = await svc.tokenMetadata(l.id);
    expect(m).toMatchObject({ name: body.title, symbol: 'BZR' });
    expect(m.description).toContain(l.id); // a fixed text that links the listing, not the seller's description
    expect(m.description).not.toContain('A clean logo');
    expect(m.attributes).toEqual([{ trait_type: 'category', value: 'Design' }]);
  });
});
