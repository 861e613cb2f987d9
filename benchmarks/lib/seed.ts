/**
 * Benchmark data: N listings (plus N/100 sellers, one buyer, a completed order and a review for half
 * of the sold listings) generated inside PostgreSQL with generate_series, so 1 000 000 listings take
 * about a minute, not hours. The listings' secondary indexes are dropped while rows go in and rebuilt
 * afterwards (one sort per index instead of N insertions), and the row triggers are skipped
 * (session_replication_role = replica) and replaced by the migration's own backfill statements
 * (seller reputation, category counts, title vocabulary), so the data ends up exactly as the triggers
 * would have left it.
 *
 * Titles combine 12 subjects x 10 skills x 8 phrases + a "ref" code shared by 50 listings: "design"
 * is in ~18 % of documents (title or description), "logo design" in ~1 %, a ref code in 0.001 %.
 * Prices: 1..500 USDC (3/4 of listings) or 0.01..5 SOL; statuses: 10 % sold, ~5 % reserved, rest available.
 */
/** What seed() needs of a client: node-postgres' pg.Client and PGlite both fit. */
export interface SqlClient {
  query(sql: string, params?: unknown[]): Promise<{ rows: unknown[] }>;
}

export const SUBJECTS = ['Logo', 'Brand', 'Website', 'Mobile app', 'Blog', 'SEO', 'Video', 'Podcast', 'Resume', 'Data', 'Smart contract', 'Landing page'];
export const SKILLS = ['design', 'writing', 'development', 'editing', 'audit', 'analysis', 'translation', 'illustration', 'consulting', 'testing'];
export const PHRASES = ['for startups', 'in 3 days', 'professional', 'premium package', 'with revisions', 'by an expert', 'fast delivery', 'on a budget'];
export const CATEGORIES = ['design', 'writing', 'development', 'marketing', 'video', 'consulting'];

const arr = (xs: string[]) => `ARRAY[${xs.map((x) => `'${x.replace(/'/g, "''")}'`).join(',')}]`;

/** Seed `n` listings into a migrated, empty database; returns the time it took in ms. */
export async function seed(client: SqlClient, n: number): Promise<number> {
  const t0 = performance.now();
  const sellers = Math.max(10, Math.floor(n / 100));
  const refs = Math.max(1, Math.floor(n / 50));
  const indexes = (
    (await client.query(
      `SELECT i.indexname, i.indexdef FROM pg_indexes i
        WHERE i.tablename = 'listings' AND i.schemaname = current_schema()
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`,
    )) as { rows: Array<{ indexname: string; indexdef: string }> }
  ).rows;
  await client.query(`SET maintenance_work_mem = '256MB'`);
  await client.query(`SET synchronous_commit = off`);
  await client.query('BEGIN');
  for (const ix of indexes) await client.query(`DROP INDEX "${ix.indexname}"`);
  await client.query(`SET LOCAL session_replication_role = replica`);
  await client.query(`
    INSERT INTO users (id, wallet, updated_at)
    SELECT md5('seller' || g)::uuid, 'BenchSeller' || g, now() FROM generate_series(0, ${sellers - 1}) g`);
  await client.query(`INSERT INTO users (id, wallet, updated_at) VALUES (md5('buyer')::uuid, 'BenchBuyer', now())`);
  await client.query(`
    INSERT INTO listings (id, seller_id, title, description, price_base_units, currency, category, duration_days, status,
                          token_mint_address, mint_signature, mint_slot, metadata_uri, created_at, updated_at)
    SELECT md5('listing' || g)::uuid,
           md5('seller' || (g % ${sellers}))::uuid,
           (${arr(SUBJECTS)})[1 + g % ${SUBJECTS.length}] || ' ' || (${arr(SKILLS)})[1 + (g / 7) % ${SKILLS.length}] || ' '
             || (${arr(PHRASES)})[1 + (g / 3) % ${PHRASES.length}] || ' ref ' || substr(md5((g % ${refs})::text), 1, 8),
           'Listing ' || g || ': ' || (${arr(SKILLS)})[1 + (g / 11) % ${SKILLS.length}] || ' services with care, delivered on time.',
           (1 + (g::bigint * 7919) % 500) * CASE WHEN g % 4 = 0 THEN 10000000 ELSE 1000000 END,
           CASE WHEN g % 4 = 0 THEN 'SOL' ELSE 'USDC' END,
           (${arr(CATEGORIES)})[1 + g % ${CATEGORIES.length}],
           1 + g % 30,
           CASE WHEN g % 10 = 0 THEN 'sold' WHEN g % 17 = 0 THEN 'reserved' ELSE 'available' END,
           'Mint' || g || repeat('x', 36 - length(g::text)), 'Sig' || repeat('y', 85), g, 'http://bench.test/api/v1/listings/' || g || '/token-metadata.json',
           timestamptz '2026-01-01' + (g || ' seconds')::interval, now()
      FROM generate_series(1, ${n}) g`);
  await client.query(`
    INSERT INTO orders (id, listing_id, buyer_id, seller_id, status, amount_base_units, currency, payment_mint, decimals,
                        fee_bps, escrow_address, vault_address, delivery_deadline, review_window_seconds, payment_expires_at, updated_at)
    SELECT md5('order' || l.id)::uuid, l.id, md5('buyer')::uuid, l.seller_id, 'completed', 1000000, 'USDC', 'mint', 6, 250,
           'e' || l.id, 'v' || l.id, now(), 0, now(), now()
      FROM listings l WHERE l.status = 'sold' AND abs(hashtext(l.id::text)) % 2 = 0`);
  await client.query(`
    INSERT INTO reviews (id, order_id, reviewer_id, seller_id, listing_id, rating, text)
    SELECT md5('review' || o.id)::uuid, o.id, o.buyer_id, o.seller_id, o.listing_id, 1 + abs(hashtext(o.id::text)) % 5, 'ok'
      FROM orders o`);
  // what the triggers maintain, as the search_scale migration backfills it (skipped on a schema
  // without it, so the harness can measure an earlier commit)
  const has = async (table: string, column?: string) =>
    (
      await client.query(
        `SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND ($2::text IS NULL OR column_name = $2)`,
        [table, column ?? null],
      )
    ).rows.length > 0;
  if (await has('listings', 'seller_rating')) await client.query(`
    UPDATE listings l SET seller_rating = r.avg, seller_review_count = r.cnt
      FROM (SELECT seller_id, round(avg(rating), 6) AS avg, count(*)::int AS cnt FROM reviews GROUP BY seller_id) r
     WHERE l.seller_id = r.seller_id`);
  if (await has('listing_category_counts')) await client.query(`
    INSERT INTO listing_category_counts (category, status, count)
    SELECT category, status, count(*)::int FROM listings GROUP BY category, status`);
  if (await has('search_words')) await client.query(`
    INSERT INTO search_words (word)
    SELECT DISTINCT w FROM listings, unnest(tsvector_to_array(to_tsvector('simple'::regconfig, title))) AS w
     WHERE length(w) BETWEEN 3 AND 64 ON CONFLICT DO NOTHING`);
  for (const ix of indexes) await client.query(ix.indexdef);
  await client.query('COMMIT');
  await client.query('VACUUM ANALYZE');
  return performance.now() - t0;
}
