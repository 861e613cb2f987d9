/**
 * ts-rest handlers of `contract.tokens` (personal access tokens). A token cannot manage tokens: the
 * auth middleware answers 403 insufficient-scope (routeAccess scope null) before these run.
 */
import { initServer } from '@ts-rest/express';
import { contract } from '@bazaar/contract';
import { DomainError } from '../errors.js';
import type { TokensService } from '../modules/auth/index.js';

function userIdOf(req: unknown): string {
  const p = (req as { principal?: { userId?: string | null } }).principal;
  if (!p) throw new DomainError('unauthorized', 'No credential was sent.');
  if (!p.userId) throw new DomainError('forbidden', 'Personal access tokens belong to a user: use a user credential.');
  return p.userId;
}

export function tokensHandlers(deps: { service: TokensService }) {
  const s = initServer();
  return s.router(contract.tokens, {
    createToken: async ({ body, req }) => ({ status: 201 as const, body: await deps.service.create(userIdOf(req), body) }),
    listTokens: async ({ req }) => ({ status: 200 as const, body: { data: await deps.service.list(userIdOf(req)) } }),
    revokeToken: async ({ params, req }) => ({ status: 200 as const, body: await deps.service.revoke(userIdOf(req), params.token_id) }),
  });
}
