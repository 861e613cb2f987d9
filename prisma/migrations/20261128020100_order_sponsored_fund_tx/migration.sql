-- Fee sponsorship (issue 26 audit): the last sponsored fund transaction issued for an order and until when it can
-- land. While it can, every re-issue (payment refresh, the anonymous Solana Pay transaction request) hands out
-- these same bytes and charges nothing: the sponsor's day is charged once per sponsored transaction that can
-- land, not once per request.
ALTER TABLE "orders" ADD COLUMN "sponsored_fund_tx" TEXT;
ALTER TABLE "orders" ADD COLUMN "sponsored_fund_tx_until" TIMESTAMPTZ(3);
