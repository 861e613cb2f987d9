/**
 * FakeChain: an in-memory Chain port for HTTP tests that do not need a validator. Test code only;
 * production always uses server/src/chain (createChain).
 *
 * Like the real chain: a listing's mint address is derived from its listing id (a second mint of the
 * same listing fails as "already in use"); `onSigned` runs before anything lands; transactions carry
 * a `lastValidBlockHeight` 150 blocks ahead and `advanceBlocks` expires them.
 *
 * Faults: `down = true` makes every call fail like an unreachable RPC before anything is signed (503
 * chain-unavailable). `failNextSend(mode)` makes the next mint/update fail after signing:
 *  - 'lost':     the transaction never lands, the caller gets a timeout (503 chain-unavailable);
 *  - 'timeout':  the transaction lands, the caller still gets the timeout (the answer was lost);
 *  - 'rejected': the transaction is rejected on chain (502 chain-transaction-failed);
 *  - 'outage':   the transaction lands, then the RPC goes down (`down = true`) before the answer.
 */
import { Keypair } from '@solana/web3.js';
import bs58 from 'bs58';
import { createHash, randomBytes } from 'node:crypto';
import { DomainError } from '../../server/src/errors.js';
import type {
  Chain,
  CurrencyInfo,
  ListingMintAttempt,
  ListingMintState,
  ListingTokenInput,
  SendHooks,
  TxAttempt,
  TxOutcome,
  TxResult,
  WalletBalance,
} from '../../server/src/chain/types.js';

export interface FakeToken extends ListingTokenInput {
  mint: string;
  supply: 1;
  signature: string;
  slot: number;
}

export type SendFault = 'lost' | 'timeout' | 'rejected' | 'outage';

const BLOCKHASH_LIFETIME = 150;

export class FakeChain implements Chain {
  down = false;
  slot = 1000;
  blockHeight = 500;
  readonly tokens = new Map<string, FakeToken>();
  /** every transaction that reached the chain: signature -> outcome */
  readonly txs = new Map<string, { ok: boolean; slot: number }>();
  readonly calls: Array<{ method: string; args: unknown[] }> = [];
  private faults: SendFault[] = [];
  private beforeLand: Array<() => Promise<void> | void> = [];

  /** The next sends (mint or update) fail after signing, in this order. */
  failNextSend(...modes: SendFault[]): void {
    this.faults.push(...modes);
  }

  /** Run `fn` during the next send, after its `onSigned` and before it lands (a concurrent actor's step). */
  duringNextSend(fn: () => Promise<void> | void): void {
    this.beforeLand.push(fn);
  }

  /** Move the block height on (expires blockhashes of attempts older than 150 blocks). */
  advanceBlocks(n = BLOCKHASH_LIFETIME + 1): void {
    this.blockHeight += n;
  }

  /** The mint address of a listing (what the real chain derives from the service key). */
  static mintOf(listingId: string): string {
    return Keypair.fromSeed(createHash('sha256').update(`fake-listing-mint/${listingId}`).digest()).publicKey.toBase58();
  }

  private guard(method: string, args: unknown[]) {
    this.calls.push({ method, args });
    if (this.down) throw new DomainError('chain-unavailable', 'The Solana RPC cannot be reached (fake chain is down).');
  }

  /** sign -> onSigned -> land (or the planned fault); `apply` runs when the transaction lands. */
  private async send<A extends TxAttempt>(
    extra: Omit<A, keyof TxAttempt>,
    hooks: SendHooks<A> | undefined,
    apply: ((tx: TxResult) => void) | string,
  ): Promise<TxResult> {
    const signature = bs58.encode(randomBytes(64));
    await hooks?.onSigned?.({ ...extra, signature, lastValidBlockHeight: this.blockHeight + BLOCKHASH_LIFETIME } as A);
    await this.beforeLand.shift()?.();
    const fault = this.faults.shift();
    this.slot += 1;
    if (typeof apply === 'string' || fault === 'rejected') {
      this.txs.set(signature, { ok: false, slot: this.slot });
      throw new DomainError('chain-transaction-failed', `the transaction was rejected (${typeof apply === 'string' ? apply : 'fault'})`, {
        program_error: typeof apply === 'string' ? apply : 'Custom',
        signature,
      });
    }
    if (fault === 'lost') throw new DomainError('chain-unavailable', `transaction ${signature} not confirmed (lost)`, { signature });
    apply({ signature, slot: this.slot });
    this.txs.set(signature, { ok: true, slot: this.slot });
    if (fault === 'outage') this.down = true;
    if (fault === 'timeout' || fault === 'outage') {
      throw new DomainError('chain-unavailable', `transaction ${signature} not confirmed (${fault})`, { signature });
    }
    return { signature, slot: this.slot };
  }

  async health() {
    return this.down ? { ok: false } : { ok: true, slot: this.slot };
  }

  async mintListingToken(input: ListingTokenInput, hooks?: SendHooks<ListingMintAttempt>): Promise<TxResult & { mint: string }> {
    this.guard('mintListingToken', [input]);
    const mint = input.listingId ? FakeChain.mintOf(input.listingId) : Keypair.generate().publicKey.toBase58();
    const taken = this.tokens.has(mint);
    const tx = await this.send<ListingMintAttempt>({ mint }, hooks, taken ? 'AccountAlreadyInUse' : (landed) => {
      this.tokens.set(mint, { ...input, mint, supply: 1, ...landed });
    });
    return { ...tx, mint };
  }

  async updateListingToken(mint: string, fields: { name?: string; uri?: string }, hooks?: SendHooks): Promise<TxResult | null> {
    this.guard('updateListingToken', [mint, fields]);
    const t = this.tokens.get(mint);
    if (!t) throw new DomainError('not-found', `listing token ${mint} has no token metadata`);
    if ((fields.name === undefined || fields.name === t.name) && (fields.uri === undefined || fields.uri === t.uri)) return null;
    return this.send({}, hooks, () => Object.assign(t, fields));
  }

  async readListingMint(q: { mint: string; signature: string | null; lastValidBlockHeight: number | null }): Promise<ListingMintState> {
    this.guard('readListingMint', [q]);
    const t = this.tokens.get(q.mint);
    if (t) return { state: 'minted', name: t.name, uri: t.uri, signature: t.signature, slot: t.slot };
    if (!q.signature) return { state: 'absent' };
    const o = await this.outcome({ signature: q.signature, lastValidBlockHeight: q.lastValidBlockHeight ?? Number.MAX_SAFE_INTEGER });
    return o.state === 'dead' ? { state: 'absent' } : { state: 'in_flight' };
  }

  async transactionOutcome(a: TxAttempt): Promise<TxOutcome> {
    this.guard('transactionOutcome', [a]);
    return this.outcome(a);
  }

  private async outcome(a: TxAttempt): Promise<TxOutcome> {
    const tx = this.txs.get(a.signature);
    if (tx) return tx.ok ? { state: 'landed', slot: tx.slot } : { state: 'dead', reason: 'rejected' };
    return this.blockHeight > a.lastValidBlockHeight ? { state: 'dead', reason: 'expired' } : { state: 'in_flight' };
  }

  async getWalletBalances(_wallet: string, currencies: CurrencyInfo[]): Promise<WalletBalance[]> {
    this.guard('getWalletBalances', [_wallet, currencies]);
    return currencies.map((c) => ({ currency: c.code, mint: c.mint, amountBaseUnits: 0n, decimals: c.decimals, uiAmount: '0' }));
  }
}
