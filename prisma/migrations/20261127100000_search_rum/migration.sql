-- Issue 28 item 3: search at 1 000 000 listings (docs/search-design.md, "RUM at 1M").
--
-- Where the `rum` extension is available (Debian/Ubuntu: postgresql-15-rum), a RUM index keeps each
-- listing's created_at beside its full-text entries (rum_tsvector_addon_ops, attach/to): "the newest
-- matches of a query" (the relevance
-- candidate set, marketplace.repo.ts) is then one ordered index scan that stops after the candidates,
-- instead of reading every match's row (GIN bitmap) or walking the newest listings until enough match.
-- The category is a key column too (text + category is an index condition, not a row filter), and the
-- index holds only the rows public search can return (status 'available': the partial predicate).
-- Not `order_by_attach = 't'`: with it, rum 1.3.13 drops matches when the category condition is used
-- too (474 matches read as 473; docs/search-design.md), and it measured no faster.
--
-- Where `rum` is not available (PGlite, a server without the package) or may not be created (no
-- privilege: CREATE EXTENSION rum needs a superuser), nothing is created and search keeps the GIN
-- index listings_search_vector_idx; the service picks its SQL from what exists at start-up
-- (marketplace.repo.ts detectSearchIndex, logged as "search index: rum|gin").
--
-- Not in schema.prisma (Prisma cannot express a RUM index or its options): `prisma migrate diff`
-- against a PostgreSQL with the index would propose dropping it; the drift test runs on PGlite.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'rum') THEN
    BEGIN
      CREATE EXTENSION IF NOT EXISTS rum;
    EXCEPTION WHEN insufficient_privilege THEN
      RAISE NOTICE 'rum is available but may not be created here (%): search keeps GIN', SQLERRM;
      RETURN;
    END;
    CREATE INDEX "listings_search_rum_idx" ON "listings"
      USING rum ("search_vector" rum_tsvector_addon_ops, "category", "created_at")
      WITH (attach = 'created_at', to = 'search_vector')
      WHERE "status" = 'available';
  END IF;
END
$$;
