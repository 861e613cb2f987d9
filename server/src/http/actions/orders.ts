/**
 * HTTP side of the order actions (issue 26 item 1, helper AO): `orderActionsContract` (contract/src/actions-orders.contract.ts)
 * onto modules/actions/order-actions.ts. Thin: parse, call the module, answer; every refusal is the Solana Actions
 * spec's `ActionError` body `{ message }` with the status of the problem the module raised (never problem+json).
 *
 * Mounting (app.ts): `app.use(orderActionsRouter({ actions, guard, log }))`, where `guard` is the actions guard of
 * http/actions/common.ts (ACTIONS_ENABLED -> 404, OPTIONS, per-IP limit, spec headers) that the listing actions
 * share. The router answers only paths under /api/actions/orders; anything else falls through to the app.
 */
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Router } from 'express';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import { DisputeReasonCode, orderActionsContract } from '@bazaar/contract';
import { ChainActionLandedError, DomainError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { OrderActions, RunAs } from '../../modules/actions/order-actions.js';
import { runWithContext, type RequestContext } from '../../lib/request-context.js';
import { ActionError, actionError } from './common.js';

/** The path prefix of the order actions. */
export const ORDER_ACTIONS_PATH = '/api/actions/orders';

export interface OrderActionsHttpDeps {
  /** the module; null when the service runs without a chain (no orders module): 503 `{ message }` */
  actions: OrderActions | null;
  /** the actions guard (http/actions/common.ts actionsGuard), shared with the listing actions */
  guard: RequestHandler;
  log: Logger;
}

/** The zod issues of a refused request, in one sentence (`path: message; ...`). */
function issuesText(err: unknown): string {
  const e = err as { pathParams?: { issues?: Issue[] } | null; body?: { issues?: Issue[] } | null; query?: { issues?: Issue[] } | null };
  type Issue = { path: (string | number)[]; message: string };
  const parts: string[] = [];
  for (const [where, z] of [['path', e.pathParams], ['body', e.body], ['query', e.query]] as const) {
    for (const i of z?.issues ?? []) parts.push(`${[where, ...i.path].join('.')}: ${i.message}`);
  }
  return parts.length ? parts.join('; ') : 'The request is not valid.';
}

/** The request's context entered with `actor` (the audit log's author of the act), around `fn`. */
function runAsOf(req: Request): RunAs {
  return (actor, fn) => {
    const ctx: RequestContext = req.requestContext ?? { requestId: (req as Request & { id?: string }).id ?? null, actor: null };
    ctx.actor = actor;
    return runWithContext(ctx, fn);
  };
}

/** `{ message }` for any error of an order-actions route (ActionError, DomainError, landed chain action, the rest). */
export function orderActionsErrors(log: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
    if (err instanceof ActionError) {
      res.status(err.status).json({ message: err.message });
      return;
    }
    if (err instanceof DomainError) {
      if (err.retryAfterSeconds) res.setHeader('Retry-After', String(err.retryAfterSeconds));
      res.status(err.status).json({ message: err.detail });
      return;
    }
    if (err instanceof ChainActionLandedError) {
      log.error({ err, landed: err.landed }, 'order action landed on chain, recording failed');
      res.status(503).json({ message: `The act landed on chain (${err.landed.signature}); the order catches up shortly.` });
      return;
    }
    const status = (err as { status?: number; statusCode?: number }).status ?? (err as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) {
      res.status(status).json({ message: (err as Error).message || 'Bad request.' });
      return;
    }
    log.error({ err, path: req.path }, 'order action failed');
    res.status(500).json({ message: 'The service could not complete the action; try again.' });
  };
}

/** The router of the order actions (see the module comment for how to mount it). */
export function orderActionsRouter(deps: OrderActionsHttpDeps): Router {
  const r = express.Router();
  r.use(ORDER_ACTIONS_PATH, deps.guard);
  const actions = (): OrderActions => {
    if (!deps.actions) throw actionError(503, 'The service runs without a Solana connection; order actions are unavailable.');
    return deps.actions;
  };
  const s = initServer();
  const router = s.router(orderActionsContract, {
    getOrderAction: async ({ params }) => ({ status: 200 as const, body: await actions().card(params.order_id) }),
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
        body: await actions().requestSignature(params.order_id, params.act, body.account, { reason: fromData('reason') ?? query.reason, reasonCode }),
      };
    },
    postOrderActionNext: async ({ params, body, req }) => ({
      status: 200 as const,
      body: await actions().perform(params.order_id, params.act, body, runAsOf(req as unknown as Request)),
    }),
  });
  createExpressEndpoints(orderActionsContract, router, r, {
    requestValidationErrorHandler: ((err: unknown, _req: Request, res: express.Response) => {
      res.status(400).json({ message: issuesText(err) });
    }) as never,
    responseValidation: false,
  });
  // an unknown path or method under the prefix: the spec's body, not the API's problem+json
  r.use(ORDER_ACTIONS_PATH, (_req, res) => {
    res.status(404).json({ message: 'No such order action.' });
  });
  r.use(ORDER_ACTIONS_PATH, orderActionsErrors(deps.log));
  return r;
}
