-- Order actions (issue 26, Solana Actions spec 2.4 sign-message): one row per message the service asked an
-- order's buyer wallet to sign, bound to the order, the act and the wallet; single use (used_at), expiring.
-- CreateTable
CREATE TABLE "order_action_nonces" (
    "nonce" TEXT NOT NULL,
    "order_id" UUID NOT NULL,
    "act" TEXT NOT NULL,
    "wallet" TEXT NOT NULL,
    "reason" TEXT,
    "reason_code" TEXT,
    "domain" TEXT NOT NULL,
    "chain_id" TEXT,
    "statement" TEXT NOT NULL,
    "issued_at" TIMESTAMPTZ(3) NOT NULL,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "used_at" TIMESTAMPTZ(3),

    CONSTRAINT "order_action_nonces_pkey" PRIMARY KEY ("nonce"),
    CONSTRAINT "order_action_nonces_act_check" CHECK ("act" IN ('confirm', 'dispute'))
);

-- CreateIndex
CREATE INDEX "order_action_nonces_expires_at_idx" ON "order_action_nonces"("expires_at");
