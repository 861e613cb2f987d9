/**
 * Search benchmark (a script, not a timed test): seeds N listings (default 100 000) into an
 * in-memory PGlite with the real migrations, then times the marketplace search SQL exactly as the
 * repository builds it, and prints EXPLAIN plans so one can check which indexes are used.
 *
 *   npx tsx benchmarks/search.bench.ts [N]
 *
 * Figures are medians of 5 runs after one warm-up, first page (limit 20) and a cursor page.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { buildSearch, WORD_SIMILARITY } from '../server/src/modules/marketplace/marketplace.repo.js';
import type { SearchCriteria } from '../server/src/modules/marketplace/marketplace.types.js';
import { splitQuery } from '../server/src/modules/marketplace/marketplace.service.js';

const N = Number(process.argv[2] ?? 100_000);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MIGRATIONS = path.join(ROOT, 'prisma', 'migrations');

const WORDS_A = ['Logo', 'Brand', 'Website', 'Mobile app', 'Blog', 'SEO', 'Video', 'Podcast', 'Resume', 'Data', 'Smart contract', 'Landing page'];
const WORDS_B = ['design', 'writing', 'development', 'editing', 'audit', 'analysis', 'translation', 'illustration', 'consulting', 'testing'];
const WORDS_C = ['for startups', 'in 3 days', 'professional', 'premium package', 'with revisions', 'by an expert', 'fast delivery', 'on a budget'];
const CATEGORIES = ['design', 'writing', 'development', 'marketing', 'video', 'consulting'];

const sqlArray = (xs: string[]) => `ARRAY[${xs.map((x) => `'${x.replace(/'/g, "''")}'`).join(',')}]`;

async function seed(db: PGlite) {
  for (const dir of readdirSync(MIGRATIONS).filter((d) => /^\d/.test(d)).sort()) {
    await db.exec(readFileSync(path.join(MIGRATIONS, dir, 'migration.sql'), 'utf8'));
  }
  const sellers = Math.max(10, Math.floor(N / 100));
  await db.exec(`
    INSERT INTO users (id, wallet, updated_at)
    SELECT gen_random_uuid(), 'Wallet' || g, now() FROM generate_series(1, ${sellers}) g;
    CREATE TEMP TABLE s AS SELECT id, row_number() OVER () AS n FROM users;
    INSERT INTO listings (id, seller_id, title, description, price_base_units, currency, category, duration_days, status, created_at, updated_at)
    SELECT gen_random_uuid(),
           (SELECT id FROM s WHERE s.n = 1 + (g % ${sellers})),
           (${sqlArray(WORDS_A)})[1 + g % ${WORDS_A.length}] || ' ' || (${sqlArray(WORDS_B)})[1 + (g / 7) % ${WORDS_B.length}] || ' ' || (${sqlArray(WORDS_C)})[1 + (g / 3) % ${WORDS_C.length}]
             || ' ref ' || substr(md5((g % ${Math.max(1, Math.floor(N / 50))})::text), 1, 8),
           'Listing ' || g || ': ' || (${sqlArray(WORDS_B)})[1 + (g / 11) % ${WORDS_B.length}] || ' services with care, delivered on time.',
           (1 + (g * 7919) % 500) * 1000000,
           CASE WHEN g % 4 = 0 THEN 'SOL' ELSE 'USDC' END,
           (${sqlArray(CATEGORIES)})[1 + g % ${CATEGORIES.length}],
           1 + g % 30,
           CASE WHEN g % 10 = 0 THEN 'sold' WHEN g % 17 = 0 THEN 'reserved' ELSE 'available' END,
           now() - (g || ' seconds')::interval, now()
      FROM generate_series(1, ${N}) g;
  `);
  // reviews need orders: one completed order + review per 20 listings
  await db.exec(`
    CREATE TEMP TABLE picked AS
      SELECT l.id AS listing_id, l.seller_id, (SELECT id FROM users u WHERE u.id <> l.seller_id LIMIT 1) AS buyer_id,
             row_number() OVER () AS n
        FROM listings l WHERE l.status = 'sold' LIMIT ${Math.floor(N / 20)};
    INSERT INTO orders (id, listing_id, buyer_id, seller_id, status, amount_base_units, currency, payment_mint, decimals,
                        fee_bps, escrow_address, vault_address, delivery_deadline, review_window_seconds, payment_expires_at, updated_at)
    SELECT gen_random_uuid(), listing_id, buyer_id, seller_id, 'completed', 1000000, 'USDC', 'mint', 6, 100, 'e' || n, 'v' || n, now(), 0, now(), now()
      FROM picked;
    INSERT INTO reviews (id, order_id, reviewer_id, seller_id, listing_id, rating, text)
    SELECT gen_random_uuid(), o.id, o.buyer_id, o.seller_id, o.listing_id, 1 + (abs(hashtext(o.id::text)) % 5), 'ok'
      FROM orders o;
    ANALYZE;
  `);
}

const decimals = [
  { currency: 'USDC', decimals: 6 },
  { currency: 'SOL', decimals: 9 },
];

const cases: Array<[string, Omit<SearchCriteria, 'limit' | 'decimals' | 'statuses'>]> = [
  ['text "logo design" (relevance)', { text: 'logo design', sort: 'relevance' }],
  ['typo "desgin" (relevance)', { text: 'desgin', sort: 'relevance' }],
  ['rarer text "smart contract audit"', { text: 'smart contract audit', sort: 'relevance' }],
  ['rarer typo "smrt contrct"', { text: 'smrt contrct', sort: 'relevance' }],
  ['selective text: one ref code (~50 listings)', { text: 'c4ca4238', sort: 'relevance' }],
  ['selective typo: "c4ca4283"', { text: 'c4ca4283', sort: 'relevance' }],
  ['text "video editing" + category', { text: 'video editing', category: 'video', sort: 'relevance' }],
  ['no text, newest', { sort: 'newest' }],
  ['category, newest', { category: 'writing', sort: 'newest' }],
  ['USDC 10..50, price_asc', { currency: 'USDC', price: [{ currency: 'USDC', decimals: 6, min: 10_000_000n, max: 50_000_000n }], sort: 'price_asc' }],
  ['all currencies, price_desc (UI price)', { sort: 'price_desc' }],
  ['rating', { sort: 'rating' }],
  ['text "design" sorted by price_asc', { text: 'design', sort: 'price_asc' }],
];

/** what the service adds to a text query: the words for the typo match and the exclusions */
const withText = (c: SearchCriteria): SearchCriteria =>
  c.text ? { ...c, fuzzyText: splitQuery(c.text).fuzzy, excludedText: splitQuery(c.text).excluded } : c;

async function time(db: PGlite, c: SearchCriteria): Promise<{ ms: number; rows: Array<Record<string, unknown>> }> {
  const q = buildSearch(c);
  const t0 = performance.now();
  const res = await db.query<Record<string, unknown>>(q.text, q.values as unknown[]);
  return { ms: performance.now() - t0, rows: res.rows };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const db = await PGlite.create({ extensions: { pg_trgm } });
  const t0 = performance.now();
  await seed(db);
  const count = (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM listings`)).rows[0]!.n;
  console.log(`seeded ${count} listings in ${Math.round(performance.now() - t0)} ms`);
  await db.exec(`SET pg_trgm.word_similarity_threshold = ${WORD_SIMILARITY}`);
  // as the repository does: text searches run with enable_seqscan = off (BENCH_SEQSCAN=on to compare)
  const planFor = (c: SearchCriteria) => db.exec(`SET enable_seqscan = ${c.text && process.env.BENCH_SEQSCAN !== 'on' ? 'off' : 'on'}`);

  console.log('\n| case | page 1 median ms | page 2 median ms | rows |');
  console.log('|---|---|---|---|');
  for (const [name, partial] of cases) {
    const base = withText({ ...partial, statuses: ['available'], decimals, limit: 21 });
    await planFor(base);
    await time(db, base);
    const first: number[] = [];
    let rows: Array<Record<string, unknown>> = [];
    for (let i = 0; i < 5; i++) {
      const r = await time(db, base);
      first.push(r.ms);
      rows = r.rows;
    }
    const last = rows[19];
    const second: number[] = [];
    if (last) {
      const after = { keys: last.k2 !== undefined ? [last.k1 as string, last.k2 as string] : [last.k1 as string], id: last.id as string };
      for (let i = 0; i < 5; i++) second.push((await time(db, { ...base, after })).ms);
    }
    console.log(`| ${name} | ${median(first).toFixed(1)} | ${second.length ? median(second).toFixed(1) : '-'} | ${rows.length} |`);
  }

  for (const [name, partial] of cases) {
    const criteria = withText({ ...partial, statuses: ['available'], decimals, limit: 21 });
    await planFor(criteria);
    const q = buildSearch(criteria);
    const plan = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF) ${q.text}`, q.values as unknown[]);
    const lines = plan.rows.map((r) => r['QUERY PLAN']);
    const indexes = [...new Set(lines.join('\n').match(/(?:Index Scan(?: Backward)? using|Index Only Scan(?: Backward)? using|Bitmap Index Scan on) (\w+)/g) ?? [])];
    console.log(`\n## ${name}\nindexes: ${indexes.join(', ') || 'none (seq scan)'}`);
    if (process.env.PLANS) console.log(lines.join('\n'));
  }
  await db.close();
}

await main();
