-- Issue 25 item 4: the audit log (server/src/modules/audit). One entry per operator action and per money-moving
-- event, appended under the outbox advisory lock; each entry holds the hash of the previous one (prev_hash,
-- unique: two entries can never claim the same predecessor, so the chain cannot fork even if a writer skipped
-- the lock), so an edited or deleted row breaks the chain (`npm run audit:verify`,
-- GET /api/v1/admin/audit-log/verify). Hand-written at the end: nothing may update, delete or truncate it.
-- CreateTable
CREATE TABLE "audit_log" (
    "seq" BIGSERIAL NOT NULL,
    "id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL,
    "actor_type" TEXT NOT NULL,
    "actor_id" TEXT NOT NULL,
    "actor_user_id" UUID,
    "action" TEXT NOT NULL,
    "resource_type" TEXT NOT NULL,
    "resource_id" TEXT NOT NULL,
    "before" JSONB,
    "after" JSONB,
    "request_id" TEXT,
    "signature" TEXT,
    "event_id" UUID,
    "prev_hash" TEXT NOT NULL,
    "hash" TEXT NOT NULL,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("seq")
);

-- CreateIndex
CREATE UNIQUE INDEX "audit_log_id_key" ON "audit_log"("id");

-- CreateIndex
CREATE UNIQUE INDEX "audit_log_prev_hash_key" ON "audit_log"("prev_hash");

-- CreateIndex
CREATE UNIQUE INDEX "audit_log_hash_key" ON "audit_log"("hash");

-- CreateIndex
CREATE INDEX "audit_log_actor_id_seq_idx" ON "audit_log"("actor_id", "seq");

-- CreateIndex
CREATE INDEX "audit_log_action_seq_idx" ON "audit_log"("action", "seq");

-- CreateIndex
CREATE INDEX "audit_log_resource_type_resource_id_seq_idx" ON "audit_log"("resource_type", "resource_id", "seq");

-- CreateIndex
CREATE INDEX "audit_log_created_at_idx" ON "audit_log"("created_at");


-- hand-written: append-only. Statement-level, so even an UPDATE or DELETE matching no row is refused, and
-- TRUNCATE (which fires no row trigger) too. The table's owner can still disable the trigger (ALTER TABLE ...
-- DISABLE TRIGGER) or drop the table: the hash chain is what detects that (docs/threat-model.md "Audit log").
CREATE FUNCTION "audit_log_append_only"() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only (% refused)', TG_OP USING ERRCODE = '42501';
END
$fn$;
CREATE TRIGGER "audit_log_append_only" BEFORE UPDATE OR DELETE OR TRUNCATE ON "audit_log"
    FOR EACH STATEMENT EXECUTE FUNCTION "audit_log_append_only"();
