-- Issue 28 item 3: text + category searches at 1 000 000 listings (docs/search-design.md, "Category
-- lexemes").
--
-- RUM intersects posting lists item by item (no skipping), so the category key of listings_search_rum_idx
-- costs a walk over every listing of the category (~125 000 at 1M) on each text + category search:
-- "video editing" in video spent ~20 of its ~33 ms there, for no match. Here each listing also carries
-- its lexemes qualified by its category ('design:logo', plus the bare 'design:' that every listing of
-- the category has), in a RUM index of their own with created_at attached: a text + category search
-- reads the posting lists of its words within the category only (a sixth of them, or nothing).
--
-- `listing_category_tsquery(q, category)` maps a query onto those lexemes as a necessary condition: the
-- indexable part of q (querytree: negations dropped), phrase operators as AND (the qualified lexemes
-- carry no positions), each lexeme qualified; a query with no indexable part maps to the bare category
-- lexeme (every listing of the category). The search keeps the exact match on search_vector and the
-- category condition beside it (marketplace.repo.ts), so the results are the same as without.
--
-- Only where listings_search_rum_idx exists (PostgreSQL with the rum extension: migration
-- 20261127100000_search_rum); PGlite and servers without rum keep GIN and get none of this. The column is
-- generated (kept by PostgreSQL on every write, no trigger); adding it rewrites the table once.
-- Not in schema.prisma (like the RUM index; the drift test runs on PGlite).
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_indexes WHERE schemaname = current_schema() AND indexname = 'listings_search_rum_idx') THEN
    RETURN;
  END IF;

  CREATE FUNCTION listing_category_tsvector(v tsvector, category text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $f$ SELECT array_to_tsvector(ARRAY(SELECT category || ':' || x FROM unnest(tsvector_to_array(v)) AS x) || (category || ':')) $f$;

  CREATE FUNCTION listing_category_tsquery(q tsquery, category text) RETURNS tsquery
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
    AS $f$
      -- tsquery text quotes a lexeme in '...' with ' doubled and \ escaped by \ (as the category is here)
      SELECT CASE
               WHEN t.tree IN ('T', '') THEN ('''' || c.quoted || ':''')::tsquery
               ELSE regexp_replace(
                      -- phrase operators outside quoted lexemes (an even number of quotes follows) -> AND
                      regexp_replace(t.tree, '<(-|[0-9]+)>(?=([^'']*''[^'']*'')*[^'']*$)', '&', 'g'),
                      -- in a replacement \\ is one backslash
                      '''(([^'']|'''')*)''', '''' || replace(c.quoted, '\', '\\') || ':\1''', 'g')::tsquery
             END
        FROM (SELECT querytree(q) AS tree) AS t,
             (SELECT replace(replace(category, '\', '\\'), '''', '''''') AS quoted) AS c
    $f$;

  ALTER TABLE "listings" ADD COLUMN "search_category_vector" tsvector
    GENERATED ALWAYS AS (listing_category_tsvector(
      to_tsvector('english'::regconfig, COALESCE("title", '')) || to_tsvector('english'::regconfig, COALESCE("description", '')),
      "category")) STORED;

  CREATE INDEX "listings_search_category_rum_idx" ON "listings"
    USING rum ("search_category_vector" rum_tsvector_addon_ops, "created_at")
    WITH (attach = 'created_at', to = 'search_category_vector')
    WHERE "status" = 'available';
END
$$;
