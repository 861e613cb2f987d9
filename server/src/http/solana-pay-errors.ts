/**
 * Solana Pay 1.2 structured errors (draft: solana-pay PR #270, SPEC1.2.md "Error Handling") for the wallet-facing
 * transaction-request routes, GET/POST /api/v1/orders/{order_id}/solana-pay.
 *
 * Decision (documented in the contract, orders.contract.ts `createSolanaPayTransaction`): those routes answer
 * BOTH formats in one body. The draft's error is `{ code, message, details?, retryAfterMs? }` in a JSON body; the
 * service's rule is RFC 9457 problem+json with a stable `type`. Problem details allow extension members, so the
 * body is the problem plus the draft's four members; the HTTP status is the problem's status, and the SP code is
 * chosen so that its recommended status (contract `SOLANA_PAY_ERROR_STATUS`) IS that status. Wallets read `code`
 * and `message` (and show at least 80 characters of it), clients of the API read `type`. The content type stays
 * `application/problem+json` (a JSON media type: wallets parse the body with `response.json()`).
 *
 * `details` carries the problem's machine-readable extensions (`order_status`, `action`, field `errors`, ...);
 * `retryAfterMs` is the `Retry-After` header in milliseconds, set when the service says when to come back (429
 * rate limits, 503 chain or database unavailable, a sponsorship budget that refills).
 */
import { SOLANA_PAY_ERROR_STATUS, type SolanaPayErrorCode } from '@bazaar/contract';
import type { AnyProblemSlug } from '../errors.js';
import { isSolanaPayPath } from './cors.js';

export { isSolanaPayPath };

/** The members the draft adds to an error body. */
export interface SolanaPayErrorFields {
  code: SolanaPayErrorCode;
  message: string;
  details?: Record<string, unknown>;
  retryAfterMs?: number;
}

/**
 * Order statuses after which a Solana Pay POST can never fund the order again because it was paid (or is paid by
 * the service from a custodial balance): SP_ALREADY_PAID. The other refusals of `pay` (payment window closed, order
 * expired unpaid, a later milestone lapsed back to scheduled) are SP_PRICE_EXPIRED: the quote behind the payment
 * request no longer stands.
 */
const NEVER_PAID = new Set(['awaiting_payment', 'expired', 'scheduled']);

/** Slugs of FS's fee sponsorship that mean "the sponsor will not pay now" (issue 26 item 5); any 503 otherwise is maintenance. */
const SPONSOR_SLUG = /sponsor/;

/**
 * The draft's code for a problem answered on a Solana Pay route: by the problem's status, refined by the slug and the
 * order status (`extensions.order_status`) for 409 and 503. Never a code whose recommended status differs from `status`.
 */
export function solanaPayCode(slug: AnyProblemSlug, status: number, extensions: Record<string, unknown> = {}): SolanaPayErrorCode {
  switch (status) {
    case 400:
      return 'SP_INVALID_REQUEST';
    case 403:
      return 'SP_UNAUTHORIZED_ACCOUNT';
    case 404:
      return 'SP_RESOURCE_NOT_FOUND';
    case 409: {
      if (slug === 'invalid-state-transition') {
        const orderStatus = typeof extensions.order_status === 'string' ? extensions.order_status : '';
        const custodial = /custodial balance/.test(String(extensions.detail ?? ''));
        return NEVER_PAID.has(orderStatus) && !custodial ? 'SP_PRICE_EXPIRED' : 'SP_ALREADY_PAID';
      }
      // insufficient-funds and the like: the wallet cannot pay this price now
      return 'SP_PRICE_EXPIRED';
    }
    case 429:
      return 'SP_RATE_LIMITED';
    case 503:
      return SPONSOR_SLUG.test(slug) ? 'SP_FEE_PAYER_UNAVAILABLE' : 'SP_MAINTENANCE';
    default:
      return status >= 500 ? 'SP_SERVER_ERROR' : 'SP_INVALID_REQUEST';
  }
}

/**
 * The draft's members for a problem on a Solana Pay route. `retryAfterSeconds`: the response's `Retry-After` (seconds),
 * when set. The code's recommended status equals `status` except for statuses the draft has no code for (e.g. 413,
 * 502), which get the generic SP_INVALID_REQUEST / SP_SERVER_ERROR.
 */
export function solanaPayErrorFields(
  slug: AnyProblemSlug,
  status: number,
  detail: string,
  extensions: Record<string, unknown> = {},
  retryAfterSeconds?: number,
): SolanaPayErrorFields {
  const code = solanaPayCode(slug, status, { ...extensions, detail });
  const details = Object.keys(extensions).length ? { ...extensions } : undefined;
  return {
    code,
    message: detail,
    ...(details ? { details } : {}),
    ...(retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) ? { retryAfterMs: Math.max(0, Math.round(retryAfterSeconds * 1000)) } : {}),
  };
}

/** Statuses the draft recommends per code (re-exported for tests). */
export { SOLANA_PAY_ERROR_STATUS };
