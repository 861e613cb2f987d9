/**
 * The Solana Actions routes as one Express router, mounted at the site root by app.ts right after CORS
 * (http/cors.ts leaves these paths to `actionsGuard`) and before the API's problem+json middlewares: every
 * answer here is the spec's (`{ message }` errors, its headers), never problem+json.
 *
 *   /actions.json, /api/actions/...   actionsGuard (switch, headers + CORS, OPTIONS, per-IP limit)
 *                                     -> JSON body (BODY_LIMIT) -> the contract's routes (ts-rest)
 *                                     -> 404 `{ message }` -> errors as `{ message }` with their status
 *
 * A chain action that landed but whose database write failed (ChainActionLandedError: an order action's
 * release or dispute) answers 503 `{ message }` naming the signature, with Retry-After (the database's, else 5 s):
 * the act is done on chain and the order converges to it (the reconciler records it), as /api/v1 answers it
 * with `chain_transaction` (http/problem.ts); the spec's error has no field for it, so the message carries it.
 *
 * The order actions (`orderActionsContract`, http/actions/orders.ts) mount here the same way as the listing ones.
 */
import express, { type ErrorRequestHandler, type Router } from 'express';
import { createExpressEndpoints } from '@ts-rest/express';
import { listingActionsContract, orderActionsContract, ACTIONS_API_PATH } from '@bazaar/contract';
import { ChainActionLandedError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { databaseProblem } from '../problem.js';
import { refusalOf } from '../../modules/actions/refusal.js';
import type { ListingActions } from '../../modules/actions/listing-actions.js';
import { actionsGuard, sendActionError, type ActionsGuardSettings } from './common.js';
import { listingActionsHandlers } from './listings.js';
import { orderActionsHandlers } from './orders.js';
import type { OrderActions } from '../../modules/actions/order-actions.js';

/** Paths the actions router owns (http/cors.ts leaves them alone). */
export const ACTIONS_PATHS = ['/actions.json', ACTIONS_API_PATH] as const;

/** Is `path` an actions path (`/actions.json`, `/api/actions`, `/api/actions/...`)? */
export const isActionsPath = (path: string): boolean => path === '/actions.json' || path === ACTIONS_API_PATH || path.startsWith(`${ACTIONS_API_PATH}/`);

/** Every action route as (method, path pattern): the 405 answer's Allow header. */
const ACTION_ROUTES = [...Object.values(listingActionsContract), ...Object.values(orderActionsContract)].map((r) => ({
  method: r.method,
  pattern: new RegExp(`^${r.path.replace(/[.]/g, '\\.').replace(/:[A-Za-z_]+/g, '[^/]+')}$`),
}));

/** The methods the action routes declare for `path` (GET implies HEAD; OPTIONS is the guard's); [] for an unknown path. */
export function allowedMethods(path: string): string[] {
  const methods = new Set<string>(ACTION_ROUTES.filter((r) => r.pattern.test(path)).map((r) => r.method));
  if (methods.size === 0) return [];
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods, 'OPTIONS'];
}

/** A zod / ts-rest validation failure in one sentence (spec errors are a message, not a field list). */
function validationMessage(err: { pathParams?: unknown; query?: unknown; body?: unknown }): string {
  for (const [part, e] of [['path', err.pathParams], ['query', err.query], ['body', err.body]] as const) {
    const issues = (e as { issues?: Array<{ path: Array<string | number>; message: string }> } | null)?.issues;
    if (issues?.length) {
      const i = issues[0]!;
      return `Invalid request ${part}${i.path.length ? ` field ${i.path.join('.')}` : ''}: ${i.message}.`;
    }
  }
  return 'Invalid request.';
}

export interface ActionsRouterOptions {
  guard: ActionsGuardSettings;
  /** BODY_LIMIT */
  bodyLimit: string;
  /** the listing actions (modules/actions) */
  listings: ListingActions;
  /** the order actions for the buyer (modules/actions/order-actions.ts); null without the orders module */
  orders: OrderActions | null;
  log: Logger;
}

/** The router (see the module comment). */
export function actionsRouter(o: ActionsRouterOptions): Router {
  const router = express.Router();
  const paths = [...ACTIONS_PATHS];
  router.use(paths, actionsGuard(o.guard));
  router.use(paths, express.json({ limit: o.bodyLimit, type: () => true }));
  createExpressEndpoints(listingActionsContract, listingActionsHandlers(o.listings), router, {
    requestValidationErrorHandler: (err, _req, res) => sendActionError(res, 400, validationMessage(err)),
    responseValidation: false,
  });
  createExpressEndpoints(orderActionsContract, orderActionsHandlers(o.orders), router, {
    requestValidationErrorHandler: (err, _req, res) => sendActionError(res, 400, validationMessage(err)),
    responseValidation: false,
  });
  router.use(paths, (req, res) => {
    // a known action path with a method it does not declare: 405 with Allow (RFC 9110 15.5.6), not 404
    const allowed = allowedMethods(new URL(req.originalUrl, 'http://x').pathname);
    if (allowed.length > 0) {
      res.setHeader('Allow', allowed.join(', '));
      return sendActionError(res, 405, `${req.method} is not allowed here; use ${allowed.join(' or ')}.`);
    }
    sendActionError(res, 404, 'No such action on this marketplace.');
  });
  const errors: ErrorRequestHandler = (err, req, res, _next) => {
    if (res.headersSent) {
      res.end();
      return;
    }
    const r = refusalOf(err);
    if (r) {
      if (r.status >= 500) o.log.warn({ err, path: req.path }, r.message);
      return sendActionError(res, r.status, r.message, r.retryAfterSeconds);
    }
    if (err instanceof ChainActionLandedError) {
      const db = databaseProblem(err.cause);
      o.log.warn({ err, path: req.path, chain_transaction: err.landed }, 'an action landed on chain, recording it failed');
      return sendActionError(
        res,
        503,
        `The ${err.landed.action} transaction landed on chain (signature ${err.landed.signature}); the marketplace records it shortly. Do not sign again: reload the order to see it.`,
        db?.retryAfter ?? 5,
      );
    }
    const e = err as { type?: string; status?: number };
    if (e?.type === 'entity.parse.failed') return sendActionError(res, 400, 'The request body is not valid JSON.');
    if (e?.type === 'entity.too.large') return sendActionError(res, 413, `The request body is larger than ${o.bodyLimit}.`);
    o.log.error({ err, path: req.path }, 'action failed');
    sendActionError(res, 500, 'Something went wrong on the marketplace; retry shortly.');
  };
  router.use(paths, errors);
  return router;
}
