/**
 * The numbered steps of the demo scripts (`npm run demo`, `npm run demo:operator`): `step(title)` prints
 * "N. title", `done(detail)` prints the detail with the step's time in ms, `summary(label)` the total time
 * (seconds) and each step's (ms). Times are wall clock of this process.
 */
export function demoSteps() {
  const t0 = Date.now();
  let stepStart = Date.now();
  let stepNo = 0;
  const timings: Array<[string, number]> = [];
  return {
    /** when the demo started (ms since the epoch) */
    t0,
    step(title: string): void {
      stepNo += 1;
      stepStart = Date.now();
      console.log(`\n${stepNo}. ${title}`);
    },
    done(detail: string): void {
      const ms = Date.now() - stepStart;
      timings.push([`${stepNo}`, ms]);
      console.log(`   ${detail}  (${ms} ms)`);
    },
    /** "<label> ok in 3.3 s (step 1: 120 ms, ...)" */
    summary(label: string): string {
      return `${label} ok in ${((Date.now() - t0) / 1000).toFixed(1)} s (${timings.map(([s, ms]) => `step ${s}: ${ms} ms`).join(', ')})`;
    },
  };
}
