/**
 * Personal access tokens (issue 11): `bzp_<prefix>_<secret>` (prefix 8, secret 32 base62 characters),
 * created by a user for a third-party app with scopes (contract TOKEN_SCOPES). Only sha256(token) is
 * stored; the token is shown once. Checked by the auth middleware against the scopes the request needs
 * (contract requiredScopes: the route's scope, plus a money scope when the request moves money); a token
 * never carries an operator role except through an operator scope (contract OPERATOR_SCOPES), which it gets
 * only when its owner holds the role at creation and which works only while she still does (checked on
 * every request by the auth middleware). Revoking one signals it in-process
 * (revocation.ts) so open streams end and webhooks tied to it are disabled at once.
 */
import { randomBytes } from 'node:crypto';
import { roleOfScope, type TokenScope } from '@bazaar/contract';
import type { PrismaClient } from '../../db/client.js';
import { DomainError } from '../../errors.js';
import { hashApiKey } from './api-keys.js';
import { notifyCredentialChanged } from './revocation.js';

export const PAT_PREFIX = 'bzp_';
const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const base62 = (n: number) => {
  let out = '';
  while (out.length < n) for (const b of randomBytes(n * 2)) if (b < 248 && out.length < n) out += B62[b % 62];
  return out;
};

export const looksLikePat = (v: string) => /^bzp_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}$/.test(v);

type Row = Awaited<ReturnType<PrismaClient['personalAccessToken']['create']>>;

export function presentToken(r: Row) {
  const iso = (d: Date | null) => (d ? d.toISOString() : null);
  return {
    token_id: r.id,
    name: r.name,
    prefix: r.prefix,
    scopes: r.scopes as TokenScope[],
    created_at: r.createdAt.toISOString(),
    expires_at: iso(r.expiresAt),
    revoked_at: iso(r.revokedAt),
    last_used_at: iso(r.lastUsedAt),
  };
}

export function createTokensService(db: PrismaClient, now: () => Date = () => new Date()) {
  return {
    /**
     * Create a token for user `userId` with `b.scopes`. Throws DomainError 403 forbidden when a scope is an
     * operator scope whose role the user does not hold (`required_role` names it).
     */
    async create(userId: string, b: { name: string; scopes: TokenScope[]; expires_in_days?: number }) {
      const owner = await db.user.findUnique({ where: { id: userId }, select: { roles: true } });
      for (const scope of b.scopes) {
        const role = roleOfScope(scope);
        if (role && !owner?.roles.includes(role)) {
          throw new DomainError('forbidden', `The scope ${scope} needs the ${role} role, which you do not hold.`, { required_role: role });
        }
      }
      const prefix = base62(8);
      const token = `${PAT_PREFIX}${prefix}_${base62(32)}`;
      const row = await db.personalAccessToken.create({
        data: {
          userId,
          name: b.name,
          prefix,
          tokenHash: hashApiKey(token),
          scopes: [...new Set(b.scopes)],
          expiresAt: b.expires_in_days ? new Date(now().getTime() + b.expires_in_days * 86_400_000) : null,
        },
      });
      return { ...presentToken(row), token };
    },
    async list(userId: string) {
      const rows = await db.personalAccessToken.findMany({ where: { userId }, orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
      return rows.map(presentToken);
    },
    async revoke(userId: string, id: string) {
      const row = await db.personalAccessToken.findUnique({ where: { id } });
      if (!row || row.userId !== userId) throw new DomainError('not-found', `Token ${id} not found.`);
      const updated = row.revokedAt ? row : await db.personalAccessToken.update({ where: { id }, data: { revokedAt: now() } });
      // streams and webhooks of this process using it re-check now (other replicas: on their timers)
      if (!row.revokedAt) notifyCredentialChanged(`pat:${id}`);
      return presentToken(updated);
    },
  };
}

export type TokensService = ReturnType<typeof createTokensService>;
