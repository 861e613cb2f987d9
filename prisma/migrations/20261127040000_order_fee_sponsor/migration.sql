-- Fee sponsorship (issue 26 item 5): the sponsor key that pays the fee and the escrow rent of an order's
-- fund transactions (null: the buyer pays). Decided once, at the first fund transaction issued.
ALTER TABLE "orders" ADD COLUMN "fee_sponsor" TEXT;
