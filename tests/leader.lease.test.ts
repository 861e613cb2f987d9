/**
 * The leader lease of the background loops (server/src/modules/leader) with two replicas on ONE
 * database: PGlite always (two Prisma clients on one instance), PostgreSQL too when TEST_DATABASE_URL
 * is set (two connection pools: real concurrent sessions).
 *
 * - two whole service instances (composeServices via createApp): only the lease holder runs the loops
 *   (witness: the listing recovery pass); stopping it (SIGTERM path) hands over at once;
 * - a leader whose renewals hang (a paused process) is replaced when its lease expires, and stops its
 *   loops when it wakes up: the two terms never overlap (on an injected clock shared by the replicas and
 *   an in-memory lease with the SQL's rules, tests/helpers/memory-leader-repo.ts: no waiting on wall time);
 * - a stale holder's renewal is refused once another replica took the lease (the term grows);
 * - a replica whose own clock shows the lease lapsed (it was paused) stops acting before it renews.
 */
import { describe, expect, it, vi } from 'vitest';
import { createApp } from '../server/src/app';
import type { AppContext } from '../server/src/context';
import type { Db } from '../server/src/db/client';
import { createLogger } from '../server/src/logger';
import { BACKGROUND_LEASE, createLeaderRepo, LeaderElection } from '../server/src/modules/leader/index';
import { eventually } from './helpers/eventually';
import { FakeChain } from './helpers/fake-chain';
import { MemoryLeaderRepo } from './helpers/memory-leader-repo';
import { testConfig } from './helpers/app';
import { dbBackends, sharedDatabase } from './helpers/shared-db';


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
      await eventually(() => leader.passes.mock.calls.length >= 5, { what: 'the leader runs recovery passes', timeoutMs: 5_000 });
      // several renewal rounds (each moves the row's expiry): the follower never runs a pass
      const leaseRepo = createLeaderRepo(dbs[0]!.prisma);
      const expiries = new Set<number>();
      await eventually(
        async () => expiries.add((await leaseRepo.current(BACKGROUND_LEASE))!.expiresAt.getTime()).size >= 4,
        { what: 'three renewals of the lease', timeoutMs: RENEW * 10, intervalMs: 25 },
      );
      expect(follower.passes).not.toHaveBeenCalled();
      expect(follower.services.leader.isLeader).toBe(false);
      const row = await createLeaderRepo(dbs[0]!.prisma).current('background-loops');
      expect(row?.holder).toBe(leader.services.leader.holder);

      // the leader stops (SIGTERM: services.stop) -> releases the lease -> the follower takes over on its next try
      const t0 = Date.now();
      await leader.services.stop();
      const passesAtStop = leader.passes.mock.calls.length;
      await eventually(() => follower.services.leader.isLeader, { what: 'the follower takes the lease', timeoutMs: TTL });
      expect(Date.now() - t0).toBeLessThan(TTL); // released: no waiting for the TTL
      await eventually(() => follower.passes.mock.calls.length >= 3, { what: 'the new leader runs the passes', timeoutMs: 5_000 });
      expect(leader.passes.mock.calls.length).toBe(passesAtStop); // the old one runs none after its stop
      expect((await createLeaderRepo(dbs[0]!.prisma).current('background-loops'))?.holder).toBe(follower.services.leader.holder);
    } finally {
      await a.services.stop();
      await b.services.stop();
    }
  });

  it('a stale holder cannot renew once another replica took the lease (term + 1); release hands it over at once', async () => {
    const repo = createLeaderRepo((await replicaDb()).prisma);
    const other = createLeaderRepo((await replicaDb()).prisma);
    const name = `stale-${postgres}`;
    // leases of a minute: a loaded machine cannot let one lapse between two statements
    const first = await repo.acquire(name, 'a', 60_000);
    expect(first?.holder).toBe('a');
    expect(first?.term).toBe(1n);
    expect(await other.acquire(name, 'b', 60_000)).toBeNull(); // held
    expect((await repo.acquire(name, 'a', 60_000))?.term).toBe(1n); // renewal keeps the term
    // a's last renewal asks for 1 ms: its lease runs out then (database clock), and b takes it
    expect((await repo.acquire(name, 'a', 1))?.term).toBe(1n);
    const taken = await eventually(() => other.acquire(name, 'b', 60_000), { what: 'b takes the lapsed lease', timeoutMs: 2_000, intervalMs: 5 });
    expect(taken?.holder).toBe('b');
    expect(taken?.term).toBe(2n);
    expect(await repo.acquire(name, 'a', 60_000)).toBeNull(); // the stale holder is refused
    expect(await repo.release(name, 'a')).toBe(false); // and cannot release b's lease
    expect(await other.release(name, 'b')).toBe(true);
    const back = await repo.acquire(name, 'a', 60_000);
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

/**
 * The election's rules on an injected clock: one `now()` (ms) is both the replicas' monotonic clock and
 * the lease's "database clock" (MemoryLeaderRepo, same rules as the SQL above), and the test calls
 * `tick()` (what the renewal timer does) after moving it. The real timers never fire: renewMs is far
 * longer than the test.
 */
describe('leader lease on an injected clock', () => {
  it('a leader that stops renewing (paused process) is replaced when its lease expires and stops its loops when it wakes; terms never overlap', async () => {
    let now = 1_000_000;
    const repo = new MemoryLeaderRepo(() => now);
    // minutes: the real renewal timers never fire within the test, only its tick() calls move the lease
    const TTL = 600_000;
    const RENEW = 300_000;
    const SAFETY = 1_000; // min(1 s, TTL / 10): a replica gives up this long before the database lease ends
    const log: string[] = [];
    /** a's view of itself at the moment b started its loops */
    let aLeaderWhenBElected: boolean | null = null;
    const election = (id: 'a' | 'b'): LeaderElection =>
      new LeaderElection({
        repo,
        name: 'pause',
        holder: id,
        ttlMs: TTL,
        renewMs: RENEW,
        clock: () => now,
        onElected: async () => {
          log.push(`${id} elected`);
          if (id === 'b') aLeaderWhenBElected = a.isLeader;
        },
        onDeposed: async (reason) => void log.push(`${id} deposed: ${reason}`),
      });
    const a = election('a');
    const b = election('b');
    await a.start();
    expect(a.isLeader).toBe(true);
    await b.start();
    expect(b.isLeader).toBe(false);

    // a renews on time while b retries: a keeps the lease
    for (let round = 0; round < 3; round++) {
      now += RENEW;
      await a.tick();
      await b.tick();
      expect([a.isLeader, b.isLeader]).toEqual([true, false]);
    }
    const renewedAt = now;

    // a is frozen (it ticks no more). Its own bound runs out SAFETY before the database lease does
    now = renewedAt + TTL - SAFETY - 1;
    expect(a.isLeader).toBe(true);
    now = renewedAt + TTL - SAFETY;
    expect(a.isLeader).toBe(false);
    // b cannot take the lease before it expired in the database
    now = renewedAt + TTL - 1;
    await b.tick();
    expect(b.isLeader).toBe(false);
    // and takes it at once when it has
    now = renewedAt + TTL;
    await b.tick();
    expect(b.isLeader).toBe(true);
    // no overlap: when b started its loops, a's own bound had already run out, although a was never told
    expect(aLeaderWhenBElected).toBe(false);

    // a wakes up: it deposes itself before its renewal runs, the renewal is refused (b holds the lease)
    now += 1;
    await a.tick();
    expect(log.filter((l) => l.startsWith('a deposed'))).toEqual(['a deposed: the lease lapsed before it was renewed']);
    const row = await repo.current('pause');
    expect(row?.holder).toBe('b');
    expect(row?.term).toBe(2n);
    for (let round = 0; round < 3; round++) {
      now += RENEW;
      await a.tick();
      await b.tick();
    }
    expect(a.isLeader).toBe(false);
    expect(b.isLeader).toBe(true);
    expect(log.filter((l) => l === 'a elected')).toHaveLength(1);
    expect(log.filter((l) => l === 'b elected')).toHaveLength(1);
    await a.stop();
    await b.stop();
    expect(log.at(-1)).toBe('b deposed: stopping');
  });
});
