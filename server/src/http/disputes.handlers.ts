/**
 * ts-rest handlers of `contract.disputes` (issue 25 part 3, the dispute desk). Rules live in
 * modules/disputes; errors are DomainErrors (problem+json). The arbiter's routes (queue, ruling) need the
 * arbiter role (contract: `access.role('arbiter', 'disputes:resolve')`).
 */
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import { DomainError } from '../errors.js';
import type { DisputesService } from '../modules/disputes/index.js';
import type { Principal } from '../modules/auth/index.js';

export interface DisputesHttpDeps {
  service: DisputesService;
}

function principalOf(req: unknown): Principal {
  const p = (req as { principal?: Principal }).principal;
  if (!p) throw new DomainError('unauthorized', 'No credential was sent.');
  return p;
}

export function disputesHandlers(deps: DisputesHttpDeps) {
  const s = initServer();
  const { service } = deps;
  return s.router(contract.disputes, {
    getDispute: async ({ params, req }) => ({ status: 200 as const, body: await service.get(principalOf(req), params.dispute_id) }),
    submitDisputeEvidence: async ({ params, body, req }) => ({
      status: 201 as const,
      body: await service.submitEvidence(principalOf(req), params.dispute_id, body),
    }),
    listDisputeQueue: async ({ query }) => {
      const page = await service.queue({
        limit: query.limit,
        cursor: query.cursor,
        attention: query.attention === undefined ? undefined : query.attention === 'true',
      });
      return { status: 200 as const, body: { data: page.items, next_cursor: page.nextCursor } };
    },
    ruleDispute: async ({ params, body, req }) => ({
      status: 200 as const,
      body: await service.rule(principalOf(req), params.dispute_id, { buyerBps: body.buyer_bps, rationale: body.rationale }),
    }),
  });
}
