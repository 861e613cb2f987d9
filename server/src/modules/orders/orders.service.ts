/**
 * Orders: creation with an escrow fund transaction, payment detection, the chain-backed actions
 * (deliver, confirm, claim, dispute, resolve, refund) and their crash-safe bookkeeping.
 *
 * Every chain-backed action follows the same steps, serialized per order (in-process mutex keyed by
 * order id + a DB guard that refuses a second open intent for the same order):
 *   1. settle a left-over open intent of the order (reconciler) so state is current;
 *   2. repeat of an action whose result is already there -> return the order, send nothing;
 *   3. check the caller's role and the transition (403 / 409 invalid-state-transition);
 *   4. record a ChainIntent `pending` (DB guard), sign as the platform authority, mark it `sent`
 *      with the signature, send and wait for confirmation;
 *   5. one DB transaction: intent `confirmed` + order status/timestamps/signature; then the listing.
 * A rejected transaction marks the intent failed (502 chain-transaction-failed); an RPC outage
 * leaves it open for the reconciler (503 chain-unavailable) so money never moves twice.
 */
import { randomUUID } from 'node:crypto';
import { ChainActionLandedError, DomainError } from '../../errors.js';
import type { Principal } from '../auth/index.js';
import { EscrowReconciler, isStrayRefund } from './escrow-reconciler.js';
import { AttemptSuperseded, type RecordedAttempt, recordAttempt } from '../../chain/recorded-send.js';
import { cursorKey, decodeCursor, newestPage } from '../../lib/cursor.js';
import { formatUiAmount } from '../../lib/money.js';
import { compareFundTransaction, normalizeTransaction } from './fund-tx.js';
import { formulaPayout, patchForInstruction } from './order-patch.js';
import { listingTransitions, PAYMENT_GRACE_SECONDS, type Order } from '@bazaar/contract';
import {
  type ChainAction,
  type Clocks,
  type OrderRole,
  type OrderStatus,
  actionInstruction,
  allowedActions,
  closesEscrow,
  findTransition,
  isTerminal,
  listingEventAfter,
  needsChainClock,
  refusal,
  roleMayEver,
  targetStatus,
} from './order-state.js';
import { toOrderDto } from './orders.dto.js';
import { nextStepOf, presentViews } from './order-view.js';
import { checkWalletFunds, insufficientFunds, isLackOfFunds, type FundsCurrency } from './wallet-funds.js';
import { orderErrors } from './orders.errors.js';
import type { Instruction } from './order-state.js';
import type {
  CustodialPaymentsPort,
  CurrencyView,
  EscrowOrderView,
  EscrowPort,
  FundTerms,
  HoldPressure,
  IssuedFundTransaction,
  ListingsPort,
  OrderRecord,
  OrderSettlement,
  OrdersRepo,
  PaymentSource,
  TxResult,
} from './orders.types.js';

/** The caller, as the auth module's `Principal` (req.principal) carries it: the fields the orders rules read. */
export type PrincipalLike = Pick<Principal, 'kind' | 'userId' | 'wallet' | 'isAdmin'>;

type Log = { info: (...a: unknown[]) => void; warn: (...a: unknown[]) => void; error: (...a: unknown[]) => void };

export interface OrdersConfig {
  /** payment window: payment_expires_at = created_at + this (default 900 s) */
  paymentTtlSeconds: number;
  /** extra time after payment expiry before the order is expired (a fund tx issued just before
   *  expiry may land until its blockhash expires; default 120 s); also the reconciler's grace */
  paymentGraceSeconds: number;
  /** escrow review window after delivery, seconds (auto-release after it) */
  reviewWindowSeconds: number;
  /** public base URL used in Solana Pay links, e.g. https://api.bazaar.dev */
  publicBaseUrl: string;
  solanaPayLabel: string;
  solanaPayIcon: string;
  /** how long a call waits for another process's in-flight action on the same order before 409 */
  inflightWaitMs: number;
  /** reconciler also checks active orders against their escrow accounts (parties acting directly) */
  syncDrift: boolean;
  /** a buyer may hold at most this many unpaid (awaiting_payment) orders at once (anti-griefing, default 3) */
  maxUnpaidOrdersPerBuyer: number;
  /** one client network (IPv4 address / IPv6 /64) may hold at most this many unpaid orders (default 10; API keys are not counted) */
  maxUnpaidOrdersPerIp: number;
  /** payment window of a new order on a contested listing, or from a network holding half its limit, seconds (default 300) */
  contestedPaymentTtlSeconds: number;
  /** after a wallet order's payment window closed unpaid, its buyer may not order that listing again for this long, seconds (default 3600; 0 = none) */
  holdCooldownSeconds: number;
}

export const defaultOrdersConfig: OrdersConfig = {
  paymentTtlSeconds: 900,
  paymentGraceSeconds: PAYMENT_GRACE_SECONDS,
  reviewWindowSeconds: 3 * 24 * 3600,
  publicBaseUrl: 'http://127.0.0.1:3000',
  solanaPayLabel: 'Bazaar',
  solanaPayIcon: 'http://127.0.0.1:3000/icon.svg',
  inflightWaitMs: 5_000,
  syncDrift: true,
  maxUnpaidOrdersPerBuyer: 3,
  maxUnpaidOrdersPerIp: 10,
  contestedPaymentTtlSeconds: 300,
  holdCooldownSeconds: 3600,
};

/**
 * Named steps of POST /orders where a test hook may simulate the process dying (a throw, or a promise
 * that never settles): `order-inserted` = the order row (and the listing hold) is committed, nothing
 * else; `payment-ready` = the fund transaction is built (or the custodial payment made), the response
 * not yet sent.
 */
export type CreateStep = 'order-inserted' | 'payment-ready';

/** How long after the validUntil of its last fund transaction a closed order is checked for an escrow (see refundStrayEscrows). */
const STRAY_ESCROW_MARGIN_SECONDS = 600;

export interface OrdersHooks {
  /** test hook: runs after a chain action is confirmed and before the DB write (crash simulation) */
  afterSend?: (info: { orderId: string; action: ChainAction; tx: TxResult }) => Promise<void> | void;
  /** test hook: runs at each named step of order creation (crash simulation) */
  createStep?: (step: CreateStep, info: { orderId: string }) => Promise<void> | void;
}

export interface OrdersServiceDeps {
  repo: OrdersRepo;
  listings: ListingsPort;
  escrow: EscrowPort;
  currency: (code: string) => CurrencyView | undefined;
  config?: Partial<OrdersConfig>;
  log?: Log;
  now?: () => Date;
  hooks?: OrdersHooks;
  /** custodial payments (custody enabled); absent: payment_source custodial answers 404 custody-disabled */
  custody?: CustodialPaymentsPort;
  /** whether the buyer already reviewed the order (the reviews module; hides `review` from allowed_actions) */
  hasReview?: (orderId: string) => Promise<boolean>;
}

/** The blockhash lifetime of a recorded attempt (recordAttempt always has its blockhash). */
const lifetimeOf = (a: RecordedAttempt) => ({ blockhash: a.blockhash!, lastValidBlockHeight: a.lastValidBlockHeight });

export interface CreateOrderInput {
  listingId: string;
  /** API keys only: the paying wallet */
  buyerWallet?: string | null;
  /** default wallet */
  paymentSource?: PaymentSource;
  /** the request's Idempotency-Key: stored on the order, so a retry after a crash finds it */
  idempotencyKey?: string | null;
  /**
   * the client network of the request (`lib/client-network.ts`: IPv4 address or IPv6 /64), counted by
   * the per-network hold limit; null/absent: not counted (API keys, calls from inside the service)
   */
  network?: string | null;
}

/** contract OrderPayment */
export interface PaymentInstructions {
  transaction: string;
  solana_pay_url: string;
  /** last moment `transaction` can land: min(its blockhash's validity, payment_expires_at) */
  expires_at: Date;
}

/** Promise-chain mutex per key: calls for one order run one after another, others in parallel. */
export class KeyedMutex {
  private tails = new Map<string, Promise<void>>();
  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const tail = prev.then(() => mine);
    this.tails.set(key, tail);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}

const silent: Log = { info() {}, warn() {}, error() {} };

export class OrdersService {
  readonly config: OrdersConfig;
  readonly mutex = new KeyedMutex();
  readonly reconciler: EscrowReconciler;
  hooks: OrdersHooks;
  private readonly log: Log;
  private readonly now: () => Date;

  constructor(private readonly deps: OrdersServiceDeps) {
    const given = Object.fromEntries(Object.entries(deps.config ?? {}).filter(([, v]) => v !== undefined)) as Partial<OrdersConfig>;
    this.config = { ...defaultOrdersConfig, ...given };
    if (!given.solanaPayIcon && given.publicBaseUrl) this.config.solanaPayIcon = `${given.publicBaseUrl.replace(/\/+$/, '')}/icon.svg`;
    this.log = deps.log ?? silent;
    this.now = deps.now ?? (() => new Date());
    this.hooks = deps.hooks ?? {};
    this.reconciler = new EscrowReconciler({
      repo: deps.repo,
      escrow: deps.escrow,
      log: this.log,
      now: this.now,
      graceSeconds: this.config.paymentGraceSeconds,
      withOrderLock: (id, fn) => this.mutex.run(id, fn),
      syncDrift: this.config.syncDrift,
      onSettled: async (order) => {
        await this.applyListingEffect(order);
        await this.bookCustodial(order);
      },
    });
  }

  // ---------------------------------------------------------------- roles and reads

  roleOf(order: OrderRecord, p: PrincipalLike): OrderRole | null {
    if (p.userId && p.userId === order.buyerId) return 'buyer';
    if (p.userId && p.userId === order.sellerId) return 'seller';
    if (p.isAdmin) return 'admin';
    return null;
  }

  /** Buyer, seller or admin; anyone else gets 404 (existence is not disclosed). */
  async get(p: PrincipalLike, orderId: string): Promise<OrderRecord> {
    const order = await this.deps.repo.get(orderId);
    if (!order || !this.roleOf(order, p)) throw orderErrors.notFound(orderId);
    return order;
  }

  async list(
    p: PrincipalLike,
    q: { role?: 'buyer' | 'seller'; status?: OrderStatus; limit?: number; cursor?: string | null },
  ): Promise<{ data: OrderRecord[]; nextCursor: string | null }> {
    if (!p.userId) throw orderErrors.forbidden('Listing orders needs a user credential.');
    const limit = Math.min(Math.max(q.limit ?? 20, 1), 100);
    const spec = { sort: 'created_desc', filters: { role: q.role, status: q.status }, keys: [cursorKey.timestamp] };
    let after: { createdAt: Date; id: string } | undefined;
    if (q.cursor) {
      const c = decodeCursor(q.cursor, spec);
      after = { createdAt: new Date(String(c.keys[0])), id: c.id };
    }
    const rows = await this.deps.repo.list({ userId: p.userId, role: q.role, status: q.status, limit: limit + 1, after });
    const { items: data, nextCursor } = newestPage(rows, limit, spec);
    return { data, nextCursor };
  }

  /**
   * The clocks of the timing rules, now: the chain clock (read from the cluster only when `needChain`)
   * and the service clock. Throws chain-unavailable when the chain clock is needed and unreadable.
   */
  private async clocks(needChain: boolean): Promise<Clocks> {
    const serviceMs = this.now().getTime();
    return { serviceMs, chainSeconds: needChain ? await this.deps.escrow.chainNow() : Math.floor(serviceMs / 1000) };
  }

  /**
   * Orders as the contract's `Order` for caller `p`: with their chain transactions and the caller's
   * `allowed_actions`, the lifecycle table evaluated on the same clocks the rules use (the chain clock
   * is read once for the whole page; when the RPC cannot answer, the service clock stands in for it
   * and an action it lists may still be refused when taken).
   */
  async present(p: PrincipalLike, orders: OrderRecord[]): Promise<Order[]> {
    const roles = orders.map((o) => this.roleOf(o, p));
    const needChain = orders.some((o, i) => needsChainClock(o.status, roles[i]!));
    const clocks = needChain ? await this.clocks(true).catch(() => this.clocks(false)) : await this.clocks(false);
    const views = await presentViews(orders, this.deps.repo, this.deps.hasReview);
    return orders.map((o, i) => {
      const view = views.get(o.id)!;
      const next = nextStepOf(o, clocks, this.config.paymentGraceSeconds);
      return toOrderDto(o, view, allowedActions(o, roles[i]!, clocks, view.reviewed), next);
    });
  }

  /** One order as `present` shows it. */
  async presentOne(p: PrincipalLike, order: OrderRecord): Promise<Order> {
    return (await this.present(p, [order]))[0]!;
  }

  // ---------------------------------------------------------------- creation and payment

  /**
   * POST /orders. `paymentSource` wallet (default): the order waits for the buyer's fund transaction
   * (returned as `payment`). custodial: the custody module holds the price from the buyer's custodial
   * balance and funds the escrow (buyer = the user's deposit address); `payment` is null and the order
   * comes back in_progress (awaiting_payment while the funding is unconfirmed).
   *
   * The listing is held for the order from creation (one open order per listing: later buyers get 409
   * listing-unavailable before paying, until this one expires unpaid or is refunded), and a buyer may
   * hold at most `maxUnpaidOrdersPerBuyer` unpaid orders (409 too-many-unpaid-orders). Against holds by
   * buyers who never pay (README "Holds"): a wallet order needs the buyer wallet's balances on chain to
   * cover it (`assertWalletCanFund`, 409 insufficient-funds); a network holds at most
   * `maxUnpaidOrdersPerIp` unpaid orders (429 too-many-holds); a buyer whose wallet order for the listing
   * expired unpaid within `holdCooldownSeconds` is refused (409 hold-cooldown); a contested listing or a
   * network holding half its limit gets the `contestedPaymentTtlSeconds` payment window. With an
   * `idempotencyKey`, an order this buyer already created with it is returned instead (a retry after a
   * crash), with a fresh fund transaction while it awaits payment.
   *
   * Errors besides the listing ones: 404 custody-disabled, 400 validation-error (buyer_wallet with
   * custodial), 409 insufficient-funds, 502 chain-transaction-failed (funding rejected: order expired,
   * hold released), 503 chain-unavailable (nothing kept: the order row is discarded).
   */
  create(p: PrincipalLike, input: CreateOrderInput & { paymentSource?: 'wallet' }): Promise<{ order: OrderRecord; payment: PaymentInstructions }>;
  create(p: PrincipalLike, input: CreateOrderInput): Promise<{ order: OrderRecord; payment: PaymentInstructions | null }>;
  async create(p: PrincipalLike, input: CreateOrderInput): Promise<{ order: OrderRecord; payment: PaymentInstructions | null }> {
    if (!p.userId) throw orderErrors.forbidden('Creating an order needs a user credential.');
    if (input.idempotencyKey) {
      const existing = await this.deps.repo.findByIdempotencyKey(p.userId, input.idempotencyKey);
      if (existing) return this.resume(existing);
    }
    const listing = await this.deps.listings.get(input.listingId);
    if (!listing) throw orderErrors.listingNotFound(input.listingId);
    if (listing.sellerId === p.userId) throw orderErrors.ownListing();
    if (listing.status !== 'available') throw orderErrors.listingUnavailable(listing.status);

    const custodial = input.paymentSource === 'custodial';
    const custody = this.deps.custody;
    if (custodial && !custody) {
      throw new DomainError('custody-disabled', 'Custodial accounts are disabled on this service: pay with your wallet (payment_source wallet).');
    }
    if (custodial && input.buyerWallet) {
      throw new DomainError('validation-error', 'buyer_wallet cannot be combined with payment_source custodial.', {
        errors: [{ path: 'body.buyer_wallet', message: 'not allowed with payment_source custodial', code: 'not_allowed' }],
      });
    }
    let buyerWallet = custodial ? await custody!.buyerAddressFor(p.userId) : p.wallet;
    if (!custodial && input.buyerWallet && input.buyerWallet !== p.wallet) {
      // only an API key acting for a user may name another paying wallet
      if (p.kind !== 'api_key') throw orderErrors.forbidden('buyer_wallet must be the wallet of the authenticated user.');
      buyerWallet = input.buyerWallet;
    }
    if (!buyerWallet) throw orderErrors.forbidden('No buyer wallet: the credential has no linked wallet and none was given.');
    if (buyerWallet === listing.sellerWallet) throw orderErrors.ownListing();

    const currency = this.deps.currency(listing.currency);
    if (!currency) throw orderErrors.listingUnavailable(`currency ${listing.currency} is not accepted`);
    if (custodial) await custody!.assertAvailable(p.userId, currency.mint, listing.priceBaseUnits);

    const id = randomUUID();
    const [chainNow, feeBps] = await Promise.all([this.deps.escrow.chainNow(), this.deps.escrow.feeBps()]);
    const { escrow, vault } = this.deps.escrow.addresses(id, currency.mint, currency.tokenProgram);
    const deliveryDeadline = chainNow + Math.max(1, listing.durationDays) * 86_400;
    const reviewWindow = this.config.reviewWindowSeconds;
    // (a listing another order holds is refused by createHeld below: no balance read for that)
    if (!custodial && !listing.heldUntil) {
      await this.assertWalletCanFund({
        orderId: id,
        buyer: buyerWallet,
        seller: listing.sellerWallet,
        mint: currency.mint,
        amount: listing.priceBaseUnits,
        deliveryDeadline,
        reviewWindow,
        expiresAt: chainNow + this.config.paymentTtlSeconds,
      }, currency);
    }
    const createdAt = this.now();
    const network = input.network ?? null;
    const cooldown = this.config.holdCooldownSeconds;
    const held = await this.deps.repo.createHeld(
      {
        id,
        createdAt,
        listingId: listing.id,
        buyerId: p.userId,
        sellerId: listing.sellerId,
        buyerWallet,
        sellerWallet: listing.sellerWallet,
        paymentSource: custodial ? 'custodial' : 'wallet',
        currency: currency.code,
        mint: currency.mint,
        decimals: currency.decimals,
        amount: listing.priceBaseUnits,
        status: 'awaiting_payment',
        tokenMint: listing.tokenMint ?? null,
        feeBps,
        escrowAddress: escrow,
        vaultAddress: vault,
        // set by the hold guard's `window` below
        paymentExpiresAt: createdAt,
        // contract: delivery_deadline = created_at + listing duration days (chain clock)
        deliveryDeadline,
        reviewWindow,
        idempotencyKey: input.idempotencyKey ?? null,
        holdNetwork: network,
        fundedAt: null,
        deliveredAt: null,
        autoReleaseAt: null,
        disputedAt: null,
        completedAt: null,
        disputeReason: null,
        disputedBy: null,
        buyerBps: null,
        fundSignature: null,
        lastSignature: null,
      },
      {
        maxUnpaidPerBuyer: this.config.maxUnpaidOrdersPerBuyer,
        maxUnpaidPerNetwork: this.config.maxUnpaidOrdersPerIp,
        recentSince: cooldown > 0 ? new Date(createdAt.getTime() - cooldown * 1000) : null,
        window: (pressure) => {
          const ttl = this.paymentWindowSeconds(pressure);
          // the program refuses the funding after fundExpiresAt (chain clock): a closed order cannot be re-funded later
          return { paymentExpiresAt: new Date(createdAt.getTime() + ttl * 1000), fundExpiresAt: chainNow + ttl };
        },
      },
    );
    if ('duplicate' in held) return this.resume(held.duplicate);
    if ('listingHeld' in held) throw orderErrors.listingHeld(held.listingHeld.status, held.listingHeld.paymentExpiresAt, this.config.paymentGraceSeconds, createdAt);
    if ('cooldown' in held) throw orderErrors.holdCooldown(new Date(held.cooldown.lapsedAt.getTime() + cooldown * 1000), createdAt);
    if ('buyerLimit' in held) throw orderErrors.tooManyUnpaid(held.buyerLimit.unpaid, this.config.maxUnpaidOrdersPerBuyer);
    if ('networkLimit' in held) {
      const lapses = held.networkLimit.earliestExpiresAt.getTime() + this.config.paymentGraceSeconds * 1000;
      throw orderErrors.tooManyHolds(held.networkLimit.holds, this.config.maxUnpaidOrdersPerIp, (lapses - createdAt.getTime()) / 1000);
    }
    const order = held.created;
    await this.hooks.createStep?.('order-inserted', { orderId: order.id });
    if (custodial) {
      const paid = await this.payCustodially(order);
      await this.hooks.createStep?.('payment-ready', { orderId: order.id });
      return { order: paid, payment: null };
    }
    let payment: PaymentInstructions;
    try {
      payment = await this.paymentFor(order);
    } catch (err) {
      // nobody saw this order and nothing is on chain: drop it, so the listing is not held by it
      await this.deps.repo.discardUnpaid(order.id).catch((e) => this.log.warn({ err: e, order_id: order.id }, 'unpaid order not discarded'));
      throw err;
    }
    await this.hooks.createStep?.('payment-ready', { orderId: order.id });
    return { order, payment };
  }

  /**
   * The payment window of a new order, seconds: `contestedPaymentTtlSeconds` when the listing is
   * contested (an unpaid wallet order for it lapsed within the cool-down) or the order's network already
   * holds at least half of `maxUnpaidOrdersPerIp`; else `paymentTtlSeconds`. Never longer than the latter.
   */
  paymentWindowSeconds(p: HoldPressure): number {
    const pressed = p.contested || p.networkHolds >= Math.ceil(this.config.maxUnpaidOrdersPerIp / 2);
    return pressed ? Math.min(this.config.contestedPaymentTtlSeconds, this.config.paymentTtlSeconds) : this.config.paymentTtlSeconds;
  }

  /**
   * A hold is tied to a buyer who can pay: the buyer wallet's balances on chain must cover this order's
   * fund transaction and the wallet's other unpaid wallet orders (their tokens in the same mint, their
   * fees and rent). Token: balance of the wallet's associated token account >= amounts; SOL: lamports >=
   * (network fee + rent of the order PDA and the vault) per order, plus for wrapped SOL the amounts and
   * the wSOL account's rent (`EscrowPort.fundingNeeds`, read from the RPC). Throws 409 insufficient-funds
   * (`balance` token | sol, `needed` / `available` per asset: wallet-funds.ts), 503 chain-unavailable. Without
   * `fundingNeeds` (fakes) nothing is checked. `alone`: this order only (paying an existing order), not the
   * wallet's other unpaid orders.
   */
  private async assertWalletCanFund(terms: FundTerms, currency: FundsCurrency, alone = false): Promise<void> {
    const needsOf = this.deps.escrow.fundingNeeds?.bind(this.deps.escrow);
    if (!needsOf) return;
    const [needs, others] = await Promise.all([needsOf(terms), alone ? [] : this.deps.repo.unpaidOfWallet(terms.buyer)]);
    // each other unpaid order takes the same fee + rent again (plus its own amount when paid in lamports): wallet-funds.ts
    const check = checkWalletFunds(terms, needs, currency, others.filter((o) => o.id !== terms.orderId));
    if (check.short) throw insufficientFunds(terms.buyer, check);
  }

  /** An order found by its Idempotency-Key: as it is now, with a fresh fund transaction while payable. */
  private async resume(order: OrderRecord): Promise<{ order: OrderRecord; payment: PaymentInstructions | null }> {
    if (order.paymentSource === 'custodial') {
      // finish a custodial funding the first attempt may not have reached (idempotent per order)
      const current = order.status === 'awaiting_payment' ? await this.payCustodially(order) : order;
      return { order: current, payment: null };
    }
    const payable = order.status === 'awaiting_payment' && order.paymentExpiresAt > this.now();
    return { order, payment: payable ? await this.paymentFor(order) : null };
  }

  /** A fresh fund transaction for an awaiting_payment wallet order (never for any other order). */
  private async paymentFor(order: OrderRecord): Promise<PaymentInstructions> {
    const issued = await this.issueFundTransaction(order);
    return {
      transaction: issued.transaction,
      solana_pay_url: this.solanaPayUrl(order.id),
      expires_at: new Date(Math.min(order.paymentExpiresAt.getTime(), issued.validUntil.getTime())),
    };
  }

  /**
   * The one place fund transactions are built for buyers: only for an order that is still
   * awaiting_payment, paid from a wallet, inside its payment window (409 otherwise). The transaction
   * carries the order's fund expiry, so once the program checks it a closed order can never be
   * funded again; until then the reconciler refunds such an escrow (refundStrayEscrows).
   */
  private async issueFundTransaction(order: OrderRecord): Promise<IssuedFundTransaction> {
    const current = await this.requireAwaitingPayment(order.id);
    const issued = await this.deps.escrow.buildFundTransaction(this.fundTerms(current));
    // until about then it may land, even after the order closed (refundStrayEscrows looks at these)
    await this.deps.repo.noteFundIssued(order.id, issued.validUntil);
    return issued;
  }

  /**
   * POST /orders/{id}/payment: the buyer gets a fresh fund transaction (the previous one's blockhash
   * expired, or is about to). 404 for strangers, 403 for the seller or an admin, 409 unless the order
   * is a wallet order awaiting payment inside its payment window.
   */
  async refreshPayment(p: PrincipalLike, orderId: string): Promise<{ order: OrderRecord; payment: PaymentInstructions }> {
    const order = await this.get(p, orderId);
    if (this.roleOf(order, p) !== 'buyer') throw orderErrors.forbidden('Only the buyer of an order gets its fund transaction.');
    // a wallet that can no longer pay gets 409 insufficient-funds now, not a transaction the cluster refuses
    if (order.status === 'awaiting_payment' && order.paymentSource === 'wallet') await this.assertWalletCanFund(this.fundTerms(order), { code: order.currency, decimals: order.decimals }, true);
    const payment = await this.paymentFor(order);
    return { order: (await this.deps.repo.get(orderId))!, payment };
  }

  /** Fund a new custodial order through the custody module (see `create`). */
  private async payCustodially(order: OrderRecord): Promise<OrderRecord> {
    let outcome;
    try {
      outcome = await this.deps.custody!.payOrder(order);
    } catch (err) {
      if (err instanceof DomainError && (err.slug === 'insufficient-funds' || err.slug === 'chain-transaction-failed')) {
        // nothing is held any more: the order can never be paid
        await this.deps.repo.updateIf(order.id, 'awaiting_payment', { status: targetStatus('expire'), transition: 'expire' });
      }
      throw err;
    }
    if (outcome.status === 'funded') {
      const view = await this.deps.escrow.fetchOrder(order.id).catch(() => null);
      if (view && this.termsMatch(order, view)) return this.markFunded(order.id, view, outcome.signature, outcome.slot);
    }
    // not confirmed yet: the custody reconciler finishes the funding, the payment watcher sees the escrow
    return (await this.deps.repo.get(order.id))!;
  }

  /** Book a custodial order's escrow outcome in the custody ledger (best effort: the custody worker catches up). */
  private async bookCustodial(order: OrderRecord): Promise<void> {
    if (order.paymentSource !== 'custodial' || !this.deps.custody) return;
    try {
      await this.deps.custody.bookOrderOutcome(order);
    } catch (err) {
      this.log.warn({ err, order_id: order.id }, 'custodial order outcome not booked yet');
    }
  }

  /**
   * The Solana Pay transaction-request link of an order: `solana:<link>` where link is the https URL
   * of the order's solana-pay endpoint. Per the Solana Pay spec the link is URL-encoded only when it
   * has query parameters (ours has none), which keeps the URL and its QR code short.
   */
  solanaPayUrl(orderId: string): string {
    const link = `${this.config.publicBaseUrl.replace(/\/+$/, '')}/api/v1/orders/${orderId}/solana-pay`;
    return `solana:${new URL(link).search ? encodeURIComponent(link) : link}`;
  }

  fundTerms(order: OrderRecord): FundTerms {
    return {
      orderId: order.id,
      buyer: order.buyerWallet,
      seller: order.sellerWallet,
      mint: order.mint,
      amount: order.amount,
      deliveryDeadline: order.deliveryDeadline,
      reviewWindow: order.reviewWindow,
      expiresAt: order.fundExpiresAt,
    };
  }

  /** The order, while the table lets its buyer `pay` it now (awaiting payment, from a wallet, in the window); 409 otherwise. */
  private async requireAwaitingPayment(orderId: string): Promise<OrderRecord> {
    const order = await this.deps.repo.get(orderId);
    if (!order) throw orderErrors.notFound(orderId);
    const refused = refusal(order, 'buyer', 'pay', await this.clocks(needsChainClock(order.status, 'buyer', 'pay')));
    if (refused) throw refused;
    return order;
  }

  /** Solana Pay GET: public label and icon (404 for unknown orders). */
  async solanaPayLabel(orderId: string): Promise<{ label: string; icon: string }> {
    const order = await this.deps.repo.get(orderId);
    if (!order) throw orderErrors.notFound(orderId);
    return { label: this.config.solanaPayLabel, icon: this.config.solanaPayIcon };
  }

  /** Solana Pay POST: a fresh fund transaction for the order's buyer (403 for any other account). */
  async solanaPayTransaction(orderId: string, account: string): Promise<{ transaction: string; message: string }> {
    const order = await this.requireAwaitingPayment(orderId);
    if (account !== order.buyerWallet) throw orderErrors.forbidden('Only the buyer wallet quoted for this order may pay it.');
    const { transaction } = await this.issueFundTransaction(order);
    const ui = formatUiAmount(order.amount, order.decimals);
    return { transaction, message: `Pay ${ui} ${order.currency} into escrow for order ${order.id.slice(0, 8)}` };
  }

  /** POST /orders/{id}/transaction: verify, submit, confirm, then mark funded. */
  async submitTransaction(p: PrincipalLike, orderId: string, signedBase64: string): Promise<OrderRecord> {
    const visible = await this.get(p, orderId);
    if (this.roleOf(visible, p) !== 'buyer') throw orderErrors.forbidden('Only the buyer submits the fund transaction.');
    let signed;
    try {
      signed = normalizeTransaction(signedBase64);
    } catch {
      throw orderErrors.fundMismatch('not a serialized Solana transaction');
    }
    // a repeat of the submission that funded the order: answer with the order, send nothing
    if (visible.status !== 'awaiting_payment' && signed.signature && signed.signature === visible.fundSignature) return visible;
    const order = await this.requireAwaitingPayment(orderId);
    // the same instructions as the transaction issued for this order (only the blockhash may differ)
    const expected = normalizeTransaction((await this.deps.escrow.buildFundTransaction(this.fundTerms(order))).transaction);
    const diff = compareFundTransaction(signed, expected);
    if (diff) throw orderErrors.fundMismatch(diff);

    let tx: TxResult;
    try {
      // the wallet's balances first: a payer short of tokens or SOL gets 409 insufficient-funds, not a 502
      await this.assertWalletCanFund(this.fundTerms(order), { code: order.currency, decimals: order.decimals }, true);
      tx = await this.deps.escrow.submitSignedTransaction(signedBase64);
    } catch (err) {
      // the buyer may have sent it already (wallet + API): if the escrow exists, it is funded anyway
      const view = await this.deps.escrow.fetchOrder(order.id).catch(() => null);
      if (view && this.termsMatch(order, view)) return this.markFunded(order.id, view, signed.signature);
      throw isLackOfFunds(err) ? await this.refusedForFunds(order, err) : err;
    }
    const view = await this.deps.escrow.fetchOrder(order.id);
    if (!view || !this.termsMatch(order, view)) throw orderErrors.notFundedOnChain(order.id);
    return this.markFunded(order.id, view, tx.signature, tx.slot).catch((err) => {
      // funded on chain; the payment watcher records it once the database answers again
      throw err instanceof DomainError ? err : new ChainActionLandedError(err, { action: 'fund', order_id: order.id, signature: tx.signature });
    });
  }

  /** A fund transaction the cluster refused for the payer's lack of funds, as 409 insufficient-funds with the balances now. */
  private async refusedForFunds(order: OrderRecord, err: DomainError): Promise<DomainError> {
    const reason = String(err.extensions.program_error);
    const needs = await this.deps.escrow.fundingNeeds?.(this.fundTerms(order)).catch(() => null);
    if (!needs) return new DomainError('insufficient-funds', `The cluster refused the payment for lack of funds (${reason}): fund wallet ${order.buyerWallet}, then pay again.`, { wallet: order.buyerWallet });
    return insufficientFunds(order.buyerWallet, checkWalletFunds(this.fundTerms(order), needs, { code: order.currency, decimals: order.decimals }), reason);
  }

  termsMatch(order: OrderRecord, v: EscrowOrderView): boolean {
    return v.buyer === order.buyerWallet && v.seller === order.sellerWallet && v.mint === order.mint && v.amount === order.amount;
  }

  /** awaiting_payment -> in_progress (escrow funded), listing reserved. Idempotent. */
  async markFunded(orderId: string, view: EscrowOrderView, signature: string | null, slot: number | null = null): Promise<OrderRecord> {
    return this.mutex.run(orderId, async () => {
      const changed = await this.deps.repo.updateIf(orderId, 'awaiting_payment', {
        status: targetStatus('pay'),
        transition: 'pay',
        fundedAt: new Date(view.fundedAt * 1000),
        // the program snapshots the fee when funded: that one applies to the payout
        ...(view.feeBps !== undefined ? { feeBps: view.feeBps } : {}),
        fundSignature: signature,
        ...(signature ? { lastSignature: signature } : {}),
      });
      const order = (await this.deps.repo.get(orderId))!;
      if (changed) {
        if (signature) await this.deps.repo.recordConfirmed(orderId, 'fund', signature, slot);
        this.log.info({ order_id: orderId, signature }, 'order funded');
        try {
          await this.deps.listings.applyOrderEvent(order.listingId, listingEventAfter(order)!);
        } catch (err) {
          if (!(err instanceof DomainError && err.slug === 'listing-unavailable')) {
            this.log.error({ err, order_id: orderId }, 'listing could not be reserved');
            return order;
          }
          // another order of the same listing was funded first: give this buyer the money back
          this.log.warn({ order_id: orderId }, 'listing already taken; refunding the order');
          return this.performLocked(orderId, 'system', 'refund', { reason: 'listing-taken' });
        }
      }
      return order;
    });
  }

  /**
   * Watcher step for one awaiting_payment order: funded on chain -> in_progress; past expiry -> expired.
   * `known`: the escrow account as a subscription notification carried it (else it is read).
   */
  async checkPayment(order: OrderRecord, known?: EscrowOrderView): Promise<OrderStatus> {
    if (order.status !== 'awaiting_payment') return order.status;
    const view = known ?? (await this.deps.escrow.fetchOrder(order.id));
    if (view) {
      if (this.termsMatch(order, view)) {
        // paid by a wallet directly (Solana Pay): look the fund transaction up for the record
        const found = await this.deps.escrow.findFundSignature?.(order.id).catch(() => null);
        return (await this.markFunded(order.id, view, found?.signature ?? null, found?.slot ?? null)).status;
      }
      this.log.error({ order_id: order.id }, 'escrow account does not match the quoted terms');
      return order.status;
    }
    const clocks = await this.clocks(needsChainClock(order.status, 'system', 'expire'));
    if (!refusal(order, 'system', 'expire', clocks, this.config.paymentGraceSeconds)) {
      const expired = await this.mutex.run(order.id, () => this.deps.repo.updateIf(order.id, 'awaiting_payment', { status: targetStatus('expire'), transition: 'expire' }));
      if (expired) {
        this.log.info({ order_id: order.id }, 'order expired unpaid');
        const after = await this.deps.repo.get(order.id);
        if (after) await this.applyListingEffect(after);
        return after?.status ?? 'expired';
      }
    }
    return order.status;
  }

  // ---------------------------------------------------------------- chain-backed actions

  deliver(p: PrincipalLike, orderId: string) {
    return this.act(p, orderId, 'deliver', null);
  }
  confirm(p: PrincipalLike, orderId: string) {
    return this.act(p, orderId, 'confirm', null);
  }
  dispute(p: PrincipalLike, orderId: string, reason: string) {
    return this.act(p, orderId, 'dispute', { reason });
  }
  refund(p: PrincipalLike, orderId: string) {
    return this.act(p, orderId, 'refund', null);
  }
  resolve(p: PrincipalLike, orderId: string, buyerBps: number) {
    if (!Number.isInteger(buyerBps) || buyerBps < 0 || buyerBps > 10_000) {
      throw new DomainError('validation-error', 'buyer_bps must be an integer 0..10000', {
        errors: [{ path: 'body.buyer_bps', message: 'must be an integer 0..10000', code: 'invalid_bps' }],
      });
    }
    return this.act(p, orderId, 'resolve', { buyer_bps: buyerBps });
  }

  /** Crank: claim one delivered order whose review window is over (anyone may claim on chain). */
  claim(orderId: string) {
    return this.mutex.run(orderId, () => this.performLocked(orderId, 'system', 'auto_release', null));
  }

  private async act(p: PrincipalLike, orderId: string, action: ChainAction, params: Record<string, unknown> | null) {
    const order = await this.get(p, orderId); // 404 for strangers
    const role = this.roleOf(order, p)!;
    // 403 when the role never does this, or when this state allows it to another role only
    const row = findTransition(order.status, action);
    if (!roleMayEver(role, action) || (row && !row.by.includes(role))) {
      throw orderErrors.forbidden(`The ${role} of an order may not ${action} it${row ? ` while it is ${order.status}` : ''}.`);
    }
    const withBy = action === 'dispute' ? { ...params, by: role } : params;
    return this.mutex.run(orderId, () => this.performLocked(orderId, role, action, withBy));
  }

  /** Steps 1-5 of the header comment; the caller holds the order's mutex. */
  private async performLocked(
    orderId: string,
    role: OrderRole,
    action: ChainAction,
    params: Record<string, unknown> | null,
  ): Promise<OrderRecord> {
    const { repo, escrow } = this.deps;
    // settle an intent left over by a crash or in flight in another process (reconcile from the
    // chain, or wait up to inflightWaitMs), then check and claim the order with a new intent
    const deadline = Date.now() + this.config.inflightWaitMs;
    let order: OrderRecord;
    let intent: Awaited<ReturnType<OrdersRepo['beginIntent']>> = null;
    const ix = actionInstruction[action];
    for (;;) {
      const open = await repo.openIntentFor(orderId);
      if (open) {
        const outcome = await this.reconciler.reconcileIntent(open).catch(() => 'open' as const);
        if (outcome === 'open') {
          if (Date.now() >= deadline) throw orderErrors.actionInProgress(orderId, open.action);
          await new Promise((r) => setTimeout(r, 200));
        }
        continue;
      }
      order = (await repo.get(orderId))!;
      if (order.status === targetStatus(action)) return order; // a repeat: nothing to send
      // the table: source state, actor, timing rule (on the chain clock where the rule says so)
      const refused = refusal(order, role, action, await this.clocks(needsChainClock(order.status, role, action)), this.config.paymentGraceSeconds);
      if (refused) throw refused;
      intent = await repo.beginIntent(orderId, order.status, ix, params);
      if (intent) break;
      if (Date.now() >= deadline) throw orderErrors.actionInProgress(orderId, action);
      await new Promise((r) => setTimeout(r, 50));
    }
    let signed = false;
    // record before send (chain/recorded-send.ts): a reconciler (here or in another process) may have
    // settled the unsent intent meanwhile: then the compare-and-set is lost and nothing is sent
    const o = { onSigned: recordAttempt(`order ${orderId} ${ix}`, async (a) => (signed = await repo.markIntentSent(intent.id, a.signature, lifetimeOf(a)))) };
    let tx: TxResult;
    try {
      tx = await escrow.send(ix, orderId, { ...o, ...(typeof params?.buyer_bps === 'number' ? { buyerBps: params.buyer_bps } : {}) });
    } catch (err) {
      if (err instanceof AttemptSuperseded) throw orderErrors.actionInProgress(orderId, action);
      const rejected = err instanceof DomainError && err.slug === 'chain-transaction-failed';
      if (!signed && !rejected && !(err instanceof DomainError && err.slug === 'conflict')) {
        // failed before anything was signed (e.g. the RPC is down): nothing can land, the action may be retried at once
        await repo.failIntent(intent.id, `not sent: ${(err as Error).message}`).catch(() => undefined);
        throw err;
      }
      if (rejected) {
        await repo.failIntent(intent.id, err.message);
        // the escrow may have moved without us (a party acting with its own wallet): catch up
        const moved = await this.reconciler.syncOrderFromChain(order).catch(() => null);
        if (moved && moved !== 'flagged') {
          const fresh = (await repo.get(orderId))!;
          if (fresh.status === targetStatus(action)) return fresh;
          throw orderErrors.invalidTransition(orderId, fresh.status, action);
        }
      } // otherwise the outcome is unknown: the intent stays open for the reconciler
      throw err;
    }
    await this.hooks.afterSend?.({ orderId, action, tx });

    const nowSeconds = await escrow.chainNow().catch(() => Math.floor(this.now().getTime() / 1000));
    const view = action === 'deliver' || action === 'dispute' ? await escrow.fetchOrder(orderId).catch(() => null) : null;
    const settlement = await this.settlementOf(order, ix, tx, params);
    const patch = patchForInstruction(ix, order, params, tx.signature, { view, nowSeconds, settlement });
    let after: OrderRecord;
    try {
      await repo.confirmIntent(intent.id, tx.signature, tx.slot, orderId, order.status, patch);
      after = (await repo.get(orderId))!;
    } catch (err) {
      // landed on chain, not recorded: the intent stays `sent` with this signature for the reconciler
      throw new ChainActionLandedError(err, { action, order_id: orderId, signature: tx.signature });
    }
    this.log.info({ order_id: orderId, action, signature: tx.signature, status: after.status }, 'order action confirmed');
    // a refund because another order took the listing must not free that other order's listing
    if (params?.reason !== 'listing-taken') await this.applyListingEffect(after);
    await this.bookCustodial(after);
    return after;
  }

  /**
   * The payout of a terminal instruction the service just sent, as the chain recorded it for this
   * order (read back by signature); if the transaction cannot be read, the program's split for our
   * own single instruction (formulaPayout). null for non-terminal instructions.
   */
  private async settlementOf(
    order: OrderRecord,
    ix: Instruction,
    tx: TxResult,
    params: Record<string, unknown> | null,
  ): Promise<OrderSettlement | null> {
    if (!closesEscrow(ix)) return null;
    const read = this.deps.escrow.findSettlement
      ? await this.deps.escrow.findSettlement({ id: order.id, mint: order.mint }, tx.signature).catch((err) => {
          this.log.warn({ err, order_id: order.id }, 'settlement not readable; using the program split');
          return null;
        })
      : null;
    if (read) return read;
    const bps = typeof params?.buyer_bps === 'number' ? params.buyer_bps : null;
    return { instruction: ix, signature: tx.signature, slot: tx.slot, payout: formulaPayout(ix, order, bps) };
  }

  /**
   * The listing follows the order: the listing transition of the status the order reached (the table's
   * `listing` column). Best effort: the money already moved, so this never fails the call.
   */
  async applyListingEffect(order: OrderRecord): Promise<void> {
    const event = listingEventAfter(order);
    if (!event) return;
    // an order that never reserved its listing must not free a listing another order holds
    if (!order.fundedAt && listingTransitions.find((l) => l.event === event)?.to === 'available') return;
    try {
      await this.deps.listings.applyOrderEvent(order.listingId, event);
    } catch (err) {
      this.log.warn({ err, order_id: order.id, listing_id: order.listingId, event }, 'listing update failed');
    }
  }

  // ---------------------------------------------------------------- timers

  /**
   * Re-funded closed orders: a fund transaction issued for an order stays valid for its blockhash's
   * lifetime, so it can land after the order was closed (refunded, expired, ...). The escrow then holds
   * the buyer's money while the order says otherwise. For every terminal order with a fund transaction
   * issued that may still land (its validUntil less than 10 min ago: validUntil is conservative, and
   * even 4 s slots end a blockhash's 150 blocks well inside that), an existing escrow account is
   * refunded to the buyer (the platform authority may refund any open escrow); the order keeps its
   * status and shows the refund among its transactions. Every such order is checked on each pass, read
   * in pages of `limit` (a single page let orders beyond the first `limit` in the window go unchecked
   * until they left it). Returns the order ids refunded.
   */
  async refundStrayEscrows(limit = 50): Promise<string[]> {
    const since = new Date(this.now().getTime() - STRAY_ESCROW_MARGIN_SECONDS * 1000);
    const out: string[] = [];
    const candidates: OrderRecord[] = [];
    for (let page = await this.deps.repo.listClosedFundableSince(since, limit); ; ) {
      candidates.push(...page);
      if (page.length < limit) break;
      page = await this.deps.repo.listClosedFundableSince(since, limit, page[page.length - 1]!.id);
    }
    for (const order of candidates) {
      try {
        // a stray refund already sent (its confirmation was lost) is finished first: the escrow may be
        // gone already, and the refund is reported by the pass that confirms it
        if (!(await this.deps.repo.openIntentFor(order.id))) {
          const view = await this.deps.escrow.fetchOrder(order.id);
          if (!view) continue;
          if (order.paymentSource !== 'wallet') {
            this.log.error({ order_id: order.id, status: order.status }, 'escrow of a closed custodial order exists; not refunded automatically');
            continue;
          }
        }
        if (await this.mutex.run(order.id, () => this.refundStray(order.id))) out.push(order.id);
      } catch (err) {
        this.log.warn({ err, order_id: order.id }, 'stray escrow refund failed');
      }
    }
    return out;
  }

  /**
   * One stray escrow refund (caller holds the order's mutex); true when a stray refund was confirmed now:
   * sent and confirmed here, or sent earlier (its confirmation lost) and confirmed by reconciling it here.
   */
  private async refundStray(orderId: string): Promise<boolean> {
    const { repo } = this.deps;
    const open = await repo.openIntentFor(orderId);
    if (open) return (await this.reconciler.reconcileIntent(open)) === 'confirmed' && isStrayRefund(open);
    const order = (await repo.get(orderId))!;
    if (!isTerminal(order.status)) return false;
    const intent = await repo.beginIntent(orderId, order.status, 'refund', { reason: 'stray-escrow' });
    if (!intent) return false;
    // the refund that closed the order is this very instruction: built on the same blockhash it would be
    // that transaction again (same signature), which the chain drops and the intent cannot record
    const sent = new Set((await repo.listIntents(orderId)).flatMap((i) => (i.signature ? [i.signature] : [])));
    const o = {
      onSigned: recordAttempt(`order ${orderId} stray refund`, (a) => repo.markIntentSent(intent.id, a.signature, lifetimeOf(a))),
      distinctFrom: sent,
    };
    let tx: TxResult;
    try {
      tx = await this.deps.escrow.send('refund', orderId, o);
    } catch (err) {
      if (err instanceof AttemptSuperseded) throw orderErrors.actionInProgress(orderId, 'refund');
      if (err instanceof DomainError && err.slug === 'chain-transaction-failed') await repo.failIntent(intent.id, err.message);
      throw err;
    }
    await repo.confirmIntent(intent.id, tx.signature, tx.slot, orderId, order.status, {});
    this.log.warn({ order_id: orderId, status: order.status, signature: tx.signature }, 'escrow re-funded after the order closed: refunded to the buyer');
    return true;
  }

  /** Due claims: orders the table lets the service auto-release now (delivered, auto_release_at passed on the chain clock). */
  async claimDue(limit = 50): Promise<string[]> {
    const from = findTransition('delivered', 'auto_release')!.from as OrderStatus;
    const clocks = await this.clocks(needsChainClock(from, 'system', 'auto_release'));
    const claimed: string[] = [];
    for (const o of await this.deps.repo.listByStatus(from, limit)) {
      if (refusal(o, 'system', 'auto_release', clocks)) continue;
      try {
        const after = await this.claim(o.id);
        if (after.status === 'completed') claimed.push(o.id);
      } catch (err) {
        this.log.warn({ err, order_id: o.id }, 'auto-release claim failed');
      }
    }
    return claimed;
  }
}
