/**
 * What every Solana Actions route shares (spec `@solana/actions-spec` 2.4; contract/src/actions.contract.ts):
 * the version and chain headers, the CORS the spec requires, the operator switch, the per-IP limit and the
 * spec's error body. The listing actions (listings.ts) and the order actions (orders.ts) are both mounted
 * behind `actionsGuard` by `actionsRouter` (router.ts).
 *
 * Headers and CORS come from `@solana/actions` (`createActionHeaders`, `BLOCKCHAIN_IDS`): any origin, no
 * credentials, the allowed request headers (Content-Type, Authorization, Content-Encoding, Accept-Encoding,
 * X-Accept-Action-Version, X-Accept-Blockchain-Ids) and the exposed ones (X-Action-Version,
 * X-Blockchain-Ids). `Cross-Origin-Resource-Policy: cross-origin` too (helmet's default same-origin would
 * stop a browser blink client from reading them).
 */
import type { Request, RequestHandler, Response } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import { BLOCKCHAIN_IDS, createActionHeaders } from '@solana/actions';
import { ACTIONS_SPEC_VERSION, type Cluster } from '@bazaar/contract';
import { clientNetwork } from '../../lib/client-network.js';
import { ActionRefusal } from '../../modules/actions/refusal.js';

export { ActionRefusal };

/** The Actions spec version this service serves (`X-Action-Version`). */
export const ACTION_VERSION: string = ACTIONS_SPEC_VERSION;

/**
 * The CAIP-2 chain id of `cluster` (`solana:<first 32 characters of the genesis hash>`, CAIP-30 / Solana
 * namespace): the well-known ids of mainnet-beta, devnet and testnet (`@solana/actions` BLOCKCHAIN_IDS);
 * for a localnet (or any other cluster) from its `genesisHash` (base58, RPC getGenesisHash), required then.
 * Throws Error when a localnet's genesis hash is missing.
 */
export function blockchainId(cluster: Cluster | 'mainnet', genesisHash?: string): string {
  if (cluster === 'mainnet-beta' || cluster === 'mainnet') return BLOCKCHAIN_IDS.mainnet;
  if (cluster === 'devnet') return BLOCKCHAIN_IDS.devnet;
  if (cluster === 'testnet') return BLOCKCHAIN_IDS.testnet;
  if (!genesisHash) throw new Error(`the CAIP-2 id of cluster ${cluster} needs its genesis hash`);
  return `solana:${genesisHash.slice(0, 32)}`;
}

/**
 * Sets the headers every action response carries: `X-Action-Version` (ACTION_VERSION), `X-Blockchain-Ids`
 * (`blockchainIds`: comma-separated CAIP-2 ids, from `blockchainId`) and the spec's CORS headers (any
 * origin; allowed and exposed headers; methods GET, POST, PUT, OPTIONS).
 */
export function actionHeaders(res: Response, blockchainIds: string): void {
  const headers = createActionHeaders({ chainId: blockchainIds, actionVersion: ACTION_VERSION });
  for (const [name, value] of Object.entries(headers)) {
    // the body's type is set by whoever writes it (JSON here); CORS and version headers always
    if (name.toLowerCase() !== 'content-type') res.setHeader(name, value);
  }
  res.setHeader('Cross-Origin-Resource-Policy', 'cross-origin');
}

/**
 * A throwable the actions router answers as `status` with the spec's body `{ message }` (ActionError);
 * `retryAfterSeconds` sets `Retry-After` (429, 503). The class is the actions module's (modules/actions/refusal.ts).
 */
export function actionError(status: number, message: string, retryAfterSeconds?: number): ActionRefusal {
  return new ActionRefusal(status, message, retryAfterSeconds);
}

/** What `actionsGuard` needs: the operator settings and where the per-IP counters live. */
export interface ActionsGuardSettings {
  /** ACTIONS_ENABLED */
  enabled: boolean;
  /** ACTIONS_RATE_LIMIT_PER_MINUTE: requests per minute per client network, all action routes together */
  perMinute: number;
  /** the counters (PrismaRateLimitStore: one budget across replicas); absent: this process's memory */
  store?: Store;
  /** the `X-Blockchain-Ids` value (cached by the caller: the localnet's needs one RPC call) */
  blockchainIds: () => Promise<string>;
}

/** Sends the spec's `{ message }` with `status` (and the action headers, which the guard set first). */
export function sendActionError(res: Response, status: number, message: string, retryAfterSeconds?: number): void {
  if (retryAfterSeconds !== undefined) res.setHeader('Retry-After', String(Math.max(1, Math.ceil(retryAfterSeconds))));
  res.status(status).type('application/json').send(JSON.stringify({ message }));
}

/**
 * The middleware in front of every action route, in this order:
 *  1. ACTIONS_ENABLED off: 404 `{ message }` (plain, no action headers: nothing is advertised);
 *  2. the action headers (`actionHeaders`) on every answer, errors included;
 *  3. OPTIONS (CORS preflight): 204 with those headers, never counted;
 *  4. the per-IP limit (IPv4 address or IPv6 /64, lib/client-network.ts; TRUST_PROXY decides req.ip):
 *     429 `{ message }` with `Retry-After` (seconds until the window resets) beyond `perMinute`.
 * A factory, since it reads the settings: `app.use(actionsGuard(settings))`.
 */
export function actionsGuard(s: ActionsGuardSettings): RequestHandler {
  const limiter = rateLimit({
    windowMs: 60_000,
    limit: s.perMinute,
    ...(s.store ? { store: s.store } : {}),
    keyGenerator: (req: Request) => `actions:${clientNetwork(req.ip)}`,
    validate: { keyGeneratorIpFallback: false },
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    handler: (req, res, _next, options) => {
      const reset = (req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime;
      const retryAfter = reset ? Math.max(1, Math.ceil((reset.getTime() - Date.now()) / 1000)) : Math.ceil(options.windowMs / 1000);
      sendActionError(res, 429, `Too many requests from your network to this marketplace's actions (${s.perMinute} per minute); retry in ${retryAfter} s.`, retryAfter);
    },
  });
  return (req, res, next) => {
    if (!s.enabled) {
      sendActionError(res, 404, 'Solana Actions are not enabled on this marketplace.');
      return;
    }
    s.blockchainIds().then(
      (ids) => {
        actionHeaders(res, ids);
        if (req.method === 'OPTIONS') {
          res.status(204).end();
          return;
        }
        limiter(req, res, next);
      },
      () => sendActionError(res, 503, 'The marketplace cannot reach its Solana cluster now; retry shortly.', 5),
    );
  };
}
