-- Repeat sales (issue 24 item 7): a listing takes `capacity` orders at once and `stock` orders in all
-- (NULL = unlimited). Existing listings keep today's one-off sale: capacity 1, stock 1.
ALTER TABLE "listings"
    ADD COLUMN "capacity" INTEGER NOT NULL DEFAULT 1,
    ADD COLUMN "stock" INTEGER DEFAULT 1,
    ADD COLUMN "open_orders" INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN "unpaid_orders" INTEGER NOT NULL DEFAULT 0,
    ADD COLUMN "sold_count" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "listings"
    ADD CONSTRAINT "listings_capacity_range" CHECK ("capacity" BETWEEN 1 AND 100),
    ADD CONSTRAINT "listings_stock_range" CHECK ("stock" IS NULL OR "stock" BETWEEN 1 AND 1000000);

-- THE one place orders are counted for their listing (open, unpaid, sold), per ORDER: today one row is one
-- order; when an order spans several rows (milestones, rows sharing `order_id`), this function is what
-- changes (count DISTINCT order_id by the order's status). Sold = completed, or resolved with a seller
-- payout (buyer_bps < 10000): the orders that sell the listing today.
CREATE FUNCTION "listing_order_counts"(lid UUID)
RETURNS TABLE (open_orders INTEGER, unpaid_orders INTEGER, sold_count INTEGER)
LANGUAGE sql STABLE AS $fn$
    SELECT
        count(*) FILTER (WHERE o.status IN ('awaiting_payment', 'in_progress', 'delivered', 'disputed'))::int,
        count(*) FILTER (WHERE o.status = 'awaiting_payment')::int,
        count(*) FILTER (WHERE o.status = 'completed'
                            OR (o.status = 'resolved' AND coalesce(o.resolution_buyer_bps, 0) < 10000))::int
      FROM "orders" o
     WHERE o.listing_id = lid
$fn$;

-- Keeps listings.(open_orders, unpaid_orders, sold_count) exact in the transaction of every order change
-- (insert, status or resolution change, delete). The listing row is locked FIRST, then counted in a fresh
-- statement (READ COMMITTED: a new snapshot per statement of a volatile function), so concurrent changes of
-- one listing's orders serialize on that lock and each count sees every committed one.
-- Lock order: the seller's listings lock (the advisory lock the seller-rating triggers of 20261123130707
-- take before they update every listing of the seller) BEFORE the listing row, as those triggers do; so an
-- order change and a review of the same seller never wait on each other in a cycle.
CREATE FUNCTION "listing_order_counts_refresh"(lid UUID, seller UUID) RETURNS void LANGUAGE plpgsql AS $fn$
DECLARE c RECORD;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtext('bazaar.seller_rating'), hashtext(seller::text));
    PERFORM 1 FROM "listings" WHERE id = lid FOR UPDATE;
    SELECT * INTO c FROM "listing_order_counts"(lid);
    UPDATE "listings"
       SET open_orders = c.open_orders, unpaid_orders = c.unpaid_orders, sold_count = c.sold_count
     WHERE id = lid
       AND (open_orders, unpaid_orders, sold_count) IS DISTINCT FROM (c.open_orders, c.unpaid_orders, c.sold_count);
END
$fn$;

CREATE FUNCTION "orders_listing_counts"() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM "listing_order_counts_refresh"(OLD.listing_id, OLD.seller_id);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND (TG_OP = 'INSERT' OR NEW.listing_id IS DISTINCT FROM OLD.listing_id) THEN
        PERFORM "listing_order_counts_refresh"(NEW.listing_id, NEW.seller_id);
    END IF;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER "orders_listing_counts_insert_delete" AFTER INSERT OR DELETE ON "orders"
    FOR EACH ROW EXECUTE FUNCTION "orders_listing_counts"();
CREATE TRIGGER "orders_listing_counts_update" AFTER UPDATE OF "status", "resolution_buyer_bps", "listing_id" ON "orders"
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status
          OR OLD.resolution_buyer_bps IS DISTINCT FROM NEW.resolution_buyer_bps
          OR OLD.listing_id IS DISTINCT FROM NEW.listing_id)
    EXECUTE FUNCTION "orders_listing_counts"();

-- existing orders
UPDATE "listings" l SET (open_orders, unpaid_orders, sold_count) = (SELECT * FROM "listing_order_counts"(l.id));
