-- escrow_state was derived from status on every write and never read: the API derives it where it is
-- read (contract escrowStateOf, orders.dto.ts). Issue 22 item 4.
-- AlterTable
ALTER TABLE "orders" DROP COLUMN "escrow_state";
