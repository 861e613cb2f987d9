-- Metrics (issue 25 part 5): bazaar_attention_flags counts the flagged orders per reason at scrape time;
-- this index lets that read only the flagged rows (almost every order has none) instead of scanning orders.
CREATE INDEX "orders_attention_reason_idx" ON "orders"("attention_reason");
