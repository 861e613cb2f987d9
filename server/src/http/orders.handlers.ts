/**
 * ts-rest handlers of `contract.orders`: map the request to an OrdersService call and the result to
 * the contract's Order shape. Rules live in modules/orders; errors are DomainErrors (problem+json).
 *
 * Decisions:
 *  - Idempotency-Key is REQUIRED on POST /orders (contract: 400 idempotency-key-missing), keys are
 *    scoped per principal and kept 24 h. The chain-backed actions need no key: repeating one is
 *    harmless by construction (a confirmed action returns the current order, nothing is re-sent).
 *  - GET /orders/{id} and the actions answer 404 to callers who are neither buyer, seller nor admin.
 *  - Solana Pay endpoints are public; POST answers 403 unless `account` is the order's buyer wallet.
 *  - payment_source custodial (custody enabled): the service pays from the buyer's custodial balance
 *    while creating the order; `payment` is null (modules/custody/README.md).
 *  - POST /orders: the client network (req.ip, TRUST_PROXY) is passed for the per-network hold limit.
 *  - POST /orders/{id}/payment: the buyer's way to a fresh fund transaction once `payment.expires_at`
 *    passed (the Solana Pay POST is the wallets' way).
 */
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import { IDEMPOTENCY_HEADER, type IdempotencyLeases, idempotency, parseIdempotencyKey, type IdempotencyStore } from '../modules/idempotency/index.js';
import type { OrdersService, PrincipalLike } from '../modules/orders/index.js';
import type { DisputesService } from '../modules/disputes/index.js';
import { DomainError } from '../errors.js';
import { clientNetwork } from '../lib/client-network.js';

export interface OrdersHttpDeps {
  service: OrdersService;
  idempotencyStore: IdempotencyStore;
  /** the process's Idempotency-Key lease renewals (stopped with the orders module) */
  idempotencyLeases?: IdempotencyLeases;
  idempotencyLeaseMs?: number;
  /** the service clock (AppContext.now): Idempotency-Key leases and expiry are read on it */
  now?: () => Date;
  /**
   * the dispute desk (issue 25 part 3): keeps an open-dispute body's `reason_code`, and a resolve body's
   * `rationale` (recorded, sent to both parties); absent (unit tests of the orders routes): both ignored
   */
  disputes?: Pick<DisputesService, 'recordOpening' | 'rule'>;
}

function principalOf(req: unknown): PrincipalLike {
  const p = (req as { principal?: PrincipalLike }).principal;
  if (!p) throw new DomainError('unauthorized', 'No credential was sent.');
  return p;
}

export function ordersHandlers(deps: OrdersHttpDeps) {
  const s = initServer();
  const { service } = deps;
  const dto = (o: Parameters<OrdersService['presentOne']>[1], p: PrincipalLike) => service.presentOne(p, o);

  const keyed = () => [
    idempotency({ store: deps.idempotencyStore, required: true, leases: deps.idempotencyLeases, leaseMs: deps.idempotencyLeaseMs, now: deps.now }) as never,
  ];
  /**
   * An agreement route (issue 24): Idempotency-Key required, the Order answered as the caller sees it.
   * `index`: the milestone the per-milestone twin names (/orders/{order_id}/milestones/{index}/...);
   * undefined on the order routes, which act on the current milestone.
   */
  const agreement = <B,>(run: (p: PrincipalLike, orderId: string, body: B, index: number | undefined) => Promise<Parameters<OrdersService['presentOne']>[1]>) => ({
    middleware: keyed(),
    handler: async ({ params, body, req }: { params: { order_id: string; index?: number }; body?: unknown; req: unknown }) => {
      const p = principalOf(req);
      const order = await run(p, params.order_id, body as B, params.index);
      return { status: 200 as const, body: await dto(order, p) };
    },
  });
  /**
   * The older resolve routes with the optional `rationale` (issue 25): refused before anything moves when the
   * credential has no user (the rationale is posted as the arbiter's message), then recorded by the dispute
   * desk once the split landed (event dispute.resolved + the order's conversation).
   */
  const rulingNeedsUser = (p: PrincipalLike, rationale: string | undefined) => {
    if (rationale !== undefined && deps.disputes && !p.userId) {
      throw new DomainError('forbidden', 'A ruling with a rationale needs the arbiter\'s own login (a user), not a service API key.');
    }
  };
  const withRationale = async (p: PrincipalLike, row: Parameters<OrdersService['presentOne']>[1], body: { buyer_bps: number; rationale?: string }) => {
    if (body.rationale === undefined || !deps.disputes || row.status !== 'resolved') return row;
    await deps.disputes.rule(p, row.id, { buyerBps: body.buyer_bps, rationale: body.rationale });
    return row;
  };
  const toSeconds = (iso: string) => Math.floor(new Date(iso).getTime() / 1000);
  const revision = agreement<{ message: string }>((p, id, b, i) => service.requestRevision(p, id, b.message, i));
  const proposeExt = agreement<{ new_deadline: string; message?: string }>((p, id, b, i) => service.proposeExtension(p, id, toSeconds(b.new_deadline), b.message ?? null, i));
  const acceptExt = agreement<{ new_deadline: string }>((p, id, b, i) => service.acceptExtension(p, id, toSeconds(b.new_deadline), i));
  const declineExt = agreement<unknown>((p, id, _b, i) => service.declineExtension(p, id, i));
  const proposeSet = agreement<{ buyer_bps: number }>((p, id, b, i) => service.proposeSettlement(p, id, b.buyer_bps, i));
  const acceptSet = agreement<{ buyer_bps: number }>((p, id, b, i) => service.acceptSettlement(p, id, b.buyer_bps, i));
  const withdrawSet = agreement<unknown>((p, id, _b, i) => service.withdrawSettlement(p, id, i));

  return s.router(contract.orders, {
    requestRevision: revision,
    proposeExtension: proposeExt,
    acceptExtension: acceptExt,
    declineExtension: declineExt,
    proposeSettlement: proposeSet,
    acceptSettlement: acceptSet,
    withdrawSettlement: withdrawSet,
    // the same agreements on milestone `index` (current or funded ahead of it)
    requestMilestoneRevision: revision,
    proposeMilestoneExtension: proposeExt,
    acceptMilestoneExtension: acceptExt,
    declineMilestoneExtension: declineExt,
    proposeMilestoneSettlement: proposeSet,
    acceptMilestoneSettlement: acceptSet,
    withdrawMilestoneSettlement: withdrawSet,
    createOrder: {
      middleware: [
        idempotency({ store: deps.idempotencyStore, required: true, leases: deps.idempotencyLeases, leaseMs: deps.idempotencyLeaseMs, now: deps.now }) as never,
      ],
      handler: async ({ body, req }) => {
        const p = principalOf(req);
        const { order, payment } = await service.create(p, {
          listingId: body.listing_id,
          buyerWallet: body.buyer_wallet,
          paymentSource: body.payment_source ?? 'wallet',
          // issue 24: the listing package bought (orderTermsOf checks it against the listing)
          packageKey: body.package ?? null,
          // stored on the order: a retry after a crash finds what the first attempt created
          idempotencyKey: parseIdempotencyKey(req.get(IDEMPOTENCY_HEADER)) ?? null,
          // holds are capped per client network; API keys (operator-issued integrations fronting many
          // buyers from one server) are not counted
          network: p.kind === 'api_key' ? null : clientNetwork(req.ip),
        });
        const o = await dto(order, p);
        return {
          status: 201 as const,
          body: { ...o, payment: payment ? { ...payment, expires_at: payment.expires_at.toISOString() } : null },
        };
      },
    },
    listOrders: async ({ query, req }) => {
      const p = principalOf(req);
      const page = await service.list(p, { role: query.role, status: query.status, limit: query.limit, cursor: query.cursor });
      return { status: 200 as const, body: { data: await service.present(p, page.data), next_cursor: page.nextCursor } };
    },
    getOrder: async ({ params, req }) => {
      const p = principalOf(req);
      return { status: 200 as const, body: await dto(await service.get(p, params.order_id), p) };
    },
    submitOrderTransaction: async ({ params, body, req }) => {
      const p = principalOf(req);
      const o = await service.submitTransaction(p, params.order_id, body.signed_transaction);
      return { status: 200 as const, body: await dto(o, p) };
    },
    createOrderPayment: async ({ params, req }) => {
      const { order, payment } = await service.refreshPayment(principalOf(req), params.order_id);
      return {
        status: 200 as const,
        body: {
          ...payment,
          expires_at: payment.expires_at.toISOString(),
          order_id: order.orderId,
          payment_expires_at: order.paymentExpiresAt.toISOString(),
        },
      };
    },
    getSolanaPayLabel: async ({ params }) => ({ status: 200 as const, body: await service.solanaPayLabel(params.order_id) }),
    createSolanaPayTransaction: async ({ params, body }) => ({
      status: 200 as const,
      body: await service.solanaPayTransaction(params.order_id, body.account),
    }),
    deliverOrder: async ({ params, req }) => {
      const p = principalOf(req);
      return { status: 200 as const, body: await dto(await service.deliver(p, params.order_id), p) };
    },
    confirmOrder: async ({ params, req }) => {
      const p = principalOf(req);
      return { status: 200 as const, body: await dto(await service.confirm(p, params.order_id), p) };
    },
    disputeOrder: async ({ params, body, req }) => {
      const p = principalOf(req);
      const row = await service.dispute(p, params.order_id, body.reason);
      await deps.disputes?.recordOpening(row, body.reason_code);
      return { status: 200 as const, body: await dto(row, p) };
    },
    refundOrder: async ({ params, req }) => {
      const p = principalOf(req);
      return { status: 200 as const, body: await dto(await service.refund(p, params.order_id), p) };
    },
    resolveDispute: async ({ params, body, req }) => {
      const p = principalOf(req);
      rulingNeedsUser(p, body.rationale);
      const row = await service.resolve(p, params.order_id, body.buyer_bps);
      return { status: 200 as const, body: await dto(await withRationale(p, row, body), p) };
    },
    fundOrderMilestones: {
      middleware: [
        idempotency({ store: deps.idempotencyStore, required: true, leases: deps.idempotencyLeases, leaseMs: deps.idempotencyLeaseMs, now: deps.now }) as never,
      ],
      handler: async ({ params, body, req }) => {
        const r = await service.fundMilestones(principalOf(req), params.order_id, body.milestones);
        return {
          status: 200 as const,
          body: {
            transaction: r.transaction,
            solana_pay_url: r.solana_pay_url,
            // later milestones are paid by the buyer (fee sponsorship covers milestone 1: modules/orders/sponsorship.ts)
            fee_payer: r.order.buyerWallet,
            sponsored: false,
            expires_at: r.expires_at.toISOString(),
            order_id: r.order.orderId,
            milestones: r.milestones,
            payment_expires_at: r.payment_expires_at.toISOString(),
          },
        };
      },
    },
    deliverMilestone: async ({ params, req }) => {
      const p = principalOf(req);
      return { status: 200 as const, body: await dto(await service.deliverMilestone(p, params.order_id, params.index), p) };
    },
    confirmMilestone: async ({ params, req }) => {
      const p = principalOf(req);
      return { status: 200 as const, body: await dto(await service.confirmMilestone(p, params.order_id, params.index), p) };
    },
    disputeMilestone: async ({ params, body, req }) => {
      const p = principalOf(req);
      const row = await service.disputeMilestone(p, params.order_id, params.index, body.reason);
      await deps.disputes?.recordOpening(row, body.reason_code);
      return { status: 200 as const, body: await dto(row, p) };
    },
    refundMilestone: async ({ params, req }) => {
      const p = principalOf(req);
      return { status: 200 as const, body: await dto(await service.refundMilestone(p, params.order_id, params.index), p) };
    },
    resolveMilestone: async ({ params, body, req }) => {
      const p = principalOf(req);
      rulingNeedsUser(p, body.rationale);
      const row = await service.resolveMilestone(p, params.order_id, params.index, body.buyer_bps);
      return { status: 200 as const, body: await dto(await withRationale(p, row, body), p) };
    },
    endOrder: async ({ params, req }) => {
      const p = principalOf(req);
      return { status: 200 as const, body: await dto(await service.endOrder(p, params.order_id), p) };
    },
  });
}
