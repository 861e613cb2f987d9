/**
 * Search on RUM (issue 28 item 3): where PostgreSQL has the `rum` extension the migration builds
 * listings_search_rum_idx and relevance finds its candidates with one ordered RUM scan; PGlite (and a
 * server without rum) keeps GIN. Checked by what the database returns, never by timings:
 * - which index each engine gets (the migration, `detectSearchIndex`, the repo's choice, the server's
 *   start-up line "search index: rum|gin");
 * - the RUM form and the GIN form (run with the RUM index dropped inside a rolled-back transaction, so
 *   it cannot read RUM as a bitmap) return the same pages for the same queries, page after page, with
 *   many listings sharing one created_at (ties at the candidate boundary are broken by id in both).
 * The PostgreSQL part runs when TEST_DATABASE_URL is set; CI sets BAZAAR_REQUIRE_RUM=1 (its server has
 * postgresql-15-rum), so there a missing RUM index fails instead of skipping.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seed } from '../benchmarks/lib/seed.js';
import { createDb, type Db } from '../server/src/db/client.js';
import { buildSearch, CATEGORY_RUM_INDEX, createMarketplaceRepo, detectSearchIndex, detectSearchIndexes, RUM_INDEX, walkGate } from '../server/src/modules/marketplace/marketplace.repo.js';
import type { PriceBounds, SearchCriteria, SearchRow } from '../server/src/modules/marketplace/marketplace.types.js';
import { main } from '../server/src/main.js';
import { freshPGlite, freshPostgres, TEST_DATABASE_URL } from './helpers/db.js';

/** start the real service (server/src/main.ts) on `env` and return its start-up log lines that name the search index */
async function startupSearchIndexLines(env: Record<string, string>): Promise<string[]> {
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bazaar-rum-main-'));
  try {
    const running = await main({ DATA_DIR: dir, PORT: '0', HOST: '127.0.0.1', ...env }, { log });
    await running.shutdown();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return lines.map((l) => JSON.parse(l) as { msg: string; searchIndex?: string }).filter((l) => l.msg.startsWith('search index')).map((l) => `${l.msg} (${l.searchIndex})`);
}

const DECIMALS = [
  { currency: 'USDC', decimals: 6 },
  { currency: 'SOL', decimals: 9 },
];
const PRICE_10_200: PriceBounds[] = [
  { currency: 'USDC', decimals: 6, min: 10_000_000n, max: 200_000_000n },
  { currency: 'SOL', decimals: 9, min: 10_000_000_000n, max: 200_000_000_000n },
];
const ANY_PRICE: PriceBounds[] = [
  { currency: 'USDC', decimals: 6, min: 1n },
  { currency: 'SOL', decimals: 9, min: 1n },
];

/** the relevance queries of the bench's search classes (benchmarks/bench.ts), as the service builds them */
const QUERIES: Array<[string, Partial<SearchCriteria>]> = [
  ['common word "design" (walks the newest listings)', { text: 'design' }],
  ['"logo design" (RUM scan)', { text: 'logo design' }],
  ['typo "logo desgin" + its correction', { text: 'logo desgin', correctedText: 'logo design' }],
  ['"video editing" + category video (no match)', { text: 'video editing', category: 'video' }],
  ['"design" + category design', { text: 'design', category: 'design' }],
  ['"design" + price range + category design', { text: 'design', category: 'design', price: PRICE_10_200 }],
  ['"design" + price range', { text: 'design', price: PRICE_10_200 }],
  ['"writing" + category writing + USDC', { text: 'writing', category: 'writing', currency: 'USDC' }],
  // a price bound takes the RUM form whatever the word: thousands of matches, ties at the 1 000th
  ['"design" + any price (RUM, > 1 000 matches)', { text: 'design', price: ANY_PRICE }],
  ['"services" (every listing) + any price', { text: 'services', price: ANY_PRICE }],
  // a typo query is two ordered RUM scans merged (one per tsquery): halves that overlap (every "logo
  // design" listing matches "logo" too), each with more than 1 000 matches and ties at the boundary
  ['text OR correction, overlapping halves ("logo design" | "logo")', { text: 'logo design', correctedText: 'logo' }],
  ['text OR correction, both common ("writing" | "editing")', { text: 'writing', correctedText: 'editing' }],
  ['text OR correction + category + price ("logo" | "brand")', { text: 'logo', correctedText: 'brand', category: 'design', price: PRICE_10_200 }],
  // text + category reads the category's qualified lexemes (a necessary condition) and checks the match
  // exactly: phrases (AND there), exclusions (dropped there), nothing indexable (every listing of the category)
  ['phrase + category ("\"logo design\"" in design)', { text: '"logo design"', category: 'design' }],
  ['exclusion + category ("design -logo" in design)', { text: 'design -logo', category: 'design' }],
  ['exclusion only + category ("-logo" in design)', { text: '-logo', category: 'design' }],
  ['or + category + price ("audit or testing" in development)', { text: 'audit or testing', category: 'development', price: PRICE_10_200 }],
];

const criteria = (c: Partial<SearchCriteria>, after?: SearchCriteria['after']): SearchCriteria => ({
  statuses: ['available'],
  decimals: DECIMALS,
  sort: 'relevance',
  limit: 21,
  ...c,
  ...(after ? { after } : {}),
});

describe('PGlite', () => {
  it('keeps GIN: no rum extension, no RUM index, the repo searches with GIN', async () => {
    const pglite = await freshPGlite();
    const db = await createDb({ pglite });
    try {
      expect(await detectSearchIndex(db.prisma)).toBe('gin');
      expect(await createMarketplaceRepo(db.prisma).searchIndex()).toBe('gin');
      const ix = await pglite.query(`SELECT 1 FROM pg_indexes WHERE indexname = $1`, [RUM_INDEX]);
      expect(ix.rows).toHaveLength(0);
    } finally {
      await db.close();
      await pglite.close();
    }
  });

  it('the server says at start-up that it searches with GIN', async () => {
    expect(await startupSearchIndexLines({})).toEqual(['search index: gin (gin)']);
  }, 120_000);
});

describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL', () => {
  let target: Awaited<ReturnType<typeof freshPostgres>>;
  let db: Db;
  let client: pg.Client;
  let rumAvailable = false;

  beforeAll(async () => {
    target = await freshPostgres();
    db = await createDb({ databaseUrl: target.url });
    client = new pg.Client({ connectionString: target.url });
    await client.connect();
    rumAvailable = (await client.query(`SELECT 1 FROM pg_available_extensions WHERE name = 'rum'`)).rows.length > 0;
    await seed(client, 20_000);
    // ten-minute buckets: 600 listings share each created_at, so the 1 000th candidate of a query
    // ties with listings beyond it (the boundary the RUM form must break by id like the GIN form)
    await client.query(`UPDATE listings SET created_at = date_trunc('hour', created_at) + floor(extract(minute FROM created_at) / 10) * interval '10 minutes'`);
    await client.query('VACUUM ANALYZE listings');
  }, 240_000);
  afterAll(async () => {
    await client?.end();
    await db?.close();
    await target?.drop();
  });

  it('the migration builds the RUM index where rum is available, and search uses it', async () => {
    if (process.env.BAZAAR_REQUIRE_RUM === '1') expect(rumAvailable, 'BAZAAR_REQUIRE_RUM=1 but this PostgreSQL has no rum extension').toBe(true);
    const ix = await client.query(`SELECT indexdef FROM pg_indexes WHERE indexname = $1`, [RUM_INDEX]);
    expect(ix.rows.length).toBe(rumAvailable ? 1 : 0);
    const expected = rumAvailable ? 'rum' : 'gin';
    expect(await detectSearchIndex(db.prisma)).toBe(expected);
    expect(await createMarketplaceRepo(db.prisma).searchIndex()).toBe(expected);
    if (rumAvailable) {
      expect(ix.rows[0].indexdef).toMatch(/USING rum \(search_vector rum_tsvector_addon_ops, category, created_at\) WITH \(attach=created_at, "to"=search_vector\) WHERE \(status = .available.::text\)/);
      // a mid-frequency query reads the RUM index (plan of the statement the repo sends)
      const q = buildSearch(criteria({ text: 'logo design' }), 'rum');
      const plan = JSON.stringify((await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${q.text}`, q.values as unknown[])).rows[0]['QUERY PLAN']);
      expect(plan).toContain(`"Index Name":"${RUM_INDEX}"`);
    }
  });

  /** the plan nodes PostgreSQL makes for the statement the repo sends (EXPLAIN, FORMAT JSON), depth first */
  async function planOf(c: Partial<SearchCriteria>, o: { walk?: boolean; byCategory?: boolean } = {}): Promise<Array<Record<string, unknown>>> {
    const q = buildSearch(criteria(c), 'rum', o);
    const root = (await client.query(`EXPLAIN (FORMAT JSON) ${q.text}`, q.values.map((v) => (typeof v === 'bigint' ? v.toString() : v)))).rows[0]['QUERY PLAN'][0].Plan;
    const nodes: Array<Record<string, unknown>> = [];
    const walk = (n: Record<string, unknown>) => {
      nodes.push(n);
      for (const child of (n.Plans as Array<Record<string, unknown>> | undefined) ?? []) walk(child);
    };
    walk(root);
    return nodes;
  }
  /** how each node that reads listings reads them: "<node type> <index or ''>: <condition or filter>" */
  const listingReads = (nodes: Array<Record<string, unknown>>) =>
    nodes.filter((n) => n['Relation Name'] === 'listings' || n['Index Name'] === RUM_INDEX || n['Index Name'] === CATEGORY_RUM_INDEX).map((n) => `${String(n['Node Type'])} ${String(n['Index Name'] ?? '')}: ${String(n['Index Cond'] ?? n.Filter ?? n['Recheck Cond'] ?? '')}`);

  it('a RUM search statement holds one way to its candidates: the walk for a common text, else the RUM scan (the gate is a statement of its own)', async () => {
    if (!rumAvailable) return;
    // a rare text: the RUM scan (then the listings of the boundary millisecond); no walk planned beside
    // it (whose estimate, a read of most of the table, made PostgreSQL JIT-compile the statement)
    const rare: Array<[string, Partial<SearchCriteria>]> = [
      ['"logo design"', { text: 'logo design' }],
      ['"video editing" + category', { text: 'video editing', category: 'video' }],
      ['"design" + category + price', { text: 'design', category: 'design', price: PRICE_10_200 }],
    ];
    for (const [name, c] of rare) {
      const nodes = await planOf(c, { byCategory: true });
      const reads = listingReads(nodes);
      expect(reads.filter((r) => r.startsWith('Seq Scan') || (r.includes('ts_match_vq') && !r.includes('search_category_vector')) || r.includes('IS TRUE')), `${name}\n${reads.join('\n')}`).toEqual([]);
      expect(reads.filter((r) => r.includes(RUM_INDEX) || r.includes(CATEGORY_RUM_INDEX)).length, reads.join('\n')).toBeGreaterThan(0);
      expect(JSON.stringify(nodes)).not.toContain('pg_statistic');
    }
    // a common text walks: no RUM scan planned beside the walk
    const reads = listingReads(await planOf({ text: 'design' }, { walk: true }));
    expect(reads.filter((r) => r.includes(RUM_INDEX))).toEqual([]);
    expect(reads.filter((r) => r.includes('ts_match_vq'))).toHaveLength(1);

    // which of the two: the gate statement, from the planner's statistics (walkGate)
    const walks = async (c: Partial<SearchCriteria>) => {
      const gate = walkGate(criteria(c), 'rum');
      return gate ? ((await client.query(gate.text, gate.values as unknown[])).rows[0] as { walk: boolean }).walk : null;
    };
    expect(await walks({ text: 'design' })).toBe(true); // in ~18 % of listings
    expect(await walks({ text: 'logo design' })).toBe(false); // ~1 %
    expect(await walks({ text: 'design', price: PRICE_10_200 })).toBe(null); // a price bound: always the RUM scan
    expect(walkGate(criteria({ text: 'design' }), 'gin')).toBe(null);
    expect(walkGate(criteria({ text: 'design', statuses: ['sold'] }), 'rum')).toBe(null);
  });

  it('text + category reads the lexemes of the category (listings_search_category_rum_idx), not every listing of the category', async () => {
    if (!rumAvailable) return;
    expect(await detectSearchIndexes(db.prisma)).toEqual({ index: 'rum', byCategory: true });
    const ix = await client.query(`SELECT indexdef FROM pg_indexes WHERE indexname = $1`, [CATEGORY_RUM_INDEX]);
    expect(ix.rows[0].indexdef).toMatch(/USING rum \(search_category_vector rum_tsvector_addon_ops, created_at\) WITH \(attach=created_at, "to"=search_category_vector\) WHERE \(status = .available.::text\)/);
    // the qualified lexemes of a listing, and queries mapped onto them as a necessary condition
    const mapped = (
      await client.query(
        `SELECT listing_category_tsvector(to_tsvector('english', 'Logo design'), 'design')::text AS v,
                listing_category_tsquery(websearch_to_tsquery('english', '"logo design" -video or brand*'), 'design')::text AS q,
                listing_category_tsquery(websearch_to_tsquery('english', '-video'), 'design')::text AS negated,
                listing_category_tsquery(to_tsquery('simple', 'a <2> b:*'), 'o''d\\d')::text AS odd`,
      )
    ).rows[0];
    expect(mapped).toEqual({
      v: `'design:' 'design:design' 'design:logo'`,
      q: `'design:logo' & 'design:design' | 'design:brand'`,
      negated: `'design:'`,
      odd: `'o''d\\\\d:a' & 'o''d\\\\d:b':*`,
    });
    for (const c of [{ text: 'video editing', category: 'video' }, { text: 'design', category: 'design', price: PRICE_10_200 }, { text: 'logo', correctedText: 'brand', category: 'design' }]) {
      const reads = listingReads(await planOf(c, { byCategory: true }));
      const rum = reads.filter((r) => r.includes('_rum_idx'));
      expect(rum.length, reads.join('\n')).toBeGreaterThan(0);
      expect(rum.filter((r) => !r.includes(CATEGORY_RUM_INDEX) && !r.includes('created_at = ')), reads.join('\n')).toEqual([]);
    }
  });

  it('a typo query reads its two tsqueries apart, never through one scan of their OR', async () => {
    if (!rumAvailable) return;
    const nodes = await planOf({ text: 'logo desgin', correctedText: 'logo design' });
    // index conditions and rechecks; the OR only where the listings of the boundary millisecond are read again
    const conds = nodes.flatMap((n) => [n['Index Cond'], n['Recheck Cond']]).filter((x): x is string => typeof x === 'string' && x.includes('search_vector @@'));
    const shown = listingReads(nodes).join('\n');
    expect(conds.filter((x) => x.includes(`'logo'' & ''desgin'`) && !x.includes(' | ')), shown).not.toEqual([]);
    expect(conds.filter((x) => x.includes(`'logo'' & ''design'`) && !x.includes(' | ')), shown).not.toEqual([]);
    expect(conds.filter((x) => x.includes(' | ') && !x.includes('created_at = ')), shown).toEqual([]);
  });

  /** the GIN form's pages with the RUM index out of reach (dropped inside a transaction, rolled back): the reference */
  async function ginPages(c: Partial<SearchCriteria>): Promise<string[][]> {
    const pages: string[][] = [];
    await client.query('BEGIN');
    try {
      await client.query(`DROP INDEX ${RUM_INDEX}`);
      let after: SearchCriteria['after'];
      for (let page = 1; page <= 50; page++) {
        const q = buildSearch(criteria(c, after), 'gin');
        const rows = (await client.query(q.text, q.values.map((v) => (typeof v === 'bigint' ? v.toString() : v)))).rows as Array<{ id: string; cursor_keys: string[] }>;
        pages.push(rows.map((r) => `${r.id} ${r.cursor_keys.join(',')}`));
        if (rows.length <= 20) break;
        after = { keys: rows[19]!.cursor_keys, id: rows[19]!.id };
      }
    } finally {
      await client.query('ROLLBACK');
    }
    return pages;
  }

  it('the server says at start-up which index it searches with (rum here when installed)', async () => {
    const expected = rumAvailable ? 'rum' : 'gin';
    expect(await startupSearchIndexLines({ DATABASE_URL: target.url })).toEqual([`search index: ${expected} (${expected})`]);
  }, 120_000);

  it.each(QUERIES)('RUM and GIN give the same pages: %s', async (_name, c) => {
    if (!rumAvailable) return; // nothing to compare (BAZAAR_REQUIRE_RUM makes the test above fail)
    const reference = await ginPages(c);
    const rum = createMarketplaceRepo(db.prisma, undefined, { searchIndex: 'rum' });
    const ids = (rows: SearchRow[]) => rows.map((r) => `${r.listing.id} ${r.keys.join(',')}`);
    let after: SearchCriteria['after'];
    let total = 0;
    for (let page = 1; page <= reference.length; page++) {
      const a = await rum.search(criteria(c, after));
      expect(ids(a), `page ${page}`).toEqual(reference[page - 1]);
      total += Math.min(a.length, 20);
      if (a.length <= 20) break;
      const last = a[19]!;
      after = { keys: last.keys, id: last.listing.id };
    }
    // the candidate set is the 1 000 newest matches: every query here that has them reaches it
    const matches = Number(
      (
        await client.query(
          `SELECT count(*) AS n FROM listings l WHERE l.status = 'available' AND l.taken_down_at IS NULL AND l.open_orders < l.capacity
              AND l.search_vector @@ (websearch_to_tsquery('english', $1) || websearch_to_tsquery('english', $2))
              AND ($3::text IS NULL OR l.category = $3) AND ($4::text IS NULL OR l.currency = $4)`,
          [c.text, c.correctedText ?? c.text, c.category ?? null, c.currency ?? null],
        )
      ).rows[0].n,
    );
    if (!c.price) expect(total).toBe(Math.min(matches, 1000));
  });
});
