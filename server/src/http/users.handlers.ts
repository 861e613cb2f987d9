/**
 * ts-rest handlers of `contract.users`: the caller's profile, public profiles, and the admins' grant and
 * revoke of operator roles (the auth middleware has checked the admin role before these run).
 */
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import { DomainError } from '../errors.js';
import type { RolesService } from '../modules/auth/index.js';
import type { UsersService } from '../modules/users/index.js';

export interface UsersHttpDeps {
  service: UsersService;
  roles: RolesService;
}

/** The caller's user id; service API keys (no user) cannot use /user/me. */
function meOf(req: unknown): string {
  const p = (req as { principal?: { userId?: string | null } }).principal;
  if (!p) throw new DomainError('unauthorized', 'No credential was sent.');
  if (!p.userId) throw new DomainError('forbidden', 'This credential acts as no user (a service API key).');
  return p.userId;
}

export function usersHandlers(deps: UsersHttpDeps) {
  const s = initServer();
  return s.router(contract.users, {
    getMe: async ({ req }) => ({ status: 200 as const, body: await deps.service.getMe(meOf(req)) }),
    updateMe: async ({ req, body }) => ({ status: 200 as const, body: await deps.service.updateMe(meOf(req), body) }),
    getUser: async ({ params }) => ({ status: 200 as const, body: await deps.service.getByWallet(params.wallet) }),
    grantRole: async ({ params }) => ({ status: 200 as const, body: await deps.roles.grant(params.wallet, params.role) }),
    revokeRole: async ({ params }) => ({ status: 200 as const, body: await deps.roles.revoke(params.wallet, params.role) }),
  });
}
