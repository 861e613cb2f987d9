-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "kind" TEXT NOT NULL DEFAULT 'text',
ADD COLUMN     "offer_id" UUID;

-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "offer_id" UUID;

-- CreateTable
CREATE TABLE "offers" (
    "id" UUID NOT NULL,
    "conversation_id" UUID NOT NULL,
    "listing_id" UUID NOT NULL,
    "seller_id" UUID NOT NULL,
    "buyer_id" UUID NOT NULL,
    "title" TEXT NOT NULL,
    "description" TEXT NOT NULL,
    "currency" TEXT NOT NULL,
    "decimals" INTEGER NOT NULL,
    "price_base_units" DECIMAL(20,0) NOT NULL,
    "milestones" JSONB NOT NULL,
    "revisions" INTEGER NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "decided_at" TIMESTAMPTZ(3),
    "order_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "offers_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "offers_order_id_key" ON "offers"("order_id");

-- CreateIndex
CREATE INDEX "offers_buyer_id_created_at_id_idx" ON "offers"("buyer_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "offers_seller_id_created_at_id_idx" ON "offers"("seller_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "offers_status_expires_at_idx" ON "offers"("status", "expires_at");

-- CreateIndex
CREATE UNIQUE INDEX "messages_offer_id_key" ON "messages"("offer_id");

-- CreateIndex
CREATE UNIQUE INDEX "orders_offer_id_key" ON "orders"("offer_id");

-- AddForeignKey
ALTER TABLE "offers" ADD CONSTRAINT "offers_conversation_id_fkey" FOREIGN KEY ("conversation_id") REFERENCES "conversations"("id") ON DELETE CASCADE ON UPDATE CASCADE;
