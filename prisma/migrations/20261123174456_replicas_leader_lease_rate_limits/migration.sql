-- CreateTable
CREATE TABLE "leader_leases" (
    "name" TEXT NOT NULL,
    "holder" TEXT NOT NULL,
    "term" BIGINT NOT NULL DEFAULT 1,
    "acquired_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "renewed_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "leader_leases_pkey" PRIMARY KEY ("name")
);

-- CreateTable
CREATE TABLE "rate_limit_hits" (
    "limiter" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "hits" INTEGER NOT NULL,
    "reset_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "rate_limit_hits_pkey" PRIMARY KEY ("limiter","key")
);

-- CreateIndex
CREATE INDEX "rate_limit_hits_reset_at_idx" ON "rate_limit_hits"("reset_at");
