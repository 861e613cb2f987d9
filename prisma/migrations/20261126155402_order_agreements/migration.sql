-- Issue 24 (revisions, deadline extensions, settlement by agreement), per escrow unit (an orders row = one
-- milestone). revisions_included / revisions_used are also named by the milestones design (i24-design
-- section 1): IF NOT EXISTS so either migration may add them first.
ALTER TABLE "orders" ADD COLUMN IF NOT EXISTS "revisions_included" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "orders" ADD COLUMN IF NOT EXISTS "revisions_used" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "orders" ADD COLUMN "settled_by" TEXT;
-- the pending proposals: one of each kind at a time (the program holds one settlement proposal per escrow);
-- their history is the events outbox (extension.* / settlement.*)
ALTER TABLE "orders" ADD COLUMN "extension_new_deadline" TIMESTAMPTZ(3),
  ADD COLUMN "extension_message" TEXT,
  ADD COLUMN "extension_proposed_at" TIMESTAMPTZ(3),
  ADD COLUMN "extension_expires_at" TIMESTAMPTZ(3),
  ADD COLUMN "settlement_proposed_by" TEXT,
  ADD COLUMN "settlement_buyer_bps" INTEGER,
  ADD COLUMN "settlement_proposed_at" TIMESTAMPTZ(3),
  ADD COLUMN "settlement_expires_at" TIMESTAMPTZ(3);
-- orders resolved before: by the arbiter
UPDATE "orders" SET "settled_by" = 'arbiter' WHERE "status" = 'resolved';
CREATE INDEX "orders_extension_expires_at_idx" ON "orders"("extension_expires_at");
CREATE INDEX "orders_settlement_expires_at_idx" ON "orders"("settlement_expires_at");
