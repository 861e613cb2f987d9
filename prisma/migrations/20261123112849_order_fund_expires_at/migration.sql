-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "fund_expires_at" TIMESTAMPTZ(3);
