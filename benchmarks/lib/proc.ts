/**
 * CPU time of processes from Linux /proc (benchmarks only): what a process (and its descendants) has
 * used so far, so a harness can report CPU per unit of work, a figure that does not depend on how busy
 * the machine is.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's times (getconf CLK_TCK, 100 when unknown). */
const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** Fields of /proc/<pid>/stat after the command name (index 0 = state), or null when the process is gone. */
function statFields(pid: number): string[] | null {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
  } catch {
    return null;
  }
}

/** CPU time (user + system) the process `pid` has used so far, ms (/proc/<pid>/stat utime + stime); NaN when unknown. */
export function cpuMsOf(pid: number | undefined): number {
  const f = pid === undefined ? null : statFields(pid);
  return f ? ((Number(f[11]) + Number(f[12])) * 1000) / CLOCK_TICKS : NaN;
}

/**
 * CPU time of `pid` and every live descendant (e.g. a PostgreSQL postmaster and its backends), ms, plus
 * what exited children that were waited for used (cutime + cstime of each); NaN when `pid` is unknown.
 */
export function cpuMsOfTree(pid: number | undefined): number {
  if (pid === undefined || !statFields(pid)) return NaN;
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const f = statFields(Number(name));
    if (!f) continue;
    const ppid = Number(f[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
  }
  let total = 0;
  const queue = [pid];
  while (queue.length) {
    const p = queue.shift()!;
    const f = statFields(p);
    if (f) total += ((Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) * 1000) / CLOCK_TICKS;
    queue.push(...(children.get(p) ?? []));
  }
  return total;
}
