/**
 * Marketplace storage: search and browse as parameterised raw SQL (Prisma.sql; user input is only
 * ever a bound parameter). Every sort is a keyset over (sort keys..., id) in one direction, so the
 * "after" condition is a single row comparison, and every query reads a bounded number of rows
 * whatever the page: docs/search-design.md has the measurements behind each choice.
 *
 * - Text match: `search_vector @@ (websearch_to_tsquery(cfg, text) || websearch_to_tsquery(cfg,
 *   correctedText))` (GIN listings_search_vector_idx). Typos are corrected before the query runs
 *   (the service looks unknown words up in `search_words`), so a typo costs no fuzzy scan of titles.
 * - relevance: the RELEVANCE_CANDIDATES newest matches are the candidate set, ranked by
 *   round(ts_rank(search_vector, q), 6); a common word no longer ranks every match on every page.
 *   Which index finds the candidates depends on what the database has (`SearchIndex`, detected once:
 *   `detectSearchIndexes`): with RUM (listings_search_rum_idx, migration 20261127100000_search_rum) one
 *   ordered index scan yields the matches newest first and stops after the candidates (with a category:
 *   listings_search_category_rum_idx over the category's own lexemes, migration
 *   20261128010000_search_category_rum), and a common text walks the newest listings instead (decided
 *   by a statement of its own, `walkGate`); with GIN only (PGlite, a server without the rum extension)
 *   the planner reads every match's row (bitmap) or walks the newest listings until enough match. Every
 *   form selects the same candidates, so the same pages.
 * - newest: (status[, category], created_at, id) btree range.
 * - price: one (status, currency, price_base_units, id) range per currency; across currencies the
 *   ranges are merged by UI price (base units / 10^decimals), each branch reading at most one page.
 * - rating: (status, seller_rating, seller_review_count, id), the reputation copied onto listings.
 * No query needs a transaction or a session setting.
 */
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { listingStatusIn, selectListings, toListingRecord, type ListingRow } from '../listings/index.js';
import type { ListingStatus } from '../listings/index.js';
import type { MarketplaceRepo, SearchCriteria, SearchRow, WordCandidate } from './marketplace.types.js';
import type { ReadDb } from '../../db/read-routing.js';
import { preparedRead, type PreparedStatement } from '../../db/prepared.js';

/** The available listings per category (a trigger-maintained table); $1: the status. */
const CATEGORY_COUNTS: PreparedStatement = {
  name: 'bazaar_category_counts_v1',
  text: 'SELECT category, count AS n FROM listing_category_counts WHERE status = $1',
};

/** text search configuration of the generated search_vector column (init migration) */
export const TS_CONFIG = 'english';
/**
 * Size of the relevance candidate set: the newest matches that are ranked. 1 000 keeps page 50 of 20
 * reachable; a query matching more listings ranks its 1 000 newest matches (docs/search-design.md).
 */
export const RELEVANCE_CANDIDATES = 1000;

/**
 * The full-text index search runs on: `rum` when listings_search_rum_idx exists (PostgreSQL with the
 * rum extension: the migration creates it where it can), else `gin` (listings_search_vector_idx, always
 * there: PGlite, PostgreSQL without rum).
 */
export type SearchIndex = 'rum' | 'gin';

/** name of the RUM index created by migration 20261127100000_search_rum where `rum` is available */
export const RUM_INDEX = 'listings_search_rum_idx';

/**
 * name of the RUM index over each listing's lexemes qualified by its category (column
 * search_category_vector), created by migration 20261128010000_search_category_rum where the RUM index is
 */
export const CATEGORY_RUM_INDEX = 'listings_search_category_rum_idx';

/** The full-text indexes `db` has (one catalogue read; errors of the read propagate). */
export async function detectSearchIndexes(db: PrismaClient): Promise<{ index: SearchIndex; byCategory: boolean }> {
  const rows = await db.$queryRaw<Array<{ rum: boolean; category: boolean }>>`
    SELECT EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ${RUM_INDEX}) AS rum,
           EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ${CATEGORY_RUM_INDEX}) AS category`;
  const rum = rows[0]?.rum === true;
  return { index: rum ? 'rum' : 'gin', byCategory: rum && rows[0]?.category === true };
}

/** Which full-text index `db` has (one catalogue read; errors of the read propagate). */
export async function detectSearchIndex(db: PrismaClient): Promise<SearchIndex> {
  return (await detectSearchIndexes(db)).index;
}

/**
 * The RUM index's ordering origin: `created_at <=| ORIGIN` is the distance back in time from it (RUM's
 * left distance operator), so ascending distance = newest first. Far enough in the future for any
 * created_at the service writes, near enough that millisecond steps stay exact in the float8 distance.
 */
const RUM_ORIGIN = Prisma.raw(`'3000-01-01 00:00:00+00'::timestamptz`);

type Cast = (v: string | number | null) => Prisma.Sql;
const asNumeric: Cast = (v) => Prisma.sql`${String(v)}::numeric`;
const asBigint: Cast = (v) => Prisma.sql`${String(v)}::bigint`;
const asTimestamp: Cast = (v) => Prisma.sql`${String(v)}::timestamptz`;

const cfg = Prisma.raw(`'${TS_CONFIG}'::regconfig`);

/** the tsquery of the search text, OR its typo-corrected form */
function tsquery(c: SearchCriteria): Prisma.Sql {
  const q = Prisma.sql`websearch_to_tsquery(${cfg}, ${c.text ?? ''})`;
  return c.correctedText ? Prisma.sql`(${q} || websearch_to_tsquery(${cfg}, ${c.correctedText}))` : q;
}

/** Filters shared by every sort; `currency` restricts to one currency (a price-sort branch). */
function filters(c: SearchCriteria, currency?: string, o: { walk?: boolean; query?: Prisma.Sql; byCategory?: boolean } = {}): Prisma.Sql[] {
  // what the listings read: an unpaid order's hold reads reserved (listings.sql.ts)
  const where: Prisma.Sql[] = [listingStatusIn(c.statuses)];
  // walk: the match as a row filter only, so the plan is the newest-first btree walk and never a bitmap
  // of every match through either full-text index. ts_match_vq is the function behind `@@`: a function
  // call is no index condition, and the planner gives it a generic selectivity (1/3) where `(... @@ q) IS
  // TRUE` kept the text's own, so for the common texts that walk it plans the walk, not a read of every
  // listing followed by a sort
  // `query`: match this tsquery instead of the text's (one half of a typo query: candidates)
  const q = o.query ?? tsquery(c);
  const byCategory = o.byCategory === true && c.text !== undefined && c.category !== undefined && !o.walk;
  if (c.text !== undefined) {
    if (o.walk) where.push(Prisma.sql`ts_match_vq(l.search_vector, ${q})`);
    // the category's own lexemes (listings_search_category_rum_idx, migration 20261128010000): a necessary
    // condition the index answers; the exact match is checked with the other row checks (below)
    else if (byCategory) where.push(Prisma.sql`l.search_category_vector @@ listing_category_tsquery(${q}, ${c.category!})`);
    else where.push(Prisma.sql`l.search_vector @@ ${q}`);
  }
  const checks = byCategory ? [Prisma.sql`l.search_vector @@ ${q}`] : where;
  if (c.category !== undefined) checks.push(Prisma.sql`l.category = ${c.category}`);
  if (c.currency !== undefined) checks.push(Prisma.sql`l.currency = ${c.currency}`);
  if (currency !== undefined && currency !== c.currency) checks.push(Prisma.sql`l.currency = ${currency}`);
  if (c.sellerWallet !== undefined) checks.push(Prisma.sql`l.seller_id IN (SELECT id FROM users WHERE wallet = ${c.sellerWallet})`);
  if (c.excludeId !== undefined) checks.push(Prisma.sql`l.id <> ${c.excludeId}::uuid`);
  if (c.price) {
    const bounds = currency === undefined ? c.price : c.price.filter((b) => b.currency === currency);
    const perCurrency = bounds.map((b) => {
      const parts = [Prisma.sql`l.currency = ${b.currency}`];
      if (b.min !== undefined) parts.push(Prisma.sql`l.price_base_units >= ${b.min.toString()}::numeric`);
      if (b.max !== undefined) parts.push(Prisma.sql`l.price_base_units <= ${b.max.toString()}::numeric`);
      return Prisma.sql`(${Prisma.join(parts, ' AND ')})`;
    });
    checks.push(perCurrency.length > 0 ? Prisma.sql`(${Prisma.join(perCurrency, ' OR ')})` : Prisma.sql`false`);
  }
  // with the category's lexemes, the row checks are one condition the planner cannot estimate (a CASE:
  // 1/2), so it estimates the candidates from the qualified lexemes' statistics and takes the ordered
  // scan, which reads rows newest first until RELEVANCE_CANDIDATES pass. Estimated one by one (the
  // exact match, the category it already implies, the price), they made it expect a few dozen rows and
  // read every match of the category (bitmap) to sort them: 23 600 rows for "design" in design with a
  // price range at 1M, 125 ms, against 5 100 rows and ~14 ms ordered (docs/search-design.md)
  if (byCategory) where.push(Prisma.sql`(CASE WHEN ${and(checks)} THEN true ELSE false END)`);
  return where;
}

const and = (where: Prisma.Sql[]) => Prisma.join(where, ' AND ');

/**
 * One keyset range: `keys` are column expressions over `l` (an index's order), `after` the row they
 * must come after. Yields id, s1.. (typed keys for ordering) and cursor_keys (text[]: the keys as the
 * cursor stores them).
 */
function range(o: {
  where: Prisma.Sql[];
  keys: Prisma.Sql[];
  /** the cursor position in the keys' own units (already cast), or none */
  after?: Prisma.Sql[];
  afterId?: string;
  desc: boolean;
  limit: number;
  /** typed sort key columns to output (default: the keys) */
  outKeys?: Prisma.Sql[];
  textKey?: (s: Prisma.Sql, i: number) => Prisma.Sql;
}): Prisma.Sql {
  const dir = Prisma.raw(o.desc ? 'DESC' : 'ASC');
  const where = [...o.where];
  if (o.after && o.afterId !== undefined) {
    where.push(Prisma.sql`(${Prisma.join([...o.keys, Prisma.sql`l.id`])}) ${Prisma.raw(o.desc ? '<' : '>')} (${Prisma.join([...o.after, Prisma.sql`${o.afterId}::uuid`])})`);
  }
  const out = o.outKeys ?? o.keys;
  const text = o.textKey ?? ((s: Prisma.Sql) => Prisma.sql`(${s})::text`);
  const cols = out.map((k, i) => Prisma.sql`${k} AS ${Prisma.raw(`s${i + 1}`)}`);
  const cursorKeys = Prisma.sql`ARRAY[${Prisma.join(out.map((k, i) => text(k, i)))}]::text[] AS cursor_keys`;
  return Prisma.sql`
    SELECT l.id, ${Prisma.join(cols)}, ${cursorKeys}
      FROM listings l
     WHERE ${and(where)}
     ORDER BY ${Prisma.join([...o.keys.map((k) => Prisma.sql`${k} ${dir}`), Prisma.sql`l.id ${dir}`])}
     LIMIT ${o.limit}`;
}

const isoMs = (s: Prisma.Sql) => Prisma.sql`to_char(${s} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** selectListings option of every search page: pass the page's cursor keys through */
const WITH_CURSOR_KEYS = { cursorKeys: true } as const;

/** ORDER BY over the page's typed keys and id */
function pageOrder(keyCount: number, desc: boolean): Prisma.Sql {
  const dir = desc ? 'DESC' : 'ASC';
  return Prisma.raw([...Array.from({ length: keyCount }, (_, i) => `page.s${i + 1} ${dir}`), `page.id ${dir}`].join(', '));
}

/**
 * Share of listings above which relevance walks the newest listings (GIN form) instead of the RUM scan:
 * the walk visits about RELEVANCE_CANDIDATES / share rows (5 %: 20 000 at most), while the RUM scan's
 * cost grows with the number of matches (it sorts them all by created_at inside the index; a word in
 * 19 % of 1 000 000 listings costs it ~200 ms, the walk ~5 ms). docs/search-design.md, "RUM at 1M".
 */
export const RUM_WALK_SHARE = 0.05;

/**
 * SQL boolean: the text's estimated share of listings is at least RUM_WALK_SHARE. The estimate is the
 * planner's own statistics (pg_stats.most_common_elems of listings.search_vector): the product of the
 * frequencies of the query's lexemes (independent words, as the planner assumes), the larger of the
 * text's and its typo correction's; a lexeme outside the statistics counts as rare (1e-6), and so does
 * everything before the first ANALYZE. An underestimate (an "or" query) only costs time: both forms
 * return the same candidates.
 */
function commonText(c: SearchCriteria): Prisma.Sql {
  const texts = [c.text ?? '', ...(c.correctedText ? [c.correctedText] : [])];
  return Prisma.sql`(SELECT COALESCE(max(a.share), 0) >= ${RUM_WALK_SHARE} FROM (
      SELECT exp(sum(ln(COALESCE(f.freq, 1e-6)))) AS share
        FROM unnest(${texts}::text[]) WITH ORDINALITY AS alt(t, k)
       CROSS JOIN LATERAL unnest(tsvector_to_array(to_tsvector(${cfg}, alt.t))) AS w(lex)
        LEFT JOIN (SELECT e.lex, e.freq
                     FROM pg_stats s CROSS JOIN LATERAL unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS e(lex, freq)
                    WHERE s.schemaname = current_schema() AND s.tablename = 'listings' AND s.attname = 'search_vector') f ON f.lex = w.lex
       GROUP BY alt.k) a)`;
}

/**
 * The statement that decides how a relevance search on RUM finds its candidates, or null when there is
 * nothing to decide (not a relevance text search within the RUM index's predicate, or a price bound:
 * then the RUM scan). It yields one row `{ walk: boolean }`: true when the text is common
 * (`commonText`), and the search then walks the newest listings (`buildSearch(c, 'rum', { walk: true })`).
 * A statement of its own, run before the search: with the choice inside the search statement (a
 * one-time filter between two branches) the planner costed the branch that did not run too, and the
 * walk's estimate for a rare text (the newest-first walk, or a sequential scan, expected to read most
 * of the table before 1 000 matches) pushed the statement past jit_above_cost: PostgreSQL then
 * JIT-compiled every RUM search, 50-80 ms for a 10 ms statement (docs/search-design.md).
 */
export function walkGate(c: SearchCriteria, index: SearchIndex): Prisma.Sql | null {
  if (index !== 'rum' || c.sort !== 'relevance' || c.text === undefined || !rumFits(c) || c.price) return null;
  return Prisma.sql`SELECT ${commonText(c)} AS walk`;
}

/**
 * The candidate set of relevance: id and search_vector of the RELEVANCE_CANDIDATES newest matches
 * (created_at DESC, id DESC).
 * - GIN form: the planner walks the (status[, category], created_at, id) btree filtering by the match, or
 *   reads every match (bitmap) and sorts.
 * - RUM form (`rum`, criteria within the index's predicate: public search reads `available` only): the
 *   RUM scan in created_at order (category an index condition too) yields the newest
 *   RELEVANCE_CANDIDATES; the listings created in the same millisecond as the oldest of them are then
 *   read whole (btree (status, created_at, id): usually one row), so a tie at the boundary is broken by
 *   id exactly as the GIN form breaks it. A typo query (text OR its correction) is two ordered scans, one
 *   per tsquery (the second without the first's matches), merged by created_at: RUM runs an OR of two
 *   tsqueries over the union of their lexemes' posting lists (every listing with "logo" or "design"),
 *   each AND alone over their intersection only, and the uncorrected half, whose unknown word has few
 *   entries or none, costs next to nothing.
 * - walk (`walk`: the `walkGate` statement found the text common; never with a price bound): the
 *   newest-first btree walk with the match as a row filter, about RELEVANCE_CANDIDATES / share rows,
 *   where the RUM scan would sort every match.
 */
function candidates(c: SearchCriteria, index: SearchIndex, walk: boolean, byCategory: boolean): Prisma.Sql {
  const where = and(filters(c));
  const newest = (w: Prisma.Sql) => Prisma.sql`(SELECT l.id, l.search_vector FROM listings l
                   WHERE ${w}
                   ORDER BY l.created_at DESC, l.id DESC
                   LIMIT ${RELEVANCE_CANDIDATES})`;
  if (index !== 'rum' || !rumFits(c)) return newest(where);
  if (walk && !c.price) return newest(and(filters(c, undefined, { walk: true })));
  const ordered = (query: Prisma.Sql, extra: Prisma.Sql = Prisma.empty) => Prisma.sql`
        SELECT l.id, l.search_vector, l.created_at FROM listings l
         WHERE ${and(filters(c, undefined, { query, byCategory }))}${extra}
         ORDER BY l.created_at <=| ${RUM_ORIGIN}
         LIMIT ${RELEVANCE_CANDIDATES}`;
  const asTyped = Prisma.sql`websearch_to_tsquery(${cfg}, ${c.text ?? ''})`;
  const top = c.correctedText
    ? Prisma.sql`
        SELECT s.id, s.search_vector, s.created_at FROM (
          (${ordered(asTyped)})
          UNION ALL
          (${ordered(Prisma.sql`websearch_to_tsquery(${cfg}, ${c.correctedText})`, Prisma.sql` AND NOT (l.search_vector @@ ${asTyped})`)})
        ) s
         ORDER BY s.created_at DESC
         LIMIT ${RELEVANCE_CANDIDATES}`
    : ordered(tsquery(c));
  return Prisma.sql`(
      WITH top AS MATERIALIZED (${top}),
      edge AS (SELECT min(top.created_at) AS t FROM top)
      SELECT u.id, u.search_vector FROM (
        SELECT top.id, top.search_vector, top.created_at FROM top WHERE top.created_at > (SELECT edge.t FROM edge)
        UNION ALL
        SELECT l.id, l.search_vector, l.created_at FROM listings l
         WHERE ${where} AND l.created_at = (SELECT edge.t FROM edge)
      ) u
      ORDER BY u.created_at DESC, u.id DESC
      LIMIT ${RELEVANCE_CANDIDATES})`;
}

/** the RUM index holds the rows of status 'available' only (its partial predicate) */
const rumFits = (c: SearchCriteria) => c.statuses.length === 1 && c.statuses[0] === 'available';

/**
 * The SQL of one search page. `index`: the full-text index the database has (`detectSearchIndex`);
 * only relevance's candidate set depends on it, and both forms give the same rows in the same order.
 */
export function buildSearch(c: SearchCriteria, index: SearchIndex = 'gin', o: { walk?: boolean; byCategory?: boolean } = {}): Prisma.Sql {
  const after = c.after;
  const cast = (casts: Cast[]) => (after ? casts.map((f, i) => f(after.keys[i] ?? null)) : undefined);
  switch (c.sort) {
    case 'newest': {
      const page = range({
        where: filters(c),
        keys: [Prisma.sql`l.created_at`],
        after: cast([asTimestamp]),
        afterId: after?.id,
        desc: true,
        limit: c.limit,
        textKey: isoMs,
      });
      return selectListings(page, pageOrder(1, true), WITH_CURSOR_KEYS);
    }
    case 'rating': {
      const page = range({
        where: filters(c),
        keys: [Prisma.sql`l.seller_rating`, Prisma.sql`l.seller_review_count`],
        after: cast([asNumeric, asBigint]),
        afterId: after?.id,
        desc: true,
        limit: c.limit,
      });
      return selectListings(page, pageOrder(2, true), WITH_CURSOR_KEYS);
    }
    case 'price_asc':
    case 'price_desc': {
      const desc = c.sort === 'price_desc';
      const single = c.currency ?? (c.decimals.length === 1 ? c.decimals[0]!.currency : undefined);
      if (single !== undefined) {
        // one currency: base units order = UI price order; the cursor holds base units
        const page = range({
          where: filters(c, single),
          keys: [Prisma.sql`l.price_base_units`],
          after: cast([asNumeric]),
          afterId: after?.id,
          desc,
          limit: c.limit,
        });
        return selectListings(page, pageOrder(1, desc), WITH_CURSOR_KEYS);
      }
      // several currencies: one range per currency in base units, merged by the exact UI price
      // (base units / 10^decimals); the cursor holds the UI price, scaled back per branch
      const currencies = c.price ? c.decimals.filter((d) => c.price!.some((b) => b.currency === d.currency)) : c.decimals;
      if (currencies.length === 0) return selectListings(Prisma.sql`SELECT NULL::uuid AS id, NULL::numeric AS s1, NULL::text[] AS cursor_keys WHERE false`, pageOrder(1, desc), WITH_CURSOR_KEYS);
      const branches = currencies.map((d) => {
        const scale = Prisma.raw(`${(10n ** BigInt(d.decimals)).toString()}::numeric`);
        return Prisma.sql`(${range({
          where: filters(c, d.currency),
          keys: [Prisma.sql`l.price_base_units`],
          outKeys: [Prisma.sql`trim_scale(l.price_base_units / ${scale})`],
          after: after ? [Prisma.sql`(${String(after.keys[0] ?? null)}::numeric * ${scale})`] : undefined,
          afterId: after?.id,
          desc,
          limit: c.limit,
        })})`;
      });
      const merged = Prisma.sql`
        SELECT u.id, u.s1, u.cursor_keys FROM (${Prisma.join(branches, ' UNION ALL ')}) u
         ORDER BY u.s1 ${Prisma.raw(desc ? 'DESC' : 'ASC')}, u.id ${Prisma.raw(desc ? 'DESC' : 'ASC')}
         LIMIT ${c.limit}`;
      return selectListings(merged, pageOrder(1, desc), WITH_CURSOR_KEYS);
    }
    case 'relevance': {
      // the candidate set: the newest RELEVANCE_CANDIDATES matches (RUM: one ordered index scan; GIN: a
      // (status[, category], created_at) range filtered by the match, or the bitmap: the planner picks)
      const rank = Prisma.sql`round(ts_rank(cand.search_vector, ${tsquery(c)})::numeric, 6)`;
      const keyset = after
        ? Prisma.sql`WHERE (r.s1, r.id) < (${asNumeric(after.keys[0] ?? null)}, ${after.id}::uuid)`
        : Prisma.empty;
      const page = Prisma.sql`
        SELECT r.id, r.s1, ARRAY[r.s1::text] AS cursor_keys FROM (
          SELECT cand.id, ${rank} AS s1
            FROM ${candidates(c, index, o.walk === true, o.byCategory === true)} cand
        ) r
        ${keyset}
         ORDER BY r.s1 DESC, r.id DESC
         LIMIT ${c.limit}`;
      return selectListings(page, pageOrder(1, true), WITH_CURSOR_KEYS);
    }
  }
}

/**
 * `readDb`: the client each query reads from (db/read-routing.ts: a standby for an anonymous GET while its
 * replay lag is within the bound, else the primary); default: `db`. Every query here is a public read.
 */
export function createMarketplaceRepo(
  primary: PrismaClient,
  readDb: ReadDb = () => primary,
  opts: {
    /** the full-text index to search with; default: detected on the primary at the first search */
    searchIndex?: SearchIndex;
    /**
     * with `rum`: whether text + category searches use the category-qualified lexemes
     * (CATEGORY_RUM_INDEX); default: detected (whether the index exists)
     */
    byCategory?: boolean;
  } = {},
): MarketplaceRepo {
  // a standby has the primary's indexes (physical replication), so one detection serves both
  type Found = { index: SearchIndex; byCategory: boolean };
  const given = opts.searchIndex;
  let found: Promise<Found> | undefined =
    given === 'gin' || (given === 'rum' && opts.byCategory !== undefined) ? Promise.resolve({ index: given, byCategory: given === 'rum' && opts.byCategory === true }) : undefined;
  const indexes = () =>
    (found ??= detectSearchIndexes(primary)
      .then((d): Found => (given ? { index: given, byCategory: given === 'rum' && d.byCategory } : d))
      .catch((err: unknown) => {
        found = undefined; // retried at the next search
        throw err;
      }));
  return {
    searchIndex: async () => (await indexes()).index,

    async search(c: SearchCriteria): Promise<SearchRow[]> {
      const db = readDb();
      const { index, byCategory } = c.text !== undefined && c.sort === 'relevance' ? await indexes() : { index: 'gin' as const, byCategory: false };
      const gate = walkGate(c, index);
      const walk = gate ? (await db.$queryRaw<Array<{ walk: boolean }>>(gate))[0]?.walk === true : false;
      const rows = await db.$queryRaw<ListingRow[]>(buildSearch(c, index, { walk, byCategory }));
      return rows.map((r) => ({
        listing: toListingRecord(r),
        keys: r.cursor_keys ?? [],
      }));
    },

    async get(id: string) {
      const rows = await readDb().$queryRaw<ListingRow[]>(selectListings(Prisma.sql`SELECT ${id}::uuid AS id`, Prisma.sql`page.id`));
      return rows[0] ? toListingRecord(rows[0]) : null;
    },

    async wordCandidates(words: readonly string[], perWord: number): Promise<WordCandidate[]> {
      if (words.length === 0) return [];
      // KNN over the GiST trigram index (search_words_word_trgm_idx): no similarity threshold setting
      const rows = await readDb().$queryRaw<Array<{ input: string; word: string; similarity: number }>>`
        SELECT w.input, c.word, similarity(c.word, w.input)::float8 AS similarity
          FROM unnest(${[...words]}::text[]) AS w(input)
         CROSS JOIN LATERAL (SELECT s.word FROM search_words s ORDER BY s.word <-> w.input LIMIT ${perWord}) c
         WHERE NOT EXISTS (SELECT 1 FROM search_words k WHERE k.word = w.input)`;
      return rows.map((r) => ({ input: r.input, word: r.word, similarity: Number(r.similarity) }));
    },

    async countByCategory(status: ListingStatus) {
      // maintained by a trigger on listings (migration 20261123130707_search_scale): no count over listings
      // one prepared statement on the driver (db/prepared.ts): GET /categories is among the hottest reads
      const rows = await preparedRead<{ category: string; n: number | string }>(readDb(), CATEGORY_COUNTS, [status]);
      return new Map(rows.map((r) => [r.category, Number(r.n)]));
    },
  };
}
