/**
 * The one currency shape of the server: a payment currency as the contract's `Currency` describes it
 * (GET /currencies: upper-case `code`, SPL `mint` in base58, mint `decimals`: base units per UI unit =
 * 10^decimals) plus the token program owning the mint, which the chain needs and the API does not show. The
 * explorer link of the mint is the answer's (http/explorer-links.ts adds it), not configuration.
 */
import type { Currency } from '@bazaar/contract';

/** A payment currency configured for the marketplace (CURRENCIES, or DATA_DIR/chain.json). */
export type CurrencyInfo = Omit<Currency, 'mint_explorer_url'> & {
  /** token program owning the mint (base58): SPL Token or Token-2022; absent: SPL Token */
  tokenProgram?: string;
};
