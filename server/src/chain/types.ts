/**
 * The chain port: everything the service asks of Solana goes through this interface.
 * Implemented in ./index.ts over @solana/web3.js v1 (JSON-RPC) and @coral-xyz/anchor 0.32 (escrow IDL).
 *
 * Units: token amounts are u64 base units as `bigint`; SOL amounts in lamports (`bigint`);
 * times are unix seconds. Addresses are base58 strings at this boundary.
 *
 * Errors: every method throws `DomainError('chain-unavailable')` when the RPC cannot be reached
 * (503 problem) and `DomainError('chain-transaction-failed', ...)` when a transaction is rejected
 * (on-chain program errors translated to their Anchor error name in `extensions.program_error`).
 */
import type { CurrencyInfo } from '../lib/currency.js';

export interface TxResult {
  /** base58 transaction signature */
  signature: string;
  /** slot at which the transaction was confirmed */
  slot: number;
}

/** A payment currency configured for the marketplace (e.g. USDC, SOL via wrapped SOL): lib/currency.ts, the contract's `Currency` plus its token program. */
export type { CurrencyInfo };

/** One balance line; `amountBaseUnits` is exact, `uiAmount` is a display string. */
export interface WalletBalance {
  currency: string;
  mint: string | null; // null for native SOL
  amountBaseUnits: bigint;
  decimals: number;
  uiAmount: string;
}

export interface ListingTokenInput {
  /** the seller's wallet; its associated token account (Token-2022) receives the single token */
  owner: string;
  /** token metadata name (<= 32 chars is advisable for wallets) */
  name: string;
  /** token metadata symbol (<= 10 chars) */
  symbol: string;
  /** public URL of the off-chain JSON metadata served by this service */
  uri: string;
  /**
   * The listing's id: the mint keypair is then derived from (service key, listing id), so one listing
   * has exactly one possible mint address and a repeated mint can never create a second token (the
   * second `createAccount` fails). Without it a random mint keypair is used.
   */
  listingId?: string;
}

/**
 * A signed transaction about to be sent: what a caller records before the first send (record the
 * intent first), so that after a crash the outcome can be looked up by signature (./recorded-send.ts).
 */
export type TxAttempt = RecordedAttempt;

/** A listing-token mint attempt: the mint address is known before the send. */
export interface ListingMintAttempt extends TxAttempt {
  /** base58 mint address (deterministic per listing id, see `ListingTokenInput.listingId`) */
  mint: string;
}

export interface SendHooks<A extends TxAttempt = TxAttempt> {
  /**
   * Called after signing and before the first send. A throw aborts: nothing is sent. Callers store
   * the attempt here (see the listings module's chain intents).
   */
  onSigned?: (attempt: A) => Promise<void> | void;
}

/**
 * What the chain says about one listing mint (`Chain.readListingMint`):
 *  - `minted`: the mint account exists; `name`/`uri` are its token metadata; `signature`/`slot` are
 *    those of the transaction that created it (null when the RPC keeps no history for it);
 *  - `in_flight`: not on chain yet, but the recorded attempt may still land (its blockhash is valid);
 *  - `absent`: not on chain and the recorded attempt can never land (rejected, expired, or none).
 */
export type ListingMintState =
  | { state: 'minted'; name: string; uri: string; signature: string | null; slot: number | null }
  | { state: 'in_flight' }
  | { state: 'absent' };

/** A signed transaction about to be sent, as its record stores it (./recorded-send.ts step 2). */
export interface RecordedAttempt {
  /** base58 signature (the transaction id) */
  signature: string;
  /** the transaction cannot land once the block height passes this (its blockhash expired) */
  lastValidBlockHeight: number;
  /** its recent blockhash, when recorded: a blockhash the cluster no longer knows as valid cannot land either */
  blockhash?: string | null;
}

/**
 * What became of one recorded attempt: `landed` (succeeded, at `slot`), `dead` (`rejected` by the
 * cluster, or `expired`: never landed and its blockhash expired, so it never will) or `in_flight`
 * (neither yet: wait).
 */
export type TxOutcome = { state: 'landed'; slot: number } | { state: 'dead'; reason: 'rejected' | 'expired' } | { state: 'in_flight' };


export interface Chain {
  /** RPC liveness: `{ ok: true, slot }` or `{ ok: false }` (never throws). */
  health(): Promise<{ ok: boolean; slot?: number }>;
  /**
   * Mint a Token-2022 NFT for a listing: decimals 0, supply 1, metadata pointer to itself and the
   * token-metadata extension (name, symbol, uri), held by the owner's associated token account,
   * mint authority revoked afterwards; the service keypair pays all fees and rent.
   * Returns the mint address and the (last) transaction's signature and slot.
   */
  mintListingToken(input: ListingTokenInput, hooks?: SendHooks<ListingMintAttempt>): Promise<TxResult & { mint: string }>;
  /**
   * Update the token-metadata `name` and/or `uri` of a listing token (update authority = service).
   * Reads the current metadata first: null (nothing sent, `onSigned` not called) when nothing changes.
   */
  updateListingToken(mint: string, fields: { name?: string; uri?: string }, hooks?: SendHooks): Promise<TxResult | null>;
  /**
   * The state of a listing mint on chain, given the recorded attempt (signature and blockhash expiry,
   * both null when nothing was signed). Never sends anything.
   */
  readListingMint(query: { mint: string; signature: string | null; lastValidBlockHeight: number | null }): Promise<ListingMintState>;
  /** What became of a sent transaction (see TxOutcome). Never sends anything. */
  transactionOutcome(attempt: TxAttempt): Promise<TxOutcome>;
  /** SOL (lamports, currency "SOL" with mint null) and each configured currency's token balance. */
  getWalletBalances(wallet: string, currencies: CurrencyInfo[]): Promise<WalletBalance[]>;
}
