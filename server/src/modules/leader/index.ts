/**
 * Leader module: which replica runs the background loops (see README.md).
 *
 *   const leader = new LeaderElection({ repo: createLeaderRepo(db), name: 'background', ttlMs, renewMs,
 *     onElected: () => loops.start(), onDeposed: () => loops.stop() });
 *   await leader.start();   // first attempt awaited, then renewals every renewMs
 *   await leader.stop();    // stops the loops (awaiting their pass) and releases the lease
 */
export { LeaderElection, newHolderId, type LeaderElectionOptions } from './leader.js';
export { createLeaderRepo, type LeaderRepo, type LeaseRecord } from './leader.repo.js';

/** The lease of the background loops (payment watcher, crank, reconcilers, custody worker, purges). */
export const BACKGROUND_LEASE = 'background-loops';

/** Defaults of LEADER_LEASE_TTL_MS and LEADER_LEASE_RENEW_MS (config.ts). */
export const LEADER_LEASE_DEFAULTS = { ttlMs: 15_000, renewMs: 5_000 } as const;
