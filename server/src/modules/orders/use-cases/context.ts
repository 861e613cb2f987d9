/**
 * What every orders use case is given: the module's ports, its settings, the clock, the log and the
 * per-order mutex, plus the small rules more than one use case applies (the caller's role, the clocks
 * of the timing rules, the listing and custody effects of a status). A use case imports this file,
 * `../order-state.ts`, `../orders.types.ts`, `../orders.errors.ts`, the shared libraries and another
 * use case's factory result passed in by the facade, never the facade (`../orders.service.ts`) or
 * another use case's internals.
 */
import { listingTransitions, PAYMENT_GRACE_SECONDS } from '@bazaar/contract';
import { hasRole, type Principal } from '../../auth/index.js';
import { type Clocks, type OrderRole, listingEventAfter } from '../order-state.js';
import { currentMilestone, listingEventOfOrder, orderClosed, orderStatusOf } from '../milestones.js';
import type { OrdersServiceSettings } from '../orders.settings.js';
import { silentLog } from '../../../lib/log.js';
import { DomainError } from '../../../errors.js';
import { checkWalletFunds, insufficientFunds, type FundsCurrency } from '../wallet-funds.js';
import type { FeeSponsorshipPort } from '../sponsorship.js';
import type { CustodialPaymentsPort, CurrencyView, EscrowOrderView, EscrowPort, FundBuildOptions, FundTerms, ListingsPort, Log, OrderRecord, OrdersRepo, StandingPort } from '../orders.types.js';

/** The caller, as the auth module's `Principal` (req.principal) carries it: the fields the orders rules read. */
export type PrincipalLike = Pick<Principal, 'kind' | 'userId' | 'wallet' | 'isAdmin'> & Partial<Pick<Principal, 'roles' | 'unverifiedWallet'>>;

export type { Log } from '../orders.types.js';


/** The ports of the orders module: what its use cases may reach outside themselves. */
export interface OrdersPorts {
  repo: OrdersRepo;
  listings: ListingsPort;
  escrow: EscrowPort;
  currency: (code: string) => CurrencyView | undefined;
  /** custodial payments (custody enabled); absent: payment_source custodial answers 404 custody-disabled */
  custody?: CustodialPaymentsPort;
  /** whether the buyer already reviewed the order (the reviews module; hides `review` from allowed_actions) */
  hasReview?: (orderId: string) => Promise<boolean>;
  /** the order's conversation (the chat module): a revision request's message is posted there as the caller */
  chat?: OrderChatPort;
  /** issue 25: a suspended or banned buyer cannot order (the moderation module); absent: nobody is refused */
  standing?: StandingPort;
  /** issue 26 item 5: fee sponsorship (FEE_SPONSORSHIP on, a sponsor key); absent: every buyer pays his fee and rent */
  sponsorship?: FeeSponsorshipPort;
}

/** What the orders module needs of the chat module: post into an order's conversation as a party. */
export interface OrderChatPort {
  postOrderMessage(p: PrincipalLike, orderId: string, body: string): Promise<unknown>;
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

/** The context of the orders use cases (built once by the facade). */
export interface OrdersContext extends OrdersPorts {
  settings: Required<OrdersServiceSettings>;
  log: Log;
  now: () => Date;
  /** serializes the calls on one order in this process (the DB guard serializes processes) */
  mutex: KeyedMutex;
}

export function ordersContext(ports: OrdersPorts, settings: OrdersServiceSettings, o: { log?: Log; now?: () => Date } = {}): OrdersContext {
  return {
    ...ports,
    settings: { ...settings, paymentGraceSeconds: settings.paymentGraceSeconds ?? PAYMENT_GRACE_SECONDS },
    log: o.log ?? silentLog,
    now: o.now ?? (() => new Date()),
    mutex: new KeyedMutex(),
  };
}

/**
 * The row (escrow unit) an order route without a milestone index acts on: the order's current milestone
 * (the first not settled), else its last funded milestone once the order is closed (a repeat answers as
 * before). A one-milestone order: its one row. Used by the parties' escrow actions and the agreement
 * routes (revision, extension, settlement) alike, so both act on the same milestone.
 */
export async function currentRow(c: Pick<OrdersContext, 'repo'>, order: OrderRecord): Promise<OrderRecord> {
  if (order.milestoneCount === 1) return order;
  const rows = (await c.repo.milestonesOf([order.orderId])).get(order.orderId) ?? [order];
  const current = currentMilestone(rows);
  return rows.find((r) => r.milestoneIndex === current) ?? [...rows].reverse().find((r) => r.status !== 'scheduled') ?? order;
}

/**
 * The row (escrow unit) of milestone `index` of an order the caller may see (`order`: any of its rows, as
 * read by ReadAndPresent.get): the per-milestone routes (/orders/{id}/milestones/{index}/...) act on it,
 * current or not. Throws 404 not-found for an index the order does not have (a one-milestone order has
 * milestone 1 only). A milestone that is not funded yet (scheduled, awaiting payment) is returned: the
 * lifecycle table refuses the action on it (409 invalid-state-transition).
 */
export async function milestoneRow(c: Pick<OrdersContext, 'repo'>, order: OrderRecord, index: number): Promise<OrderRecord> {
  const rows = order.milestoneCount > 1 ? ((await c.repo.milestonesOf([order.orderId])).get(order.orderId) ?? [order]) : [order];
  const row = rows.find((r) => r.milestoneIndex === index);
  if (!row) throw new DomainError('not-found', `Order ${order.orderId} has no milestone ${index}.`);
  return row;
}

/**
 * The caller's role on the order: buyer, seller, `admin` (the lifecycle table's operator actor: an admin, or
 * a holder of the arbiter role, issue 25: the arbiter reads orders and resolves their disputes with her own
 * login), or null (a stranger).
 */
export function roleOf(order: OrderRecord, p: PrincipalLike): OrderRole | null {
  if (p.userId && p.userId === order.buyerId) return 'buyer';
  if (p.userId && p.userId === order.sellerId) return 'seller';
  if (p.isAdmin || hasRole(p, 'arbiter')) return 'admin';
  return null;
}

/**
 * The clocks of the timing rules, now: the chain clock (read from the cluster only when `needChain`)
 * and the service clock. Throws chain-unavailable when the chain clock is needed and unreadable.
 */
export async function clocks(c: Pick<OrdersContext, 'now' | 'escrow'>, needChain: boolean): Promise<Clocks> {
  const serviceMs = c.now().getTime();
  return { serviceMs, chainSeconds: needChain ? await c.escrow.chainNow() : Math.floor(serviceMs / 1000) };
}

/** The escrow account holds the order's quoted terms (buyer, seller, mint, amount). */
export function termsMatch(order: OrderRecord, v: EscrowOrderView): boolean {
  return v.buyer === order.buyerWallet && v.seller === order.sellerWallet && v.mint === order.mint && v.amount === order.amount;
}

/** The escrow fund terms of an order (what its fund transaction carries). */
/** How the order row's fund transaction is built: sponsored by its `feeSponsor`, else paid by the buyer. */
export function fundOpts(order: Pick<OrderRecord, 'feeSponsor'>): FundBuildOptions {
  return order.feeSponsor ? { sponsor: order.feeSponsor } : {};
}

export function fundTerms(order: OrderRecord): FundTerms {
  return {
    orderId: order.id,
    buyer: order.buyerWallet,
    seller: order.sellerWallet,
    mint: order.mint,
    amount: order.amount,
    deliveryDeadline: order.deliveryDeadline,
    reviewWindow: order.reviewWindow,
    expiresAt: order.fundExpiresAt,
    // for `fund_milestone` (issue 24); a one-milestone order's: itself, 1, its revisions
    parentOrderId: order.orderId,
    milestoneIndex: order.milestoneIndex,
    revisionsIncluded: order.revisionsIncluded,
  };
}

/**
 * The listing follows the order: the listing transition of the status the order reached (the table's
 * `listing` column). Best effort: the money already moved, so this never fails the call.
 */
export async function applyListingEffect(c: OrdersContext, order: OrderRecord): Promise<void> {
  if (order.milestoneCount > 1) return applyOrderListingEffect(c, order);
  const event = listingEventAfter(order);
  if (!event) return;
  // an order that never reserved its listing must not free a listing another order holds
  if (!order.fundedAt && listingTransitions.find((l) => l.event === event)?.to === 'available') return;
  try {
    await c.listings.applyOrderEvent(order.listingId, event);
  } catch (err) {
    c.log.warn({ err, order_id: order.id, listing_id: order.listingId, event }, 'listing update failed');
  }
}

/**
 * The listing follows a multi-milestone ORDER, not each milestone (milestones.ts `listingEventOfOrder`):
 * once the order is closed (completed, refunded, expired, ended) its listing takes the order's event
 * (sold when a milestone paid the seller, else available again); milestone 1's funding reserves it
 * (`markFunded`); nothing happens in between. Best effort, as `applyListingEffect`.
 */
async function applyOrderListingEffect(c: OrdersContext, row: OrderRecord): Promise<void> {
  const rows = (await c.repo.milestonesOf([row.orderId])).get(row.orderId) ?? [row];
  const status = orderStatusOf(rows);
  if (!orderClosed(status)) return;
  const event = listingEventOfOrder('in_progress', status, rows);
  if (!event) return;
  try {
    await c.listings.applyOrderEvent(row.listingId, event);
  } catch (err) {
    c.log.warn({ err, order_id: row.orderId, listing_id: row.listingId, event }, 'listing update failed');
  }
}

/** Book a custodial order's escrow outcome in the custody ledger (best effort: the custody worker catches up). */
export async function bookCustodial(c: OrdersContext, order: OrderRecord): Promise<void> {
  if (order.paymentSource !== 'custodial' || !c.custody) return;
  try {
    await c.custody.bookOrderOutcome(order);
  } catch (err) {
    c.log.warn({ err, order_id: order.id }, 'custodial order outcome not booked yet');
  }
}

/**
 * Step "the buyer's wallet can fund it": the wallet's balances on chain must cover this order's fund
 * transaction and (unless `alone`) the wallet's other unpaid wallet orders (their tokens in the same mint,
 * their fees and rent). Token: balance of the wallet's associated token account >= amounts; SOL: lamports >=
 * (network fee + rent of the order PDA and the vault) per order, plus for wrapped SOL the amounts and the
 * wSOL account's rent (`EscrowPort.fundingNeeds`, read from the RPC). Throws 409 insufficient-funds
 * (`balance` token | sol, `needed` / `available` per asset: wallet-funds.ts), 503 chain-unavailable. Without
 * `fundingNeeds` (fakes) nothing is checked. `alone`: this order only (paying an existing order). `viaAction`: the
 * order is created through a Solana Action; the other unpaid orders counted are those of the same kind only (a
 * stranger's blink POSTs naming the wallet never eat into what its signed-in owner may order, and the reverse).
 */
export async function assertWalletCanFund(c: OrdersContext, terms: FundTerms, currency: FundsCurrency, alone = false, opts: FundBuildOptions = {}, viaAction = false): Promise<void> {
  const needsOf = c.escrow.fundingNeeds?.bind(c.escrow);
  if (!needsOf) return;
  // sponsored (opts.sponsor): the wallet needs its tokens only, the sponsor pays fee and rent
  const [needs, others] = await Promise.all([needsOf(terms, opts), alone ? [] : c.repo.unpaidOfWallet(terms.buyer, viaAction)]);
  // each other unpaid order takes the same fee + rent again (plus its own amount when paid in lamports): wallet-funds.ts
  const check = checkWalletFunds(terms, needs, currency, others.filter((o) => o.id !== terms.orderId));
  if (check.short) throw insufficientFunds(terms.buyer, check);
}

/** A fund transaction the cluster refused for the payer's lack of funds, as 409 insufficient-funds with the balances now. */
export async function refusedForFunds(c: OrdersContext, order: OrderRecord, err: DomainError): Promise<DomainError> {
  const reason = String(err.extensions.program_error);
  const needs = await c.escrow.fundingNeeds?.(fundTerms(order), fundOpts(order)).catch(() => null);
  if (!needs) return new DomainError('insufficient-funds', `The cluster refused the payment for lack of funds (${reason}): fund wallet ${order.buyerWallet}, then pay again.`, { wallet: order.buyerWallet });
  return insufficientFunds(order.buyerWallet, checkWalletFunds(fundTerms(order), needs, { code: order.currency, decimals: order.decimals }), reason);
}
