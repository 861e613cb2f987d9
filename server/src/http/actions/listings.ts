/**
 * The listing action routes (contract `listingActionsContract`) onto the actions module
 * (modules/actions/listing-actions.ts): thin, as every handler. Errors are thrown (ActionRefusal, or a
 * DomainError of the orders / auth modules) and answered `{ message }` by the actions router (router.ts).
 */
import { initServer } from '@ts-rest/express';
import { listingActionsContract, type ActionsJson } from '@bazaar/contract';
import { clientNetwork } from '../../lib/client-network.js';
import type { ListingActions } from '../../modules/actions/listing-actions.js';

/**
 * `/actions.json`: the web app's shareable pages to their action endpoints (listings here; orders: the
 * order actions), and the action endpoints to themselves (spec: an action URL stays an action URL).
 */
export const ACTIONS_JSON: ActionsJson = {
  rules: [
    { pathPattern: '/app/listings/*', apiPath: '/api/actions/listings/*' },
    { pathPattern: '/app/orders/*', apiPath: '/api/actions/orders/*' },
    { pathPattern: '/api/actions/**', apiPath: '/api/actions/**' },
  ],
};

/** ts-rest handlers of `listingActionsContract` over the listing actions. */
export function listingActionsHandlers(actions: ListingActions) {
  const s = initServer();
  return s.router(listingActionsContract, {
    getActionsJson: async () => ({ status: 200 as const, body: ACTIONS_JSON }),
    getListingAction: async ({ params }) => ({ status: 200 as const, body: await actions.card(params.listing_id) }),
    postListingAction: async ({ params, query, body, req }) => ({
      status: 200 as const,
      body: await actions.buy(params.listing_id, body.account, query.package ?? null, clientNetwork(req.ip)),
    }),
    listingActionNext: async ({ params, query, body }) => ({
      status: 200 as const,
      body: await actions.next(params.listing_id, query.order_id, body.account),
    }),
  });
}
