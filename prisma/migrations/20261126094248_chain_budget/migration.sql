-- CreateTable
CREATE TABLE "chain_spend_days" (
    "day" DATE NOT NULL,
    "lamports" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "chain_spend_days_pkey" PRIMARY KEY ("day")
);

-- CreateTable
CREATE TABLE "chain_spend_usage" (
    "day" DATE NOT NULL,
    "subject" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "count" INTEGER NOT NULL DEFAULT 0,
    "lamports" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "chain_spend_usage_pkey" PRIMARY KEY ("day","subject","action")
);

-- CreateTable
CREATE TABLE "chain_sponsored_accounts" (
    "owner" TEXT NOT NULL,
    "mint" TEXT NOT NULL,
    "token_account" TEXT NOT NULL,
    "role" TEXT NOT NULL,
    "order_id" TEXT,
    "lamports" BIGINT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "chain_sponsored_accounts_pkey" PRIMARY KEY ("owner","mint")
);
