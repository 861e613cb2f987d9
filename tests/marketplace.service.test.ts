/**
 * Marketplace service rules without a database: how a query becomes search criteria (typo words,
 * exclusions, per-currency price bounds, sort fallback) and how cursors are bound.
 */
import { describe, expect, it } from 'vitest';
import { DomainError } from '../server/src/errors.js';
import { createMarketplaceService, splitQuery } from '../server/src/modules/marketplace/marketplace.service.js';
import type { MarketplaceRepo, SearchCriteria } from '../server/src/modules/marketplace/marketplace.types.js';
import type { ListingRecord } from '../server/src/modules/listings/index.js';

const config = {
  currencies: [
    { code: 'USDC', mint: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', decimals: 6 },
    { code: 'SOL', mint: 'So11111111111111111111111111111111111111112', decimals: 9 },
  ],
  categories: [{ slug: 'design', name: 'Design' }],
};

function service(listings: ListingRecord[] = []) {
  const seen: SearchCriteria[] = [];
  const repo: MarketplaceRepo = {
    async searchIndex() {
      return 'gin';
    },
    async search(c) {
      seen.push(c);
      return [];
    },
    async get(id) {
      return listings.find((l) => l.id === id) ?? null;
    },
    async wordCandidates() {
      return [];
    },
    async countByCategory() {
      return new Map();
    },
  };
  return { svc: createMarketplaceService({ repo, config }), seen };
}

describe('search criteria', () => {
  it('splits websearch text into typo words and exclusions', () => {
    expect(splitQuery('"logo design" -mascot or brand')).toEqual({ fuzzy: 'logo design brand', excluded: 'mascot' });
    expect(splitQuery('-a -b')).toEqual({ fuzzy: undefined, excluded: 'a or b' });
    expect(splitQuery('desgin')).toEqual({ fuzzy: 'desgin', excluded: undefined });
  });

  it('turns UI price bounds into exact base-unit bounds per currency', async () => {
    const { svc, seen } = service();
    await svc.search({ minPrice: 1.5, maxPrice: 2.0000001, limit: 20 });
    expect(seen[0]!.price).toEqual([
      { currency: 'USDC', decimals: 6, min: 1_500_000n, max: 2_000_000n },
      { currency: 'SOL', decimals: 9, min: 1_500_000_000n, max: 2_000_000_100n },
    ]);
    await svc.search({ minPrice: 1, currency: 'SOL', limit: 20 });
    expect(seen[1]!.price).toEqual([{ currency: 'SOL', decimals: 9, min: 1_000_000_000n, max: undefined }]);
  });

  it('relevance without a query sorts by newest; only available listings are searched', async () => {
    const { svc, seen } = service();
    await svc.search({ limit: 20 });
    expect(seen[0]).toMatchObject({ sort: 'newest', statuses: ['available'], limit: 21 });
    await svc.search({ query: 'logo', limit: 20 });
    expect(seen[1]).toMatchObject({ sort: 'relevance', text: 'logo' });
    expect(seen[1]!.correctedText).toBeUndefined(); // no title vocabulary: nothing to correct to
  });

  it('refuses min > max and unknown category/currency with field paths', async () => {
    const { svc } = service();
    const err = await svc.search({ minPrice: 5, maxPrice: 1, category: 'cooking', currency: 'EUR', limit: 20 }).catch((e: unknown) => e as DomainError);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).slug).toBe('validation-error');
    expect(((err as DomainError).extensions.errors as Array<{ path: string }>).map((e) => e.path).sort()).toEqual([
      'query.category',
      'query.currency',
      'query.min_price',
    ]);
  });

  it('categories include zero counts in configured order', async () => {
    const { svc } = service();
    expect(await svc.categories()).toEqual([{ slug: 'design', name: 'Design', listing_count: 0 }]);
  });
});

describe('similar listings', () => {
  const listing = (over: Partial<ListingRecord>): ListingRecord =>
    ({ id: '00000000-0000-4000-8000-000000000001', sellerId: 'seller', category: 'design', status: 'available', ...over }) as ListingRecord;

  it('searches the available listings of the listing\'s category without it, newest first', async () => {
    const { svc, seen } = service([listing({ status: 'sold' })]);
    await svc.similar('00000000-0000-4000-8000-000000000001', null, { limit: 5 });
    expect(seen).toEqual([
      expect.objectContaining({ statuses: ['available'], category: 'design', excludeId: '00000000-0000-4000-8000-000000000001', sort: 'newest', limit: 6 }),
    ]);
  });

  it('404 for an unknown listing, and for an unlisted one to anyone but its seller and admins', async () => {
    const { svc, seen } = service([listing({ status: 'unlisted' })]);
    const id = '00000000-0000-4000-8000-000000000001';
    const slug = (p: Promise<unknown>) => p.then(() => 'ok', (e: DomainError) => e.slug);
    expect(await slug(svc.similar('00000000-0000-4000-8000-000000000002', null, { limit: 5 }))).toBe('not-found');
    expect(await slug(svc.similar(id, null, { limit: 5 }))).toBe('not-found');
    expect(await slug(svc.similar(id, { userId: 'someone', wallet: 'w', isAdmin: false }, { limit: 5 }))).toBe('not-found');
    expect(await slug(svc.similar(id, { userId: 'seller', wallet: 'w', isAdmin: false }, { limit: 5 }))).toBe('ok');
    expect(await slug(svc.similar(id, { userId: 'admin', wallet: 'w', isAdmin: true }, { limit: 5 }))).toBe('ok');
    expect(seen).toHaveLength(2);
  });
});
