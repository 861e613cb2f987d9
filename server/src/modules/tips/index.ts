/**
 * Tips module wiring (issue 24 item 8; README.md):
 *
 *   const tips = createTipsModule({ db, chain: createTipsChain({ connection, tokenProgramOf }), orders, settings, log });
 *   createExpressEndpoints(contract.tips, tipsHandlers(tips.http), router);
 *   tips.start(); ... await tips.stop();   // the background check (leader loops)
 */
import { randomUUID } from 'node:crypto';
import type { PrismaClient } from '../../generated/prisma/client.js';
import type { TipsChainPort } from './tips.chain.js';
import { createTipsRepo } from './tips.repo.js';
import { createTipsService } from './tips.service.js';
import { TipWatcher } from './tips.watcher.js';
import { TIPS_DEFAULTS, type TipsSettings } from './use-cases/context.js';
import type { Log, TipOrdersPort } from './tips.types.js';

export { createTipsChain, type TipsChainPort } from './tips.chain.js';
export { createTipsRepo, type TipsRepo } from './tips.repo.js';
export { createTipsService, type TipsService } from './tips.service.js';
export { presentTip } from './tips.presenter.js';
export { paidTheSeller, tipRefusal, type TipRefusal } from './eligibility.js';
export { tipPaidBy, memosOf } from './tip-detection.js';
export { TipWatcher } from './tips.watcher.js';
export { TIPS_DEFAULTS, type TipsSettings, type TipsCaller } from './use-cases/context.js';
export type * from './tips.types.js';

/** What other modules read of tips (users: a seller's `tips_received`), from the database alone. */
export function tipsReadPort(db: PrismaClient) {
  const repo = createTipsRepo(db);
  return { receivedBySeller: (sellerId: string) => repo.receivedBySeller(sellerId) };
}

export function createTipsModule(o: {
  db: PrismaClient;
  chain: TipsChainPort;
  orders: TipOrdersPort;
  settings?: Partial<TipsSettings>;
  log?: Log;
  now?: () => Date;
}) {
  const settings = { ...TIPS_DEFAULTS, ...o.settings };
  const repo = createTipsRepo(o.db);
  const service = createTipsService({ repo, chain: o.chain, orders: o.orders, settings, now: o.now ?? (() => new Date()), newId: randomUUID, log: o.log });
  const watcher = new TipWatcher({ service, log: o.log });
  return {
    service,
    repo,
    watcher,
    http: { service },
    /** the background check (leader loops): one pass now, then every TIP_WATCHER_INTERVAL_MS */
    async start() {
      await watcher.runOnce();
      watcher.start(settings.watcherIntervalMs);
    },
    stop: () => watcher.stop(),
  };
}

export type TipsModule = ReturnType<typeof createTipsModule>;
