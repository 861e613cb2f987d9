/**
 * Standby reads against a real streaming standby (issue 27 item 4; server/src/db/read-routing.ts): a
 * PostgreSQL 15 primary and a hot standby made with `pg_basebackup -R` in a temp dir (Debian binaries, run as
 * the postgres user), the service on the host list `primary,standby` with DATABASE_STANDBY_READS=on.
 * Replay on the standby is paused to make it fall behind for real. Skipped where the binaries or the
 * postgres user are missing.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API, createTestApp, loginAs, type TestApp } from './helpers/app.js';
import { eventually } from './helpers/eventually.js';
import { FakeChain } from './helpers/fake-chain.js';
import { listingBody } from './helpers/marketplace-fixtures.js';
import { freePort } from './helpers/ports.js';

const BIN = '/usr/lib/postgresql/15/bin';
const canRun = existsSync(`${BIN}/pg_basebackup`) && process.getuid?.() === 0 && (() => {
  try {
    execFileSync('id', ['postgres'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const asPostgres = (cmd: string, args: string[]) => execFileSync('runuser', ['-u', 'postgres', '--', `${BIN}/${cmd}`, ...args], { stdio: 'pipe', timeout: 120_000 });

describe.skipIf(!canRun)('standby reads from a real streaming standby (pg_basebackup, PostgreSQL 15)', () => {
  let dir = '';
  let primaryPort = 0;
  let standbyPort = 0;
  const started: string[] = [];
  let t: TestApp;
  const MAX_LAG_MS = 3000;

  const onStandby = async (sql: string) => {
    const c = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${standbyPort}/postgres` });
    await c.connect();
    try {
      return (await c.query(sql)).rows;
    } finally {
      await c.end();
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'bazaar-standby-'));
    chmodSync(dir, 0o777);
    primaryPort = await freePort();
    standbyPort = await freePort();
    const primary = path.join(dir, 'primary');
    const standby = path.join(dir, 'standby');
    asPostgres('initdb', ['-D', primary, '--auth=trust', '-U', 'postgres', '--no-sync']);
    const opts = (port: number) => `-c port=${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off -c wal_level=replica -c max_wal_senders=4 -c hot_standby=on -c wal_receiver_status_interval=1`;
    asPostgres('pg_ctl', ['-D', primary, '-w', '-l', path.join(dir, 'primary.log'), '-o', opts(primaryPort), 'start']);
    started.push(primary);
    asPostgres('pg_basebackup', ['-h', '127.0.0.1', '-p', String(primaryPort), '-U', 'postgres', '-D', standby, '-R', '-X', 'stream']);
    asPostgres('pg_ctl', ['-D', standby, '-w', '-l', path.join(dir, 'standby.log'), '-o', opts(standbyPort), 'start']);
    started.push(standby);
    t = await createTestApp({
      postgres: true,
      chain: new FakeChain() as never,
      postgresBaseUrl: `postgres://postgres@127.0.0.1:${primaryPort}/postgres`,
      postgresUrl: (u) => {
        const url = new URL(u);
        return `postgres://postgres@127.0.0.1:${primaryPort},127.0.0.1:${standbyPort}${url.pathname}?target_session_attrs=read-write`;
      },
      config: { standbyReads: { enabled: true, maxLagMs: MAX_LAG_MS }, publicMarketplace: true },
    });
  }, 180_000);

  afterAll(async () => {
    await t?.close().catch(() => undefined);
    for (const d of started.reverse()) {
      try {
        asPostgres('pg_ctl', ['-D', d, '-m', 'immediate', 'stop']);
      } catch {
        /* already gone */
      }
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('anonymous listing reads and search go to the standby within the lag bound; a credentialed read goes to the primary', async () => {
    const router = t.db.readRouter;
    const seller = await loginAs(t);
    const created = await request(t.app).post(`${API}/listings`).set(seller.headers).send(listingBody({ title: 'Standby cello lessons' }));
    expect(created.status).toBe(201);
    const id = created.body.listing_id as string;
    // the standby client's session is a hot standby, and it caught up (LSNs equal: lag 0)
    await eventually(
      async () => {
        await router.sampleOnce();
        expect(router.last).toEqual({ inRecovery: true, lagMs: 0 });
        return true;
      },
      { what: 'the standby caught up (lag 0)' },
    );
    const before = { ...router.served };
    expect((await request(t.app).get(`${API}/listings/${id}`)).status).toBe(200);
    expect((await request(t.app).get(`${API}/listings`)).status).toBe(200);
    expect((await request(t.app).get(`${API}/marketplace/search?q=cello`)).status).toBe(200);
    expect(router.served.standby - before.standby).toBeGreaterThanOrEqual(3);
    const standbyServed = router.served.standby;
    expect((await request(t.app).get(`${API}/listings/${id}`).set(seller.headers)).status).toBe(200);
    expect(router.served.standby).toBe(standbyServed);
    expect(router.served.primary).toBeGreaterThan(before.primary);
    // the metrics: the lag, the pool serving anonymous reads now, the reads by pool
    const text = await t.services.metrics.scrape();
    expect(text).toMatch(/^bazaar_db_standby_replay_lag_seconds 0$/m);
    expect(text).toMatch(/^bazaar_db_standby_in_recovery 1$/m);
    expect(text).toMatch(/^bazaar_db_public_read_pool\{pool="standby"\} 1$/m);
    expect(text).toContain(`bazaar_db_public_reads_total{pool="standby"} ${router.served.standby}`);
  });

  it('a standby that stops replaying serves stale reads only up to DATABASE_STANDBY_MAX_LAG_MS, then reads go to the primary, and back once it catches up', async () => {
    const router = t.db.readRouter;
    const seller = await loginAs(t);
    await onStandby('SELECT pg_wal_replay_pause()');
    try {
      const created = await request(t.app).post(`${API}/listings`).set(seller.headers).send(listingBody({ title: 'Paused replay harp' }));
      expect(created.status).toBe(201);
      const id = created.body.listing_id as string;
      // the seller reads her own write through her credential: from the primary
      expect((await request(t.app).get(`${API}/listings/${id}`).set(seller.headers)).status).toBe(200);
      // within the bound an anonymous reader may see the standby's older data: the new listing is not there yet
      await router.sampleOnce();
      expect(router.last!.lagMs!).toBeGreaterThan(0);
      expect(router.last!.lagMs!).toBeLessThanOrEqual(MAX_LAG_MS);
      expect((await request(t.app).get(`${API}/listings/${id}`)).status).toBe(404);
      // past the bound (the last replayed transaction ages while replay is paused): anonymous reads go to the primary
      await eventually(
        async () => {
          await router.sampleOnce();
          expect(router.last?.lagMs ?? 0).toBeGreaterThan(MAX_LAG_MS);
          return true;
        },
        { what: 'the paused standby past the lag bound', timeoutMs: 15_000 },
      );
      expect(router.choose()).toBe('primary');
      expect((await request(t.app).get(`${API}/listings/${id}`)).status).toBe(200);
    } finally {
      await onStandby('SELECT pg_wal_replay_resume()');
    }
    await eventually(
      async () => {
        await router.sampleOnce();
        expect(router.last?.lagMs).toBe(0);
        return true;
      },
      { what: 'the standby caught up after resume' },
    );
    const served = router.served.standby;
    expect((await request(t.app).get(`${API}/listings?limit=5`)).status).toBe(200);
    expect(router.served.standby).toBe(served + 1);
  });
});
