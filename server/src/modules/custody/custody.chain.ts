/**
 * The custody module's side of Solana: token accounts and balances, deposit detection reads, and
 * the three transfers it signs (withdrawal, sweep, custodial order funding). Over @solana/web3.js
 * (JSON-RPC) and the escrow client; sends with ../../chain/tx.ts (polling confirmation).
 *
 * Commitments: incoming deposits are read at `finalized` (`DEPOSIT_COMMITMENT`); the service's own
 * transfers are settled at `confirmed` (`TRANSFER_COMMITMENT`, supermajority-voted; the sender holds
 * the outcome and reconciles by signature). The localnet reports every transaction finalized at once.
 *
 * Fees: the service keypair (the hot wallet owner) pays every network fee, the rent of associated
 * token accounts it creates (the hot wallet's, a deposit address's; never a withdrawal destination's) and
 * tops up a deposit key with the rent of a custodial order's escrow accounts (returned to the deposit
 * key when the escrow closes, and reused for the user's next custodial order).
 *
 * Errors: DomainError('chain-unavailable') when the RPC cannot be reached or a confirmation times
 * out (the outcome is unknown: reconcile by signature); DomainError('chain-transaction-failed') when
 * the transaction is rejected or its blockhash expired (it will never land).
 */
import {
  type Commitment,
  type Connection,
  type Keypair,
  PublicKey,
  SystemProgram,
  Transaction,
  TransactionInstruction,
} from '@solana/web3.js';
import {
  ACCOUNT_SIZE,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
  createAssociatedTokenAccountIdempotentInstruction,
  createTransferCheckedInstruction,
  getAccountLenForMint,
  getAssociatedTokenAddressSync,
  getMint,
  unpackAccount,
} from '@solana/spl-token';
import type { EscrowClient } from '../../chain/escrow.js';
import { escrowInstructions } from '../../chain/settlement.js';
import { parseTransaction, tokenDelta } from '../../chain/transaction-effects.js';
import { DomainError } from '../../errors.js';
import { type RecordedAttempt, type TxOutcome, transactionOutcome } from '../../chain/recorded-send.js';
import { rpc, sendRawAndConfirm } from '../../chain/tx.js';
import { signTransaction } from '../../chain/sign.js';
import type { TxResult } from '../../chain/types.js';

export const DEPOSIT_COMMITMENT: Commitment = 'finalized';
/** SPL Memo program (v2): every custody transfer carries `bazaar:custody:<transfer id>`. */
export const MEMO_PROGRAM_ID = new PublicKey('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');

/**
 * The memo instruction naming a transfer. Besides attribution on explorers it makes every transfer's
 * transaction unique: two withdrawals of the same amount to the same wallet signed with the same
 * blockhash would otherwise be byte-identical, one signature, and only one would ever land.
 */
export function transferMemo(transferId: string): TransactionInstruction {
  return new TransactionInstruction({ programId: MEMO_PROGRAM_ID, keys: [], data: Buffer.from(`bazaar:custody:${transferId}`, 'utf8') });
}
export const TRANSFER_COMMITMENT: Commitment = 'confirmed';

/** Called with the signature and the blockhash's last valid block height before the first send; a throw aborts the send. */
export type OnSigned = (signature: string, lastValidBlockHeight: number) => Promise<void>;

/**
 * What one transaction did to a deposit token account, from the service's one transaction parser
 * (../../chain/transaction-effects.ts: lookup tables resolved, CPIs included). Base units.
 */
export interface DepositReading {
  slot: number;
  /** the transaction failed (nothing moved) */
  failed: boolean;
  /** post - pre balance of the token account (0 when the account is not in the transaction) */
  delta: bigint;
  /** token movements into the account (transfers and mints, top level or CPI): source token account (null for a mint) and amount */
  inflows: Array<{ source: string | null; amount: bigint }>;
  /** token accounts named `vault` by an escrow instruction of the transaction (top level or CPI): escrow vaults, whoever called the program */
  escrowVaults: ReadonlySet<string>;
  /** the transaction invoked the escrow program, top level or by CPI, its id static or loaded from a lookup table */
  invokesEscrow: boolean;
  /**
   * every account key is known (lookup tables resolved) and, when the escrow was invoked, the node
   * reported the CPIs: the balance change can be attributed to its sources. False: it cannot (yet).
   */
  attributable: boolean;
}

/** One token account of a deposit key holding tokens of a mint (a sweep source). */
export interface DepositHolding {
  tokenAccount: string;
  /** base units */
  amount: bigint;
}

export interface CustodyChainPort {
  /** the hot wallet: the service keypair's public key (owner of the hot wallet's token accounts) */
  readonly hotWallet: string;
  /** associated token account of (owner, mint); off-curve owners allowed */
  tokenAccount(owner: string, mint: string, tokenProgram?: string): string;
  /** token balance in base units; 0 when the account does not exist */
  tokenBalance(tokenAccount: string, commitment?: Commitment): Promise<bigint>;
  /** what lives at `address`: missing, a wallet (system-owned), a token account or mint, a program, or other */
  accountKind(address: string): Promise<'missing' | 'wallet' | 'token' | 'program' | 'other'>;
  /** signatures touching `address` newer than `until`, oldest first (finalized) */
  newSignatures(address: string, until: string | null): Promise<Array<{ signature: string; slot: number; failed: boolean }>>;
  /** what transaction `signature` did to `tokenAccount` (finalized); null when unknown to the node */
  readDeposit(signature: string, tokenAccount: string): Promise<DepositReading | null>;
  /**
   * Every token account of `owner` for `mint` that holds tokens and can be moved (not frozen), its
   * associated token account first. A refund may land in any token account the deposit key owns
   * (the escrow checks the owner, not the address), and the sweep must reach it.
   */
  depositHoldings(owner: string, mint: string, tokenProgram?: string): Promise<DepositHolding[]>;
  /** what became of a recorded transfer attempt (../../chain/recorded-send.ts), at TRANSFER_COMMITMENT */
  transactionOutcome(attempt: RecordedAttempt): Promise<TxOutcome>;
  /** hot wallet -> destination's associated token account, which must exist (never created: docs/threat-model.md#who-pays-for-what-on-chain) */
  sendWithdrawal(t: { id: string; mint: string; amount: bigint; destination: string }, onSigned: OnSigned): Promise<TxResult>;
  /**
   * deposit address -> hot wallet: `amount` taken from the deposit key's holdings of the mint (its
   * associated token account first, then its other token accounts), in one transaction; the deposit
   * key signs the transfers, the service pays the fee
   */
  sendSweep(t: { id: string; mint: string; amount: bigint }, depositKey: Keypair, onSigned: OnSigned): Promise<TxResult>;
  /**
   * Fund an order's escrow on the buyer's behalf, in one transaction: rent top-up of the deposit key,
   * hot wallet -> deposit address token account, then `fund` with the deposit key as the on-chain buyer.
   */
  sendOrderFund(
    t: { id: string; orderId: string; seller: string; mint: string; amount: bigint; deliveryDeadline: number; reviewWindow: number; expiresAt: number },
    depositKey: Keypair,
    onSigned: OnSigned,
  ): Promise<TxResult>;
  /** the escrow address (order PDA) of an order */
  escrowAddress(orderId: string, mint: string): string;
}

export interface CustodyChainOptions {
  connection: Connection;
  /** the service keypair: hot wallet owner, fee payer, platform authority */
  service: Keypair;
  escrow: EscrowClient;
  /** token program per mint (configured currencies); others are read from the chain */
  tokenPrograms?: Record<string, string>;
  confirm?: { timeoutMs?: number; pollIntervalMs?: number };
}

export class CustodyChain implements CustodyChainPort {
  readonly hotWallet: string;
  private readonly connection: Connection;
  private readonly service: Keypair;
  private readonly escrow: EscrowClient;
  private readonly tokenPrograms = new Map<string, PublicKey>();
  private rentCache = new Map<number, number>();

  constructor(private readonly opts: CustodyChainOptions) {
    this.connection = opts.connection;
    this.service = opts.service;
    this.escrow = opts.escrow;
    this.hotWallet = opts.service.publicKey.toBase58();
    for (const [mint, tp] of Object.entries(opts.tokenPrograms ?? {})) this.tokenPrograms.set(mint, new PublicKey(tp));
  }

  private programOf(mint: string): PublicKey {
    return this.tokenPrograms.get(mint) ?? TOKEN_PROGRAM_ID;
  }

  tokenAccount(owner: string, mint: string, tokenProgram?: string): string {
    const tp = tokenProgram ? new PublicKey(tokenProgram) : this.programOf(mint);
    return getAssociatedTokenAddressSync(new PublicKey(mint), new PublicKey(owner), true, tp).toBase58();
  }

  escrowAddress(orderId: string, mint: string): string {
    return this.escrow.addresses(orderId, mint).escrow;
  }

  async tokenBalance(tokenAccount: string, commitment: Commitment = TRANSFER_COMMITMENT): Promise<bigint> {
    const key = new PublicKey(tokenAccount);
    const info = await rpc(() => this.connection.getAccountInfo(key, commitment), { action: 'reading a token balance' });
    if (!info) return 0n;
    try {
      return unpackAccount(key, info, info.owner).amount;
    } catch {
      return 0n;
    }
  }

  async accountKind(address: string): Promise<'missing' | 'wallet' | 'token' | 'program' | 'other'> {
    const info = await rpc(() => this.connection.getAccountInfo(new PublicKey(address), TRANSFER_COMMITMENT), {
      action: 'reading the destination account',
    });
    if (!info) return 'missing';
    if (info.executable) return 'program';
    if (info.owner.equals(TOKEN_PROGRAM_ID) || info.owner.equals(TOKEN_2022_PROGRAM_ID)) return 'token';
    if (info.owner.equals(SystemProgram.programId)) return 'wallet';
    return 'other';
  }

  async newSignatures(address: string, until: string | null) {
    const out: Array<{ signature: string; slot: number; failed: boolean }> = [];
    let before: string | undefined;
    for (let page = 0; page < 20; page++) {
      const sigs = await rpc(
        () =>
          this.connection.getSignaturesForAddress(
            new PublicKey(address),
            { limit: 100, ...(until ? { until } : {}), ...(before ? { before } : {}) },
            DEPOSIT_COMMITMENT as 'finalized',
          ),
        { action: 'listing deposit transactions' },
      );
      out.push(...sigs.map((s) => ({ signature: s.signature, slot: s.slot, failed: !!s.err })));
      if (sigs.length < 100) break;
      before = sigs[sigs.length - 1].signature;
    }
    return out.reverse();
  }

  async readDeposit(signature: string, tokenAccount: string): Promise<DepositReading | null> {
    const tx = await rpc(
      () => this.connection.getTransaction(signature, { commitment: DEPOSIT_COMMITMENT as 'finalized', maxSupportedTransactionVersion: 0 }),
      { action: 'reading a deposit transaction' },
    );
    if (!tx || !tx.meta) return null;
    const fx = parseTransaction(tx);
    const invokesEscrow = fx.invokedPrograms.has(this.escrow.programId.toBase58());
    const escrowVaults = new Set(
      escrowInstructions(fx, this.escrow.programContext())
        .map((ix) => ix.named.vault)
        .filter((v): v is string => !!v),
    );
    return {
      slot: fx.slot,
      failed: fx.failed,
      delta: tokenDelta(fx, tokenAccount),
      inflows: fx.tokenMovements
        .filter((m) => m.destination === tokenAccount && (m.kind === 'transfer' || m.kind === 'mint'))
        .map((m) => ({ source: m.source, amount: m.amount })),
      escrowVaults,
      invokesEscrow,
      attributable: fx.keysResolved && (!invokesEscrow || fx.innerInstructionsKnown),
    };
  }

  async depositHoldings(owner: string, mint: string, tokenProgram?: string): Promise<DepositHolding[]> {
    const ata = this.tokenAccount(owner, mint, tokenProgram);
    const res = await rpc(
      () => this.connection.getParsedTokenAccountsByOwner(new PublicKey(owner), { mint: new PublicKey(mint) }, TRANSFER_COMMITMENT),
      { action: 'reading the deposit token accounts' },
    );
    const out: DepositHolding[] = [];
    for (const { pubkey, account } of res.value) {
      const info = (account.data as { parsed?: { info?: { state?: string; tokenAmount?: { amount?: string } } } }).parsed?.info;
      const amount = BigInt(info?.tokenAmount?.amount ?? '0');
      if (amount <= 0n || info?.state !== 'initialized') continue; // empty, frozen or not readable
      out.push({ tokenAccount: pubkey.toBase58(), amount });
    }
    return out.sort((a, b) => (a.tokenAccount === ata ? -1 : b.tokenAccount === ata ? 1 : a.tokenAccount.localeCompare(b.tokenAccount)));
  }

  transactionOutcome(attempt: RecordedAttempt): Promise<TxOutcome> {
    return transactionOutcome(this.connection, attempt, TRANSFER_COMMITMENT);
  }

  private async send(instructions: TransactionInstruction[], signers: Keypair[], onSigned: OnSigned, action: string): Promise<TxResult> {
    const latest = await rpc(() => this.connection.getLatestBlockhash(TRANSFER_COMMITMENT), { action });
    const tx = new Transaction().add(...instructions);
    tx.feePayer = this.service.publicKey;
    tx.recentBlockhash = latest.blockhash;
    tx.lastValidBlockHeight = latest.lastValidBlockHeight;
    signTransaction(tx, this.service, ...signers.filter((s) => !s.publicKey.equals(this.service.publicKey)));
    return sendRawAndConfirm(this.connection, tx.serialize(), {
      commitment: TRANSFER_COMMITMENT,
      ...this.opts.confirm,
      lastValidBlockHeight: latest.lastValidBlockHeight,
      programIds: tx.instructions.map((i) => i.programId.toBase58()),
      errors: { ...this.escrow.errorContext(action) },
      onSigned: (signature) => onSigned(signature, latest.lastValidBlockHeight),
    });
  }

  private async decimalsOf(mint: PublicKey, tp: PublicKey): Promise<number> {
    const m = await rpc(() => getMint(this.connection, mint, TRANSFER_COMMITMENT, tp), { action: 'reading the mint' });
    return m.decimals;
  }

  async sendWithdrawal(t: { id: string; mint: string; amount: bigint; destination: string }, onSigned: OnSigned): Promise<TxResult> {
    const mint = new PublicKey(t.mint);
    const tp = this.programOf(t.mint);
    const owner = new PublicKey(t.destination);
    const from = getAssociatedTokenAddressSync(mint, this.service.publicKey, true, tp);
    const to = getAssociatedTokenAddressSync(mint, owner, true, tp);
    const decimals = await this.decimalsOf(mint, tp);
    // no create of `to`: the service never pays a destination's rent (docs/threat-model.md#who-pays-for-what-on-chain); the request
    // checked it exists, and if it was closed since, the transfer fails and the hold is released
    return this.send(
      [createTransferCheckedInstruction(from, mint, to, this.service.publicKey, t.amount, decimals, [], tp), transferMemo(t.id)],
      [],
      onSigned,
      'sending a withdrawal',
    );
  }

  async sendSweep(t: { id: string; mint: string; amount: bigint }, depositKey: Keypair, onSigned: OnSigned): Promise<TxResult> {
    const mint = new PublicKey(t.mint);
    const tp = this.programOf(t.mint);
    const to = getAssociatedTokenAddressSync(mint, this.service.publicKey, true, tp);
    const decimals = await this.decimalsOf(mint, tp);
    // the associated token account first; other token accounts of the deposit key only for the rest
    const transfers: TransactionInstruction[] = [];
    let left = t.amount;
    for (const h of await this.depositHoldings(depositKey.publicKey.toBase58(), t.mint, tp.toBase58())) {
      if (left === 0n) break;
      const take = h.amount < left ? h.amount : left;
      transfers.push(createTransferCheckedInstruction(new PublicKey(h.tokenAccount), mint, to, depositKey.publicKey, take, decimals, [], tp));
      left -= take;
    }
    if (left > 0n || transfers.length === 0) {
      // fewer tokens than the sweep was created for: fail it (nothing held; the next pass sweeps what is there)
      throw new DomainError('chain-transaction-failed', `The deposit address holds less than the ${t.amount} base units to sweep`);
    }
    return this.send(
      [
        createAssociatedTokenAccountIdempotentInstruction(this.service.publicKey, to, this.service.publicKey, mint, tp),
        ...transfers,
        transferMemo(t.id),
      ],
      [depositKey],
      onSigned,
      'sweeping a deposit',
    );
  }

  private async rent(bytes: number): Promise<number> {
    let v = this.rentCache.get(bytes);
    if (v === undefined) {
      v = await rpc(() => this.connection.getMinimumBalanceForRentExemption(bytes), { action: 'reading rent' });
      this.rentCache.set(bytes, v);
    }
    return v;
  }

  async sendOrderFund(
    t: { id: string; orderId: string; seller: string; mint: string; amount: bigint; deliveryDeadline: number; reviewWindow: number; expiresAt: number },
    depositKey: Keypair,
    onSigned: OnSigned,
  ): Promise<TxResult> {
    const mint = new PublicKey(t.mint);
    const tp = this.programOf(t.mint);
    const buyer = depositKey.publicKey;
    const hot = getAssociatedTokenAddressSync(mint, this.service.publicKey, true, tp);
    const buyerAta = getAssociatedTokenAddressSync(mint, buyer, true, tp);
    const decimals = await this.decimalsOf(mint, tp);
    // the buyer (deposit key) pays the rent of the order PDA and the vault inside `fund`: top it up
    // so it keeps either nothing or at least a rent-exempt system balance afterwards
    const vaultSize = tp.equals(TOKEN_PROGRAM_ID)
      ? ACCOUNT_SIZE
      : getAccountLenForMint(await rpc(() => getMint(this.connection, mint, TRANSFER_COMMITMENT, tp), { action: 'reading the mint' }));
    const [orderRent, vaultRent, systemRent, lamports] = await Promise.all([
      this.rent(this.escrow.orderAccountSize()),
      this.rent(vaultSize),
      this.rent(0),
      rpc(() => this.connection.getBalance(buyer, TRANSFER_COMMITMENT), { action: 'reading the deposit key balance' }),
    ]);
    const need = orderRent + vaultRent;
    const topUp = lamports === 0 ? need : Math.max(0, need + systemRent - lamports);
    const { instruction: fundIx } = await this.escrow.fundInstruction({
      orderId: t.orderId,
      buyer: buyer.toBase58(),
      seller: t.seller,
      mint: t.mint,
      amount: t.amount,
      deliveryDeadline: t.deliveryDeadline,
      reviewWindow: t.reviewWindow,
      expiresAt: t.expiresAt,
    });
    const ixs: TransactionInstruction[] = [];
    if (topUp > 0) ixs.push(SystemProgram.transfer({ fromPubkey: this.service.publicKey, toPubkey: buyer, lamports: topUp }));
    ixs.push(
      createAssociatedTokenAccountIdempotentInstruction(this.service.publicKey, buyerAta, buyer, mint, tp),
      createTransferCheckedInstruction(hot, mint, buyerAta, this.service.publicKey, t.amount, decimals, [], tp),
      fundIx,
      transferMemo(t.id),
    );
    return this.send(ixs, [depositKey], onSigned, 'funding a custodial order');
  }
}
