/**
 * Solana Actions (blinks) for listings: the routes a wallet or a blink client calls anonymously, mounted at
 * the site ROOT (not under /api/v1: the Actions spec fixes `/actions.json` at the origin's root, and an action
 * URL is what a user shares). Spec: `@solana/actions-spec` 2.4 (https://solana.com/docs/advanced/actions);
 * the zod shapes below are the spec's, named as it names them, and exported for the order actions
 * (`actions-orders.contract.ts`), so both groups answer the same shapes.
 *
 * Served only while the operator turns them on (ACTIONS_ENABLED; `npm start` does): otherwise every route
 * here answers 404 `{ message }`. Errors are the spec's `ActionError` (`{ message }`), never problem+json:
 * blink clients show `message` to the user. Every response carries `X-Action-Version` and
 * `X-Blockchain-Ids` (CAIP-2 id of the service's cluster) and the CORS headers the spec requires (any
 * origin, no credentials). Rate-limited per client IP (ACTIONS_RATE_LIMIT_PER_MINUTE; 429 + Retry-After).
 *
 * Authentication (README "Share a listing as a blink"): none. The spec expects the provider to authenticate
 * calls, but wallets fetch actions anonymously; what makes buying safe is that the order is paid only by
 * the wallet's own signature on the fund transaction, an order is created only for the `account` that
 * POSTs, it counts against that wallet's unpaid-orders limit and the caller network's holds limit, and the
 * card exposes only what a listing page shows anyone.
 */
import { z } from 'zod';
import { c, named, Pubkey, TxSignature, Uuid } from './common.js';
import { PackageKey } from './listings.contract.js';

/** The spec version this service answers with (`X-Action-Version`). */
export const ACTIONS_SPEC_VERSION = '2.4';

/** Mount path of the action endpoints (the site root, not API_PREFIX). */
export const ACTIONS_API_PATH = '/api/actions';

/** Spec `ActionError`: the message a blink client shows the user. */
export const ActionError = named(
  'ActionError',
  z.object({ message: z.string().describe('Human-readable reason, shown to the user as it is') }),
  'Solana Actions error body (spec ActionError); every non-2xx answer of an action route carries one',
);
export type ActionError = z.infer<typeof ActionError>;

/** Spec `ActionRuleObject` of actions.json. */
export const ActionRuleObject = named(
  'ActionRuleObject',
  z.object({
    pathPattern: z.string().describe('Path (relative to the origin) or absolute URL of website pages; `*` one segment, `**` any'),
    apiPath: z.string().describe('Where the matching pages\' Action API lives; `*` parts replaced by the matched ones'),
  }),
);

/** Spec `ActionsJson`: GET /actions.json. */
export const ActionsJson = named('ActionsJson', z.object({ rules: z.array(ActionRuleObject) }), 'Solana Actions actions.json');
export type ActionsJson = z.infer<typeof ActionsJson>;

/** Spec `ActionParameter` (the subset of fields this service emits or accepts). */
export const ActionParameter = named(
  'ActionParameter',
  z.object({
    type: z.enum(['text', 'email', 'url', 'number', 'date', 'datetime-local', 'textarea', 'select', 'radio', 'checkbox']).optional(),
    name: z.string(),
    label: z.string().optional(),
    required: z.boolean().optional(),
    pattern: z.string().optional(),
    patternDescription: z.string().optional(),
    options: z.array(z.object({ label: z.string(), value: z.string(), selected: z.boolean().optional() })).optional(),
  }),
);

/** Spec `LinkedAction`: one button of a card. */
export const LinkedAction = named(
  'LinkedAction',
  z.object({
    type: z.enum(['transaction', 'message', 'post', 'external-link']),
    href: z.string().describe('URL (absolute, or relative to the action\'s origin) the button POSTs to'),
    label: z.string(),
    parameters: z.array(ActionParameter).optional(),
  }),
);
export type LinkedAction = z.infer<typeof LinkedAction>;

/** The fields of a card (spec `Action`), shared by the GET answer and a chained action card. */
const actionFields = {
  icon: z.string().url().describe('Absolute URL of an SVG, PNG or WebP image'),
  title: z.string(),
  description: z.string(),
  label: z.string().describe('Label of the single button when `links` is absent'),
  disabled: z.boolean().optional(),
  links: z.object({ actions: z.array(LinkedAction) }).optional(),
  // why the card is disabled, shown by the client
  error: ActionError.optional(),
};

/** Spec `ActionGetResponse`: the card. */
export const ActionGetResponse = named(
  'ActionGetResponse',
  z.object({ type: z.literal('action').optional(), ...actionFields }),
  'Solana Actions GET response (spec ActionGetResponse): the card a blink client renders',
);
export type ActionGetResponse = z.infer<typeof ActionGetResponse>;

/** Spec `Action<"action">` as a chained step (`type` required: a NextAction tells the two kinds apart by it). */
export const ChainedAction = named('ChainedAction', z.object({ type: z.literal('action'), ...actionFields }), 'Solana Actions NextAction of type action');

/** Spec `CompletedAction`: the last card of a chain (no buttons). */
export const CompletedAction = named(
  'CompletedAction',
  z.object({
    type: z.literal('completed'),
    icon: z.string().url(),
    title: z.string(),
    description: z.string(),
    label: z.string(),
    disabled: z.boolean().optional(),
    error: ActionError.optional(),
  }),
);

/** Spec `NextAction`: what a POST callback (`links.next` of type post) answers. */
export const NextAction = named(
  'NextAction',
  z.union([CompletedAction, ChainedAction]),
  'Solana Actions NextAction: an action card or a completed one',
);
export type NextAction = z.infer<typeof NextAction>;

/** Spec `PostNextActionLink`: chain to the card the callback answers, POSTed with the transaction's signature. */
export const PostNextActionLink = named('PostNextActionLink', z.object({ type: z.literal('post'), href: z.string() }));

/** Spec `ActionPostRequest`. */
export const ActionPostRequest = named(
  'ActionPostRequest',
  z.object({
    type: z.enum(['transaction', 'message', 'post', 'external-link']).optional(),
    account: Pubkey.describe('The wallet that will sign (base58)'),
    data: z.record(z.union([z.string(), z.array(z.string())])).optional(),
  }),
  'Solana Actions POST request (spec ActionPostRequest)',
);
export type ActionPostRequest = z.infer<typeof ActionPostRequest>;

/** Spec `TransactionResponse` (the ActionPostResponse this service answers to a buy). */
export const ActionPostResponse = named(
  'ActionPostResponse',
  z.object({
    type: z.literal('transaction'),
    transaction: z.string().describe('base64 serialized transaction for the wallet to sign and send'),
    message: z.string().optional(),
    links: z.object({ next: PostNextActionLink }).optional(),
  }),
  'Solana Actions POST response of type transaction (spec TransactionResponse)',
);
export type ActionPostResponse = z.infer<typeof ActionPostResponse>;

/** Spec `NextActionPostRequest`: the chained callback's body. */
export const NextActionPostRequest = named(
  'NextActionPostRequest',
  z.object({
    account: Pubkey,
    signature: TxSignature.optional().describe('Signature of the transaction the wallet sent'),
    state: z.string().optional(),
    data: z.record(z.union([z.string(), z.array(z.string())])).optional(),
  }),
  'Solana Actions chained POST (spec NextActionPostRequest)',
);
export type NextActionPostRequest = z.infer<typeof NextActionPostRequest>;

const actionErrors = {
  400: ActionError,
  403: ActionError,
  404: ActionError,
  409: ActionError,
  429: ActionError,
  503: ActionError,
} as const;

/** Public: read no credential (the actions are anonymous by design, module comment). */
const metadata = { access: { auth: 'public' as const }, auth: 'public' as const, problems: [] as const };

const ListingParams = z.object({ listing_id: Uuid });

/** The listing action routes (AL); the order actions are `orderActionsContract` (actions-orders.contract.ts). */
export const listingActionsContract = c.router(
  {
    getActionsJson: {
      method: 'GET',
      path: '/actions.json',
      summary: 'Solana Actions rules of this site',
      description:
        'Maps the web app\'s shareable pages to their action endpoints: `/app/listings/*` (a listing) to ' +
        '`/api/actions/listings/*`, `/app/orders/*` (an order, for its buyer) to `/api/actions/orders/*`, and the ' +
        'action endpoints to themselves. A blink client reads it to turn a shared page URL into a blink.',
      responses: { 200: ActionsJson, 404: ActionError, 429: ActionError, 503: ActionError },
      metadata,
    },
    getListingAction: {
      method: 'GET',
      path: `${ACTIONS_API_PATH}/listings/:listing_id`,
      pathParams: ListingParams,
      summary: 'The buy card of a listing',
      description:
        'Title, price and currency, delivery time and the seller\'s reputation, with the marketplace icon; one ' +
        'button per package when the listing has packages, else one Buy button. A listing that cannot be ordered ' +
        'now (sold, reserved, taken down, seller suspended) answers a disabled card whose `error.message` says why. ' +
        'Unknown or unlisted: 404.',
      responses: { 200: ActionGetResponse, ...actionErrors },
      metadata,
    },
    postListingAction: {
      method: 'POST',
      path: `${ACTIONS_API_PATH}/listings/:listing_id`,
      pathParams: ListingParams,
      query: z.object({ package: PackageKey.optional().describe('The package bought (listings with packages)') }),
      body: ActionPostRequest,
      summary: 'Buy a listing from a wallet (fund transaction)',
      description:
        'Creates the order of `account` for the listing (or resumes its awaiting_payment order for it) without a ' +
        'login and answers its fund transaction, which the wallet signs and sends itself; `links.next` chains to ' +
        'a card confirming the payment. The wallet\'s unpaid-orders limit, the network\'s holds limit and the ' +
        'per-IP actions limit apply; never fee-sponsored. Errors: 400 bad account or package, 404 unknown listing, ' +
        '409 not orderable (own listing, sold, reserved, taken down, insufficient funds, too many unpaid orders), ' +
        '429 limits, 503 chain unavailable.',
      responses: { 200: ActionPostResponse, ...actionErrors },
      metadata,
    },
    listingActionNext: {
      method: 'POST',
      path: `${ACTIONS_API_PATH}/listings/:listing_id/next`,
      pathParams: ListingParams,
      query: z.object({ order_id: Uuid.describe('The order the fund transaction paid') }),
      body: NextActionPostRequest,
      summary: 'Chained card after the buy transaction',
      description:
        'The blink client POSTs the signature of the fund transaction it sent. Answers a completed card: the ' +
        'payment is in escrow (the order is checked on chain now, else when the payment watcher sees it, with or ' +
        'without this call), with the link to the order in the web app, where the buyer signs in to follow it. ' +
        '403 when `account` is not the order\'s buyer wallet.',
      responses: { 200: NextAction, ...actionErrors },
      metadata,
    },
  },
  { strictStatusCodes: true },
);

export type ListingActionsContract = typeof listingActionsContract;
