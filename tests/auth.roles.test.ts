/**
 * Operator roles (issue 25 part 1) over HTTP, on PGlite (and PostgreSQL for the concurrent revokes when
 * TEST_DATABASE_URL is set): an admin grants and revokes admin, moderator and arbiter; the roles are read
 * per request (a revoke stops the same session at its next request); the last admin keeps her role; a
 * moderator or arbiter cannot reach an admin route or grant herself a role; the arbiter resolves with her
 * own login; operator token scopes exist only while the owner holds the role.
 */
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from './helpers/app.js';
import { TEST_DATABASE_URL } from './helpers/db.js';
import { API, PROBLEM, setup, user, type TestApp, type TestUser } from './helpers/marketplace-fixtures.js';
import { setRoles } from './helpers/roles.js';

const NO_ORDER = '00000000-0000-4000-8000-000000000000';
const roleUrl = (wallet: string, role: string) => `${API}/admin/users/${wallet}/roles/${role}`;

/** Past the auth middleware (the role and the scope were there): anything but 401 and 403 (no order exists; this app has no escrow, so order routes answer 503). */
function expectReached(res: request.Response) {
  expect([401, 403], JSON.stringify(res.body)).not.toContain(res.status);
}

function expectProblem(res: request.Response, status: number, slug: string) {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.type).toBe(PROBLEM(slug));
}

let t: TestApp;
let admin: TestUser;

beforeAll(async () => {
  ({ t } = await setup());
  admin = await user(t);
  await setRoles(t.ctx.db, { id: admin.userId }, ['admin']);
});
afterAll(async () => {
  await t?.close();
});

const me = async (u: TestUser) => (await request(t.app).get(`${API}/user/me`).set(u.headers)).body;
const grant = (by: Record<string, string>, wallet: string, role: string) => request(t.app).put(roleUrl(wallet, role)).set(by);
const revoke = (by: Record<string, string>, wallet: string, role: string) => request(t.app).delete(roleUrl(wallet, role)).set(by);
const typesOf = async (u: TestUser, type: string) =>
  ((await request(t.app).get(`${API}/events?type=${type}&resource_id=${u.userId}`).set(u.headers)).body.data as Array<{ type: string; data: unknown }>);

describe('roles on the user', () => {
  it('GET /user/me shows roles (sorted) and the deprecated role, admin iff roles holds admin', async () => {
    const u = await user(t);
    expect(await me(u)).toMatchObject({ roles: [], role: 'user' });
    await setRoles(t.ctx.db, { id: u.userId }, ['moderator', 'admin', 'admin']);
    expect(await me(u)).toMatchObject({ roles: ['admin', 'moderator'], role: 'admin' });
    await setRoles(t.ctx.db, { id: u.userId }, ['arbiter']);
    expect(await me(u)).toMatchObject({ roles: ['arbiter'], role: 'user' });
  });

  it('the database keeps the deprecated users.role in step, maps a legacy role write to roles, and refuses unknown roles', async () => {
    const u = await user(t);
    const row = () => t.ctx.db.user.findUniqueOrThrow({ where: { id: u.userId }, select: { role: true, roles: true } });
    // a legacy writer (a replica before the change, a hand-run UPDATE) sets role alone: today's admin does all three jobs
    await t.ctx.db.$executeRaw`UPDATE users SET role = 'admin' WHERE id = ${u.userId}::uuid`;
    expect(await row()).toEqual({ role: 'admin', roles: ['admin', 'arbiter', 'moderator'] });
    await t.ctx.db.user.update({ where: { id: u.userId }, data: { roles: ['arbiter'] } });
    expect(await row()).toEqual({ role: 'user', roles: ['arbiter'] });
    await t.ctx.db.user.update({ where: { id: u.userId }, data: { roles: ['moderator', 'admin'] } });
    expect(await row()).toEqual({ role: 'admin', roles: ['admin', 'moderator'] });
    await t.ctx.db.$executeRaw`UPDATE users SET role = 'user' WHERE id = ${u.userId}::uuid`;
    expect(await row()).toEqual({ role: 'user', roles: [] });
    await expect(t.ctx.db.$executeRaw`UPDATE users SET roles = '{root}' WHERE id = ${u.userId}::uuid`).rejects.toThrow();
  });
});

describe('grant and revoke (admins)', () => {
  it('an admin grants and revokes roles; the user gets user.role_granted and user.role_revoked; granting a held role changes nothing', async () => {
    const u = await user(t);
    const g = await grant(admin.headers, u.wallet, 'moderator');
    expect(g.status, JSON.stringify(g.body)).toBe(200);
    expect(g.body).toEqual({ user_id: u.userId, wallet: u.wallet, roles: ['moderator'], role: 'moderator', changed: true });
    const again = await grant(admin.headers, u.wallet, 'moderator');
    expect(again.body).toMatchObject({ roles: ['moderator'], changed: false });
    expect((await grant(admin.headers, u.wallet, 'arbiter')).body.roles).toEqual(['arbiter', 'moderator']);
    expect((await me(u)).roles).toEqual(['arbiter', 'moderator']);

    const r = await revoke(admin.headers, u.wallet, 'moderator');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ roles: ['arbiter'], role: 'moderator', changed: true });
    expect((await revoke(admin.headers, u.wallet, 'moderator')).body).toMatchObject({ roles: ['arbiter'], changed: false });

    // one event per change, to the user (the second grant and revoke wrote none)
    const granted = await typesOf(u, 'user.role_granted');
    expect(granted.map((e) => e.data)).toEqual([
      { user_id: u.userId, wallet: u.wallet, roles: ['arbiter', 'moderator'], role: 'arbiter', changed: true },
      { user_id: u.userId, wallet: u.wallet, roles: ['moderator'], role: 'moderator', changed: true },
    ]);
    expect((await typesOf(u, 'user.role_revoked')).map((e) => e.data)).toEqual([
      { user_id: u.userId, wallet: u.wallet, roles: ['arbiter'], role: 'moderator', changed: true },
    ]);
    // another user does not see them
    const stranger = await user(t);
    expect(await typesOf(stranger, 'user.role_granted')).toEqual([]);
  });

  it('404 for a wallet that never logged in; 400 for an unknown role', async () => {
    const nobody = '11111111111111111111111111111112';
    expectProblem(await grant(admin.headers, nobody, 'arbiter'), 404, 'not-found');
    const u = await user(t);
    expectProblem(await grant(admin.headers, u.wallet, 'root'), 400, 'validation-error');
  });

  it('an admin API key (the command line\'s) holds every role; a key acting for a user holds her roles', async () => {
    const u = await user(t);
    const adminKey = { 'x-api-key': (await createApiKey(t, { isAdmin: true })).key };
    expect((await grant(adminKey, u.wallet, 'moderator')).body.roles).toEqual(['moderator']);
    const userKey = { 'x-api-key': (await createApiKey(t, { userId: u.userId })).key };
    expectProblem(await grant(userKey, u.wallet, 'admin'), 403, 'forbidden');
    await grant(adminKey, u.wallet, 'admin');
    expect((await grant(userKey, u.wallet, 'arbiter')).body.roles).toEqual(['admin', 'arbiter', 'moderator']);
    await revoke(adminKey, u.wallet, 'admin');
    expectProblem(await grant(userKey, u.wallet, 'admin'), 403, 'forbidden');
  });
});

describe('who may grant', () => {
  it('a moderator calling an admin route gets 403 forbidden naming the admin role', async () => {
    const mod = await user(t);
    const target = await user(t);
    await setRoles(t.ctx.db, { id: mod.userId }, ['moderator']);
    const res = await grant(mod.headers, target.wallet, 'moderator');
    expectProblem(res, 403, 'forbidden');
    expect(res.body).toMatchObject({ required_role: 'admin', detail: expect.stringContaining('admin role') });
    expectProblem(await revoke(mod.headers, admin.wallet, 'admin'), 403, 'forbidden');
    expect((await me(target)).roles).toEqual([]);
    expect((await me(admin)).roles).toEqual(['admin']);
  });

  it('privilege escalation: a moderator or arbiter granting herself admin gets 403 and holds no new role; a token of an admin cannot grant', async () => {
    for (const role of ['moderator', 'arbiter'] as const) {
      const u = await user(t);
      await setRoles(t.ctx.db, { id: u.userId }, [role]);
      for (const wanted of ['admin', 'moderator', 'arbiter']) expectProblem(await grant(u.headers, u.wallet, wanted), 403, 'forbidden');
      expect((await me(u)).roles).toEqual([role]);
      expect(await typesOf(u, 'user.role_granted')).toEqual([]);
    }
    // no scope manages roles: even an admin's token with every scope she may hold
    const tok = await request(t.app)
      .post(`${API}/user/tokens`)
      .set(admin.headers)
      .send({ name: 'everything', scopes: ['profile:read', 'profile:write', 'audit:read', 'reports:read'] });
    expect(tok.status, JSON.stringify(tok.body)).toBe(201);
    const stranger = await user(t);
    const res = await grant({ authorization: `Bearer ${tok.body.token}` }, stranger.wallet, 'admin');
    expectProblem(res, 403, 'insufficient-scope');
    expect(res.body.required_scope).toBeNull();
    expect((await me(stranger)).roles).toEqual([]);
  });

  it('a revoked role stops working at the user\'s next request, with the same session', async () => {
    const u = await user(t);
    const other = await user(t);
    await grant(admin.headers, u.wallet, 'admin');
    expect((await grant(u.headers, other.wallet, 'moderator')).status).toBe(200);
    expect((await revoke(admin.headers, u.wallet, 'admin')).status).toBe(200);
    // the very next request with the same JWT, no wait
    expectProblem(await grant(u.headers, other.wallet, 'arbiter'), 403, 'forbidden');
  });

  it('the last admin cannot revoke her own admin role (409 last-admin); with a second admin she can', async () => {
    const { t: t2 } = await setup();
    try {
      const only = await user(t2);
      await setRoles(t2.ctx.db, { id: only.userId }, ['admin', 'arbiter']);
      const res = await request(t2.app).delete(roleUrl(only.wallet, 'admin')).set(only.headers);
      expectProblem(res, 409, 'last-admin');
      expect((await t2.ctx.db.user.findUniqueOrThrow({ where: { id: only.userId } })).roles).toEqual(['admin', 'arbiter']);
      // an admin API key cannot remove the last admin user either
      const key = { 'x-api-key': (await createApiKey(t2, { isAdmin: true })).key };
      expectProblem(await request(t2.app).delete(roleUrl(only.wallet, 'admin')).set(key), 409, 'last-admin');
      // her other roles may go
      expect((await request(t2.app).delete(roleUrl(only.wallet, 'arbiter')).set(only.headers)).status).toBe(200);
      const second = await user(t2);
      expect((await request(t2.app).put(roleUrl(second.wallet, 'admin')).set(only.headers)).status).toBe(200);
      const bye = await request(t2.app).delete(roleUrl(only.wallet, 'admin')).set(only.headers);
      expect(bye.status, JSON.stringify(bye.body)).toBe(200);
      expect(bye.body.roles).toEqual([]);
      expectProblem(await request(t2.app).delete(roleUrl(second.wallet, 'admin')).set(second.headers), 409, 'last-admin');
    } finally {
      await t2.close();
    }
  });

  it.skipIf(!TEST_DATABASE_URL)('two admins revoking each other at once: exactly one revoke succeeds (PostgreSQL)', async () => {
    const { createTestApp } = await import('./helpers/app.js');
    const pgApp = await createTestApp({ postgres: true });
    try {
      const [a, b] = [await user(pgApp), await user(pgApp)];
      await setRoles(pgApp.ctx.db, { id: a.userId }, ['admin']);
      await setRoles(pgApp.ctx.db, { id: b.userId }, ['admin']);
      for (let round = 0; round < 3; round++) {
        const [ra, rb] = await Promise.all([
          request(pgApp.app).delete(roleUrl(b.wallet, 'admin')).set(a.headers),
          request(pgApp.app).delete(roleUrl(a.wallet, 'admin')).set(b.headers),
        ]);
        const statuses = [ra.status, rb.status].sort();
        // one wins; the loser is refused either by the guard (409) or, once her role is gone, by the middleware (403)
        expect(statuses.filter((s) => s === 200), JSON.stringify([ra.body, rb.body])).toHaveLength(1);
        expect(await pgApp.ctx.db.user.count({ where: { roles: { has: 'admin' } } })).toBe(1);
        // restore both for the next round
        await setRoles(pgApp.ctx.db, { id: a.userId }, ['admin']);
        await setRoles(pgApp.ctx.db, { id: b.userId }, ['admin']);
      }
    } finally {
      await pgApp.close();
    }
  }, 60_000);
});

describe('the arbiter', () => {
  it('the arbiter resolves with her own login; a user without the arbiter role, even an admin, gets 403', async () => {
    const arbiter = await user(t);
    await setRoles(t.ctx.db, { id: arbiter.userId }, ['arbiter']);
    // past the role check (the order module decides the rest; tests/e2e.events-orders.test.ts resolves a real one)
    expectReached(await request(t.app).post(`${API}/orders/${NO_ORDER}/resolve`).set(arbiter.headers).send({ buyer_bps: 5000 }));
    expectReached(await request(t.app).post(`${API}/orders/${NO_ORDER}/milestones/1/resolve`).set(arbiter.headers).send({ buyer_bps: 5000 }));
    for (const who of [await user(t), admin]) {
      const res = await request(t.app).post(`${API}/orders/${NO_ORDER}/resolve`).set(who.headers).send({ buyer_bps: 5000 });
      expectProblem(res, 403, 'forbidden');
      expect(res.body.required_role).toBe('arbiter');
    }
  });
});

describe('operator token scopes', () => {
  it('an operator scope only for a holder of its role', async () => {
    const u = await user(t);
    const create = (scopes: string[]) => request(t.app).post(`${API}/user/tokens`).set(u.headers).send({ name: 'op', scopes });
    for (const [scope, role] of [['disputes:resolve', 'arbiter'], ['moderation:write', 'moderator'], ['audit:read', 'admin'], ['reports:read', 'admin']]) {
      const res = await create(['orders:read', scope!]);
      expectProblem(res, 403, 'forbidden');
      expect(res.body.required_role).toBe(role);
    }
    await setRoles(t.ctx.db, { id: u.userId }, ['arbiter']);
    expect((await create(['disputes:resolve'])).status).toBe(201);
    expectProblem(await create(['moderation:write']), 403, 'forbidden');
  });

  it('a token with an operator scope is refused at its next request after the role is revoked, and stays refused after a re-grant', async () => {
    const u = await user(t);
    await grant(admin.headers, u.wallet, 'arbiter');
    const tok = await request(t.app).post(`${API}/user/tokens`).set(u.headers).send({ name: 'desk', scopes: ['disputes:resolve'] });
    expect(tok.status, JSON.stringify(tok.body)).toBe(201);
    const bearer = { authorization: `Bearer ${tok.body.token}` };
    const resolve = () => request(t.app).post(`${API}/orders/${NO_ORDER}/resolve`).set(bearer).send({ buyer_bps: 0 });
    expectReached(await resolve()); // the role and the scope are there
    // a token never gets the admin's view from its user, and an arbiter token no other route
    expectProblem(await request(t.app).get(`${API}/user/me`).set(bearer), 403, 'insufficient-scope');

    expect((await revoke(admin.headers, u.wallet, 'arbiter')).status).toBe(200);
    // the revoke took the scope off her tokens (without that, the role check per request refuses it: next test)
    const refused = await resolve();
    expectProblem(refused, 403, 'insufficient-scope');
    expect(refused.body.required_scope).toBe('disputes:resolve');
    // so granting the role again does not revive this token
    const listed = await request(t.app).get(`${API}/user/tokens`).set(u.headers);
    expect(listed.body.data.find((x: { token_id: string }) => x.token_id === tok.body.token_id).scopes).toEqual([]);
    await grant(admin.headers, u.wallet, 'arbiter');
    expectProblem(await resolve(), 403, 'insufficient-scope');
  });

  it('a revoke made in the database (another replica) refuses the token at its next request too', async () => {
    const u = await user(t);
    await setRoles(t.ctx.db, { id: u.userId }, ['arbiter']);
    const tok = await request(t.app).post(`${API}/user/tokens`).set(u.headers).send({ name: 'desk', scopes: ['disputes:resolve'] });
    const bearer = { authorization: `Bearer ${tok.body.token}` };
    const resolve = () => request(t.app).post(`${API}/orders/${NO_ORDER}/resolve`).set(bearer).send({ buyer_bps: 0 });
    expectReached(await resolve());
    await setRoles(t.ctx.db, { id: u.userId }, []);
    const refused = await resolve();
    expectProblem(refused, 403, 'forbidden');
    expect(refused.body.required_role).toBe('arbiter');
  });
});
