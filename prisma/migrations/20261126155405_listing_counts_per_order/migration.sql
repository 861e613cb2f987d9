-- Issue 24: repeat sales (20261126155401) counted one row as one order; milestones (20261126155403) made
-- an order several rows sharing `order_id`. An order weighs on its listing ONCE: a one-milestone order by
-- its row's status (as before), a multi-milestone order by its first row only, from the order-level status
-- kept on every row (`order_status`): open while awaiting_payment or in_progress, unpaid while
-- awaiting_payment, sold once completed or ended after a payout to the seller. Later rows weigh nothing.
CREATE FUNCTION "order_row_listing_weight"(r "orders",
                                           OUT open_orders INTEGER, OUT unpaid_orders INTEGER, OUT sold_count INTEGER)
LANGUAGE plpgsql STABLE AS $fn$
BEGIN
    IF coalesce(r.milestone_count, 1) <= 1 THEN
        SELECT w.open_orders, w.unpaid_orders, w.sold_count INTO open_orders, unpaid_orders, sold_count
          FROM "order_listing_weight"(r.status, r.resolution_buyer_bps) w;
        RETURN;
    END IF;
    IF r.milestone_index <> 1 THEN
        open_orders := 0; unpaid_orders := 0; sold_count := 0;
        RETURN;
    END IF;
    open_orders := (r.order_status IN ('awaiting_payment', 'in_progress'))::int;
    unpaid_orders := (r.order_status = 'awaiting_payment')::int;
    sold_count := (r.order_status = 'completed'
                   OR (r.order_status = 'ended' AND EXISTS (
                       SELECT 1 FROM "orders" m WHERE m.order_id = r.order_id AND coalesce(m.payout_seller_base_units, 0) > 0)))::int;
END
$fn$;

CREATE OR REPLACE FUNCTION "listing_order_counts"(lid UUID)
RETURNS TABLE (open_orders INTEGER, unpaid_orders INTEGER, sold_count INTEGER)
LANGUAGE sql STABLE AS $fn$
    SELECT coalesce(sum(w.open_orders), 0)::int, coalesce(sum(w.unpaid_orders), 0)::int, coalesce(sum(w.sold_count), 0)::int
      FROM "orders" o CROSS JOIN LATERAL "order_row_listing_weight"(o) w
     WHERE o.listing_id = lid
$fn$;

CREATE OR REPLACE FUNCTION "orders_listing_counts"() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE o RECORD; n RECORD;
BEGIN
    IF TG_OP = 'UPDATE' AND NEW.listing_id = OLD.listing_id THEN
        SELECT * INTO o FROM "order_row_listing_weight"(OLD);
        SELECT * INTO n FROM "order_row_listing_weight"(NEW);
        PERFORM "listing_order_counts_add"(NEW.listing_id, NEW.seller_id,
            n.open_orders - o.open_orders, n.unpaid_orders - o.unpaid_orders, n.sold_count - o.sold_count);
        RETURN NULL;
    END IF;
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        SELECT * INTO o FROM "order_row_listing_weight"(OLD);
        PERFORM "listing_order_counts_add"(OLD.listing_id, OLD.seller_id, -o.open_orders, -o.unpaid_orders, -o.sold_count);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        SELECT * INTO n FROM "order_row_listing_weight"(NEW);
        PERFORM "listing_order_counts_add"(NEW.listing_id, NEW.seller_id, n.open_orders, n.unpaid_orders, n.sold_count);
    END IF;
    RETURN NULL;
END
$fn$;

DROP TRIGGER "orders_listing_counts_update" ON "orders";
CREATE TRIGGER "orders_listing_counts_update" AFTER UPDATE OF "status", "resolution_buyer_bps", "listing_id", "order_status" ON "orders"
    FOR EACH ROW
    WHEN (OLD.status IS DISTINCT FROM NEW.status
          OR OLD.resolution_buyer_bps IS DISTINCT FROM NEW.resolution_buyer_bps
          OR OLD.listing_id IS DISTINCT FROM NEW.listing_id
          OR OLD.order_status IS DISTINCT FROM NEW.order_status)
    EXECUTE FUNCTION "orders_listing_counts"();

-- no multi-milestone order exists before this migration: the kept counts are already right
