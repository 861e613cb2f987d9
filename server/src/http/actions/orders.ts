/**
 * HTTP side of the order actions (issue 26 item 1): `orderActionsContract` (contract/src/actions-orders.contract.ts)
 * onto modules/actions/order-actions.ts. Thin: parse, call the module, answer. The shared actions router
 * (router.ts) mounts these handlers behind its guard and answers every error as the spec's `{ message }` with the
 * status of the problem the module raised (never problem+json; a chain action that landed but was not recorded:
 * 503 naming its signature).
 */
import type { Request } from 'express';
import { initServer } from '@ts-rest/express';
import { DisputeReasonCode, orderActionsContract } from '@bazaar/contract';
import type { OrderActions, RunAs } from '../../modules/actions/order-actions.js';
import { runWithContext, type RequestContext } from '../../lib/request-context.js';
import { actionError } from './common.js';

/** The request's context entered with `actor` (the audit log's author of the act), around `fn`. */
function runAsOf(req: Request): RunAs {
  return (actor, fn) => {
    const ctx: RequestContext = req.requestContext ?? { requestId: (req as Request & { id?: string }).id ?? null, actor: null };
    ctx.actor = actor;
    return runWithContext(ctx, fn);
  };
}

/**
 * The ts-rest handlers of `orderActionsContract` over the order actions (null: no chain, 503 `{ message }`). Errors
 * are thrown (DomainError from the modules, `actionError` here) and answered `{ message }` by the actions router.
 */
export function orderActionsHandlers(actions: OrderActions | null) {
  const module = (): OrderActions => {
    if (!actions) throw actionError(503, 'The service runs without a Solana connection; order actions are unavailable.');
    return actions;
  };
  const s = initServer();
  return s.router(orderActionsContract, {
    getOrderAction: async ({ params }) => ({ status: 200 as const, body: await module().card(params.order_id) }),
    postOrderAction: async ({ params, query, body }) => {
      const fromData = (k: string) => {
        const v = body.data?.[k];
        return Array.isArray(v) ? v[0] : v;
      };
      const code = fromData('reason_code') || query.reason_code || undefined;
      const parsed = DisputeReasonCode.safeParse(code ?? 'other');
      if (!parsed.success) throw actionError(400, `reason_code must be one of ${DisputeReasonCode.options.join(', ')}.`);
      const reasonCode = code === undefined ? undefined : parsed.data;
      return {
        status: 200 as const,
        body: await module().requestSignature(params.order_id, params.act, body.account, { reason: fromData('reason') ?? query.reason, reasonCode }),
      };
    },
    postOrderActionNext: async ({ params, body, req }) => ({
      status: 200 as const,
      body: await module().perform(params.order_id, params.act, body, runAsOf(req as unknown as Request)),
    }),
  });
}
