/**
 * HTTP side of the order actions (issue 26 item 1, helper AO): `orderActionsContract` (contract/src/actions-orders.contract.ts)
 * onto modules/actions/order-actions.ts. Thin: parse, call the module, answer; every refusal is the Solana Actions
 * spec's `ActionError` body `{ message }` with the status of the problem the module raised (never problem+json).
 *
 * Mounting: `orderActionsHandlers(actions)` is the ts-rest router object; the shared actions router (helper AL's
 * http/actions/router.ts) mounts it with one `createExpressEndpoints(orderActionsContract, ...)` line behind its guard
 * and `{ message }` error handler. Alone (this branch), app.ts mounts `orderActionsRouter({ actions, guard, log })`:
 * the guard of http/actions/common.ts, the endpoints, 404 and errors as `{ message }`, for /api/actions/orders only.
 */
import express, { type ErrorRequestHandler, type Request, type RequestHandler, type Router } from 'express';
import { createExpressEndpoints, initServer } from '@ts-rest/express';
import { DisputeReasonCode, orderActionsContract } from '@bazaar/contract';
import { ChainActionLandedError, DomainError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { OrderActions, RunAs } from '../../modules/actions/order-actions.js';
import { runWithContext, type RequestContext } from '../../lib/request-context.js';
import { actionError } from './common.js';

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

/** `{ message }` for any error of an order-actions route (actionError's, DomainError, landed chain action, the rest). */
export function orderActionsErrors(log: Logger): ErrorRequestHandler {
  return (err, req, res, next) => {
    if (res.headersSent) return next(err);
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
    // actionError's throwable (whatever common.ts names its class), a body parser's 4xx: their status and message
    const e = err as { status?: number; statusCode?: number; message?: string; retryAfterSeconds?: number };
    const status = e.status ?? e.statusCode;
    if (status && status >= 400 && status < 600) {
      if (e.retryAfterSeconds) res.setHeader('Retry-After', String(e.retryAfterSeconds));
      res.status(status).json({ message: e.message || 'The request was refused.' });
      return;
    }
    log.error({ err, path: req.path }, 'order action failed');
    res.status(500).json({ message: 'The service could not complete the action; try again.' });
  };
}

/**
 * The ts-rest handlers of `orderActionsContract` over the order actions (null: no chain, 503 `{ message }`). Errors
 * are thrown (DomainError from the modules, `actionError` here) and answered `{ message }` by whoever mounts them:
 * `orderActionsRouter` below, or the shared actions router (`createExpressEndpoints(orderActionsContract,
 * orderActionsHandlers(actions), router, ...)`).
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

/**
 * A router of the order actions alone (this branch's mounting; the shared actions router mounts
 * `orderActionsHandlers` instead): the guard, the endpoints, 404 and errors as `{ message }`.
 */
export function orderActionsRouter(deps: OrderActionsHttpDeps): Router {
  const r = express.Router();
  r.use(ORDER_ACTIONS_PATH, deps.guard);
  createExpressEndpoints(orderActionsContract, orderActionsHandlers(deps.actions), r, {
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
