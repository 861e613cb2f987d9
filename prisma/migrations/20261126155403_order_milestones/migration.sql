-- Issue 24, milestones: a row of `orders` is one milestone's escrow unit (its id is the escrow id).
-- order_id (filled with id by a trigger when an insert omits it) is the order the buyer knows (= the id of its first row); a one-milestone order is one row,
-- exactly as before (order_id = id, index 1, count 1). `scheduled` is a new row status (a milestone
-- not yet due for payment: no hold, no payment window, no escrow). ended_at: the buyer ended the order
-- after a settled milestone (set on every row of the order; the order-level status `ended` is derived).
-- delivery_days: the milestone's days from funding to its delivery deadline (a scheduled row's deadline is
-- set when it is funded); null on rows from before milestones.
-- order_status: the derived order-level status, stored on every row of a multi-milestone order (null
-- on one-milestone orders, whose status is the row's), so GET /orders filters by it in SQL.
-- AlterTable
ALTER TABLE "orders" ADD COLUMN "order_id" UUID;
ALTER TABLE "orders" ADD COLUMN "milestone_index" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "orders" ADD COLUMN "milestone_count" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "orders" ADD COLUMN "milestone_title" TEXT;
ALTER TABLE "orders" ADD COLUMN IF NOT EXISTS "revisions_included" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "orders" ADD COLUMN IF NOT EXISTS "revisions_used" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "orders" ADD COLUMN IF NOT EXISTS "package_name" TEXT;
ALTER TABLE "orders" ADD COLUMN "ended_at" TIMESTAMPTZ(3);
ALTER TABLE "orders" ADD COLUMN "delivery_days" INTEGER;
ALTER TABLE "orders" ADD COLUMN "order_status" TEXT;
UPDATE "orders" SET "order_id" = "id";
-- rows inserted without it (older code paths, fixtures) are their own one-milestone order
CREATE FUNCTION "orders_default_order_id"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW."order_id" IS NULL THEN NEW."order_id" := NEW."id"; END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER "orders_default_order_id" BEFORE INSERT ON "orders" FOR EACH ROW EXECUTE FUNCTION "orders_default_order_id"();
ALTER TABLE "orders" ADD CONSTRAINT "orders_milestone_index_check" CHECK ("milestone_index" BETWEEN 1 AND 10 AND "milestone_count" BETWEEN 1 AND 10 AND "milestone_index" <= "milestone_count");

-- CreateIndex
CREATE UNIQUE INDEX "orders_order_id_milestone_index_key" ON "orders"("order_id", "milestone_index");

-- one transaction funds several milestones of an order (one fund instruction each): the fund signature
-- is shared by their rows, so it is indexed, no longer unique
DROP INDEX "orders_fund_signature_key";
CREATE INDEX "orders_fund_signature_idx" ON "orders"("fund_signature");
