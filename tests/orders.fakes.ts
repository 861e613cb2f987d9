/**
 * In-memory fakes for the orders service unit tests: a simulated escrow program (same rules as the
 * Anchor program for the paths the service uses), a listings store and principals.
 * The fund transaction is a real web3.js Transaction (so signature checks are real).
 */
import { Keypair, PublicKey, Transaction, TransactionInstruction } from '@solana/web3.js';
import bs58 from 'bs58';
import { type ListingOrderEvent, listingTransitions } from '@bazaar/contract';
import { DomainError } from '../server/src/errors.js';
import type { ServiceInstruction } from '../server/src/modules/orders/order-state.js';
import type { RecordedAttempt, TxOutcome } from '../server/src/chain/recorded-send.js';
import type { Escrow } from '@bazaar/escrow-idl/types';
import type {
  EscrowOrderView,
  EscrowPort,
  FundTerms,
  InstructionArgs,
  ListingView,
  ListingsPort,
  OrderPayout,
  OrderSettlement,
  SendOptions,
  TxResult,
} from '../server/src/modules/orders/orders.types.js';
import type { PrincipalLike } from '../server/src/modules/orders/orders.service.js';
import type { OrdersServiceSettings } from '../server/src/modules/orders/orders.settings.js';
import { ordersSettings } from '../server/src/config.js';

const FAKE_PROGRAM = new PublicKey('AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r');
const BLOCKHASH = bs58.encode(Buffer.alloc(32, 7));

export class FakeEscrow implements EscrowPort {
  readonly platform = Keypair.generate();
  accounts = new Map<string, EscrowOrderView>();
  /** signatures of landed transactions per instruction */
  sent: { ix: string; orderId: string; signature: string; bps?: number; payout?: OrderPayout }[] = [];
  /** block height (blockhash lifetimes are 150 blocks, as on a cluster) */
  height = 1_000;
  /** signed transactions are lost on the way (an RPC that accepts and drops them): the send times out */
  dropSends = false;
  /** transactions land but their confirmation is lost (an RPC timeout after the send): the send times out */
  loseConfirmations = false;
  /** fund transactions issued (buildFundTransaction calls) */
  issued = 0;
  balances = new Map<string, bigint>(); // wallet -> base units (payouts)
  now = 1_800_000_000;
  feeBpsValue = 250;
  unavailable = false;
  /** the buyer wallet's balances for a fund transaction (EscrowPort.fundingNeeds); unset: no balance check */
  fundingNeeds?: EscrowPort['fundingNeeds'];
  private n = 0;

  private gate: Promise<void> | null = null;
  private atGate = 0;
  private gateWaiters: Array<{ n: number; resolve: () => void }> = [];

  /**
   * Hold every signed transaction before it lands until the returned function is called: a send in
   * flight for as long as the test wants, without waiting on wall time.
   */
  hold(): () => void {
    let release!: () => void;
    this.gate = new Promise<void>((r) => (release = r));
    return () => {
      this.gate = null;
      this.atGate = 0;
      release();
    };
  }
  /** resolves once `n` signed transactions wait at the gate of `hold()` */
  held(n = 1): Promise<void> {
    return this.atGate >= n ? Promise.resolve() : new Promise((resolve) => this.gateWaiters.push({ n, resolve }));
  }

  count(ix: string, orderId?: string) {
    return this.sent.filter((s) => s.ix === ix && (!orderId || s.orderId === orderId)).length;
  }
  advance(seconds: number) {
    this.now += seconds;
  }

  addresses(orderId: string) {
    return { escrow: `escrow-${orderId}`, vault: `vault-${orderId}` };
  }
  advanceBlocks(n: number) {
    this.height += n;
  }
  /** the cluster's view of a recorded attempt: landed when sent here, dead once the block height passed its lifetime */
  async transactionOutcome(a: RecordedAttempt): Promise<TxOutcome> {
    if (this.unavailable) throw new DomainError('chain-unavailable', 'rpc down');
    const expired = this.height > a.lastValidBlockHeight;
    const sent = this.sent.find((s) => s.signature === a.signature);
    if (sent) return { state: 'landed', slot: 1 };
    return expired ? { state: 'dead', reason: 'expired' } : { state: 'in_flight' };
  }
  async tokenBalance() {
    return 0n;
  }
  async buildFundTransaction(terms: FundTerms | readonly FundTerms[]) {
    if (this.unavailable) throw new DomainError('chain-unavailable', 'rpc down');
    this.issued++;
    const list = Array.isArray(terms) ? (terms as readonly FundTerms[]) : [terms as FundTerms];
    const tx = new Transaction({ feePayer: new PublicKey(list[0]!.buyer), recentBlockhash: BLOCKHASH });
    // one fund instruction per terms (several milestones of one order in one transaction)
    for (const t of list) {
      tx.add(
        new TransactionInstruction({
          programId: FAKE_PROGRAM,
          keys: [
            { pubkey: new PublicKey(t.buyer), isSigner: true, isWritable: true },
            { pubkey: this.platform.publicKey, isSigner: true, isWritable: false },
          ],
          data: Buffer.from(JSON.stringify({ ...t, amount: t.amount.toString() })),
        }),
      );
    }
    tx.partialSign(this.platform);
    // 150 blocks at 400 ms
    return { transaction: tx.serialize({ requireAllSignatures: false }).toString('base64'), validUntil: new Date(Date.now() + 60_000) };
  }
  async submitSignedTransaction(b64: string): Promise<TxResult> {
    const tx = Transaction.from(Buffer.from(b64, 'base64'));
    if (!tx.verifySignatures(true)) throw new DomainError('chain-transaction-failed', 'missing signature', { program_error: 'MissingSignature' });
    const all = tx.instructions.map((ix) => JSON.parse(Buffer.from(ix.data).toString()) as FundTerms & { amount: string });
    // atomic like a transaction: every instruction passes or nothing lands
    for (const t of all) {
      if (this.accounts.has(t.orderId)) throw new DomainError('chain-transaction-failed', 'already in use', { program_error: 'AccountAlreadyInUse' });
      // like the program: co-signed terms are refused after their expiry (chain clock)
      if (this.now > t.expiresAt) throw new DomainError('chain-transaction-failed', 'fund terms expired', { program_error: 'FundTermsExpired' });
    }
    const signature = bs58.encode(tx.signature!);
    for (const t of all) {
      this.fund({ ...t, amount: BigInt(t.amount) });
      this.sent.push({ ix: 'fund', orderId: t.orderId, signature });
    }
    return { signature, slot: ++this.n };
  }
  /** what a wallet paying directly (Solana Pay) does */
  fund(t: FundTerms) {
    this.accounts.set(t.orderId, {
      buyer: t.buyer,
      seller: t.seller,
      mint: t.mint,
      amount: t.amount,
      state: 'funded',
      fundedAt: this.now,
      deliveryDeadline: t.deliveryDeadline,
      deliveredAt: null,
      disputedAt: null,
      reviewWindow: t.reviewWindow,
    });
  }

  private async exec(ix: string, orderId: string, o: SendOptions | undefined, apply: (a: EscrowOrderView) => void): Promise<TxResult> {
    if (this.unavailable) throw new DomainError('chain-unavailable', 'rpc down');
    const a0 = this.accounts.get(orderId);
    if (!a0) throw new DomainError('chain-transaction-failed', 'no account', { program_error: 'AccountNotInitialized' });
    let signature = bs58.encode(Buffer.from(`${ix}-${orderId}-${++this.n}`.padEnd(64, '.').slice(0, 64)));
    if (this.sameBlockhash) {
      // as a real cluster inside one blockhash: the same instruction signed again IS the same transaction,
      // unless the sender asks for one distinct from its earlier ones (a newer blockhash)
      const sig = () => bs58.encode(Buffer.from(`${ix}-${orderId}-${this.blockhashEpoch}`.padEnd(64, '.').slice(0, 64)));
      while (o?.distinctFrom?.has(sig())) this.blockhashEpoch++;
      signature = sig();
    }
    await o?.onSigned?.(signature, { blockhash: BLOCKHASH, lastValidBlockHeight: this.height + 150 });
    // the cluster drops a transaction it processed already: its status is the earlier one's, nothing runs again
    if (this.sameBlockhash && this.sent.some((x) => x.signature === signature)) return { signature, slot: this.n };
    if (this.dropSends) throw new DomainError('chain-unavailable', `transaction ${signature} not confirmed`, { signature });
    if (this.gate) {
      this.atGate++;
      for (const w of this.gateWaiters.filter((x) => this.atGate >= x.n)) w.resolve();
      this.gateWaiters = this.gateWaiters.filter((x) => this.atGate < x.n);
      await this.gate;
    }
    const a = this.accounts.get(orderId);
    if (!a) throw new DomainError('chain-transaction-failed', 'no account', { program_error: 'AccountNotInitialized' });
    this.lastPayout = undefined;
    apply(a);
    this.sent.push({ ix, orderId, signature, ...(this.lastPayout ? { payout: this.lastPayout } : {}) });
    if (this.loseConfirmations) throw new DomainError('chain-unavailable', `transaction ${signature} not confirmed`, { signature });
    return { signature, slot: this.n };
  }
  private lastPayout: OrderPayout | undefined;
  /**
   * Deterministic signatures, as a real cluster gives within one blockhash: the same instruction on the same
   * escrow signs to the same signature (until the sender's `distinctFrom` moves it to a newer blockhash), and
   * a repeat is dropped as already processed.
   */
  sameBlockhash = false;
  private blockhashEpoch = 0;
  private pay(wallet: string, amount: bigint) {
    this.balances.set(wallet, (this.balances.get(wallet) ?? 0n) + amount);
  }
  private close(orderId: string, a: EscrowOrderView, buyerBps: number) {
    const toBuyer = (a.amount * BigInt(buyerBps)) / 10_000n;
    const rest = a.amount - toBuyer;
    const fee = buyerBps === 10_000 ? 0n : (rest * BigInt(this.feeBpsValue)) / 10_000n;
    this.pay(a.buyer, toBuyer);
    this.pay(a.seller, rest - fee);
    this.pay('treasury', fee);
    this.accounts.delete(orderId);
    this.lastPayout = { buyer: toBuyer, seller: rest - fee, treasury: fee, buyerTokenAccount: `ata-${a.buyer}`, verified: true };
  }
  /** the program's refusal, by an error name its IDL has (a name it lacks does not compile) */
  private reject(name: Capitalize<Escrow['errors'][number]['name']>): never {
    throw new DomainError('chain-transaction-failed', `rejected (${name})`, { program_error: name });
  }

  send(ix: ServiceInstruction, id: string, o?: SendOptions & InstructionArgs): Promise<TxResult> {
    switch (ix) {
      case 'request_revision':
        return this.requestRevision(id, o);
      case 'extend_deadline':
        return this.extendDeadline(id, o?.newDeadline ?? 0, o);
      case 'propose_settlement':
        return this.proposeSettlement(id, { buyerBps: o?.buyerBps ?? 0, expiresAt: o?.expiresAt ?? 0, by: o?.proposedBy ?? 'buyer' }, o);
      case 'accept_settlement':
        return this.acceptSettlement(id, o?.buyerBps ?? 0, o);
      case 'withdraw_settlement':
        return this.withdrawSettlement(id, o);
      case 'mark_delivered':
        return this.markDelivered(id, o);
      case 'release':
        return this.release(id, o);
      case 'claim':
        return this.claim(id, o);
      case 'open_dispute':
        return this.openDispute(id, o);
      case 'resolve_dispute':
        return this.resolveDispute(id, o?.buyerBps ?? 0, o);
      case 'refund':
        return this.refund(id, o);
    }
  }
  /**
   * The escrow v2 agreement instructions (i24-design section 5) as the program branch specifies them; their
   * error names are not in today's IDL yet, hence `rejectV2`. Settlement proposals per order account.
   */
  proposals = new Map<string, { buyerBps: number; expiresAt: number; by: 'buyer' | 'seller' }>();
  private rejectV2(name: string): never {
    throw new DomainError('chain-transaction-failed', `rejected (${name})`, { program_error: name });
  }
  requestRevision(id: string, o?: SendOptions) {
    return this.exec('request_revision', id, o, (a) => {
      if (a.state !== 'delivered') this.reject('OrderNotDelivered');
      if (this.now >= (a.deliveredAt ?? 0) + a.reviewWindow) this.reject('ReviewWindowElapsed');
      const left = Math.max(a.deliveryDeadline - (a.deliveredAt ?? 0), 0);
      a.deliveryDeadline = Math.max(a.deliveryDeadline, this.now + Math.max(left, 86_400));
      a.state = 'funded';
      a.deliveredAt = null;
    });
  }
  extendDeadline(id: string, newDeadline: number, o?: SendOptions) {
    return this.exec('extend_deadline', id, o, (a) => {
      if (a.state !== 'funded') this.reject('OrderNotFunded');
      if (newDeadline <= a.deliveryDeadline) this.rejectV2('DeadlineNotLater');
      a.deliveryDeadline = newDeadline;
    });
  }
  proposeSettlement(id: string, p: { buyerBps: number; expiresAt: number; by: 'buyer' | 'seller' }, o?: SendOptions) {
    return this.exec('propose_settlement', id, o, () => {
      if (!(p.expiresAt > this.now && p.expiresAt <= this.now + 7 * 86_400)) this.rejectV2('InvalidProposalExpiry');
      this.proposals.set(id, p);
    });
  }
  async acceptSettlement(id: string, bps: number, o?: SendOptions) {
    const r = await this.exec('accept_settlement', id, o, (a) => {
      const p = this.proposals.get(id);
      if (!p) this.rejectV2('NoSettlementProposal');
      if (p.buyerBps !== bps) this.rejectV2('SettlementMismatch');
      if (this.now >= p.expiresAt) this.rejectV2('SettlementExpired');
      this.proposals.delete(id);
      this.close(id, a, bps);
    });
    this.sent[this.sent.length - 1].bps = bps;
    return r;
  }
  withdrawSettlement(id: string, o?: SendOptions) {
    return this.exec('withdraw_settlement', id, o, () => {
      if (!this.proposals.has(id)) this.rejectV2('NoSettlementProposal');
      this.proposals.delete(id);
    });
  }
  markDelivered(id: string, o?: SendOptions) {
    return this.exec('mark_delivered', id, o, (a) => {
      if (a.state !== 'funded') this.reject('OrderNotFunded');
      a.state = 'delivered';
      a.deliveredAt = this.now;
    });
  }
  release(id: string, o?: SendOptions) {
    return this.exec('release', id, o, (a) => {
      if (a.state === 'disputed') this.reject('OrderNotFundedOrDelivered');
      this.close(id, a, 0);
    });
  }
  claim(id: string, o?: SendOptions) {
    return this.exec('claim', id, o, (a) => {
      if (a.state !== 'delivered') this.reject('OrderNotDelivered');
      if (this.now < (a.deliveredAt ?? 0) + a.reviewWindow) this.reject('ReviewWindowNotElapsed');
      this.close(id, a, 0);
    });
  }
  openDispute(id: string, o?: SendOptions) {
    return this.exec('open_dispute', id, o, (a) => {
      if (a.state === 'disputed') this.reject('OrderNotFundedOrDelivered');
      a.state = 'disputed';
      a.disputedAt = this.now;
    });
  }
  async resolveDispute(id: string, bps: number, o?: SendOptions) {
    const r = await this.exec('resolve_dispute', id, o, (a) => {
      if (a.state !== 'disputed') this.reject('OrderNotDisputed');
      this.close(id, a, bps);
    });
    this.sent[this.sent.length - 1].bps = bps;
    return r;
  }
  refund(id: string, o?: SendOptions) {
    return this.exec('refund', id, o, (a) => this.close(id, a, 10_000));
  }
  async fetchOrder(id: string) {
    if (this.unavailable) throw new DomainError('chain-unavailable', 'rpc down');
    const a = this.accounts.get(id);
    return a ? { ...a } : null;
  }
  async findSettlement(order: { id: string }, signature?: string): Promise<OrderSettlement | null> {
    const last = [...this.sent]
      .reverse()
      .find((x) => x.orderId === order.id && (!signature || x.signature === signature) && ['release', 'claim', 'refund', 'resolve_dispute', 'accept_settlement'].includes(x.ix));
    if (!last || !last.payout) return null;
    return {
      instruction: last.ix as OrderSettlement['instruction'],
      signature: last.signature,
      slot: 1,
      ...(last.bps !== undefined ? { buyerBps: last.bps } : {}),
      payout: last.payout,
    };
  }
  async signatureStatus(sig: string) {
    return this.sent.some((s) => s.signature === sig) ? ('confirmed' as const) : ('unknown' as const);
  }
  async feeBps() {
    return this.feeBpsValue;
  }
  async chainNow() {
    if (this.unavailable) throw new DomainError('chain-unavailable', 'rpc down');
    return this.now;
  }
}

export class FakeListings implements ListingsPort {
  rows = new Map<string, ListingView>();
  calls: string[] = [];
  add(l: Partial<ListingView> & { id: string; sellerId: string; sellerWallet: string }): ListingView {
    const row: ListingView = { title: 'Logo design', status: 'available', currency: 'USDC', priceBaseUnits: 25_000_000n, durationDays: 3, tokenMint: null, ...l };
    this.rows.set(row.id, row);
    return row;
  }
  async get(id: string) {
    const l = this.rows.get(id);
    return l ? { ...l } : null;
  }
  /** the listings module's rule, on the contract's listing table: reserving is exclusive, the rest idempotent */
  async applyOrderEvent(id: string, event: ListingOrderEvent) {
    this.calls.push(`${event}:${id}`);
    const l = this.rows.get(id);
    if (!l) throw new DomainError('not-found', 'listing');
    const row = listingTransitions.find((t) => t.event === event)!;
    if (l.status === row.from) l.status = row.to;
    else if (row.to === 'reserved') throw new DomainError('listing-unavailable', `listing is ${l.status}`);
    else if (l.status !== row.to) throw new DomainError('invalid-state-transition', `listing is ${l.status}`);
  }
}

export function user(id: string, wallet: string, extra: Partial<PrincipalLike> = {}): PrincipalLike {
  return { kind: 'user', userId: id, wallet, isAdmin: false, ...extra };
}

/**
 * Complete orders settings for a service built in a test: the ENV_VARS defaults (read by config.ts
 * `ordersSettings` from an empty environment, the one place defaults live) with `over` on top.
 */
export function testOrdersSettings(over: Partial<OrdersServiceSettings> = {}): OrdersServiceSettings {
  const publicBaseUrl = over.publicBaseUrl ?? 'http://127.0.0.1:3000';
  return { ...ordersSettings({}, publicBaseUrl), publicBaseUrl, ...over };
}
