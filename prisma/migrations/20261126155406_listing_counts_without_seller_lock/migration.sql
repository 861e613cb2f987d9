-- Issue 24 follow-up: the listing counts (20261126155401) took the seller's advisory lock (the lock of the
-- seller-rating triggers) until the end of every transaction that changed an order, so every order change of
-- one seller waited for the others; under 50 concurrent lifecycles transactions queued on it while holding
-- pool connections (503s in the two-replica test). The counts need only the listing's row: an order change
-- locks that one row (this relative UPDATE), never the seller lock, so it cannot close a cycle with a rating
-- refresh (which holds the seller lock and then updates the seller's listings: it waits for the row, the
-- order change waits for nothing of it).
CREATE OR REPLACE FUNCTION "listing_order_counts_add"(lid UUID, seller UUID, d_open INTEGER, d_unpaid INTEGER, d_sold INTEGER)
RETURNS void LANGUAGE plpgsql AS $fn$
BEGIN
    IF d_open = 0 AND d_unpaid = 0 AND d_sold = 0 THEN RETURN; END IF;
    UPDATE "listings"
       SET open_orders = open_orders + d_open, unpaid_orders = unpaid_orders + d_unpaid, sold_count = sold_count + d_sold
     WHERE id = lid;
END
$fn$;
