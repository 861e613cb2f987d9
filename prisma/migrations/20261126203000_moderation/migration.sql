-- Moderation (issue 25 part 2): reports, listing takedowns with one appeal, account suspensions and bans.

-- A takedown is a mark beside the listing's status, not a status: the status keeps following the listing's
-- orders (listingTransitions), so its open orders settle and its counts stay right; restore clears the mark.
ALTER TABLE "listings"
    ADD COLUMN "taken_down_at" TIMESTAMPTZ(3),
    ADD COLUMN "taken_down_reason" TEXT,
    ADD COLUMN "appealed_at" TIMESTAMPTZ(3),
    ADD COLUMN "appeal_text" TEXT;
ALTER TABLE "listings"
    ADD CONSTRAINT "listings_takedown_reason" CHECK (("taken_down_at" IS NULL) = ("taken_down_reason" IS NULL)),
    ADD CONSTRAINT "listings_appeal_needs_takedown" CHECK ("appealed_at" IS NULL OR "taken_down_at" IS NOT NULL);

-- An account's standing: NULL = active; 'suspended' until restricted_until (NULL: indefinitely) or 'banned'.
-- Written by the moderation module only; read at login and by every path that lists or orders.
ALTER TABLE "users"
    ADD COLUMN "restriction" TEXT,
    ADD COLUMN "restricted_until" TIMESTAMPTZ(3),
    ADD COLUMN "moderation_reason" TEXT,
    ADD COLUMN "moderated_at" TIMESTAMPTZ(3);
ALTER TABLE "users"
    ADD CONSTRAINT "users_restriction_kind" CHECK ("restriction" IS NULL OR "restriction" IN ('suspended', 'banned')),
    ADD CONSTRAINT "users_ban_has_no_end" CHECK ("restriction" IS DISTINCT FROM 'banned' OR "restricted_until" IS NULL);

-- Reports of a listing or a user. open_slot is TRUE while the report is open and NULL once it is dismissed or
-- actioned: the unique index over (reporter, target, open_slot) allows one OPEN report per reporter and target
-- (NULLs never collide), without a partial index the schema cannot state.
CREATE TABLE "reports" (
    "id" UUID NOT NULL,
    "reporter_id" UUID NOT NULL,
    "target_type" TEXT NOT NULL,
    "target_id" UUID NOT NULL,
    "reason" TEXT NOT NULL,
    "text" TEXT NOT NULL DEFAULT '',
    "status" TEXT NOT NULL DEFAULT 'open',
    "open_slot" BOOLEAN DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "resolved_at" TIMESTAMPTZ(3),
    "resolution" TEXT,
    "resolved_by" TEXT,

    CONSTRAINT "reports_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "reports_target_type" CHECK ("target_type" IN ('listing', 'user')),
    CONSTRAINT "reports_reason" CHECK ("reason" IN ('spam', 'scam', 'prohibited', 'intellectual_property', 'harassment', 'other')),
    CONSTRAINT "reports_status" CHECK ("status" IN ('open', 'dismissed', 'actioned')),
    CONSTRAINT "reports_open_slot" CHECK (("status" = 'open') = ("open_slot" IS NOT DISTINCT FROM true))
);

CREATE UNIQUE INDEX "reports_reporter_id_target_type_target_id_open_slot_key" ON "reports"("reporter_id", "target_type", "target_id", "open_slot");
CREATE INDEX "reports_status_target_type_target_id_created_at_idx" ON "reports"("status", "target_type", "target_id", "created_at");
CREATE INDEX "reports_reporter_id_created_at_idx" ON "reports"("reporter_id", "created_at");

ALTER TABLE "reports" ADD CONSTRAINT "reports_reporter_id_fkey" FOREIGN KEY ("reporter_id") REFERENCES "users"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
