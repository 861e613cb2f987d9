/**
 * ts-rest handlers of `contract.offers` (issue 24 item 6). Rules live in modules/offers; errors are
 * DomainErrors (problem+json).
 *
 *  - POST /conversations/{id}/offers posts a message: it shares the chat's per-sender rate limit
 *    (CHAT_RATE_LIMIT_PER_MINUTE, counters shared with the chat routes).
 *  - POST /offers/{id}/accept requires an Idempotency-Key (like POST /orders: same store, leases and
 *    clock); the client network is passed for the per-network hold limit (API keys not counted).
 */
import type { Store } from 'express-rate-limit';
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import { DomainError } from '../errors.js';
import { clientNetwork } from '../lib/client-network.js';
import { idempotency, type IdempotencyLeases, type IdempotencyStore } from '../modules/idempotency/index.js';
import { presentOffer, type OffersService } from '../modules/offers/index.js';
import type { OrdersService, PrincipalLike } from '../modules/orders/index.js';
import { senderLimit } from './chat.handlers.js';

export interface OffersHttpDeps {
  service: OffersService;
  /** presents the accepted offer's order; null without the orders module (accept answers 503 before) */
  orders: OrdersService | null;
  idempotencyStore: IdempotencyStore;
  idempotencyLeases?: IdempotencyLeases;
  idempotencyLeaseMs?: number;
  now?: () => Date;
  /** the chat's per-sender message limit and its counters */
  rateLimitPerMinute: number;
  rateLimitStore?: Store;
}

function principalOf(req: unknown): PrincipalLike {
  const p = (req as { principal?: PrincipalLike }).principal;
  if (!p) throw new DomainError('unauthorized', 'No credential was sent.');
  return p;
}

export function offersHandlers(deps: OffersHttpDeps) {
  const s = initServer();
  const { service } = deps;
  return s.router(contract.offers, {
    createOffer: {
      middleware: [senderLimit(deps.rateLimitPerMinute, deps.rateLimitStore)] as never,
      handler: async ({ params, body, req }) => ({
        status: 201 as const,
        body: presentOffer(await service.create(principalOf(req), params.conversation_id, body)),
      }),
    },
    listOffers: async ({ query, req }) => {
      const page = await service.list(principalOf(req), query);
      return { status: 200 as const, body: { data: page.items.map(presentOffer), next_cursor: page.nextCursor } };
    },
    getOffer: async ({ params, req }) => ({ status: 200 as const, body: presentOffer(await service.get(principalOf(req), params.offer_id)) }),
    acceptOffer: {
      middleware: [
        idempotency({ store: deps.idempotencyStore, required: true, leases: deps.idempotencyLeases, leaseMs: deps.idempotencyLeaseMs, now: deps.now }) as never,
      ],
      handler: async ({ params, body, req }) => {
        const p = principalOf(req);
        const r = await service.accept(p, params.offer_id, {
          paymentSource: body.payment_source,
          buyerWallet: body.buyer_wallet,
          network: p.kind === 'api_key' ? null : clientNetwork(req.ip),
        });
        const order = await deps.orders!.presentOne(p, r.order);
        const payment = r.payment ? { ...r.payment, expires_at: r.payment.expires_at.toISOString() } : null;
        return { status: 201 as const, body: { offer: presentOffer(r.offer), order: { ...order, payment } } };
      },
    },
    declineOffer: async ({ params, req }) => ({ status: 200 as const, body: presentOffer(await service.decline(principalOf(req), params.offer_id)) }),
    withdrawOffer: async ({ params, req }) => ({ status: 200 as const, body: presentOffer(await service.withdraw(principalOf(req), params.offer_id)) }),
  });
}
