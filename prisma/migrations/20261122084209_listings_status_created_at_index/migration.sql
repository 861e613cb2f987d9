-- CreateIndex
CREATE INDEX "listings_status_created_at_id_idx" ON "listings"("status", "created_at", "id");
