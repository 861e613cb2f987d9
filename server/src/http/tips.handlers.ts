/**
 * ts-rest handlers of `contract.tips`: map the request to a TipsService call and the result to the
 * contract's Tip shape. Rules live in modules/tips; errors are DomainErrors (problem+json).
 * POST /orders/{order_id}/tips requires an Idempotency-Key (keys scoped per principal, kept 24 h), as
 * POST /orders does: a replay returns the stored 201.
 */
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import { idempotency, type IdempotencyLeases, type IdempotencyStore } from '../modules/idempotency/index.js';
import { presentTip, type TipsCaller, type TipsService } from '../modules/tips/index.js';
import { DomainError } from '../errors.js';

export interface TipsHttpDeps {
  service: TipsService;
  idempotencyStore: IdempotencyStore;
  idempotencyLeases?: IdempotencyLeases;
  idempotencyLeaseMs?: number;
  now?: () => Date;
}

function callerOf(req: unknown): TipsCaller {
  const p = (req as { principal?: { userId?: string | null; isAdmin?: boolean } }).principal;
  if (!p) throw new DomainError('unauthorized', 'No credential was sent.');
  return { userId: p.userId ?? null, isAdmin: !!p.isAdmin };
}

export function tipsHandlers(deps: TipsHttpDeps) {
  const s = initServer();
  const { service } = deps;
  return s.router(contract.tips, {
    createTip: {
      middleware: [
        idempotency({ store: deps.idempotencyStore, required: true, leases: deps.idempotencyLeases, leaseMs: deps.idempotencyLeaseMs, now: deps.now }) as never,
      ],
      handler: async ({ params, body, req }) => {
        const { tip, payment } = await service.create(callerOf(req), params.order_id, { amount: body.amount });
        return {
          status: 201 as const,
          body: { ...presentTip(tip), payment: { transaction: payment.transaction, expires_at: payment.validUntil.toISOString() } },
        };
      },
    },
    submitTipTransaction: async ({ params, body, req }) => ({
      status: 200 as const,
      body: presentTip(await service.submit(callerOf(req), params.order_id, params.tip_id, body.signed_transaction)),
    }),
    listOrderTips: async ({ params, query, req }) => {
      const page = await service.list(callerOf(req), params.order_id, { limit: query.limit, cursor: query.cursor });
      return { status: 200 as const, body: { data: page.items.map(presentTip), next_cursor: page.nextCursor } };
    },
  });
}
