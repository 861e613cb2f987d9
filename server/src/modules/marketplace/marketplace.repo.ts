/**
 * Marketplace storage: search and browse as parameterised raw SQL (Prisma.sql; user input is only
 * ever a bound parameter). Every sort is a keyset over (sort keys..., id) in one direction, so the
 * "after" condition is a single row comparison.
 *
 * Text match: `search_vector @@ websearch_to_tsquery(cfg, q)` (GIN listings_search_vector_idx) OR
 * `q <% title` (trigram word similarity >= WORD_SIMILARITY, GIN listings_title_trgm_idx) for typos.
 * The threshold is a GUC, set with set_config(..., is_local) in the search's own transaction, together
 * with enable_seqscan=off so text searches always go through the GIN indexes (see search()).
 * Relevance = round(ts_rank(search_vector, q) + TITLE_SIMILARITY_WEIGHT * word_similarity(q, title), 6).
 */
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { selectListings, toListingRecord, type ListingRow } from '../listings/listings.sql.js';
import type { ListingStatus } from '../listings/listings.types.js';
import type { MarketplaceRepo, SearchCriteria, SearchRow } from './marketplace.types.js';

/** text search configuration of the generated search_vector column (init migration) */
export const TS_CONFIG = 'english';
/** minimum trigram word similarity of the query to the title for a typo match ("desgin" ~ "design" = 0.43) */
export const WORD_SIMILARITY = 0.4;
export const TITLE_SIMILARITY_WEIGHT = 0.5;

interface Plan {
  /** sort key expressions over `l` (and `rs`, `q`), as text-castable values */
  keys: Prisma.Sql[];
  /** SQL casts of the cursor key parameters, one per key */
  casts: Array<(v: string | number | null) => Prisma.Sql>;
  desc: boolean;
  needsRating: boolean;
}

const asNumeric = (v: string | number | null) => Prisma.sql`${String(v)}::numeric`;
const asTimestamp = (v: string | number | null) => Prisma.sql`${String(v)}::timestamptz`;

function plan(c: SearchCriteria): Plan {
  const tsq = Prisma.sql`websearch_to_tsquery(${Prisma.raw(`'${TS_CONFIG}'`)}, ${c.text ?? ''})`;
  switch (c.sort) {
    case 'relevance':
      return {
        keys: [
          Prisma.sql`round((ts_rank(l.search_vector, ${tsq}) + ${TITLE_SIMILARITY_WEIGHT}::real * word_similarity(${c.fuzzyText ?? ''}, l.title))::numeric, 6)`,
        ],
        casts: [asNumeric],
        desc: true,
        needsRating: false,
      };
    case 'price_asc':
    case 'price_desc': {
      // One currency: base units order = UI price order, and the btree on price_base_units applies.
      // Several: UI price = base units / 10^decimals of the listing's currency (exact numeric).
      const key =
        c.currency !== undefined || c.decimals.length <= 1
          ? Prisma.sql`l.price_base_units`
          : Prisma.sql`trim_scale(l.price_base_units / (CASE l.currency ${Prisma.join(
              c.decimals.map((d) => Prisma.sql`WHEN ${d.currency} THEN ${(10n ** BigInt(d.decimals)).toString()}::numeric`),
              ' ',
            )} ELSE 1::numeric END))`;
      return { keys: [key], casts: [asNumeric], desc: c.sort === 'price_desc', needsRating: false };
    }
    case 'rating':
      return {
        keys: [Prisma.sql`COALESCE(rs.avg, 0)`, Prisma.sql`COALESCE(rs.cnt, 0)`],
        casts: [asNumeric, (v) => Prisma.sql`${String(v)}::bigint`],
        desc: true,
        needsRating: true,
      };
    case 'newest':
      return { keys: [Prisma.sql`l.created_at`], casts: [asTimestamp], desc: true, needsRating: false };
  }
}

function statusIn(statuses: readonly ListingStatus[]): Prisma.Sql {
  return statuses.length > 0 ? Prisma.sql`l.status IN (${Prisma.join(statuses)})` : Prisma.sql`false`;
}

export function buildSearch(c: SearchCriteria): Prisma.Sql {
  const p = plan(c);
  const where: Prisma.Sql[] = [statusIn(c.statuses)];
  if (c.text !== undefined) {
    const cfg = Prisma.raw(`'${TS_CONFIG}'`);
    const fuzzy = c.fuzzyText
      ? Prisma.sql` OR (${c.fuzzyText} <% l.title${
          c.excludedText
            ? Prisma.sql` AND NOT l.search_vector @@ websearch_to_tsquery(${cfg}, ${c.excludedText})`
            : Prisma.empty
        })`
      : Prisma.empty;
    where.push(Prisma.sql`(l.search_vector @@ websearch_to_tsquery(${cfg}, ${c.text})${fuzzy})`);
  }
  if (c.category !== undefined) where.push(Prisma.sql`l.category = ${c.category}`);
  if (c.currency !== undefined) where.push(Prisma.sql`l.currency = ${c.currency}`);
  if (c.sellerWallet !== undefined) where.push(Prisma.sql`l.seller_id IN (SELECT id FROM users WHERE wallet = ${c.sellerWallet})`);
  if (c.price) {
    const perCurrency = c.price.map((b) => {
      const parts = [Prisma.sql`l.currency = ${b.currency}`];
      if (b.min !== undefined) parts.push(Prisma.sql`l.price_base_units >= ${b.min.toString()}::numeric`);
      if (b.max !== undefined) parts.push(Prisma.sql`l.price_base_units <= ${b.max.toString()}::numeric`);
      return Prisma.sql`(${Prisma.join(parts, ' AND ')})`;
    });
    where.push(perCurrency.length > 0 ? Prisma.sql`(${Prisma.join(perCurrency, ' OR ')})` : Prisma.sql`false`);
  }
  const ratingJoin = p.needsRating
    ? Prisma.sql`LEFT JOIN (SELECT seller_id, avg(rating) AS avg, count(*) AS cnt FROM reviews GROUP BY seller_id) rs ON rs.seller_id = l.seller_id`
    : Prisma.empty;

  const keyCols = p.keys.map((k, i) => Prisma.sql`${k} AS ${Prisma.raw(`k${i + 1}`)}`);
  const rowOf = (prefix: string) => Prisma.raw([...p.keys.map((_, i) => `${prefix}k${i + 1}`), `${prefix}id`].join(', '));
  const dir = Prisma.raw(p.desc ? 'DESC' : 'ASC');
  const order = (prefix: string, key: 'k' | 's') =>
    Prisma.join([...p.keys.map((_, i) => Prisma.sql`${Prisma.raw(`${prefix}${key}${i + 1}`)} ${dir}`), Prisma.sql`${Prisma.raw(`${prefix}id`)} ${dir}`], ', ');
  const after = c.after
    ? Prisma.sql`WHERE (${rowOf('m.')}) ${Prisma.raw(p.desc ? '<' : '>')} (${Prisma.join([
        ...p.casts.map((cast, i) => cast(c.after!.keys[i] ?? null)),
        Prisma.sql`${c.after.id}::uuid`,
      ])})`
    : Prisma.empty;

  // typed keys (s1, s2) keep the order in the outer query; text keys (k1, k2) go into the cursor
  const textKey = (i: number) =>
    c.sort === 'newest'
      ? Prisma.raw(`to_char(m.k${i} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS k${i}`)
      : Prisma.raw(`m.k${i}::text AS k${i}`);
  const page = Prisma.sql`
    SELECT m.id, ${Prisma.join(p.keys.map((_, i) => Prisma.sql`${Prisma.raw(`m.k${i + 1} AS s${i + 1}`)}, ${textKey(i + 1)}`))}
      FROM (
        SELECT l.id, ${Prisma.join(keyCols)}
          FROM listings l ${ratingJoin}
         WHERE ${Prisma.join(where, ' AND ')}
      ) m
     ${after}
     ORDER BY ${order('m.', 'k')}
     LIMIT ${c.limit}`;
  return selectListings(page, order('page.', 's'), p.keys.length as 1 | 2);
}

export function createMarketplaceRepo(db: PrismaClient): MarketplaceRepo {
  return {
    async search(c: SearchCriteria): Promise<SearchRow[]> {
      const query = buildSearch(c);
      let rows: ListingRow[];
      if (c.text !== undefined) {
        // Both GUCs are transaction-local. enable_seqscan=off: the planner misjudges the selectivity
        // of `<%` and may scan the whole table, evaluating trigram similarity on every row (500+ ms
        // on 30k rows for a 50-row match); the BitmapOr over the two GIN indexes costs ~30 ms there.
        const [, , result] = await db.$transaction([
          db.$queryRaw`SELECT set_config('pg_trgm.word_similarity_threshold', ${String(WORD_SIMILARITY)}, true)`,
          db.$queryRaw`SELECT set_config('enable_seqscan', 'off', true)`,
          db.$queryRaw<ListingRow[]>(query),
        ]);
        rows = result;
      } else {
        rows = await db.$queryRaw<ListingRow[]>(query);
      }
      return rows.map((r) => ({
        listing: toListingRecord(r),
        keys: r.k2 !== undefined ? [r.k1 ?? null, r.k2 ?? null] : [r.k1 ?? null],
      }));
    },

    async countByCategory(status: ListingStatus) {
      const rows = await db.$queryRaw<Array<{ category: string; n: number }>>`
        SELECT category, count(*)::int AS n FROM listings WHERE status = ${status} GROUP BY category`;
      return new Map(rows.map((r) => [r.category, Number(r.n)]));
    },
  };
}
