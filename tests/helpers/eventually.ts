/**
 * The one way the tests wait for a condition: `eventually(fn, { what })` polls `fn` until it returns a
 * value that is neither `false`, `undefined` nor `null` (or, with `expect` inside, until it stops
 * throwing), and resolves with that value. On timeout it REJECTS, naming `what` and the last value or
 * error seen; it never resolves silently, so a wait cannot hide a failure behind a passing test.
 *
 * Polls at `intervalMs` (default 20 ms) for at most `timeoutMs` (default 10 s), measured on the wall
 * clock: use it for conditions that other processes or timers make true, never to let time pass.
 */
export interface EventuallyOptions {
  /** what is awaited, in words ("the webhook delivery", "order X funded"); named in the timeout error */
  what: string;
  /** give up after this many milliseconds (default 10 000) */
  timeoutMs?: number;
  /** poll every this many milliseconds (default 20) */
  intervalMs?: number;
}

/** A value `eventually` keeps waiting on. */
type Pending = false | undefined | null;

/**
 * Poll `fn` until it returns (or resolves to) something other than false/undefined/null without
 * throwing; resolve with it. Rejects with `Error("timed out after <ms> ms waiting for <what> (last: ...)")`.
 */
export async function eventually<T>(fn: () => T | Promise<T>, opts: EventuallyOptions): Promise<Exclude<T, Pending>> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const intervalMs = opts.intervalMs ?? 20;
  const t0 = Date.now();
  let last: string = 'never polled';
  for (;;) {
    try {
      const v = await fn();
      if (v !== false && v !== undefined && v !== null) return v as Exclude<T, Pending>;
      last = `returned ${String(v)}`;
    } catch (err) {
      last = `threw ${err instanceof Error ? err.message : String(err)}`;
    }
    if (Date.now() - t0 >= timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${opts.what} (last poll ${last})`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
