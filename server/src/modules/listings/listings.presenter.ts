/**
 * ListingRecord -> the contract's `Listing` JSON (snake_case, UI price next to exact base units).
 */
import { toUiNumber } from '../../lib/money.js';
import { TOKEN_SYMBOL, tokenName } from './listings.service.js';
import type { ListingMilestone, ListingRecord, ListingsConfig } from './listings.types.js';

const presentMilestone = (m: ListingMilestone, decimals: number) => ({
  title: m.title,
  amount: toUiNumber(m.amountBaseUnits, decimals),
  amount_base_units: m.amountBaseUnits.toString(),
  delivery_days: m.deliveryDays,
});

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
    // an unpaid order's hold reads as reserved (listings.sql.ts), its end as held_until
    status: l.status === 'available' && l.heldUntil ? ('reserved' as const) : l.status,
    held_until: l.status === 'available' && l.heldUntil ? l.heldUntil.toISOString() : null,
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
