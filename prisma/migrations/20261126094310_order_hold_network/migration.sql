-- AlterTable
ALTER TABLE "orders" ADD COLUMN     "hold_network" TEXT;

-- CreateIndex
CREATE INDEX "orders_hold_network_status_idx" ON "orders"("hold_network", "status");
