/**
 * Solana Actions for an order's buyer (issue 26 item 1, helper AO): confirm delivery and open a dispute from a
 * blink, without a session, behind a signed message (Solana Actions spec 2.4, "Message Signing").
 *
 * Not under /api/v1: mounted at the site root like the listing actions (`listingActionsContract`,
 * actions.contract.ts); the integrator composes `actionsContract = { ...listingActionsContract, ...orderActionsContract }`.
 * Errors are the spec's `ActionError` (`{ message }`), never problem+json. Served only while the operator turns
 * actions on (ACTIONS_ENABLED; off: 404 `{ message }`), rate-limited per IP (ACTIONS_RATE_LIMIT_PER_MINUTE).
 *
 * The flow (the wallet's blink client drives it):
 *  1. GET  /api/actions/orders/{order_id}: the card (listing title, amount and currency, status; the buttons the
 *     lifecycle table lets the buyer press now; the others named with the reason in the description).
 *  2. POST /api/actions/orders/{order_id}/{act} `{ account }` (act: confirm | dispute; a dispute's `reason` as the
 *     query parameter the button's href carries, or in `data.reason`): the order's buyer wallet gets a
 *     `type: "message"` response whose `data` is structured `SignMessageData` (domain, address, a statement naming
 *     the order and the act, a single-use nonce, issuedAt, chainId) and `links.next` the callback below; any other
 *     wallet 403 `{ message }`.
 *  3. POST /api/actions/orders/{order_id}/{act}/next `{ account, signature, data }`: the service checks the
 *     ed25519 signature (base58) over the spec's message text of `data`, that `data` is exactly what it issued,
 *     the nonce (single use, bound to order + act + wallet, expires 5 minutes after it was issued), then
 *     performs the act as the buyer through the orders service (same state table, events and audit actor as the
 *     session routes) and answers a `completed` action.
 */
import { z } from 'zod';
import { c, named, Pubkey, Uuid } from './common.js';
import { DisputeReasonCode } from './disputes.terms.js';

import { ActionError, ActionGetResponse, ActionPostRequest, CompletedAction, LinkedAction, PostNextActionLink } from './actions.contract.js';

/** The acts a buyer may take through an order action (the lifecycle table's `confirm` and `dispute`). */
export const ORDER_ACTION_ACTS = ['confirm', 'dispute'] as const;
export const OrderActionAct = z.enum(ORDER_ACTION_ACTS).describe('confirm: confirm delivery (releases the escrow to the seller); dispute: open a dispute');
export type OrderActionAct = z.infer<typeof OrderActionAct>;

/** The card of an order (spec `ActionGetResponse`), as the module builds it. */
export type OrderActionCard = z.infer<typeof ActionGetResponse>;
/** The completed card of a performed act (spec `CompletedAction`). */
export type OrderActionCompleted = z.infer<typeof CompletedAction>;

/** Structured data to sign (spec 2.4 `SignMessageData`); the message text is the spec's template over it. */
export const SignMessageData = named(
  'SignMessageData',
  z
    .object({
    domain: z.string().describe('The host of PUBLIC_BASE_URL (the origin the blink fetched)'),
    address: Pubkey.describe('The order\'s buyer wallet, asked to sign'),
    statement: z.string().describe('What the signature authorizes: the act and the order, in words'),
    nonce: z.string().regex(/^[A-Za-z0-9]{8,64}$/).describe('Single use, bound to the order, the act and the wallet; expires 5 minutes after issue'),
    issuedAt: z.string().describe('ISO 8601, when the service issued the nonce'),
    chainId: z.string().optional().describe('CAIP-2 id of the service\'s cluster (`X-Blockchain-Ids`)'),
  })
  .strict(),
  'Solana Actions spec 2.4 SignMessageData: what the wallet signs, as the spec\'s message text',
);
export type SignMessageData = z.infer<typeof SignMessageData>;

/** The POST answer for the buyer's wallet (spec 2.4 `SignMessageResponse`). */
export const SignMessageResponse = named(
  'SignMessageResponse',
  z.object({
    type: z.literal('message'),
    data: SignMessageData,
    message: z.string().optional(),
    links: z.object({ next: PostNextActionLink }),
  }),
  'Solana Actions spec 2.4 SignMessageResponse: the POST answer asking the wallet to sign a message',
);
export type SignMessageResponse = z.infer<typeof SignMessageResponse>;

/** The callback's body (spec 2.4 `MessageNextActionPostRequest`): `data` relayed unedited, `signature` base58. */
export const MessageNextActionPostRequest = named(
  'MessageNextActionPostRequest',
  z.object({
    type: z.string().optional(),
    account: Pubkey,
    signature: z.string().min(1).max(200).describe('ed25519 signature of the message text by `account`, base58 (64 bytes)'),
    data: SignMessageData,
    state: z.string().max(4096).optional(),
  }),
  'Solana Actions spec 2.4 MessageNextActionPostRequest: the sign-message callback\'s body',
);
export type MessageNextActionPostRequest = z.infer<typeof MessageNextActionPostRequest>;

const pathParams = z.object({ order_id: Uuid });
const actParams = z.object({ order_id: Uuid, act: OrderActionAct });
/** Public: read no credential (as the listing actions' metadata). */
const meta = { access: { auth: 'public' as const }, auth: 'public' as const, problems: [] as const };

/**
 * The order actions' routes (site root). Every route is public (a wallet fetches it anonymously); the callback
 * authenticates one act by the wallet's signature over a message the service issued.
 */
export const orderActionsContract = c.router(
  {
    getOrderAction: {
      method: 'GET',
      path: '/api/actions/orders/:order_id',
      pathParams,
      summary: 'Solana Action card of an order for its buyer',
      description:
        'Public (ACTIONS_ENABLED). Only what the card needs: the listing title, amount and currency, status; the buttons ' +
        'Confirm delivery and Open a dispute (`reason` parameter) that the lifecycle table lets the buyer take now. A ' +
        'refused act has no button and its reason is in `description` (Actions spec 2.4 has no per-button disabled flag); ' +
        'when neither is possible the card is `disabled` with the reason in `error`.',
      responses: { 200: ActionGetResponse, 400: ActionError, 404: ActionError, 429: ActionError, 503: ActionError },
      metadata: meta,
    },
    postOrderAction: {
      method: 'POST',
      path: '/api/actions/orders/:order_id/:act',
      pathParams: actParams,
      query: z
        .object({
          reason: z.string().max(4000).optional().describe('A dispute\'s reason (the button\'s `{reason}` parameter)'),
          reason_code: z.string().max(40).optional().describe(`A dispute's kind: ${DisputeReasonCode.options.join(', ')} (empty: other)`),
        })
        .passthrough(),
      body: ActionPostRequest,
      summary: 'Ask the order\'s buyer wallet to sign the act (sign-message action)',
      description:
        'Public (ACTIONS_ENABLED). For the order\'s buyer wallet: a `type: "message"` response with structured ' +
        '`SignMessageData` and `links.next` (the callback). A dispute needs `reason` (query or `data.reason`, 10..2000 ' +
        'characters). 403 another wallet; 409 when the order\'s state refuses the act now; 404 unknown order.',
      responses: { 200: SignMessageResponse, 400: ActionError, 403: ActionError, 404: ActionError, 409: ActionError, 429: ActionError, 503: ActionError },
      metadata: meta,
    },
    postOrderActionNext: {
      method: 'POST',
      path: '/api/actions/orders/:order_id/:act/next',
      pathParams: actParams,
      body: MessageNextActionPostRequest,
      summary: 'Perform the act the buyer signed (sign-message callback)',
      description:
        'Public (ACTIONS_ENABLED); authenticated by the signature. Verifies the ed25519 signature over the spec\'s message ' +
        'text, that `data` is exactly what the service issued for this order, act and wallet, and the nonce (single use, ' +
        'unexpired), then performs the act as the buyer through the orders service and answers a `completed` action. ' +
        '403 for a bad signature, another wallet, an edited message, a used or expired nonce or one issued for another ' +
        'order or act; 409 when the state no longer allows the act.',
      responses: { 200: CompletedAction, 400: ActionError, 403: ActionError, 404: ActionError, 409: ActionError, 429: ActionError, 503: ActionError },
      metadata: meta,
    },
  },
  { strictStatusCodes: true },
);

export type OrderActionsContract = typeof orderActionsContract;
