-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "buyer_wallet" TEXT,
ADD COLUMN     "seller_wallet" TEXT;
