-- issue 25 part 3: the dispute desk (modules/disputes). A dispute is one disputed escrow row of `orders`
-- (disputes.id = orders.id of that milestone); its row is written on the first thing recorded about it
-- (the reason code, evidence, a ruling), so a dispute opened on chain by a party's wallet needs none.

-- CreateTable
CREATE TABLE "disputes" (
    "id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "reason_code" TEXT NOT NULL DEFAULT 'other',
    "rationale" TEXT,
    "ruled_by" UUID,
    "ruled_buyer_bps" INTEGER,
    "ruled_at" TIMESTAMPTZ(3),
    "rationale_message_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "disputes_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "dispute_evidence" (
    "id" UUID NOT NULL,
    "dispute_id" UUID NOT NULL,
    "position" INTEGER NOT NULL,
    "party" TEXT NOT NULL,
    "submitted_by" UUID NOT NULL,
    "submitted_by_wallet" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "files" JSONB NOT NULL DEFAULT '[]',
    "content_hash" TEXT NOT NULL,
    "prev_hash" TEXT,
    "anchor_signature" TEXT,
    "submitted_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "dispute_evidence_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "disputes_order_id_idx" ON "disputes"("order_id");

-- CreateIndex
CREATE UNIQUE INDEX "dispute_evidence_dispute_id_position_key" ON "dispute_evidence"("dispute_id", "position");

-- CreateIndex
CREATE UNIQUE INDEX "dispute_evidence_content_hash_key" ON "dispute_evidence"("content_hash");

-- AddForeignKey
ALTER TABLE "dispute_evidence" ADD CONSTRAINT "dispute_evidence_dispute_id_fkey" FOREIGN KEY ("dispute_id") REFERENCES "disputes"("id") ON DELETE RESTRICT ON UPDATE CASCADE;
