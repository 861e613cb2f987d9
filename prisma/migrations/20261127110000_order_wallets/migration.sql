-- Issue 28 (SQL statements per buyer): every order row names its buyer's and its seller's wallet, so reading
-- an order is one statement (before, each read joined the two users rows for the rows written without
-- them: three statements per read). The wallet is a user's identity and never changes, so the copy equals
-- what the join read.
UPDATE "orders" o SET "buyer_wallet" = u."wallet" FROM "users" u WHERE o."buyer_wallet" IS NULL AND u."id" = o."buyer_id";
UPDATE "orders" o SET "seller_wallet" = u."wallet" FROM "users" u WHERE o."seller_wallet" IS NULL AND u."id" = o."seller_id";

-- rows written without them (a replica still running the code before this change, hand-made rows) get
-- them from the users table as they are written
CREATE FUNCTION "orders_fill_wallets"() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
  IF NEW."buyer_wallet" IS NULL THEN
    SELECT "wallet" INTO NEW."buyer_wallet" FROM "users" WHERE "id" = NEW."buyer_id";
  END IF;
  IF NEW."seller_wallet" IS NULL THEN
    SELECT "wallet" INTO NEW."seller_wallet" FROM "users" WHERE "id" = NEW."seller_id";
  END IF;
  RETURN NEW;
END
$fn$;
CREATE TRIGGER "orders_fill_wallets" BEFORE INSERT OR UPDATE OF "buyer_wallet", "seller_wallet" ON "orders"
  FOR EACH ROW EXECUTE FUNCTION "orders_fill_wallets"();
