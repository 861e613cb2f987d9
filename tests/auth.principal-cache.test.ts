/**
 * A verified JWT's principal is reused for PRINCIPAL_CACHE_TTL_MS (5 s) without the HMAC check and
 * the user lookup (issue 14: the per-request Prisma user lookup of Bearer reads), never past the
 * token's expiry; after the TTL a changed role or a removed user takes effect. An operator's principal
 * (a user holding a role, issue 25) is never reused.
 */
import { describe, expect, it } from 'vitest';
import type { User } from '../server/src/db/client.js';
import type { AuthRepo } from '../server/src/modules/auth/auth.repo.js';
import { createAuthService, PRINCIPAL_CACHE_TTL_MS } from '../server/src/modules/auth/auth.service.js';
import { signAccessToken } from '../server/src/modules/auth/tokens.js';
import { DomainError } from '../server/src/errors.js';

const SECRET = 'principal-cache-secret-principal-cache-secret';

function setup(ttlMs?: number) {
  let clock = new Date('2026-11-23T12:00:00Z');
  const users = new Map<string, User>();
  let lookups = 0;
  const repo = {
    async getUser(id: string) {
      lookups++;
      return users.get(id) ?? null;
    },
    isAccessTokenRevoked: async () => false,
  } as unknown as AuthRepo;
  const auth = createAuthService({
    repo,
    settings: { siwsDomains: ['bazaar.test'], publicBaseUrl: 'http://bazaar.test', siwsChainId: 'localnet', loginNonceTtlSeconds: 300, clockSkewSeconds: 60, jwtSecret: SECRET, jwtTtlSeconds: 60 },
    now: () => clock,
    presentUser: async () => ({}) as never,
    ...(ttlMs !== undefined ? { principalCacheTtlMs: ttlMs } : {}),
  });
  const user = { id: 'c0ffee00-0000-4000-8000-000000000001', wallet: 'WalletOne', role: 'user', roles: [] as string[] } as User;
  users.set(user.id, user);
  return {
    auth,
    user,
    users,
    lookups: () => lookups,
    advance: (ms: number) => (clock = new Date(clock.getTime() + ms)),
    token: async (ttlSeconds = 60) => (await signAccessToken({ sub: user.id, wallet: user.wallet }, SECRET, ttlSeconds, clock)).token,
  };
}

describe('JWT principal reuse', () => {
  it('one user lookup for repeated requests with the same token within the TTL', async () => {
    const s = setup();
    const token = await s.token();
    for (let i = 0; i < 5; i++) expect(await s.auth.principalFromJwt(token)).toMatchObject({ userId: s.user.id, isAdmin: false });
    expect(s.lookups()).toBe(1);
  });

  it('after the TTL the user is read again: a role change or a removed user takes effect', async () => {
    const s = setup();
    const token = await s.token();
    await s.auth.principalFromJwt(token);
    s.users.set(s.user.id, { ...s.user, roles: ['admin'] });
    expect((await s.auth.principalFromJwt(token)).isAdmin).toBe(false); // within the TTL
    s.advance(PRINCIPAL_CACHE_TTL_MS);
    expect((await s.auth.principalFromJwt(token)).isAdmin).toBe(true);
    s.users.delete(s.user.id);
    s.advance(PRINCIPAL_CACHE_TTL_MS);
    const err = await s.auth.principalFromJwt(token).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).slug).toBe('invalid-token');
  });

  it('an operator\'s principal is never reused: a revoked role stops at the next request, within the TTL', async () => {
    const s = setup();
    s.users.set(s.user.id, { ...s.user, roles: ['admin', 'arbiter'] });
    const token = await s.token();
    expect(await s.auth.principalFromJwt(token)).toMatchObject({ isAdmin: true, roles: ['admin', 'arbiter'] });
    s.users.set(s.user.id, { ...s.user, roles: ['arbiter'] });
    expect(await s.auth.principalFromJwt(token)).toMatchObject({ isAdmin: false, roles: ['arbiter'] }); // no clock advance
    s.users.set(s.user.id, { ...s.user, roles: [] });
    expect((await s.auth.principalFromJwt(token)).roles).toEqual([]);
    expect(s.lookups()).toBe(3);
  });

  it('a role change on this process (forgetUser) takes effect on a reused principal at once', async () => {
    const s = setup();
    const token = await s.token();
    await s.auth.principalFromJwt(token);
    s.users.set(s.user.id, { ...s.user, roles: ['moderator'] });
    expect((await s.auth.principalFromJwt(token)).roles).toEqual([]); // reused within the TTL
    s.auth.forgetUser(s.user.id);
    expect((await s.auth.principalFromJwt(token)).roles).toEqual(['moderator']);
  });

  it('never past the token expiry', async () => {
    const s = setup(60_000);
    const token = await s.token(2); // expires in 2 s, the TTL is 60 s
    await s.auth.principalFromJwt(token);
    s.advance(2_000);
    const err = await s.auth.principalFromJwt(token).catch((e: unknown) => e);
    expect((err as DomainError).slug).toBe('token-expired');
  });

  it('a TTL of 0 reads the user on every request', async () => {
    const s = setup(0);
    const token = await s.token();
    await s.auth.principalFromJwt(token);
    await s.auth.principalFromJwt(token);
    expect(s.lookups()).toBe(2);
  });
});
