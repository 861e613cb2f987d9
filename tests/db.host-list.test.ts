/**
 * The service follows the PostgreSQL primary (issue 27 item 2; server/src/db/host-list.ts): a libpq host-list
 * DATABASE_URL (`postgres://h1:p1,h2:p2/db?target_session_attrs=read-write`, what `pg_autoctl show uri`
 * prints) connects to the first server that gives a read-write session, and moves on by itself when that
 * server goes away; requests caught by the loss answer 503 `database-unavailable` with Retry-After.
 * The real failover (pg_auto_failover, kill -9 of the primary) is `npm run test:failover`; here two TCP
 * proxies in front of one server stand for the two nodes. PostgreSQL cases run when TEST_DATABASE_URL is set.
 */
import request from 'supertest';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb } from '../server/src/db/client.js';
import { classifyDbError } from '../server/src/db/errors.js';
import { connectPgClient, parseHostListUrl, preferStandbyUrl } from '../server/src/db/host-list.js';
import { redactUrl } from '../server/src/startup.js';
import { OUTBOX_CHANNEL, outboxSignal } from '../server/src/modules/events/outbox.js';
import { OutboxListener } from '../server/src/modules/events/outbox-listener.js';
import { API, createTestApp, loginAs, type TestApp } from './helpers/app.js';
import { freshPostgres, TEST_DATABASE_URL } from './helpers/db.js';
import { eventually } from './helpers/eventually.js';
import { FakeChain } from './helpers/fake-chain.js';
import { listingBody } from './helpers/marketplace-fixtures.js';
import { freePort } from './helpers/ports.js';
import { tcpProxy } from './helpers/tcp-proxy.js';

describe('parseHostListUrl (libpq multi-host URLs)', () => {
  it('reads the hosts in order, their ports (default 5432), IPv6 literals and target_session_attrs; one URL per host', () => {
    const u = parseHostListUrl('postgres://app:s%40cret@10.0.0.1:5433,db2,[::1]:6000/bazaar?target_session_attrs=read-write&sslmode=prefer&application_name=x')!;
    expect(u.hosts).toEqual([
      { host: '10.0.0.1', port: 5433 },
      { host: 'db2', port: 5432 },
      { host: '::1', port: 6000 },
    ]);
    expect(u.targetSessionAttrs).toBe('read-write');
    // sslmode=prefer (libpq: TLS if offered, else plain) is dropped: node-postgres would demand TLS
    expect(u.urlFor(u.hosts[2]!)).toBe('postgres://app:s%40cret@[::1]:6000/bazaar?application_name=x');
    expect(parseHostListUrl('postgresql://a,b/db')!.targetSessionAttrs).toBe('any');
    expect(parseHostListUrl('postgres://u@h:5432/db?target_session_attrs=primary')!.hosts).toEqual([{ host: 'h', port: 5432 }]);
  });

  it('leaves a plain single-host URL alone and refuses session kinds it does not implement', () => {
    expect(parseHostListUrl('postgres://u@h:5432/db')).toBeNull();
    expect(parseHostListUrl('postgres://u@h:5432/db?sslmode=require')).toBeNull();
    expect(() => parseHostListUrl('postgres://a,b/db?target_session_attrs=read-only')).toThrow(/target_session_attrs=read-only is not supported/);
    expect(() => parseHostListUrl('postgres://a,b/db?target_session_attrs=standby')).toThrow(/target_session_attrs=standby is not supported/);
    // issue 27 item 4: the standby reads client's session kind
    expect(parseHostListUrl('postgres://a,b/db?target_session_attrs=prefer-standby')!.targetSessionAttrs).toBe('prefer-standby');
    expect(preferStandbyUrl('postgres://u@a:1,b:2/db?target_session_attrs=read-write&sslmode=require')).toBe('postgres://u@a:1,b:2/db?target_session_attrs=prefer-standby&sslmode=require');
    expect(preferStandbyUrl('postgres://u@a/db')).toBe('postgres://u@a/db?target_session_attrs=prefer-standby');
    expect(redactUrl('postgres://u:pw@a:1,b:2/db?target_session_attrs=read-write')).toBe('postgres://u:***@a:1,b:2/db?target_session_attrs=read-write');
  });
});

describe.skipIf(!TEST_DATABASE_URL)('PostgreSQL behind a host list', () => {
  const opened: TestApp[] = [];
  afterAll(async () => {
    for (const t of opened) await t.close().catch(() => undefined);
  });
  const hostList = (url: string, ports: number[], query = 'target_session_attrs=read-write') => {
    const u = new URL(url);
    return `postgres://${u.username}@${ports.map((p) => `127.0.0.1:${p}`).join(',')}${u.pathname}?${query}`;
  };

  it('the first server of the list is down: the service connects to the next read-write one and serves reads and writes', async () => {
    const dead = await freePort();
    const proxy = await tcpProxy(new URL(TEST_DATABASE_URL!));
    const t = await createTestApp({ postgres: true, chain: new FakeChain() as never, postgresUrl: (u) => hostList(u, [dead, proxy.port]) });
    opened.push(t);
    const s = await loginAs(t);
    expect((await request(t.app).post(`${API}/listings`).set(s.headers).send(listingBody())).status).toBe(201);
    expect((await request(t.app).get('/readyz')).status).toBe(200);
    expect(proxy.connections).toBeGreaterThan(0);
    await proxy.cut();
  });

  it('the read-write server goes away mid-run: caught requests answer 503 database-unavailable + Retry-After, then the service moves to the next server by itself', async () => {
    const [a, b] = [await tcpProxy(new URL(TEST_DATABASE_URL!)), await tcpProxy(new URL(TEST_DATABASE_URL!))];
    const t = await createTestApp({ postgres: true, chain: new FakeChain() as never, postgresUrl: (u) => hostList(u, [a.port, b.port]) });
    opened.push(t);
    const s = await loginAs(t);
    expect((await request(t.app).post(`${API}/listings`).set(s.headers).send(listingBody())).status).toBe(201);
    // the first read-write server of the list is used (b saw only the probe that looked for it)
    expect(a.connections).toBeGreaterThan(1);
    expect(b.connections).toBeLessThanOrEqual(1);
    const bBefore = b.connections;
    // a write in flight when the server goes: a slow statement on a pooled connection, then the cut
    const inFlight = t.db.prisma.$executeRawUnsafe('SELECT pg_sleep(2)').then(
      () => null,
      (e: unknown) => e,
    );
    await new Promise((r) => setTimeout(r, 200));
    await a.cut();
    expect(classifyDbError(await inFlight)).toMatchObject({ reason: 'unreachable' });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await request(t.app).post(`${API}/listings`).set(s.headers).send(listingBody({ title: `After the cut ${i}` }));
      statuses.push(r.status);
      if (r.status === 503) {
        expect(r.body.type).toBe('https://bazaar.dev/problems/database-unavailable');
        expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
      } else expect(r.status, JSON.stringify(r.body)).toBe(201);
    }
    // at most the first request after the loss fails; then every write goes to the other server
    expect(statuses.slice(1)).toEqual([201, 201, 201, 201]);
    expect(b.connections).toBeGreaterThan(bBefore + 1);
    expect((await request(t.app).get('/readyz')).status).toBe(200);
    await b.cut();
  });

  it('no server left: the public reads sent as prepared statements on the driver answer 503 database-unavailable + Retry-After, not 500', async () => {
    // GET /listings/{id} and GET /categories skip Prisma (db/prepared.ts): their errors are the driver's own
    // (NoAcceptableHostError, pg DatabaseError) with a bare SQLSTATE `code`, which must classify like Prisma's
    const dead = await freePort();
    const proxy = await tcpProxy(new URL(TEST_DATABASE_URL!));
    const t = await createTestApp({ postgres: true, chain: new FakeChain() as never, config: { publicMarketplace: true }, postgresUrl: (u) => hostList(u, [dead, proxy.port]) });
    opened.push(t);
    const s = await loginAs(t);
    const created = await request(t.app).post(`${API}/listings`).set(s.headers).send(listingBody());
    expect(created.status).toBe(201);
    expect((await request(t.app).get(`${API}/listings/${created.body.listing_id}`)).status).toBe(200);
    await proxy.cut();
    for (const path of [`${API}/listings/${created.body.listing_id}`, `${API}/listings/${created.body.listing_id}`, `${API}/categories`]) {
      const r = await request(t.app).get(path);
      expect([r.status, r.body.type], path).toEqual([503, 'https://bazaar.dev/problems/database-unavailable']);
      expect(Number(r.headers['retry-after'])).toBeGreaterThan(0);
    }
  });

  it('no server gives a read-write session (every one read-only, as standbys are): 503 database-unavailable, nothing written', async () => {
    const proxy = await tcpProxy(new URL(TEST_DATABASE_URL!));
    const t = await createTestApp({ postgres: true, chain: new FakeChain() as never });
    opened.push(t);
    // the same server seen as two read-only hosts: every session starts with default_transaction_read_only=on
    const readOnly = hostList(t.postgresUrl!, [proxy.port, new URL(TEST_DATABASE_URL!).port ? Number(new URL(TEST_DATABASE_URL!).port) : 5432], 'target_session_attrs=read-write&options=-c%20default_transaction_read_only%3Don');
    const db = await createDb({ databaseUrl: readOnly, limits: t.ctx.config.db });
    try {
      const err = await db.prisma.$executeRawUnsafe('CREATE TABLE never_created (x int)').then(
        () => null,
        (e: unknown) => e,
      );
      expect(String((err as Error)?.message ?? err)).toMatch(/no read-write PostgreSQL session on any host/);
      expect(classifyDbError(err)).toMatchObject({ reason: 'unreachable' });
      const any = await createDb({ databaseUrl: readOnly.replace('target_session_attrs=read-write', 'target_session_attrs=any'), limits: t.ctx.config.db });
      // with `any` the same sessions are used, and PostgreSQL itself refuses the write (25006): also unreachable
      const refused = await any.prisma.$executeRawUnsafe('CREATE TABLE never_created (x int)').then(
        () => null,
        (e: unknown) => e,
      );
      expect(classifyDbError(refused)).toMatchObject({ reason: 'unreachable' });
      await any.close();
    } finally {
      await db.close();
      await proxy.cut();
    }
  });

  it('the outbox LISTEN connection follows too: after the loss it listens on the next server and wakes the readers again', async () => {
    const database = await freshPostgres();
    const [a, b] = [await tcpProxy(new URL(TEST_DATABASE_URL!)), await tcpProxy(new URL(TEST_DATABASE_URL!))];
    const listener = new OutboxListener({ connectionString: hostList(database.url, [a.port, b.port]), backoff: { initialMs: 50, maxMs: 200 } });
    let wakes = 0;
    const onWake = () => (wakes += 1);
    outboxSignal.on('appended', onWake);
    const notifier = await connectPgClient(database.url);
    try {
      listener.start();
      await eventually(() => listener.listening, { what: 'the listener on the first server', timeoutMs: 10_000, intervalMs: 10 });
      const bBefore = b.connections;
      await a.cut();
      await eventually(() => listener.listening && b.connections > bBefore, { what: 'the listener on the next server', timeoutMs: 10_000, intervalMs: 10 });
      const before = wakes;
      await notifier.query(`SELECT pg_notify('${OUTBOX_CHANNEL}', '')`);
      await eventually(() => wakes > before, { what: 'a notification through the next server', timeoutMs: 10_000, intervalMs: 10 });
    } finally {
      outboxSignal.off('appended', onWake);
      await listener.stop();
      await notifier.end();
      await b.cut();
      await database.drop();
    }
  });
});
