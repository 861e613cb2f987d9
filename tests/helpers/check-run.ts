/**
 * The shape shared by the stand-alone check scripts that `.ci/run` runs outside vitest (tests/replicas.nginx.ts,
 * tests/failover.pgaf.ts, tests/rpc-failover.ts): named checks printed as `ok  - name: detail` / `FAIL - ...`,
 * cleanups run in reverse order at the end, a deadline, and the last line `N passed, N failed` that `.ci/run`
 * adds to its totals. Exit status 0 only when at least one check ran and every check passed.
 */
export interface CheckRun {
  /** seconds since the script started, e.g. `12.3s` */
  sec(): string;
  /** one progress line `[tag 12.3s] msg` */
  log(msg: string): void;
  /** record (and print) one named check */
  check(name: string, ok: boolean, detail?: string): void;
  /** whether every check so far passed (e.g. keep a work directory for inspection otherwise) */
  allOk(): boolean;
  /** what to undo at the end (processes, temp dirs), run last-registered first */
  cleanups: Array<() => Promise<void> | void>;
  /** run `main`, then the cleanups and the summary; a crash or the deadline counts as one failed check */
  run(main: () => Promise<void>): void;
}

/**
 * A check run tagged `tag` (the log prefix); `timeoutMs`: the deadline after which the run stops with a failed
 * check "<what> ran to the end".
 */
export function checkRun(tag: string, timeoutMs: number, what: string): CheckRun {
  const t0 = Date.now();
  const sec = () => `${((Date.now() - t0) / 1000).toFixed(1)}s`;
  const results: Array<{ name: string; ok: boolean; detail: string }> = [];
  const cleanups: Array<() => Promise<void> | void> = [];
  function check(name: string, ok: boolean, detail = ''): void {
    results.push({ name, ok, detail });
    console.log(`${ok ? 'ok  ' : 'FAIL'} - ${name}${detail ? `: ${detail}` : ''}`);
  }
  function run(main: () => Promise<void>): void {
    let crashed: unknown = null;
    let finishing = false;
    const deadline = setTimeout(() => {
      console.error(`[${tag}] no result within ${Math.round(timeoutMs / 60_000)} minutes: stopping`);
      crashed = new Error('timeout');
      void finish();
    }, timeoutMs);
    async function finish(): Promise<void> {
      if (finishing) return;
      finishing = true;
      clearTimeout(deadline);
      if (crashed) check(`${what} ran to the end`, false, String((crashed as Error)?.stack ?? crashed));
      for (const c of cleanups.reverse()) await Promise.resolve(c()).catch((e) => console.error(`[${tag}] cleanup:`, e));
      const passed = results.filter((r) => r.ok).length;
      console.log(`[${tag}] ${sec()} total`);
      console.log(`${passed} passed, ${results.length - passed} failed`);
      process.exit(results.length > 0 && passed === results.length ? 0 : 1);
    }
    main()
      .catch((err) => {
        crashed = err;
      })
      .finally(() => void finish());
  }
  return { sec, log: (msg) => console.log(`[${tag} ${sec()}] ${msg}`), check, allOk: () => results.every((r) => r.ok), cleanups, run };
}
