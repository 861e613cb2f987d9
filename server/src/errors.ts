/**
 * The one domain error of the service. Services, repositories and the chain adapter throw
 * `DomainError(slug, detail, extensions?)`; http/problem.ts maps it to an RFC 9457
 * `application/problem+json` response in one place.
 *
 * `slug` is a problem slug from the contract (contract/src/problems.ts `problemTypes`), or one of
 * the server-only slugs below (not part of the contract: never a documented outcome of a route).
 * `extensions` are extra members of the problem body (e.g. `errors` for validation failures).
 */
import { problemTypes, type ProblemSlug } from '@bazaar/contract';

/** Every problem the server answers is in the contract's table (contract/src/problems.ts). */
export type AnyProblemSlug = ProblemSlug;

export function problemInfo(slug: AnyProblemSlug): { status: number; title: string } {
  return (problemTypes as Record<string, { status: number; title: string }>)[slug] ?? problemTypes['internal-error'];
}

export class DomainError extends Error {
  readonly slug: AnyProblemSlug;
  readonly detail: string;
  readonly extensions: Record<string, unknown>;
  /** HTTP status of the slug (from the problems table). */
  readonly status: number;
  /** seconds for the `Retry-After` response header (RFC 9110 §10.2.3), when the refusal ends at a known time */
  retryAfterSeconds?: number;

  constructor(slug: AnyProblemSlug, detail: string, extensions: Record<string, unknown> = {}) {
    super(detail);
    this.name = 'DomainError';
    this.slug = slug;
    this.detail = detail;
    this.extensions = extensions;
    this.status = problemInfo(slug).status;
  }
}

/** What landed on chain before a later step (the database write) failed. */
export interface LandedChainAction {
  action: string;
  order_id: string;
  /** signature of the confirmed transaction (base58) */
  signature: string;
}

/**
 * An error raised after a chain action was confirmed: `cause` is the failure (typically the database
 * write that should have recorded it), `landed` what happened on chain. http/problem.ts answers 503
 * service-unavailable (the database was unavailable) or 500, with `chain_transaction: landed` in the
 * body either way, so the client knows the money moved and that the order converges to it (the intent
 * was recorded as sent with its signature before sending; the reconciler confirms it).
 */
export class ChainActionLandedError extends Error {
  readonly landed: LandedChainAction;

  constructor(cause: unknown, landed: LandedChainAction) {
    super(`${landed.action} landed on chain (${landed.signature}) but recording it failed`, { cause });
    this.name = 'ChainActionLandedError';
    this.landed = landed;
  }
}
