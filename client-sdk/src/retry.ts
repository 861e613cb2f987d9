/**
 * Honouring `Retry-After` (RFC 9110 section 10.2.3) once: the service answers 429 rate-limited (and
 * 503 service-unavailable / database-unavailable / chain-unavailable) with the number of seconds to wait.
 */

/**
 * Seconds the response asks to wait: `Retry-After` as delta-seconds ("7") or an HTTP-date ("Wed, 21
 * Oct 2026 07:28:00 GMT", counted from `nowMs`, at least 0); null when the header is absent or unreadable.
 */
export function retryAfterSeconds(headers: Pick<Headers, 'get'> | undefined, nowMs = Date.now()): number | null {
  const value = headers?.get('retry-after')?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - nowMs) / 1000));
}

export interface RetryAfterOptions {
  /** statuses to retry (default [429]) */
  statuses?: readonly number[];
  /** a longer wait is not waited: the answer is returned as it is (default 60 s) */
  maxWaitSeconds?: number;
  /** how to wait (default setTimeout); tests pass their own */
  sleep?: (ms: number) => Promise<void>;
}

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Run `call`; when the answer's status is retryable (429 by default) and it carries a `Retry-After` of
 * at most `maxWaitSeconds`, wait that long and run `call` once more, returning the second answer
 * whatever it is. Any other answer (or a missing / too long Retry-After) is returned at once.
 */
export async function withRetryAfter<R extends { status: number; headers?: Pick<Headers, 'get'> }>(
  call: () => Promise<R>,
  opts: RetryAfterOptions = {},
): Promise<R> {
  const first = await call();
  if (!(opts.statuses ?? [429]).includes(first.status)) return first;
  const wait = retryAfterSeconds(first.headers);
  if (wait === null || wait > (opts.maxWaitSeconds ?? 60)) return first;
  await (opts.sleep ?? defaultSleep)(wait * 1000);
  return call();
}
