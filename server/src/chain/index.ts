/**
 * createChain: the Chain port (./types.ts) over @solana/web3.js 1.x, plus the escrow client.
 *
 * RPC requests time out after `rpcTimeoutMs` (default 15_000 ms) and surface as
 * DomainError('chain-unavailable'); transactions confirm by polling (see ./tx.ts for the timeouts).
 */
import { type Commitment, Connection, type Keypair } from '@solana/web3.js';
import type { Idl } from '@coral-xyz/anchor';
import escrowIdl from '@bazaar/escrow-idl';
import { getWalletBalances } from './balances.js';
import { EscrowClient } from './escrow.js';
import { mintListingToken, readListingMint, transactionOutcome, updateListingToken } from './listing-mint.js';
import type { ConfirmOptions } from './tx.js';
import type { Chain, CurrencyInfo } from './types.js';
import { rpcMethodsOf, tracedFetch } from '../tracing.js';
import { providersFrom, RpcPool, type RpcPoolOptions, type WsEndpoint } from './rpc-pool.js';

export * from './types.js';
export { EscrowClient } from './escrow.js';
export type { EscrowOrder, EscrowConfig, FundTerms, FundTransaction, EscrowState, OrderId } from './escrow.js';
export type { FundMilestonesTerms, MilestoneFundTerms, OrderInstructionArgs, PartyTransaction, SettlementProposal } from './escrow.js';
export { MAX_MILESTONES_PER_FUND_TRANSACTION } from './escrow.js';
export { configPda, orderPda, vaultAddress, uuidToBytes, bytesToUuid, orderIdBytes } from './pda.js';
export { listingMintKeypair } from './listing-mint.js';
export { sendAndConfirm, sendRawAndConfirm, type ConfirmOptions } from './tx.js';
export { ProgramSubscription, websocketUrlFor, type SubscriptionState } from './pubsub.js';
export type { OrderWatchHandlers } from './escrow.js';
export { translateChainError, isNetworkError } from './errors.js';
export { RpcPool, providersFrom, type RpcPoolOptions, type RpcProviderStatus, type WsEndpoint } from './rpc-pool.js';
export { chainOptionsFromDataDir, loadOrCreateKeypair, readChainFile, readKeypairFile, sponsorKeypair, type ChainFile } from './keys.js';

export const DEFAULT_RPC_TIMEOUT_MS = 15_000;

export interface CreateChainOptions {
  /** the one provider (SOLANA_RPC_URL); with `rpcUrls`, ignored */
  rpcUrl: string;
  /**
   * Several providers in preference order (SOLANA_RPC_URLS): with two or more, every RPC call goes
   * through an RpcPool (./rpc-pool.ts: health checks, failover, stale answers refused) and the payment
   * subscription follows the selected provider's websocket.
   */
  rpcUrls?: string[];
  /** the providers' websocket URLs, same order as `rpcUrls` (absent: derived; null: no websockets) */
  wsUrls?: string[] | null;
  /** health-check and failover settings of the pool (./rpc-pool.ts) */
  pool?: Omit<RpcPoolOptions, 'providers' | 'fetch' | 'commitment' | 'requestTimeoutMs'>;
  /** ms a recent blockhash serves the fund transactions built after it (EscrowClientOptions.blockhashReuseMs; default 0: fresh per transaction) */
  blockhashReuseMs?: number;
  /** told of every JSON-RPC call the service's Connection made (the `bazaar_rpc_request_duration_seconds` metric) */
  onRpcCall?: RpcCallObserver;
  /**
   * PubSub websocket endpoint: the escrow client's `watchOrders` subscribes there (and web3.js's
   * `connection.on*`). Absent: no subscriptions, the payment watcher polls only.
   */
  wsUrl?: string;
  /** platform authority, arbiter (dev), fee payer, listing-token mint/update authority */
  serviceKeypair: Keypair;
  /** separate arbiter keypair (defaults to the service keypair) */
  arbiterKeypair?: Keypair;
  /** fee sponsor keypair (FEE_SPONSORSHIP on): fee payer and rent payer of sponsored fund transactions */
  sponsorKeypair?: Keypair;
  /** escrow program id (base58); defaults to the IDL address */
  programId?: string;
  currencies: CurrencyInfo[];
  commitment?: Commitment;
  rpcTimeoutMs?: number;
  confirm?: ConfirmOptions;
  /** escrow IDL override (tests) */
  idl?: Idl;
}

export type ChainClient = Chain & {
  escrow: EscrowClient;
  connection: Connection;
  currencies: CurrencyInfo[];
  service: Keypair;
  /** the provider pool (two or more providers), else null */
  rpcPool: RpcPool | null;
  /** start the pool's health loop (a no-op with one provider) */
  start(): void;
  /** stop it */
  stop(): Promise<void>;
};

/**
 * Told of one JSON-RPC call: `method` (tracing.ts rpcMethodsOf: the method name, comma-joined for a batch),
 * `seconds` from the request to its answer, `outcome` ok (an HTTP answer, whatever its status) or error
 * (no answer: refused, reset, timed out).
 */
export type RpcCallObserver = (method: string, seconds: number, outcome: 'ok' | 'error') => void;

type RpcFetch = (input: unknown, init?: RequestInit) => Promise<Response>;

/** `fetchFn` that tells `observe` how long each JSON-RPC call took (no observer: `fetchFn` itself). */
export function meteredFetch(fetchFn: RpcFetch, observe?: RpcCallObserver): RpcFetch {
  if (!observe) return fetchFn;
  return async (input, init) => {
    const started = performance.now();
    const method = rpcMethodsOf(init?.body);
    try {
      const res = await fetchFn(input, init);
      observe(method, (performance.now() - started) / 1000, 'ok');
      return res;
    } catch (err) {
      observe(method, (performance.now() - started) / 1000, 'error');
      throw err;
    }
  };
}

/**
 * A web3.js Connection whose HTTP requests abort after `timeoutMs`; with `pool`, every request goes
 * through the pool (`rpcUrl` is then only web3.js's label, the pool picks the provider). `onRpcCall`:
 * told of every call (meteredFetch).
 */
export function createConnection(rpcUrl: string, opts: { commitment?: Commitment; wsUrl?: string; timeoutMs?: number; pool?: RpcPool; onRpcCall?: RpcCallObserver } = {}): Connection {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_RPC_TIMEOUT_MS;
  if (opts.pool) {
    return new Connection(rpcUrl, {
      commitment: opts.commitment ?? 'confirmed',
      disableRetryOnRateLimit: true,
      wsEndpoint: opts.wsUrl,
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
      fetch: meteredFetch(opts.pool.fetch as RpcFetch, opts.onRpcCall) as any,
    });
  }
  // a span per JSON-RPC call while tracing is on (tracing.ts), the plain fetch otherwise
  const timedFetch = meteredFetch(
    tracedFetch((input: unknown, init?: RequestInit) => fetch(input as string, { ...init, signal: AbortSignal.timeout(timeoutMs) })),
    opts.onRpcCall,
  );
  return new Connection(rpcUrl, {
    commitment: opts.commitment ?? 'confirmed',
    disableRetryOnRateLimit: true,
    wsEndpoint: opts.wsUrl,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    fetch: timedFetch as any,
  });
}

export function createChain(opts: CreateChainOptions): ChainClient {
  const commitment = opts.commitment ?? 'confirmed';
  const urls = opts.rpcUrls?.length ? opts.rpcUrls : [opts.rpcUrl];
  const rpcPool =
    urls.length > 1
      ? new RpcPool({
          ...opts.pool,
          providers: providersFrom(urls, opts.wsUrls === undefined ? (opts.wsUrl ? undefined : null) : opts.wsUrls),
          commitment,
          requestTimeoutMs: opts.rpcTimeoutMs ?? DEFAULT_RPC_TIMEOUT_MS,
          // a span per attempt, naming the provider it went to (tracing.ts), the plain fetch otherwise
          // eslint-disable-next-line @typescript-eslint/no-explicit-any
          fetch: tracedFetch((input: unknown, init?: RequestInit) => fetch(input as string, init)) as any,
        })
      : null;
  const ws: string | WsEndpoint | undefined = rpcPool ? (rpcPool.wsEndpoint() ?? undefined) : opts.wsUrl;
  const connection = createConnection(urls[0]!, {
    commitment,
    wsUrl: rpcPool ? (rpcPool.wsEndpoint()?.current() ?? undefined) : opts.wsUrl,
    timeoutMs: opts.rpcTimeoutMs,
    ...(rpcPool ? { pool: rpcPool } : {}),
    ...(opts.onRpcCall ? { onRpcCall: opts.onRpcCall } : {}),
  });
  const service = opts.serviceKeypair;
  const escrow = new EscrowClient({
    connection,
    idl: opts.idl ?? (escrowIdl as unknown as Idl),
    programId: opts.programId,
    service,
    arbiter: opts.arbiterKeypair,
    ...(opts.sponsorKeypair ? { sponsor: opts.sponsorKeypair } : {}),
    currencies: opts.currencies,
    commitment,
    confirm: opts.confirm,
    wsUrl: ws,
    ...(opts.blockhashReuseMs !== undefined ? { blockhashReuseMs: opts.blockhashReuseMs } : {}),
  });
  const mintDeps = { connection, service, commitment, confirm: opts.confirm };
  return {
    connection,
    escrow,
    currencies: opts.currencies,
    service,
    rpcPool,
    start: () => rpcPool?.start(),
    stop: async () => {
      await rpcPool?.stop();
    },
    async health() {
      try {
        const slot = await Promise.race([
          connection.getSlot(commitment),
          new Promise<never>((_, rej) => setTimeout(() => rej(new Error('health timeout')), 3_000).unref()),
        ]);
        return { ok: true, slot };
      } catch {
        return { ok: false };
      }
    },
    mintListingToken: (input, hooks) => mintListingToken(mintDeps, input, hooks),
    updateListingToken: (mint, fields, hooks) => updateListingToken(mintDeps, mint, fields, hooks),
    readListingMint: (query) => readListingMint(mintDeps, query),
    transactionOutcome: (attempt) => transactionOutcome(mintDeps, attempt),
    getWalletBalances: (wallet, currencies) => getWalletBalances(connection, wallet, currencies ?? opts.currencies, commitment),
  };
}
