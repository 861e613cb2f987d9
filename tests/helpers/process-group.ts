/**
 * Stopping a child started with `detached: true` (its own process group: npm -> sh -> tsx -> node) so that
 * nothing of it outlives the harness: npm exits at the first SIGTERM while the server under it may still be
 * draining, so waiting for npm's own exit left servers running after the check scripts ended.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** Whether any process of group `pgid` is still alive (signal 0 probes without signalling). */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * SIGTERM to every process of group `pgid`, then wait until the whole group is gone, SIGKILL to what is left
 * after `graceMs` (default 15 s). Resolves when no process of the group is left (or after a further 5 s).
 */
export async function stopProcessGroup(pgid: number | undefined, graceMs = 15_000): Promise<void> {
  if (pgid === undefined || !groupAlive(pgid)) return;
  try {
    process.kill(-pgid, 'SIGTERM');
  } catch {
    return;
  }
  for (const [signal, wait] of [['SIGKILL', graceMs], [null, 5_000]] as const) {
    const until = Date.now() + wait;
    while (groupAlive(pgid) && Date.now() < until) await sleep(100);
    if (!groupAlive(pgid) || !signal) return;
    try {
      process.kill(-pgid, signal);
    } catch {
      return;
    }
  }
}
