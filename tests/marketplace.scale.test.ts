/**
 * Search and reads at scale (issue 14), checked by what the database does, never by timings:
 * - deep pages read what page 1 reads: the rows PostgreSQL touches for a price, rating or newest page
 *   are bounded by the page size, on page 1 and page 50 alike (EXPLAIN ANALYZE row counts);
 * - the maintained data stays exact: listing_category_counts against a count of listings, the seller
 *   reputation on listings against an average of reviews (also under concurrent reviews on PostgreSQL);
 * - typo correction replaces the misspelt word only: "logo desgin" finds what "logo design" finds (both
 *   words, in title or description), not every title that merely shares a fragment with the query.
 * Runs on PGlite, and on PostgreSQL too when TEST_DATABASE_URL is set.
 */
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed } from '../benchmarks/lib/seed.js';
import { createDb, type Db } from '../server/src/db/client.js';
import { buildSearch, createMarketplaceRepo } from '../server/src/modules/marketplace/marketplace.repo.js';
import { createMarketplaceService } from '../server/src/modules/marketplace/marketplace.service.js';
import type { SearchCriteria } from '../server/src/modules/marketplace/marketplace.types.js';
import { freshPGlite, freshPostgres, TEST_DATABASE_URL } from './helpers/db.js';

const CONFIG = {
  currencies: [
    { code: 'USDC', mint: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', decimals: 6 },
    { code: 'SOL', mint: 'So11111111111111111111111111111111111111112', decimals: 9 },
  ],
  categories: ['design', 'writing', 'development', 'marketing', 'video', 'consulting'].map((slug) => ({ slug, name: slug })),
};

interface Backend {
  name: string;
  open(): Promise<{ db: Db; sql(q: string, params?: unknown[]): Promise<Array<Record<string, unknown>>>; close(): Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: 'PGlite',
    async open() {
      const pglite: PGlite = await freshPGlite();
      const db = await createDb({ pglite });
      return {
        db,
        sql: async (q, params) => (await pglite.query<Record<string, unknown>>(q, params)).rows,
        close: async () => {
          await db.close();
          await pglite.close();
        },
      };
    },
  },
];
if (TEST_DATABASE_URL) {
  backends.push({
    name: 'PostgreSQL',
    async open() {
      const target = await freshPostgres();
      const db = await createDb({ databaseUrl: target.url });
      const client = new pg.Client({ connectionString: target.url });
      await client.connect();
      return {
        db,
        sql: async (q, params) => (await client.query(q, params)).rows,
        close: async () => {
          await client.end();
          await db.close();
          await target.drop();
        },
      };
    },
  });
}

const N = 3000;

describe.each(backends)('$name', (backend) => {
  let h: Awaited<ReturnType<Backend['open']>>;
  beforeAll(async () => {
    h = await backend.open();
    await seed({ query: async (q, p) => ({ rows: await h.sql(q, p) }) }, N);
  }, 240_000);
  afterAll(async () => {
    await h?.close();
  });

  /** the criteria the service builds for `input`, page 1 and page 50 (following the cursors) */
  async function pages(input: Omit<Parameters<ReturnType<typeof createMarketplaceService>['search']>[0], 'limit'>) {
    const repo = createMarketplaceRepo(h.db.prisma);
    const seen: SearchCriteria[] = [];
    const service = createMarketplaceService({
      repo: { ...repo, search: (c) => (seen.push(c), repo.search(c)) },
      config: CONFIG,
    });
    let cursor: string | undefined;
    for (let page = 1; page <= 50; page++) {
      const res = await service.search({ ...input, limit: 20, cursor });
      expect(res.items.length, `page ${page}`).toBe(20);
      cursor = res.nextCursor ?? undefined;
    }
    return { first: seen[0]!, fiftieth: seen[49]! };
  }

  /** the largest number of rows any plan node read from `listings` (scans and their parents) */
  async function rowsRead(c: SearchCriteria): Promise<number> {
    const q = buildSearch(c);
    const rows = await h.sql(`EXPLAIN (ANALYZE, FORMAT JSON) ${q.text}`, q.values as unknown[]);
    const raw = rows[0]!['QUERY PLAN'];
    const plan = (typeof raw === 'string' ? JSON.parse(raw) : raw) as Array<{ Plan: Record<string, unknown> }>;
    let max = 0;
    const walk = (n: Record<string, unknown>) => {
      if (n['Relation Name'] === 'listings') {
        max = Math.max(max, Number(n['Actual Rows']) * Number(n['Actual Loops'] ?? 1) + Number(n['Rows Removed by Filter'] ?? 0));
      }
      for (const child of (n.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(child);
    };
    walk(plan[0]!.Plan);
    return max;
  }

  it.each([
    ['price_desc across both currencies (UI price)', { sort: 'price_desc' as const }],
    ['price_asc in USDC with a price range', { sort: 'price_asc' as const, currency: 'USDC', minPrice: 10, maxPrice: 400 }],
    ['rating (seller reputation)', { sort: 'rating' as const }],
    ['newest', { sort: 'newest' as const }],
  ])('%s: page 1 and page 50 each read at most a few pages of rows from listings', async (_name, input) => {
    const { first, fiftieth } = await pages(input);
    const limit = first.limit; // 21: the page and one more
    // one range per currency, each reading at most `limit` rows (plus rows of other statuses skipped)
    const bound = limit * CONFIG.currencies.length * 2;
    expect(await rowsRead(first)).toBeLessThanOrEqual(bound);
    expect(await rowsRead(fiftieth)).toBeLessThanOrEqual(bound);
  });

  it('category counts stay equal to a count of listings through inserts, status and category changes, deletes', async () => {
    const exact = async () =>
      (await h.sql(`SELECT category, status, count(*)::int AS n FROM listings GROUP BY 1, 2 ORDER BY 1, 2`)).map((r) => `${r.category}/${r.status}=${r.n}`);
    const kept = async () =>
      (await h.sql(`SELECT category, status, count AS n FROM listing_category_counts WHERE count <> 0 ORDER BY 1, 2`)).map((r) => `${r.category}/${r.status}=${r.n}`);
    expect(await kept()).toEqual(await exact());
    const seller = (await h.sql(`SELECT id FROM users ORDER BY wallet LIMIT 1`))[0]!.id as string;
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    for (const id of ids) {
      await h.sql(
        `INSERT INTO listings (id, seller_id, title, description, price_base_units, currency, category, duration_days, updated_at)
         VALUES ($1::uuid, $2::uuid, 'Counted gig', 'x', 1000000, 'USDC', 'marketing', 3, now())`,
        [id, seller],
      );
    }
    await h.sql(`UPDATE listings SET status = 'reserved' WHERE id = $1::uuid`, [ids[0]]);
    await h.sql(`UPDATE listings SET category = 'video', status = 'sold' WHERE id = $1::uuid`, [ids[1]]);
    await h.sql(`UPDATE listings SET title = 'Counted gig, renamed' WHERE id = $1::uuid`, [ids[2]]);
    await h.sql(`UPDATE listings SET status = 'available' WHERE status = 'reserved' AND category = 'writing'`);
    await h.sql(`DELETE FROM listings WHERE id = $1::uuid`, [ids[2]]);
    expect(await kept()).toEqual(await exact());
    const service = createMarketplaceService({ repo: createMarketplaceRepo(h.db.prisma), config: CONFIG });
    const byCat = new Map((await h.sql(`SELECT category, count(*)::int AS n FROM listings WHERE status = 'available' GROUP BY 1`)).map((r) => [r.category, Number(r.n)]));
    expect(await service.categories()).toEqual(CONFIG.categories.map((c) => ({ slug: c.slug, name: c.name, listing_count: byCat.get(c.slug) ?? 0 })));
  });

  it('the seller reputation on listings follows reviews (insert, update, delete) and new listings start with it', async () => {
    const seller = (await h.sql(`SELECT seller_id AS id FROM reviews GROUP BY seller_id ORDER BY count(*) DESC LIMIT 1`))[0]!.id as string;
    const check = async () => {
      const want = (await h.sql(`SELECT COALESCE(round(avg(rating), 6), 0)::text AS avg, count(*)::int AS n FROM reviews WHERE seller_id = $1::uuid`, [seller]))[0]!;
      const got = await h.sql(`SELECT DISTINCT seller_rating::text AS avg, seller_review_count AS n FROM listings WHERE seller_id = $1::uuid`, [seller]);
      expect(got).toEqual([{ avg: Number(want.avg).toFixed(6), n: want.n }]);
      return want;
    };
    const before = await check();
    const listing = (await h.sql(`SELECT id FROM listings WHERE seller_id = $1::uuid AND status = 'sold' AND id NOT IN (SELECT listing_id FROM orders) LIMIT 1`, [seller]))[0]!.id as string;
    const orderId = randomUUID();
    await h.sql(
      `INSERT INTO orders (id, listing_id, buyer_id, seller_id, status, amount_base_units, currency, payment_mint, decimals, fee_bps,
                           escrow_address, vault_address, delivery_deadline, review_window_seconds, payment_expires_at, updated_at)
       VALUES ($1::uuid, $2::uuid, md5('buyer')::uuid, $3::uuid, 'completed', 1, 'USDC', 'm', 6, 250, $4, $5, now(), 0, now(), now())`,
      [orderId, listing, seller, `e-${orderId}`, `v-${orderId}`],
    );
    const reviewId = randomUUID();
    await h.sql(`INSERT INTO reviews (id, order_id, reviewer_id, seller_id, listing_id, rating, text) VALUES ($1::uuid, $2::uuid, md5('buyer')::uuid, $3::uuid, $4::uuid, 1, 'meh')`, [reviewId, orderId, seller, listing]);
    expect((await check()).n).toBe(Number(before.n) + 1);
    await h.sql(`UPDATE reviews SET rating = 5 WHERE id = $1::uuid`, [reviewId]);
    await check();
    const fresh = randomUUID();
    await h.sql(
      `INSERT INTO listings (id, seller_id, title, description, price_base_units, currency, category, duration_days, updated_at)
       VALUES ($1::uuid, $2::uuid, 'Fresh gig', 'x', 1000000, 'USDC', 'design', 3, now())`,
      [fresh, seller],
    );
    await check();
    await h.sql(`DELETE FROM reviews WHERE id = $1::uuid`, [reviewId]);
    expect((await check()).n).toBe(Number(before.n));
    // the read path shows it
    const repo = createMarketplaceRepo(h.db.prisma);
    const [row] = await repo.search({ statuses: ['available'], sellerWallet: undefined, sort: 'newest', decimals: [], limit: 1, category: 'design' });
    expect(row!.listing.id).toBe(fresh);
    expect(row!.listing.sellerReviewCount).toBe(Number(before.n));
  });

  it('typo correction: "logo desgin" finds what "logo design" finds, not every title sharing a fragment', async () => {
    const service = createMarketplaceService({ repo: createMarketplaceRepo(h.db.prisma), config: CONFIG });
    expect(await service.correctTypos('logo desgin')).toBe('logo design');
    expect(await service.correctTypos('logo design')).toBeUndefined(); // known words stay as typed
    expect(await service.correctTypos('"logo desgin" -brnad')).toBe('"logo design" -brnad'); // excluded words are not corrected
    const res = await service.search({ query: 'logo desgin', limit: 100 });
    expect(res.items.length).toBeGreaterThan(0);
    for (const l of res.items) {
      const text = `${l.title} ${l.description}`.toLowerCase();
      expect(text, l.title).toMatch(/\blogo\b/);
      expect(text, l.title).toMatch(/\bdesign\b/);
    }
  });

  it.skipIf(backend.name !== 'PostgreSQL')('concurrent reviews of one seller leave the exact average on every listing', async () => {
    const seller = (await h.sql(`SELECT seller_id AS id FROM listings WHERE status = 'sold' GROUP BY seller_id ORDER BY seller_id LIMIT 1`))[0]!.id as string;
    const free = (await h.sql(`SELECT id FROM listings WHERE seller_id = $1::uuid AND id NOT IN (SELECT listing_id FROM orders) LIMIT 12`, [seller])).map((r) => r.id as string);
    expect(free.length).toBe(12);
    const base = new URL(TEST_DATABASE_URL!);
    base.pathname = `/${(await h.sql(`SELECT current_database() AS d`))[0]!.d as string}`;
    await Promise.all(
      free.map(async (listingId, i) => {
        const c = new pg.Client({ connectionString: base.toString() });
        await c.connect();
        try {
          const orderId = randomUUID();
          // the completed order first, on its own (as the service does: a review is written after its order, never in
          // the order's transaction), then the reviews race: each holds the seller's rating lock while it refreshes
          // every listing of the seller
          await c.query(
            `INSERT INTO orders (id, listing_id, buyer_id, seller_id, status, amount_base_units, currency, payment_mint, decimals, fee_bps,
                                 escrow_address, vault_address, delivery_deadline, review_window_seconds, payment_expires_at, updated_at)
             VALUES ($1::uuid, $2::uuid, md5('buyer')::uuid, $3::uuid, 'completed', 1, 'USDC', 'm', 6, 250, $4, $5, now(), 0, now(), now())`,
            [orderId, listingId, seller, `e-${orderId}`, `v-${orderId}`],
          );
          await c.query('BEGIN');
          await c.query(`INSERT INTO reviews (id, order_id, reviewer_id, seller_id, listing_id, rating, text) VALUES (gen_random_uuid(), $1::uuid, md5('buyer')::uuid, $2::uuid, $3::uuid, $4, 'x')`, [orderId, seller, listingId, 1 + (i % 5)]);
          await new Promise((r) => setTimeout(r, 20));
          await c.query('COMMIT');
        } finally {
          await c.end();
        }
      }),
    );
    const want = (await h.sql(`SELECT round(avg(rating), 6)::text AS avg, count(*)::int AS n FROM reviews WHERE seller_id = $1::uuid`, [seller]))[0]!;
    const got = await h.sql(`SELECT DISTINCT seller_rating::text AS avg, seller_review_count AS n FROM listings WHERE seller_id = $1::uuid`, [seller]);
    expect(got).toEqual([{ avg: want.avg, n: want.n }]);
  });
});
