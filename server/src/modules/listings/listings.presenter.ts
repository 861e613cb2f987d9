/**
 * ListingRecord -> the contract's `Listing` JSON (snake_case, UI price next to exact base units).
 */
import { listingReadStatus } from '@bazaar/contract';
import { toUiNumber } from '../../lib/money.js';
import { TOKEN_SYMBOL, tokenName } from './listings.service.js';
import type { ListingMilestone, ListingRecord, ListingsConfig, ListingStatus } from './listings.types.js';

const presentMilestone = (m: ListingMilestone, decimals: number) => ({
  title: m.title,
  amount: toUiNumber(m.amountBaseUnits, decimals),
  amount_base_units: m.amountBaseUnits.toString(),
  delivery_days: m.deliveryDays,
});

/** What listing `l` reads (contract `listingReadStatus` over its stored status and units; an unpaid hold with `heldUntil` reads reserved). */
export function readStatusOf(l: ListingRecord): ListingStatus {
  if (l.status === 'available' && l.heldUntil) return 'reserved';
  return listingReadStatus(l.status, { capacity: l.capacity, stock: l.stock, open: l.openOrders, paid: l.openOrders - l.unpaidOrders, sold: l.soldCount });
}

export function presentListing(l: ListingRecord, config: Pick<ListingsConfig, 'currencies' | 'categories'>) {
  const cur = config.currencies.find((c) => c.code === l.currency);
  const category = config.categories.find((c) => c.slug === l.category);
  const decimals = cur?.decimals ?? 0;
  return {
    listing_id: l.id,
    seller_wallet: l.sellerWallet,
    title: l.title,
    description: l.description,
    price: toUiNumber(l.priceBaseUnits, decimals),
    price_base_units: l.priceBaseUnits.toString(),
    currency: l.currency,
    currency_mint: cur?.mint ?? '',
    category: l.category,
    duration: l.durationDays,
    // issue 24: price / duration above are the cheapest package's when there are packages
    packages: l.packages.map((p) => ({
      key: p.key,
      name: p.name,
      price: toUiNumber(p.priceBaseUnits, decimals),
      price_base_units: p.priceBaseUnits.toString(),
      delivery_days: p.deliveryDays,
      revisions: p.revisions,
      description: p.description,
      milestones: p.milestones ? p.milestones.map((m) => presentMilestone(m, decimals)) : null,
    })),
    milestones: l.milestones ? l.milestones.map((m) => presentMilestone(m, decimals)) : null,
    // what the listing reads from its units (contract listingReadStatus; listings.sql.ts), unpaid holds' end as held_until
    status: readStatusOf(l),
    held_until: l.status === 'available' && l.heldUntil ? l.heldUntil.toISOString() : null,
    // --- repeat sales (capacity and stock) ---
    capacity: l.capacity,
    stock: l.stock,
    open_orders: l.openOrders,
    sold_count: l.soldCount,
    remaining: l.stock === null ? null : Math.max(0, l.stock - l.soldCount - l.openOrders),
    // --- end repeat sales ---
    taken_down: l.takenDown
      ? {
          taken_down_at: l.takenDown.at.toISOString(),
          reason: l.takenDown.reason,
          appealed_at: l.takenDown.appealedAt ? l.takenDown.appealedAt.toISOString() : null,
          appeal: l.takenDown.appeal,
        }
      : null,
    token_mint_address: l.tokenMint,
    mint_transaction: { signature: l.mintSignature, slot: l.mintSlot },
    metadata: {
      token_standard: 'token-2022' as const,
      metadata_uri: l.metadataUri,
      name: tokenName(l.title),
      symbol: TOKEN_SYMBOL,
      ...(category ? { category_name: category.name } : {}),
      seller_rating: l.sellerRating === null ? null : Math.round(l.sellerRating * 100) / 100,
      seller_review_count: l.sellerReviewCount,
    },
    created_at: l.createdAt.toISOString(),
    updated_at: l.updatedAt.toISOString(),
  };
}
