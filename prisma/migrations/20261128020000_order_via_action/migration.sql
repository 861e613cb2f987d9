-- Orders created through a Solana Action (a blink's POST { account }, issue 26 audit): nobody proved they hold
-- the wallet they name, so these orders neither count against the wallet's signed-in unpaid-orders limit nor
-- start a hold cool-down against its user or wallet (only against the client network they came from); they
-- have their own unpaid limit per wallet and still count against the network's holds.
ALTER TABLE "orders" ADD COLUMN "via_action" BOOLEAN NOT NULL DEFAULT false;
