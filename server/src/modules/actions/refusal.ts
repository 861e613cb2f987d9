/**
 * The one error type of the Solana Actions (listing and order actions): the HTTP layer answers it with its
 * `status` and the spec's body `{ message }` (ActionError; http/actions/common.ts `actionError` builds it).
 */
import { DomainError } from '../../errors.js';

/** A refusal answered as `status` with `{ message }` (`message` is shown to the user as it is). */
export class ActionRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** seconds (`Retry-After`), for 429 / 503 */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'ActionRefusal';
  }
}

/**
 * An error as the spec's error, or null for an unexpected one (a 500): an ActionRefusal as it is; a
 * DomainError (orders, listings, auth modules) with its status and its `detail`, already written for the
 * user, and its Retry-After (5 s for chain-unavailable).
 */
export function refusalOf(err: unknown): ActionRefusal | null {
  if (err instanceof ActionRefusal) return err;
  if (err instanceof DomainError) {
    return new ActionRefusal(err.status, err.detail, err.retryAfterSeconds ?? (err.slug === 'chain-unavailable' ? 5 : undefined));
  }
  return null;
}
