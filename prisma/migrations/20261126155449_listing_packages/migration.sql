-- Issue 24, packages (helper "packages"): listings offer up to 3 packages and optional milestones;
-- an order keeps the package it bought.
--   * listings.packages: JSON array of 0..3 packages (validated by zod in the listings module on every
--     read and write). The listing's price_base_units / duration_days hold the CHEAPEST package's,
--     written in the same statement as the packages, so search keeps filtering and sorting on the
--     indexed (status, currency, price_base_units, id) column: no new index, no join.
--   * listings.milestones: listing-level milestones of a listing without packages (JSON array or null).
--   * orders.package_key / package_name / package_delivery_days / revisions_included: the package bought,
--     frozen at creation. package_name and revisions_included are columns of the shared design that the
--     helper "milestones" adds as well: IF NOT EXISTS keeps either migration order valid.

-- AlterTable
ALTER TABLE "listings" ADD COLUMN "packages" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN "milestones" JSONB;

-- AlterTable
ALTER TABLE "orders" ADD COLUMN "package_key" TEXT,
ADD COLUMN IF NOT EXISTS "package_name" TEXT,
ADD COLUMN "package_delivery_days" INTEGER,
ADD COLUMN IF NOT EXISTS "revisions_included" INTEGER NOT NULL DEFAULT 0;
