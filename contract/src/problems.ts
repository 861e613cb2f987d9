/**
 * Errors: RFC 9457 problem details, served as `application/problem+json`.
 *
 * `type` is `https://bazaar.dev/problems/<slug>` with a slug from `problemTypes`; `title` is the
 * slug's fixed title; `detail` says what went wrong for this request (e.g. which login check failed);
 * `instance` is the request path; `request_id` matches the `X-Request-Id` response header;
 * `trace_id` (only when the service exports OpenTelemetry traces) is the W3C trace id of the request's trace,
 * the same id its log lines carry;
 * `errors` lists field errors of validation failures (`path` is a JSON-pointer-like dotted path
 * such as `body.price`, `query.limit`).
 *
 * Every route declares the statuses it can return in its `responses` and the slugs in
 * `metadata.problems`; 400 validation-error / malformed-json, 429 rate-limited, 500 internal-error, 503
 * service-unavailable and the transport-layer problems (408, 413, 414, 431: `transportProblems`) are common
 * to all routes (`commonProblems`).
 */
import { z } from 'zod';
import type { RouteAccessRule } from './access.js';
import { c, ExplorerUrl, named, type RouteAuth } from './common.js';
import { OPERATOR_ROLES } from './access.js';

export const PROBLEM_BASE_URI = 'https://bazaar.dev/problems/';
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export const problemTypes = {
  'validation-error': {
    status: 400,
    title: 'Validation error',
    description:
      'The path, query, headers or body do not match the schema or a server-side rule; see `errors`. Text anywhere in ' +
      'the body (values and member names), the query or the path that cannot be stored is refused on every route, ' +
      'before authentication: a NUL character (`code` invalid_text_nul) or an unpaired UTF-16 surrogate ' +
      '(invalid_text_surrogate, e.g. the JSON escape "\\ud800" alone); so is a bidirectional embedding, override or ' +
      'isolate control (U+202A..U+202E, U+2066..U+2069: `code` invalid_text_bidi; they reorder how text displays, e.g. ' +
      'a title shown as "Invoice ogoL...exe.pdf"; the marks U+200E, U+200F and U+061C are allowed: they cannot reverse ' +
      'a run); so is a body nested deeper than 32 levels (too_deep).',
  },
  'malformed-json': { status: 400, title: 'Malformed JSON', description: 'The request body is not valid JSON.' },
  'malformed-request': {
    status: 400,
    title: 'Malformed request',
    description:
      'The request cannot be read: malformed percent-encoding in a path parameter (`errors` names it), a body that ' +
      'does not decode under its Content-Encoding, or a body shorter than its Content-Length.',
  },
  'webhook-url-refused': {
    status: 400,
    title: 'Webhook URL refused',
    description:
      'The webhook URL is not http(s), carries credentials, does not resolve, or resolves to a loopback, private, ' +
      'link-local or otherwise non-public address (SSRF guard; the operator may allow private addresses).',
  },
  'idempotency-key-missing': {
    status: 400,
    title: 'Idempotency-Key missing',
    description: 'The route requires an Idempotency-Key header.',
  },
  unauthorized: {
    status: 401,
    title: 'Unauthorized',
    description: 'No credential was sent (Bearer token, X-API-Key header or bazaar_session cookie).',
  },
  'invalid-token': {
    status: 401,
    title: 'Invalid token',
    description: 'The credential is malformed, has a bad signature, or the API key is unknown or revoked.',
  },
  'token-expired': { status: 401, title: 'Token expired', description: 'The access token has expired; log in again.' },
  'login-failed': {
    status: 401,
    title: 'Login failed',
    description:
      'Wallet login (verify_login) refused; the `reason` member names the SIWS field that failed (one of ' +
      '`loginFailureReasons`: message, address, signature, domain, uri, version, chain_id, nonce, issued_at, ' +
      'expiration_time, not_before) and `detail` says why.',
  },
  forbidden: {
    status: 403,
    title: 'Forbidden',
    description:
      'The caller is authenticated but may not do this (e.g. not the seller of the order; an operator route without ' +
      'the operator role it needs: the detail names the role).',
  },
  'account-suspended': {
    status: 403,
    title: 'Account suspended',
    description:
      'A moderator suspended (until `until`, or indefinitely: `until` null) or banned (`account_status` banned) this ' +
      'account (issue 25): it cannot log in (verify_login), list (create or edit a listing, send an offer), order ' +
      '(POST /orders, accept an offer) or report. Its credentials still read, and its open orders still settle: it ' +
      'delivers, is paid, withdraws (README "Moderation").',
  },
  'cross-origin-refused': {
    status: 403,
    title: 'Cross-origin request refused',
    description:
      'A state-changing request authenticated by the session cookie came from a page on another origin (Origin, or ' +
      'Sec-Fetch-Site) that is neither this service nor listed in CORS_ORIGINS (cross-site request forgery guard). ' +
      'Send the token as Authorization: Bearer, or have the operator list the page\'s origin.',
  },
  'insufficient-scope': {
    status: 403,
    title: 'Insufficient scope',
    description:
      'The personal access token lacks a scope this request needs (`required_scope` names it): the route\'s scope, or ' +
      'the money scope of a request that moves the user\'s money (`capability` names it, e.g. custodial-payment; see ' +
      'the operation\'s `x-bazaar-token-scopes`); or the route takes no token at all (token management, operator routes ' +
      'without an operator scope).',
  },
  'not-found': {
    status: 404,
    title: 'Not found',
    description: 'The resource does not exist or is not visible to the caller.',
  },
  'route-not-found': { status: 404, title: 'Route not found', description: 'No route matches method and path.' },
  'custody-disabled': {
    status: 404,
    title: 'Custody disabled',
    description:
      'Deposits, withdrawals and custodial order payment exist only when the operator runs custodial accounts ' +
      '(CUSTODY_ENABLED); this service does not.',
  },
  'method-not-allowed': {
    status: 405,
    title: 'Method not allowed',
    description: 'The path exists but not with this method; the `Allow` header lists the methods it has.',
  },
  'request-timeout': {
    status: 408,
    title: 'Request timeout',
    description:
      'The request (headers and body) did not arrive within the server\'s request timeout; the connection is closed.',
  },
  conflict: { status: 409, title: 'Conflict', description: 'The request conflicts with the current state of a resource.' },
  'invalid-state-transition': {
    status: 409,
    title: 'Invalid state transition',
    description: 'The action is not allowed in the current state of the resource; see the state tables.',
  },
  'milestone-out-of-order': {
    status: 409,
    title: 'Milestone out of order',
    description:
      'Milestones are funded in order: the body must name the next unfunded milestones of the order, consecutively ' +
      '(`next` names the first one that may be funded).',
  },
  'milestone-open': {
    status: 409,
    title: 'A milestone is open',
    description:
      'The order cannot end while one of its milestones is awaiting payment, in progress, delivered or disputed (`open` ' +
      'names them): settle it first (or let an unpaid one lapse).',
  },
  'custodial-milestones-unsupported': {
    status: 409,
    title: 'Milestones need a wallet',
    description:
      'An order with several milestones is paid milestone by milestone with the buyer\'s wallet; the custodial balance ' +
      'pays one-milestone orders only. Order with payment_source wallet.',
  },
  'idempotency-key-in-use': {
    status: 409,
    title: 'Idempotency-Key in use',
    description: 'A request with the same Idempotency-Key is still being processed; retry later.',
  },
  'listing-unavailable': {
    status: 409,
    title: 'Listing unavailable',
    description:
      'The listing is not available for purchase (reserved: its open orders fill its capacity or its stock; sold: its stock is ' +
      'sold; or unlisted; or a moderator suspended or banned its seller, issue 25).',
  },
  'listing-taken-down': {
    status: 409,
    title: 'Listing taken down',
    description:
      'A moderator took the listing down (issue 25): it cannot be ordered (POST /orders, a package, a custom offer sent ' +
      'or accepted) until it is restored. Orders created before the takedown settle as usual.',
  },
  'report-exists': {
    status: 409,
    title: 'Report exists',
    description:
      'The caller already has an open report of this target (`report_id` names it): one open report per reporter and ' +
      'target, until a moderator acts on it or dismisses it.',
  },
  'already-appealed': {
    status: 409,
    title: 'Already appealed',
    description: 'The seller appealed this takedown already: one appeal per takedown (`appealed_at` says when).',
  },
  'own-listing': { status: 409, title: 'Own listing', description: 'A seller cannot order their own listing.' },
  'offer-expired': {
    status: 409,
    title: 'Offer expired',
    description: 'The custom offer passed its expires_at before it was accepted (it is now expired); ask the seller for a new one.',
  },
  'offer-not-pending': {
    status: 409,
    title: 'Offer not pending',
    description:
      'The custom offer was declined, withdrawn or accepted already: it can no longer be accepted, declined or withdrawn ' +
      '(`offer_status` says which).',
  },
  'review-not-allowed': {
    status: 409,
    title: 'Review not allowed',
    description: 'The order is not completed or resolved, or it has already been reviewed.',
  },
  'tip-not-allowed': {
    status: 409,
    title: 'Tip not allowed',
    description:
      'The order\'s buyer may not tip now; `why` says why: `not_paid_out` (the order has not paid its seller yet: ' +
      'a tip follows a completed order, one resolved with a seller share, or a settled milestone with a seller ' +
      'payout), `custodial` (the order was paid from the custodial balance: tip from a wallet order), ' +
      '`too_many_pending` (3 tips of the order await their transaction already), `above_maximum` (more than ' +
      'TIP_MAX_PERCENT_OF_ORDER % of the order\'s amount: `max_amount` and `max_amount_base_units`), `expired` ' +
      '(the tip\'s transaction can no longer land: tip again).',
  },
  'too-many-unpaid-orders': {
    status: 409,
    title: 'Too many unpaid orders',
    description:
      'The buyer already holds the maximum number of unpaid orders (each holds its listing for the payment ' +
      'window); pay one or let it expire first. `unpaid_orders` and `limit` say how many.',
  },
  'last-admin': {
    status: 409,
    title: 'Last admin',
    description:
      'Revoking this admin role would leave the marketplace without an admin user (issue 25): grant the role to ' +
      'another user first. Only the command line (`npm run admin:grant`) can make an admin when none is left.',
  },
  'webhook-limit-reached': {
    status: 409,
    title: 'Webhook limit reached',
    description:
      'The user already has the maximum number of webhook endpoints (each event is sent to every one of them); ' +
      'delete one first. `limit` says how many.',
  },
  'insufficient-funds': {
    status: 409,
    title: 'Insufficient funds',
    description:
      'The balance does not cover the request: the available custodial balance (a withdrawal\'s amount + fee, or a ' +
      'custodial order payment), or, for an order paid from a wallet, the buyer wallet\'s balance on chain (its token ' +
      'balance of the order\'s currency must cover this order and its other unpaid orders; its SOL the network fee and ' +
      'the rent of the escrow accounts the fund transaction creates). `required_base_units` and `available_base_units` ' +
      'say by how much; for a wallet order `balance` names which one is short (`token`: base units of `currency`, ' +
      '`sol`: lamports) and `wallet` the wallet read, and `needed` and `available` list every asset checked (the ' +
      'order\'s currency, then SOL) in base units and UI units with the decimals and symbol. Checked when the order is ' +
      'created, again before a fresh fund transaction is issued (POST /orders/{order_id}/payment) and before a signed ' +
      'one is sent (POST /orders/{order_id}/transaction); a fund transaction the cluster refuses for the payer\'s lack ' +
      'of funds (no token account, insufficient funds, fees or rent) answers this problem too, not 502. Only the paying ' +
      'wallet of the caller\'s own order is read and disclosed, to its buyer (the public Solana Pay route discloses ' +
      'nothing: the wallet simulates the transaction itself).',
  },
  'hold-cooldown': {
    status: 409,
    title: 'Hold cool-down',
    description:
      'An order of this buyer (the same user, wallet or client network) for this listing expired unpaid recently: the ' +
      'listing cannot be held by the same buyer again until `retry_at` (also `Retry-After`, seconds), so one buyer ' +
      'cannot keep a listing blocked by ordering it again and again without paying.',
  },
  'evidence-closed': {
    status: 409,
    title: 'Evidence closed',
    description:
      'The dispute no longer takes evidence: its `evidence_due_at` (opened_at + DISPUTE_EVIDENCE_HOURS) has passed, or it ' +
      'was resolved or refunded (`evidence_due_at` and `dispute_status` say which).',
  },
  'evidence-limit-reached': {
    status: 409,
    title: 'Evidence limit reached',
    description: 'The party has submitted as many pieces of evidence as a dispute takes from one party (`limit`).',
  },
  'revision-limit-reached': {
    status: 409,
    title: 'Revision limit reached',
    description:
      'The buyer has requested every revision the order includes (`revisions_included`, frozen from the package at ' +
      'order time); `revisions_included` and `revisions_used` say so. The buyer confirms, disputes or proposes a settlement instead.',
  },
  'no-pending-proposal': {
    status: 409,
    title: 'No pending proposal',
    description: 'There is no pending deadline-extension or settlement proposal on the order (none was made, or it was answered, withdrawn or replaced).',
  },
  'proposal-expired': {
    status: 409,
    title: 'Proposal expired',
    description: 'The proposal lapsed at its `expires_at`; the proposer may make a new one.',
  },
  'proposal-changed': {
    status: 409,
    title: 'Proposal changed',
    description:
      'The terms named in the request (`buyer_bps` of a settlement, `new_deadline` of an extension) are not those of the ' +
      'pending proposal (it was replaced meanwhile): nothing was accepted. `pending` shows the current terms.',
  },
  'token-account-required': {
    status: 409,
    title: 'Token account required',
    description:
      'A payout goes to a token account that does not exist, and the service does not pay its rent (it would be the ' +
      'payee\'s to recover by closing it: docs/threat-model.md#who-pays-for-what-on-chain). `token_account`, `owner` and `mint` name it: the payee ' +
      '(or anyone) creates that associated token account, then the action is retried (the auto-release crank retries ' +
      'by itself).',
  },
  'payload-too-large': {
    status: 413,
    title: 'Payload too large',
    description: 'The request body exceeds the body limit (BODY_LIMIT, 100 kB by default), on any route and method.',
  },
  'uri-too-long': {
    status: 414,
    title: 'URI too long',
    description:
      'The request target (path and query) exceeds 8 KiB; longer than the 16 kB of the request line and headers it ' +
      'is 431 header-fields-too-large. Send long filters in fewer values.',
  },
  'unsupported-media-type': {
    status: 415,
    title: 'Unsupported media type',
    description: 'Request bodies must be application/json.',
  },
  'idempotency-key-reused': {
    status: 422,
    title: 'Idempotency-Key reused',
    description: 'The Idempotency-Key was already used with a different request body.',
  },
  'too-many-holds': {
    status: 429,
    title: 'Too many holds',
    description:
      'The client network (an IPv4 address, or an IPv6 /64) already holds the maximum number of unpaid orders, each ' +
      'holding its listing during its payment window; `holds` and `limit` say how many, `Retry-After` when the ' +
      'earliest of them lapses at the latest.',
  },
  'sponsorship-limit': {
    status: 429,
    title: 'Fee sponsorship limit reached',
    description:
      'Fee sponsorship (the service\'s sponsor key paying the network fee and the escrow rent of a wallet order, so a ' +
      'wallet with 0 SOL can pay) is limited per account and per client network per UTC day; this request would pass ' +
      '`limit` (`scope` `account` or `ip`). `resets_at` and `Retry-After` say when it resets. Only returned when the ' +
      'buyer wallet cannot pay the fee and rent itself: holding `required_lamports` of SOL lets it pay unsponsored now.',
  },
  'sponsorship-budget-exhausted': {
    status: 503,
    title: 'Fee sponsorship budget exhausted',
    description:
      'The fee sponsor\'s daily budget (lamports of fees and escrow rent, `budget_lamports`) is spent, or its balance ' +
      'cannot cover this order (`reason` `daily_budget` or `sponsor_balance`); `resets_at` and `Retry-After` say when ' +
      'the daily budget resets. Only returned when the buyer wallet cannot pay the fee and rent itself: holding ' +
      '`required_lamports` of SOL lets it pay unsponsored now.',
  },
  'rate-limited': {
    status: 429,
    title: 'Rate limited',
    description: 'Too many requests; wait for the number of seconds in the Retry-After header.',
  },
  'header-fields-too-large': {
    status: 431,
    title: 'Request header fields too large',
    description: 'The request line and headers exceed 16 kB (URL included); the connection is closed.',
  },
  'internal-error': { status: 500, title: 'Internal error', description: 'An unexpected error; quote request_id.' },
  'chain-transaction-failed': {
    status: 502,
    title: 'Chain transaction failed',
    description: 'A Solana transaction was rejected or failed; `detail` names the program error.',
  },
  'chain-unavailable': {
    status: 503,
    title: 'Chain unavailable',
    description: 'The Solana RPC cannot be reached; retry later (Retry-After).',
  },
  'database-unavailable': {
    status: 503,
    title: 'Database unavailable',
    description:
      'The database cannot be reached: its primary failed or is being replaced (a failover), or no server of the ' +
      'configured host list accepts writes. Nothing of the request was kept unless it had committed; retry after ' +
      'the Retry-After seconds with the same Idempotency-Key, which returns the first outcome if it did commit. ' +
      'When a chain action had already landed, `chain_transaction` {action, signature} says so, as for ' +
      'service-unavailable.',
  },
  'service-unavailable': {
    status: 503,
    title: 'Service unavailable',
    description:
      'A dependency of the service is down or overloaded (the database unreachable, its connection pool or a ' +
      'statement/lock timeout exhausted) or the server is shutting down; retry after the Retry-After seconds. ' +
      'When a chain action had already landed, `chain_transaction` {action, signature} says so: the order ' +
      'converges to it (the reconciler records it) and a retry of the action returns the updated order.',
  },
} as const satisfies Record<string, { status: number; title: string; description: string }>;

/**
 * `reason` of a 401 login-failed problem: the SIWS field (or check) that refused the login, and why.
 * Stable values: clients may branch on them.
 */
export const loginFailureReasons = {
  message: 'the signed bytes are not a SIWS message',
  address: 'the message\'s address is not the body `address`',
  signature: 'the signature is not 64 bytes or does not verify over the signed bytes with `address`',
  domain: 'the message\'s domain is not an allowed SIWS domain, or not the domain its nonce was issued for',
  uri: 'the message\'s URI is not on an allowed origin (this service\'s public URL, or http(s) on an allowed SIWS domain)',
  version: 'Version is not 1',
  chain_id: 'Chain ID is not the cluster this service runs on',
  nonce: 'no Nonce, or one this service did not issue to `address`, already used or expired',
  issued_at: 'Issued At is not an RFC 3339 time, lies in the future, or before the nonce was issued',
  expiration_time: 'Expiration Time is not an RFC 3339 time or has passed',
  not_before: 'Not Before is not an RFC 3339 time or has not come yet',
} as const;
export type LoginFailureReason = keyof typeof loginFailureReasons;
export const LoginFailureReason = z.enum(Object.keys(loginFailureReasons) as [LoginFailureReason, ...LoginFailureReason[]]);

export type ProblemSlug = keyof typeof problemTypes;
export type ProblemStatus = (typeof problemTypes)[ProblemSlug]['status'];
type StatusOf<S extends ProblemSlug> = (typeof problemTypes)[S]['status'];

export const problemSlugs = Object.keys(problemTypes) as ProblemSlug[];
/** A problem `type`: `https://bazaar.dev/problems/<slug>`. */
export type ProblemTypeUri = `${typeof PROBLEM_BASE_URI}${ProblemSlug}`;
export const problemTypeUri = (slug: ProblemSlug): ProblemTypeUri => `${PROBLEM_BASE_URI}${slug}`;
/** Every documented problem `type`, in `problemTypes` order (the enum of `Problem.type`). */
export const problemTypeUris = problemSlugs.map(problemTypeUri) as [ProblemTypeUri, ...ProblemTypeUri[]];

export const ProblemFieldError = named(
  'ProblemFieldError',
  z.object({
    path: z.string().describe('Location of the offending value, e.g. "body.price" or "query.limit"'),
    message: z.string(),
    code: z.string().describe('Machine-readable reason, e.g. "too_small", "invalid_string", "too_many_decimals"'),
  }),
);

/**
 * One asset of an insufficient-funds problem: an amount in base units and in UI units of the asset
 * (`amount` = base_units / 10^decimals, as decimal text so that 1e-7 never appears).
 */
export const FundsAmount = named(
  'FundsAmount',
  z.object({
    asset: z
      .enum(['token', 'sol'])
      .describe('token: the order\'s currency (an SPL token); sol: native SOL (lamports) for network fees and rent'),
    currency: z.string().describe('Symbol, e.g. "USDC" or "SOL"'),
    mint: z.string().nullable().describe('SPL mint of the token; null for native SOL'),
    mint_explorer_url: ExplorerUrl('the mint').nullable(),
    decimals: z.number().int().min(0).max(18),
    base_units: z.string().regex(/^(0|[1-9][0-9]*)$/).describe('Amount in base units (lamports for SOL), decimal string'),
    amount: z.string().regex(/^(0|[1-9][0-9]*)(\.[0-9]+)?$/).describe('The same in UI units, exact decimal text, e.g. "16.91"'),
  }),
  'An amount of one asset (insufficient-funds `needed` and `available`)',
);
export type FundsAmount = z.infer<typeof FundsAmount>;

/**
 * The structured error codes of the Solana Pay 1.2 draft (solana-pay PR #270, SPEC1.2.md "Error Handling") with
 * their recommended HTTP statuses. The Solana Pay transaction-request routes (GET/POST
 * /orders/{order_id}/solana-pay) answer problem+json whose body also carries the draft's members `code`,
 * `message`, `details` and `retryAfterMs` (server/src/http/solana-pay-errors.ts maps each problem to a code whose
 * recommended status is the problem's status).
 */
export const SOLANA_PAY_ERROR_STATUS = {
  SP_UNSUPPORTED_VERSION: 400,
  SP_INVALID_REQUEST: 400,
  SP_MALFORMED_URL: 400,
  SP_UNSUPPORTED_PARAMETER: 400,
  SP_AMOUNT_TOO_PRECISE: 400,
  SP_AMOUNT_OUT_OF_RANGE: 400,
  SP_UNAUTHORIZED_ACCOUNT: 403,
  SP_RESOURCE_NOT_FOUND: 404,
  SP_ALREADY_PAID: 409,
  SP_UNSUPPORTED_CURRENCY: 409,
  SP_PRICE_EXPIRED: 409,
  SP_RATE_LIMITED: 429,
  SP_SERVER_ERROR: 500,
  SP_MAINTENANCE: 503,
  SP_FEE_PAYER_UNAVAILABLE: 503,
} as const;
export type SolanaPayErrorCode = keyof typeof SOLANA_PAY_ERROR_STATUS;
export const SOLANA_PAY_ERROR_CODES = Object.keys(SOLANA_PAY_ERROR_STATUS) as [SolanaPayErrorCode, ...SolanaPayErrorCode[]];

const problemShape = {
  type: z
    .enum(problemTypeUris)
    .describe(
      'https://bazaar.dev/problems/<slug>, one of the documented problem types (new ones may be added within v1)',
    ),
  title: z.string(),
  status: z.number().int().min(400).max(599),
  detail: z.string(),
  instance: z
    .string()
    .describe('The request path; `urn:uuid:<request_id>` for 408 and 431, answered before the request was read whole'),
  request_id: z.string().describe('Same value as the X-Request-Id response header'),
  trace_id: z
    .string()
    .regex(/^[0-9a-f]{32}$/)
    .optional()
    .describe(
      'W3C trace id (32 lowercase hex digits) of the request\'s OpenTelemetry trace: present when the service ' +
        'exports traces (OTEL_EXPORTER_OTLP_ENDPOINT set), absent otherwise; quote it with request_id',
    ),
  errors: z.array(ProblemFieldError).optional().describe('Field errors (validation-error)'),
  program_error: z
    .string()
    .optional()
    .describe('Escrow/token program error name (chain-transaction-failed), e.g. "InvalidState"'),
  reason: LoginFailureReason.optional().describe('login-failed only: the SIWS field that refused the login'),
  required_role: z
    .enum(OPERATOR_ROLES)
    .optional()
    .describe('forbidden on an operator route only: the operator role the route needs and the caller does not hold now'),
  account_status: z
    .enum(['suspended', 'banned'])
    .optional()
    .describe('account-suspended only: suspended (until `until`, or indefinitely) or banned'),
  until: z
    .string()
    .datetime({ offset: true })
    .nullable()
    .optional()
    .describe('account-suspended only: when the suspension ends (ISO 8601, UTC); null: indefinitely (or banned)'),
  held_until: z
    .string()
    .datetime({ offset: true })
    .optional()
    .describe(
      'listing-unavailable only, while unpaid orders hold the listing\'s last units: when the first of those holds lapses ' +
        'at the latest (ISO 8601, UTC); absent when paid orders fill its capacity or it is sold out',
    ),
  needed: z
    .array(FundsAmount)
    .optional()
    .describe('insufficient-funds (wallet payments): what the payment needs, per asset (the order\'s currency, then SOL)'),
  available: z
    .array(FundsAmount)
    .optional()
    .describe('insufficient-funds (wallet payments): what the paying wallet holds, per asset, in the order of `needed`'),
  code: z
    .enum(SOLANA_PAY_ERROR_CODES)
    .optional()
    .describe(
      'Solana Pay transaction-request routes only (GET/POST /orders/{order_id}/solana-pay): the Solana Pay 1.2 draft\'s ' +
        'structured error code (SPEC1.2 "Error Handling"); the HTTP status is the problem\'s, which is the code\'s ' +
        'recommended one. Wallets handle the error by `code`; `type` stays the stable problem slug',
    ),
  message: z
    .string()
    .optional()
    .describe('Solana Pay transaction-request routes only: the human-readable error for the wallet to show (= `detail`)'),
  details: z
    .object({})
    .passthrough()
    .optional()
    .describe('Solana Pay transaction-request routes only: machine-readable context (the problem\'s extension members, e.g. `order_status`, `errors`)'),
  retryAfterMs: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe(
      'Solana Pay transaction-request routes only: when the request may succeed if retried (429, 503), how long to ' +
        'wait in milliseconds (the `Retry-After` header in ms)',
    ),
  chain_transaction: named(
    'ChainTransactionLanded',
    z.object({
      action: z.string().describe('The order action, e.g. "confirm"'),
      order_id: z.string(),
      signature: z.string().describe('Signature of the confirmed transaction'),
      explorer_url: ExplorerUrl('the confirmed transaction'),
    }),
  )
    .optional()
    .describe(
      'service-unavailable / database-unavailable / internal-error only: the chain action landed before the failure; the order ' +
        'converges to it without another transaction',
    ),
};

/**
 * The zod type of `Problem`, as a named interface: declaration files then name it instead of spelling out
 * its shape at each of the ~400 error responses of the contract (which made them megabytes large).
 */
export interface ProblemSchema extends z.ZodObject<typeof problemShape, 'passthrough'> {}

export const Problem: ProblemSchema = named(
  'Problem',
  z.object(problemShape).passthrough(),
  'RFC 9457 problem details (application/problem+json)',
);
export type Problem = z.infer<typeof Problem>;
export type ProblemFieldError = z.infer<typeof ProblemFieldError>;

/** The response entry of every error status: the Problem schema served as application/problem+json. */
export const ProblemResponse = c.otherResponse({ contentType: PROBLEM_CONTENT_TYPE, body: Problem });

type ProblemResponses<S extends ProblemSlug> = { [K in StatusOf<S>]: typeof ProblemResponse };

/** `{ <status>: ProblemResponse }` for each slug's status. */
export function problemResponses<const S extends readonly ProblemSlug[]>(slugs: S): ProblemResponses<S[number]> {
  const out: Record<number, typeof ProblemResponse> = {};
  for (const slug of slugs) out[problemTypes[slug].status] = ProblemResponse;
  return out as ProblemResponses<S[number]>;
}

/**
 * Problems the transport layer answers on any operation, before or without its route running
 * (server/src/http/server.ts, app.ts), each as problem+json: 408 request-timeout (headers or body not
 * received in time), 413 payload-too-large (a declared or actual body over BODY_LIMIT, on any method), 414
 * uri-too-long (a request target over 8 KiB), 431 header-fields-too-large (request line and headers over
 * Node's 16 kB). openapi.json refers to them as shared `components/responses`. 429 rate-limited and 503
 * service-unavailable (and its database case, database-unavailable) are in `commonProblems` too.
 */
export const transportProblems = ['request-timeout', 'payload-too-large', 'uri-too-long', 'header-fields-too-large'] as const;

/**
 * Problems every route may return (added through the router's commonResponses), the transport problems
 * included. 405 method-not-allowed answers requests that match no route: listed in `problemTypes`, not per
 * route.
 */
export const commonProblems = [
  'validation-error',
  'malformed-json',
  'malformed-request',
  'rate-limited',
  'internal-error',
  'service-unavailable',
  'database-unavailable',
  ...transportProblems,
] as const;
export const commonResponses = problemResponses(commonProblems);

/**
 * Problems of any authenticated route: a missing or bad credential (401), a personal access token
 * without a scope the request needs (403 insufficient-scope; scopes.ts), and a cookie-authenticated write
 * from another origin (403 cross-origin-refused; only on routes with unsafe methods, but listed on all:
 * one set per auth level).
 */
export const authProblems = ['unauthorized', 'invalid-token', 'token-expired', 'insufficient-scope', 'cross-origin-refused'] as const;
/** Problems of any route with a JSON body. */
export const bodyProblems = ['payload-too-large', 'unsupported-media-type'] as const;

/**
 * Route metadata read by the server:
 * - `access`: who may call the route (access.ts: public / signed in with a token scope / operator role, its
 *   money capability, whether PUBLIC_MARKETPLACE opens it); the one statement of it, required on every route.
 * - `auth`: `access.auth`, copied by `routeErrors` for readers that need the level only: 'public' (no
 *   credential), 'user' (any authenticated user: JWT, API key, session cookie or token), 'role' (an
 *   operator role: `access.role`).
 * - `actors`: documentation of resource-level roles enforced by the service (e.g. 'buyer', 'seller').
 * - `problems`: the problem slugs the route can return besides `commonProblems`.
 * - `idempotent`: the route takes the Idempotency-Key header: `true` = required, `'optional'` = accepted.
 */
export interface RouteMetadata {
  access: RouteAccessRule;
  auth: RouteAuth;
  actors?: readonly string[];
  problems: readonly ProblemSlug[];
  idempotent?: boolean | 'optional';
}

/**
 * Build a route's error `responses` and `metadata` from its access (`access.*`, access.ts) and the slugs
 * it can return. Authenticated routes get 401 and 403 insufficient-scope (`authProblems`) automatically.
 */
export function routeErrors<
  const A extends RouteAccessRule,
  const S extends readonly ProblemSlug[],
  const R extends readonly string[] = [],
>(access: A, slugs: S, extra: { actors?: R; idempotent?: boolean | 'optional' } = {}) {
  const all = (access.auth === 'public' ? [...slugs] : [...authProblems, ...slugs]) as ProblemSlug[];
  const unique = [...new Set(all)];
  return {
    responses: problemResponses(unique) as ProblemResponses<
      A['auth'] extends 'public' ? S[number] : S[number] | (typeof authProblems)[number]
    >,
    metadata: {
      access,
      auth: access.auth,
      problems: unique,
      ...(extra.actors ? { actors: extra.actors } : {}),
      ...(extra.idempotent ? { idempotent: extra.idempotent } : {}),
    } as { access: A; auth: A['auth']; problems: readonly ProblemSlug[]; actors?: R; idempotent?: boolean | 'optional' },
  };
}
