/**
 * MINIMAL STAND-IN (helper AO, branch actorder) for the Solana Actions infrastructure that helper AL owns
 * (branch actlist). The names are the ones the shared design fixes (ACTION_VERSION, blockchainId, actionHeaders,
 * actionsGuard, actionError); the integrator keeps AL's file and drops this one. The order actions
 * (./orders.ts) use only these names.
 *
 * Solana Actions spec 2.4: every response carries `X-Action-Version` and `X-Blockchain-Ids` (CAIP-2) and the
 * CORS headers the spec lists (any origin; GET, POST, PUT, OPTIONS; the allowed and exposed headers); errors
 * are the spec's `ActionError` body `{ message }`.
 */
import type { Request, RequestHandler, Response } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';

/** The Actions spec version this service implements (`X-Action-Version`). */
export const ACTION_VERSION = '2.4';

/** CAIP-2 references (genesis hash, first 32 characters) of the public clusters. */
const GENESIS: Record<string, string> = {
  mainnet: '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
  'mainnet-beta': '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
  devnet: 'EtWTRABZaYq6iMfeYKouRu166VuDxSWY',
  testnet: '4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z',
};

/**
 * The CAIP-2 id of `cluster` (`solana:<genesis hash, first 32 characters>`): a cluster name (SIWS chain id, bare
 * or `solana:` prefixed), or a base58 genesis hash (a localnet's, read from its RPC). An unknown name gives
 * `solana:<name>` (valid CAIP-2 syntax).
 */
export function blockchainId(cluster: string): string {
  const bare = cluster.replace(/^solana:/, '');
  return `solana:${(GENESIS[bare] ?? bare).slice(0, 32)}`;
}

/** Sets the spec's headers on `res`: version, chain ids, and CORS for any origin. */
export function actionHeaders(res: Response, blockchainIds: string): void {
  res.setHeader('X-Action-Version', ACTION_VERSION);
  res.setHeader('X-Blockchain-Ids', blockchainIds);
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Allow-Methods', 'GET,POST,PUT,OPTIONS');
  res.setHeader('Access-Control-Allow-Headers', 'Content-Type, Authorization, Content-Encoding, Accept-Encoding, X-Action-Version, X-Blockchain-Ids');
  res.setHeader('Access-Control-Expose-Headers', 'X-Action-Version, X-Blockchain-Ids');
}

/** A refusal an actions handler throws; answered as the spec's `{ message }` with `status`. */
export class ActionError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'ActionError';
  }
}

/** A throwable `{ message }` answer with HTTP `status` (4xx/5xx). */
export function actionError(status: number, message: string): ActionError {
  return new ActionError(status, message);
}

/** Options of the guard in front of every actions route. */
export interface ActionsGuardOptions {
  /** ACTIONS_ENABLED: off -> 404 `{ message }` for every actions route */
  enabled: boolean;
  /** ACTIONS_RATE_LIMIT_PER_MINUTE: requests per client IP per minute (429 `{ message }` + Retry-After beyond) */
  perMinute: number;
  /** `X-Blockchain-Ids` value (blockchainId of the configured cluster) */
  blockchainIds: string;
  /** the counters (PrismaRateLimitStore: shared by every replica); absent: this process's memory */
  store?: Store;
}

/** The guard of the actions routes: headers, 404 when off, OPTIONS preflight, the per-IP limit. */
export function actionsGuard(o: ActionsGuardOptions): RequestHandler {
  const limit = rateLimit({
    windowMs: 60_000,
    limit: o.perMinute,
    ...(o.store ? { store: o.store } : {}),
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    handler: (req: Request, res: Response) => {
      const reset = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const retryAfter = reset ? Math.max(1, Math.ceil((reset.getTime() - Date.now()) / 1000)) : 60;
      res.setHeader('Retry-After', String(retryAfter));
      res.status(429).json({ message: `Too many requests from this address (${o.perMinute} per minute); retry in ${retryAfter} s.` });
    },
  });
  return (req, res, next) => {
    actionHeaders(res, o.blockchainIds);
    if (!o.enabled) {
      res.status(404).json({ message: 'Solana Actions are not enabled on this service.' });
      return;
    }
    if (req.method === 'OPTIONS') {
      res.status(204).end();
      return;
    }
    limit(req, res, next);
  };
}
