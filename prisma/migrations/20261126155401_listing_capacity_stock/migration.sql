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

-- THE one place an order's weight on its listing is decided: open (awaiting_payment, in_progress, delivered,
-- disputed), unpaid (awaiting_payment) and sold (completed, or resolved with a seller payout: buyer_bps <
-- 10000, the orders that sell the listing today). Per ORDER: today one row is one order; when an order spans
-- several rows (milestones: rows sharing `order_id`), only this function and the trigger below change (weigh
-- one row per order, the one carrying the order-level status, and 0 on the others).
CREATE FUNCTION "order_listing_weight"(status TEXT, buyer_bps INTEGER,
                                       OUT open_orders INTEGER, OUT unpaid_orders INTEGER, OUT sold_count INTEGER)
LANGUAGE sql IMMUTABLE AS $fn$
    SELECT (status IN ('awaiting_payment', 'in_progress', 'delivered', 'disputed'))::int,
           (status = 'awaiting_payment')::int,
           (status = 'completed' OR (status = 'resolved' AND coalesce(buyer_bps, 0) < 10000))::int
$fn$;

-- A listing's counts recounted from its orders (backfill below; tests compare the kept counts with it).
CREATE FUNCTION "listing_order_counts"(lid UUID)
RETURNS TABLE (open_orders INTEGER, unpaid_orders INTEGER, sold_count INTEGER)
LANGUAGE sql STABLE AS $fn$
    SELECT coalesce(sum(w.open_orders), 0)::int, coalesce(sum(w.unpaid_orders), 0)::int, coalesce(sum(w.sold_count), 0)::int
      FROM "orders" o CROSS JOIN LATERAL "order_listing_weight"(o.status, o.resolution_buyer_bps) w
     WHERE o.listing_id = lid
$fn$;

-- Keeps listings.(open_orders, unpaid_orders, sold_count) exact in the transaction of every order change
-- (insert, status or resolution change, delete): the change of the order's weight is added to its listing,
-- O(1) whatever the number of orders (a relative UPDATE: PostgreSQL re-reads the row once its lock is free,
-- so concurrent changes of one listing add up). Lock order: the seller's listings lock (the advisory lock
-- the seller-rating triggers of 20261123130707 take before they update every listing of the seller) BEFORE
-- the listing row, as those triggers do, so an order change and a review of the same seller never wait on
-- each other in a cycle; POST /orders (createHeld) takes them in the same order.
CREATE FUNCTION "listing_order_counts_add"(lid UUID, seller UUID, d_open INTEGER, d_unpaid INTEGER, d_sold INTEGER)
RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
    IF d_open = 0 AND d_unpaid = 0 AND d_sold = 0 THEN RETURN; END IF;
    PERFORM pg_advisory_xact_lock(hashtext('bazaar.seller_rating'), hashtext(seller::text));
    UPDATE "listings"
       SET open_orders = open_orders + d_open, unpaid_orders = unpaid_orders + d_unpaid, sold_count = sold_count + d_sold
     WHERE id = lid;
END
$fn$;

CREATE FUNCTION "orders_listing_counts"() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE o RECORD; n RECORD;
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.listing_id = OLD.listing_id THEN
        SELECT * INTO o FROM "order_listing_weight"(OLD.status, OLD.resolution_buyer_bps);
        SELECT * INTO n FROM "order_listing_weight"(NEW.status, NEW.resolution_buyer_bps);
        PERFORM "listing_order_counts_add"(NEW.listing_id, NEW.seller_id,
            n.open_orders - o.open_orders, n.unpaid_orders - o.unpaid_orders, n.sold_count - o.sold_count);
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        SELECT * INTO o FROM "order_listing_weight"(OLD.status, OLD.resolution_buyer_bps);
        PERFORM "listing_order_counts_add"(OLD.listing_id, OLD.seller_id, -o.open_orders, -o.unpaid_orders, -o.sold_count);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        SELECT * INTO n FROM "order_listing_weight"(NEW.status, NEW.resolution_buyer_bps);
        PERFORM "listing_order_counts_add"(NEW.listing_id, NEW.seller_id, n.open_orders, n.unpaid_orders, n.sold_count);
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
