-- Orders money and fault paths (issues 8 and 9):
--   * orders.payout_*: what left the escrow vault to each payee, read from the chain's record of the order;
--   * orders.attention_*: an escrow the service cannot explain, flagged for an operator;
--   * orders.idempotency_key: a retried POST /orders finds the order its crashed first attempt created;
--   * orders.fund_expires_at: the expiry written into the fund terms (chain clock); fund_issued_until:
--     until when a fund transaction issued for it may land (the re-funded closed order check);
--   * chain_intents.blockhash / last_valid_block_height: an unseen signature past them can never land;
--   * idempotency_keys.lease_*: a running key whose request died is taken over after its lease.
--   * chain_intents.signature: unique per order (one bundled transaction may close several orders).
-- Hand-written: the CHECK constraints at the end.


-- DropIndex
DROP INDEX "chain_intents_signature_key";

-- AlterTable
ALTER TABLE "chain_intents" ADD COLUMN     "blockhash" TEXT,
ADD COLUMN     "last_valid_block_height" BIGINT;

-- AlterTable
ALTER TABLE "idempotency_keys" ADD COLUMN     "lease_expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "lease_token" TEXT;

-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "attention_at" TIMESTAMPTZ(3),
ADD COLUMN     "attention_detail" TEXT,
ADD COLUMN     "attention_reason" TEXT,
ADD COLUMN     "fund_expires_at" TIMESTAMPTZ(3),
ADD COLUMN     "fund_issued_until" TIMESTAMPTZ(3),
ADD COLUMN     "idempotency_key" TEXT,
ADD COLUMN     "payout_buyer_base_units" DECIMAL(20,0),
ADD COLUMN     "payout_buyer_token_account" TEXT,
ADD COLUMN     "payout_seller_base_units" DECIMAL(20,0),
ADD COLUMN     "payout_treasury_base_units" DECIMAL(20,0),
ADD COLUMN     "payout_verified" BOOLEAN;

-- CreateIndex
CREATE INDEX "chain_intents_signature_idx" ON "chain_intents"("signature");

-- CreateIndex
CREATE UNIQUE INDEX "chain_intents_order_id_signature_key" ON "chain_intents"("order_id", "signature");

-- CreateIndex
CREATE INDEX "orders_fund_issued_until_idx" ON "orders"("fund_issued_until");

-- CreateIndex
CREATE UNIQUE INDEX "orders_buyer_id_idempotency_key_key" ON "orders"("buyer_id", "idempotency_key");

-- hand-written: CHECK constraints
ALTER TABLE "orders" ADD CONSTRAINT "orders_payout_check" CHECK (
  ("payout_buyer_base_units" IS NULL OR "payout_buyer_base_units" >= 0) AND
  ("payout_seller_base_units" IS NULL OR "payout_seller_base_units" >= 0) AND
  ("payout_treasury_base_units" IS NULL OR "payout_treasury_base_units" >= 0)
);
