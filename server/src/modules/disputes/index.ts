/**
 * Dispute desk module wiring (issue 25 part 3; README.md here). Reads the orders table (disputed escrow
 * rows), keeps the desk's own tables, splits escrows through the orders module and posts rationales
 * through the chat repository.
 */
import type { PrismaClient } from '../../generated/prisma/client.js';
import { DISPUTE_DEFAULTS } from '@bazaar/contract';
import type { ChatRepo } from '../chat/chat.repo.js';
import type { OrdersService } from '../orders/index.js';
import { createDisputesRepo } from './disputes.repo.js';
import { createDisputesService, type DisputesDeps, type DisputesSettings } from './disputes.service.js';

export { countDisputesNeedingAttention, createDisputesRepo, type DisputeRecord, type DisputesRepo, type EvidenceRecord } from './disputes.repo.js';
export { createDisputesService, evidenceHash, type DisputesService, type DisputesSettings } from './disputes.service.js';

export function createDisputesModule(o: {
  db: PrismaClient;
  orders: Pick<OrdersService, 'resolveMilestone'> | null;
  chat: Pick<ChatRepo, 'forOrder' | 'post' | 'messages'>;
  /** DISPUTE_* (Config.disputes); absent: contract DISPUTE_DEFAULTS */
  settings?: DisputesSettings;
  now?: () => Date;
  log: DisputesDeps['log'];
}) {
  const repo = createDisputesRepo(o.db);
  const settings = o.settings ?? { ...DISPUTE_DEFAULTS };
  const service = createDisputesService({ repo, orders: o.orders, chat: o.chat, settings, now: o.now ?? (() => new Date()), log: o.log });
  return { repo, service, settings, http: { service } };
}

export type DisputesModule = ReturnType<typeof createDisputesModule>;
