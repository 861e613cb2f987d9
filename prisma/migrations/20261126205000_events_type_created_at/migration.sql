-- Revenue reports (issue 25 part 6) read the money events of a time range by type: an index on
-- (type, created_at) bounds each report to the rows of its range instead of every event of the type.
CREATE INDEX "events_type_created_at_idx" ON "events"("type", "created_at");
