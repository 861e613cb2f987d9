/**
 * Orders facade: ONE object the HTTP handlers, the background jobs and other modules hold, composed of
 * the orders use cases (./use-cases/, one per file or folder; the rule is in docs/design.md "Use
 * cases"). It holds no rule of its own: each method delegates to the use case that owns it, and the
 * constructor is the only place that knows which use case needs which (explicit dependencies).
 *
 *   read-and-present          GET /orders, GET /orders/{id}, the Order DTO, Solana Pay GET
 *   create-and-pay/create     POST /orders (hold, then fund transaction or custodial funding)
 *   create-and-pay/pay        fund transactions, Solana Pay POST, submit, markFunded, checkPayment
 *   act-on-chain/actions      deliver / confirm / dispute / refund / resolve, claim, claimDue
 *   act-on-chain/record-before-send   the crash-safe pipeline every escrow action runs through
 *   refund-stray-escrows      re-funded closed orders (with ../escrow-reconciler.ts: recover and reconcile)
 *   agreements/               revisions, deadline extensions, settlement by agreement, proposal expiry (issue 24)
 *   milestones/milestones     fund the next milestone(s), act on one milestone, end the order (issue 24)
 */
import type { Order } from '@bazaar/contract';
import { EscrowReconciler } from './escrow-reconciler.js';
import { type OrderRole, type OrderStatus, actionMovesListing, instructionAction } from './order-state.js';
import type { OrdersServiceSettings } from './orders.settings.js';
import type { EscrowOrderView, FundTerms, HoldPressure, OrderRecord } from './orders.types.js';
import { actOnChain } from './use-cases/act-on-chain/actions.js';
import { recordBeforeSend } from './use-cases/act-on-chain/record-before-send.js';
import { createOrder, type CreatedOrder, type CreateOrderInput, type TrustedOrderTerms } from './use-cases/create-and-pay/create-order.js';
import { payOrder, type PaymentInstructions, type SolanaPayAnswer } from './use-cases/create-and-pay/pay.js';
import {
  type Log,
  type OrdersContext,
  type OrdersPorts,
  type PrincipalLike,
  applyListingEffect,
  bookCustodial,
  fundTerms,
  ordersContext,
  roleOf,
  termsMatch,
} from './use-cases/context.js';
import { type ListOrdersQuery, readAndPresent } from './use-cases/read-and-present.js';
import { refundStrayEscrows } from './use-cases/refund-stray-escrows.js';
import { expireProposals, extensions, revisions, settlements } from './use-cases/agreements/index.js';
import { milestones, type MilestonesPayment } from './use-cases/milestones/milestones.js';

export type { PrincipalLike } from './use-cases/context.js';
export { KeyedMutex } from './use-cases/context.js';
export type { CreateOrderInput, TrustedOrderTerms } from './use-cases/create-and-pay/create-order.js';
export type { PaymentInstructions, SolanaPayAnswer } from './use-cases/create-and-pay/pay.js';
export type { MilestonesPayment } from './use-cases/milestones/milestones.js';

export interface OrdersServiceDeps extends OrdersPorts {
  /** complete settings (defaults: the ENV_VARS table of server/src/config.ts, read by `ordersSettings`) */
  settings: OrdersServiceSettings;
  log?: Log;
  now?: () => Date;
}

export class OrdersService {
  /** the settings the use cases read */
  readonly config: OrdersContext['settings'];
  readonly reconciler: EscrowReconciler;
  private readonly ctx: OrdersContext;
  private readonly read;
  private readonly pay;
  private readonly creation;
  private readonly actions;
  private readonly strays;
  private readonly revisions;
  private readonly extensions;
  private readonly settlements;
  private readonly expiry;
  private readonly milestones;

  constructor(deps: OrdersServiceDeps) {
    const { settings, log, now, ...ports } = deps;
    const c = (this.ctx = ordersContext(ports, settings, { log, now }));
    this.config = c.settings;
    this.reconciler = new EscrowReconciler({
      repo: c.repo,
      escrow: c.escrow,
      log: c.log,
      now: c.now,
      graceSeconds: c.settings.paymentGraceSeconds,
      withOrderLock: (id, fn) => c.mutex.run(id, fn),
      syncDrift: true,
      onSettled: async (order, ix) => {
        // a recovered revision or proposal leaves the listing alone (its rows move none)
        if (ix === 'fund' || actionMovesListing(instructionAction[ix])) await applyListingEffect(c, order);
        await bookCustodial(c, order);
      },
    });
    const perform = recordBeforeSend(c, this.reconciler);
    this.read = readAndPresent(c);
    this.pay = payOrder(c, { read: this.read, perform });
    this.creation = createOrder(c, { pay: this.pay });
    this.actions = actOnChain(c, { read: this.read, perform });
    this.strays = refundStrayEscrows(c, { reconciler: this.reconciler });
    this.revisions = revisions(c, { read: this.read, perform });
    this.extensions = extensions(c, { read: this.read, perform });
    this.settlements = settlements(c, { read: this.read, perform });
    this.expiry = expireProposals(c);
    this.milestones = milestones(c, { read: this.read, pay: this.pay, actions: this.actions });
  }

  // read and present
  roleOf(order: OrderRecord, p: PrincipalLike): OrderRole | null {
    return roleOf(order, p);
  }
  get(p: PrincipalLike, orderId: string): Promise<OrderRecord> {
    return this.read.get(p, orderId);
  }
  list(p: PrincipalLike, q: ListOrdersQuery): Promise<{ data: OrderRecord[]; nextCursor: string | null }> {
    return this.read.list(p, q);
  }
  present(p: PrincipalLike, orders: OrderRecord[]): Promise<Order[]> {
    return this.read.present(p, orders);
  }
  /** One order as `present` shows it. */
  async presentOne(p: PrincipalLike, order: OrderRecord): Promise<Order> {
    return (await this.read.present(p, [order]))[0]!;
  }
  solanaPayLabel(orderId: string): Promise<{ label: string; icon: string }> {
    return this.read.solanaPayLabel(orderId);
  }

  // create and pay
  create(p: PrincipalLike, input: CreateOrderInput & { paymentSource?: 'wallet' }): Promise<{ order: OrderRecord; payment: PaymentInstructions }>;
  create(p: PrincipalLike, input: CreateOrderInput): Promise<CreatedOrder>;
  create(p: PrincipalLike, input: CreateOrderInput): Promise<CreatedOrder> {
    return this.creation.create(p, input);
  }
  /**
   * issue 24 seam: create an order with terms a trusted caller fixes (a custom offer's frozen terms:
   * modules/offers), never terms from a request body. Same steps and errors as `create`.
   * INTERIM (helper "offers"): see TrustedOrderTerms; the helper "milestones" owns this seam.
   */
  createOrder(p: PrincipalLike, input: CreateOrderInput, trusted: TrustedOrderTerms): Promise<CreatedOrder> {
    return this.creation.create(p, input, trusted);
  }
  paymentWindowSeconds(p: HoldPressure): number {
    return this.creation.paymentWindowSeconds(p);
  }
  refreshPayment(p: PrincipalLike, orderId: string): Promise<{ order: OrderRecord; payment: PaymentInstructions }> {
    return this.pay.refreshPayment(p, orderId);
  }
  solanaPayUrl(orderId: string, currency?: string): string {
    return this.pay.solanaPayUrl(orderId, currency);
  }
  fundTerms(order: OrderRecord): FundTerms {
    return fundTerms(order);
  }
  termsMatch(order: OrderRecord, v: EscrowOrderView): boolean {
    return termsMatch(order, v);
  }
  solanaPayTransaction(orderId: string, account: string): Promise<SolanaPayAnswer> {
    return this.pay.solanaPayTransaction(orderId, account);
  }
  submitTransaction(p: PrincipalLike, orderId: string, signedBase64: string): Promise<OrderRecord> {
    return this.pay.submitTransaction(p, orderId, signedBase64);
  }
  markFunded(orderId: string, view: EscrowOrderView, signature: string | null, slot: number | null = null): Promise<OrderRecord> {
    return this.pay.markFunded(orderId, view, signature, slot);
  }
  checkPayment(order: OrderRecord, known?: EscrowOrderView | null, found?: { signature: string; slot: number } | null): Promise<OrderStatus> {
    return this.pay.checkPayment(order, known, found);
  }


  // act on chain
  deliver(p: PrincipalLike, orderId: string): Promise<OrderRecord> {
    return this.actions.deliver(p, orderId);
  }
  confirm(p: PrincipalLike, orderId: string): Promise<OrderRecord> {
    return this.actions.confirm(p, orderId);
  }
  dispute(p: PrincipalLike, orderId: string, reason: string): Promise<OrderRecord> {
    return this.actions.dispute(p, orderId, reason);
  }
  refund(p: PrincipalLike, orderId: string): Promise<OrderRecord> {
    return this.actions.refund(p, orderId);
  }
  resolve(p: PrincipalLike, orderId: string, buyerBps: number): Promise<OrderRecord> {
    return this.actions.resolve(p, orderId, buyerBps);
  }
  claim(orderId: string): Promise<OrderRecord> {
    return this.actions.claim(orderId);
  }
  claimDue(limit = 50): Promise<string[]> {
    return this.actions.claimDue(limit);
  }
  applyListingEffect(order: OrderRecord): Promise<void> {
    return applyListingEffect(this.ctx, order);
  }

  // agreements (issue 24). `index`: the milestone named by /orders/{id}/milestones/{index}/...; absent: the
  // order routes, which act on the current milestone
  requestRevision(p: PrincipalLike, orderId: string, message: string, index?: number): Promise<OrderRecord> {
    return this.revisions.requestRevision(p, orderId, message, index);
  }
  /** `newDeadline`: unix seconds */
  proposeExtension(p: PrincipalLike, orderId: string, newDeadline: number, message: string | null, index?: number): Promise<OrderRecord> {
    return this.extensions.propose(p, orderId, newDeadline, message, index);
  }
  acceptExtension(p: PrincipalLike, orderId: string, newDeadline: number, index?: number): Promise<OrderRecord> {
    return this.extensions.accept(p, orderId, newDeadline, index);
  }
  declineExtension(p: PrincipalLike, orderId: string, index?: number): Promise<OrderRecord> {
    return this.extensions.decline(p, orderId, index);
  }
  proposeSettlement(p: PrincipalLike, orderId: string, buyerBps: number, index?: number): Promise<OrderRecord> {
    return this.settlements.propose(p, orderId, buyerBps, index);
  }
  acceptSettlement(p: PrincipalLike, orderId: string, buyerBps: number, index?: number): Promise<OrderRecord> {
    return this.settlements.accept(p, orderId, buyerBps, index);
  }
  withdrawSettlement(p: PrincipalLike, orderId: string, index?: number): Promise<OrderRecord> {
    return this.settlements.withdraw(p, orderId, index);
  }
  /** The proposal sweep: expired proposals cleared with their `*.expired` event (once). */
  expireProposals(limit = 50): Promise<string[]> {
    return this.expiry(limit);
  }
  // milestones (issue 24)
  fundMilestones(p: PrincipalLike, orderId: string, indexes: number[]): Promise<MilestonesPayment> {
    return this.milestones.fund(p, orderId, indexes);
  }
  deliverMilestone(p: PrincipalLike, orderId: string, index: number): Promise<OrderRecord> {
    return this.milestones.deliver(p, orderId, index);
  }
  confirmMilestone(p: PrincipalLike, orderId: string, index: number): Promise<OrderRecord> {
    return this.milestones.confirm(p, orderId, index);
  }
  disputeMilestone(p: PrincipalLike, orderId: string, index: number, reason: string): Promise<OrderRecord> {
    return this.milestones.dispute(p, orderId, index, reason);
  }
  refundMilestone(p: PrincipalLike, orderId: string, index: number): Promise<OrderRecord> {
    return this.milestones.refund(p, orderId, index);
  }
  resolveMilestone(p: PrincipalLike, orderId: string, index: number, buyerBps: number): Promise<OrderRecord> {
    return this.milestones.resolve(p, orderId, index, buyerBps);
  }
  endOrder(p: PrincipalLike, orderId: string): Promise<OrderRecord> {
    return this.milestones.end(p, orderId);
  }

  // recover and reconcile
  refundStrayEscrows(limit = 50): Promise<string[]> {
    return this.strays(limit);
  }
}
