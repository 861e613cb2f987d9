/**
 * Budget module: what the service keypair may spend on chain (docs/threat-model.md#who-pays-for-what-on-chain).
 *
 *   const budget = createBudgetModule({ db, spending: config.spending, log, now });
 *   await budget.charge({ action: 'listing_mint', lamports: SPEND_ESTIMATES.listing_mint, userId, ip });
 *   await budget.record({ action: 'order_transaction', lamports: SPEND_ESTIMATES.order_transaction });
 *   await budget.sponsorPayeeAccount({ role: 'seller', owner, mint, tokenAccount, orderId });
 *   await budget.state();   // /readyz `chain_budget`
 */
import type { PrismaClient } from '../../generated/prisma/client.js';
import { SPENDING_DEFAULTS, type SpendingSettings } from '../../config.js';
import { createChainBudget, type ChainBudget } from './budget.service.js';
import type { Log } from '../../lib/log.js';

export * from './budget.service.js';

/** SPENDING_DEFAULTS with the listing minimum parsed (`CODE:amount` text -> record). */
export function defaultSpending(): SpendingSettings {
  const listingMinPrice = Object.fromEntries(
    SPENDING_DEFAULTS.listingMinPrice.split(',').map((e) => e.split(':') as [string, string]),
  );
  return { ...SPENDING_DEFAULTS, listingMinPrice };
}

export function createBudgetModule(o: {
  db: PrismaClient;
  spending?: SpendingSettings;
  /** fee sponsorship's own budget and counts (config FEE_SPONSORSHIP_*); absent: none sponsored */
  sponsorship?: { dailyLamports: number; perUser: number; perIp: number };
  log?: Pick<Log, 'warn'>;
  now?: () => Date;
}): ChainBudget {
  const s = o.spending ?? defaultSpending();
  return createChainBudget({
    db: o.db,
    log: o.log,
    now: o.now,
    settings: {
      dailyLamports: s.dailyLamports,
      caps: {
        listing_mint: { perUser: s.listingCreatePerUser, perIp: s.listingCreatePerIp },
        listing_rename: { perUser: s.listingRenamePerUser },
        withdrawal: { perUser: s.withdrawalPerUser },
      },
      ...(o.sponsorship ? { sponsorship: o.sponsorship } : {}),
    },
  });
}
