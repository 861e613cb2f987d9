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
export interface TxResult {
  /** base58 transaction signature */
  signature: string;
  /** slot at which the transaction was confirmed */
  slot: number;
}

/** A payment currency configured for the marketplace (e.g. USDC, SOL via wrapped SOL). */
export interface CurrencyInfo {
  /** Currency code, upper case, e.g. "USDC" */
  code: string;
  /** SPL mint address (base58) */
  mint: string;
  /** mint decimals: base units per UI unit = 10^decimals */
  decimals: number;
  /** token program owning the mint (base58): SPL Token or Token-2022 */
  tokenProgram?: string;
}

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
}

export interface Chain {
  /** RPC liveness: `{ ok: true, slot }` or `{ ok: false }` (never throws). */
  health(): Promise<{ ok: boolean; slot?: number }>;
  /**
   * Mint a Token-2022 NFT for a listing: decimals 0, supply 1, metadata pointer to itself and the
   * token-metadata extension (name, symbol, uri), held by the owner's associated token account,
   * mint authority revoked afterwards; the service keypair pays all fees and rent.
   * Returns the mint address and the (last) transaction's signature and slot.
   */
  mintListingToken(input: ListingTokenInput): Promise<TxResult & { mint: string }>;
  /** Update the token-metadata `name` and/or `uri` of a listing token (update authority = service). */
  updateListingToken(mint: string, fields: { name?: string; uri?: string }): Promise<TxResult | null>;
  /** SOL (lamports, currency "SOL" with mint null) and each configured currency's token balance. */
  getWalletBalances(wallet: string, currencies: CurrencyInfo[]): Promise<WalletBalance[]>;
}
