-- CreateTable
CREATE TABLE "tips" (
    "id" UUID NOT NULL,
    "order_id" UUID NOT NULL,
    "buyer_id" UUID NOT NULL,
    "seller_id" UUID NOT NULL,
    "buyer_wallet" TEXT NOT NULL,
    "seller_wallet" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "mint" TEXT NOT NULL,
    "decimals" INTEGER NOT NULL,
    "amount_base_units" DECIMAL(20,0) NOT NULL,
    "source_token_account" TEXT NOT NULL,
    "destination_token_account" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "message" TEXT NOT NULL,
    "blockhash" TEXT NOT NULL,
    "last_valid_block_height" BIGINT NOT NULL,
    "valid_until" TIMESTAMPTZ(3) NOT NULL,
    "signature" TEXT,
    "slot" BIGINT,
    "confirmed_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "tips_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "tips_signature_key" ON "tips"("signature");

-- CreateIndex
CREATE INDEX "tips_order_id_created_at_id_idx" ON "tips"("order_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "tips_seller_id_status_idx" ON "tips"("seller_id", "status");

-- CreateIndex
CREATE INDEX "tips_status_created_at_idx" ON "tips"("status", "created_at");
