/**
 * The leader lease of the background loops (server/src/modules/leader) with two replicas on ONE
 * database: PGlite always (two Prisma clients on one instance), PostgreSQL too when TEST_DATABASE_URL
 * is set (two connection pools: real concurrent sessions).
 *
 * - two whole service instances (composeServices via createApp): only the lease holder runs the loops
 *   (witness: the listing recovery pass); stopping it (SIGTERM path) hands over at once;
 * - a leader whose renewals hang (a paused process) is replaced within the TTL, and stops its loops
 *   when it wakes up: the two terms never overlap;
 * - a stale holder's renewal is refused once another replica took the lease (the term grows);
 * - a replica whose own clock shows the lease lapsed (it was paused) stops acting before it renews.
 */
import { describe, expect, it, vi } from 'vitest';
import { createApp } from '../server/src/app';
import type { AppContext } from '../server/src/context';
import type { Db } from '../server/src/db/client';
import { createLogger } from '../server/src/logger';
import { createLeaderRepo, LeaderElection, type LeaderRepo } from '../server/src/modules/leader/index';
import { FakeChain } from './helpers/fake-chain';
import { testConfig } from './helpers/app';
import { dbBackends, sharedDatabase } from './helpers/shared-db';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `cond` every 10 ms for up to `ms`; returns the elapsed time when it held, or throws. */
async function waitFor(cond: () => boolean, ms: number, what: string): Promise<number> {
  const t0 = Date.now();
  while (!cond()) {
    if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(10);
  }
  return Date.now() - t0;
}

describe.each(dbBackends)('leader lease on $name', ({ postgres }) => {
  const shared = sharedDatabase(postgres);
  const dbs: Db[] = [];
  /** one database client per replica, all on the same database */
  const replicaDb = async () => {
    const db = await shared.client();
    dbs.push(db);
    return db;
  };

  it('two service instances: only the lease holder runs the background loops; stopping it hands them over at once', async () => {
    const TTL = 4_000;
    const RENEW = 300;
    const replica = async () => {
      const db = await replicaDb();
      const config = testConfig({ leaderLease: { ttlMs: TTL, renewMs: RENEW } });
      const ctx: AppContext = {
        config,
        db: db.prisma,
        log: createLogger('silent'),
        chain: new FakeChain(),
        now: () => new Date(),
        listings: { recoveryIntervalMs: 20 },
        webAppDir: null,
      };
      const services = createApp(ctx).services;
      const passes = vi.spyOn(services.listings.recovery, 'runOnce');
      return { services, passes };
    };
    const a = await replica();
    const b = await replica();
    await Promise.all([a.services.start(), b.services.start()]);
    try {
      const [leader, follower] = a.services.leader.isLeader ? [a, b] : [b, a];
      expect(leader.services.leader.isLeader).toBe(true);
      expect(follower.services.leader.isLeader).toBe(false);
      await waitFor(() => leader.passes.mock.calls.length >= 5, 5_000, 'the leader runs recovery passes');
      // several renewal rounds: the follower never runs a pass
      await sleep(RENEW * 3);
      expect(follower.passes).not.toHaveBeenCalled();
      expect(follower.services.leader.isLeader).toBe(false);
      const row = await createLeaderRepo(dbs[0]!.prisma).current('background-loops');
      expect(row?.holder).toBe(leader.services.leader.holder);

      // the leader stops (SIGTERM: services.stop) -> releases the lease -> the follower takes over on its next try
      const t0 = Date.now();
      await leader.services.stop();
      const passesAtStop = leader.passes.mock.calls.length;
      await waitFor(() => follower.services.leader.isLeader, TTL, 'the follower takes the lease');
      expect(Date.now() - t0).toBeLessThan(TTL); // released: no waiting for the TTL
      await waitFor(() => follower.passes.mock.calls.length >= 3, 5_000, 'the new leader runs the passes');
      expect(leader.passes.mock.calls.length).toBe(passesAtStop); // the old one runs none after its stop
      expect((await createLeaderRepo(dbs[0]!.prisma).current('background-loops'))?.holder).toBe(follower.services.leader.holder);
    } finally {
      await a.services.stop();
      await b.services.stop();
    }
  });

  it('a leader that stops renewing (paused process) is replaced within the TTL and stops its loops when it wakes; terms never overlap', async () => {
    const name = `pause-${postgres}`;
    const TTL = 800;
    const RENEW = 100;
    const log: string[] = [];
    let paused: Promise<void> | null = null;
    let resume = () => undefined as void;
    /** a's view of itself at the moment b started its loops */
    let aLeaderWhenBElected: boolean | null = null;
    let a: LeaderElection | null = null;
    const pausable = (repo: LeaderRepo): LeaderRepo => ({
      ...repo,
      async acquire(...args) {
        if (paused) await paused; // the process is frozen before its renewal runs
        return repo.acquire(...args);
      },
    });
    const election = async (id: 'a' | 'b', wrap: (r: LeaderRepo) => LeaderRepo = (r) => r) =>
      new LeaderElection({
        repo: wrap(createLeaderRepo((await replicaDb()).prisma)),
        name,
        holder: id,
        ttlMs: TTL,
        renewMs: RENEW,
        onElected: async () => {
          log.push(`${id} elected`);
          if (id === 'b') aLeaderWhenBElected = a!.isLeader;
        },
        onDeposed: async (reason) => void log.push(`${id} deposed: ${reason}`),
      });
    a = await election('a', pausable);
    await a.start();
    expect(a.isLeader).toBe(true);
    const b = await election('b');
    await b.start();
    expect(b.isLeader).toBe(false);

    // freeze a before its next renewal
    paused = new Promise<void>((r) => (resume = () => r()));
    const frozenAt = Date.now();
    await waitFor(() => b.isLeader, TTL * 3, 'b takes over');
    expect(Date.now() - frozenAt).toBeLessThan(TTL + 2 * RENEW + 500); // within the TTL (+ one retry)
    // no overlap: when b started its loops, a's own bound had already run out (it gives up before
    // the database lease expires), although a was never told anything
    expect(aLeaderWhenBElected).toBe(false);

    // a wakes up: its renewal is refused (b holds the lease), it deposes itself and stays follower
    paused = null;
    resume();
    await waitFor(() => log.some((l) => l.startsWith('a deposed')), 2_000, 'a deposes');
    const row = await createLeaderRepo((await replicaDb()).prisma).current(name);
    expect(row?.holder).toBe('b');
    expect(row?.term).toBe(2n);
    await sleep(RENEW * 3);
    expect(a.isLeader).toBe(false);
    expect(b.isLeader).toBe(true);
    expect(log.filter((l) => l === 'a elected')).toHaveLength(1);
    await a.stop();
    await b.stop();
  });

  it('a stale holder cannot renew once another replica took the lease (term + 1); release hands it over at once', async () => {
    const repo = createLeaderRepo((await replicaDb()).prisma);
    const other = createLeaderRepo((await replicaDb()).prisma);
    const name = `stale-${postgres}`;
    const first = await repo.acquire(name, 'a', 200);
    expect(first?.holder).toBe('a');
    expect(first?.term).toBe(1n);
    expect(await other.acquire(name, 'b', 200)).toBeNull(); // held
    expect((await repo.acquire(name, 'a', 200))?.term).toBe(1n); // renewal keeps the term
    await sleep(260);
    const taken = await other.acquire(name, 'b', 60_000);
    expect(taken?.holder).toBe('b');
    expect(taken?.term).toBe(2n);
    expect(await repo.acquire(name, 'a', 200)).toBeNull(); // the stale holder is refused
    expect(await repo.release(name, 'a')).toBe(false); // and cannot release b's lease
    expect(await other.release(name, 'b')).toBe(true);
    const back = await repo.acquire(name, 'a', 200);
    expect(back?.holder).toBe('a');
    expect(back?.term).toBe(3n);
  });

  it('a process restarted after a crash with the same holder id (PGlite: main.ts uses pglite:<DATA_DIR>) takes its lease back at once', async () => {
    const name = `restart-${postgres}`;
    const opts = { name, holder: 'pglite:/srv/data', ttlMs: 60_000, renewMs: 20_000, onDeposed: async () => undefined };
    const crashed = new LeaderElection({ ...opts, repo: createLeaderRepo((await replicaDb()).prisma), onElected: async () => undefined });
    await crashed.start();
    expect(crashed.isLeader).toBe(true); // then the process dies: no stop(), no release; the row is valid for a minute
    let elected = 0;
    const restarted = new LeaderElection({ ...opts, repo: createLeaderRepo((await replicaDb()).prisma), onElected: async () => void (elected += 1) });
    await restarted.start();
    expect(restarted.isLeader).toBe(true);
    expect(elected).toBe(1);
    // a process with its own id (PostgreSQL replicas) waits for the lease instead
    const other = new LeaderElection({ ...opts, holder: 'host:2:b', repo: createLeaderRepo((await replicaDb()).prisma), onElected: async () => undefined });
    await other.start();
    expect(other.isLeader).toBe(false);
    await Promise.all([other.stop(), restarted.stop(), crashed.stop()]);
  });

  it('a replica whose clock shows it was paused past its lease stops its loops before renewing', async () => {
    let offset = 0;
    const events: string[] = [];
    const repo = createLeaderRepo((await replicaDb()).prisma);
    const acquire = vi.spyOn(repo, 'acquire');
    const e = new LeaderElection({
      repo,
      name: `clock-${postgres}`,
      holder: 'a',
      ttlMs: 60_000,
      renewMs: 20_000,
      clock: () => performance.now() + offset,
      onElected: async (l) => void events.push(`elected ${l.term}`),
      onDeposed: async () => {
        events.push(`deposed (acquire calls so far: ${acquire.mock.calls.length})`);
      },
    });
    await e.start();
    expect(e.isLeader).toBe(true);
    offset = 61_000; // the process slept through its lease
    expect(e.isLeader).toBe(false);
    await e.tick();
    // deposed first, before its renewal statement ran; then the renewal succeeded (the database row was
    // still valid: nobody took it) and the loops start again
    expect(events[0]).toBe('elected 1');
    expect(events[1]).toBe('deposed (acquire calls so far: 1)');
    expect(events[2]).toMatch(/^elected /);
    expect(e.isLeader).toBe(true);
    await e.stop();
    expect(events.at(-1)).toMatch(/^deposed/);
  });
});
