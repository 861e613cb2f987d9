/**
 * FakeChain: an in-memory Chain port for HTTP tests that do not need a validator. Test code only;
 * production always uses server/src/chain (createChain). Mints get random base58 addresses and
 * signatures; `down = true` makes every call fail like an unreachable RPC (503 chain-unavailable).
 */
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { randomBytes } from 'node:crypto';
import { DomainError } from '../../server/src/errors.js';
import type { Chain, CurrencyInfo, ListingTokenInput, TxResult, WalletBalance } from '../../server/src/chain/types.js';

export interface FakeToken extends ListingTokenInput {
  mint: string;
  supply: 1;
}

export class FakeChain implements Chain {
  down = false;
  slot = 1000;
  readonly tokens = new Map<string, FakeToken>();
  readonly calls: Array<{ method: string; args: unknown[] }> = [];

  private tx(): TxResult {
    this.slot += 1;
    return { signature: bs58.encode(randomBytes(64)), slot: this.slot };
  }

  private guard(method: string, args: unknown[]) {
    this.calls.push({ method, args });
    if (this.down) throw new DomainError('chain-unavailable', 'The Solana RPC cannot be reached (fake chain is down).');
  }

  async health() {
    return this.down ? { ok: false } : { ok: true, slot: this.slot };
  }

  async mintListingToken(input: ListingTokenInput): Promise<TxResult & { mint: string }> {
    this.guard('mintListingToken', [input]);
    const mint = Keypair.generate().publicKey.toBase58();
    this.tokens.set(mint, { ...input, mint, supply: 1 });
    return { ...this.tx(), mint };
  }

  async updateListingToken(mint: string, fields: { name?: string; uri?: string }): Promise<TxResult | null> {
    this.guard('updateListingToken', [mint, fields]);
    const t = this.tokens.get(mint);
    if (!t) throw new DomainError('chain-transaction-failed', `unknown mint ${mint}`);
    Object.assign(t, fields);
    return this.tx();
  }

  async getWalletBalances(_wallet: string, currencies: CurrencyInfo[]): Promise<WalletBalance[]> {
    this.guard('getWalletBalances', [_wallet, currencies]);
    return currencies.map((c) => ({ currency: c.code, mint: c.mint, amountBaseUnits: 0n, decimals: c.decimals, uiAmount: '0' }));
  }
}
