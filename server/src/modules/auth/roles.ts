/**
 * Operator roles (issue 25): grant and revoke `admin`, `moderator`, `arbiter` (contract OPERATOR_ROLES) on
 * a user, by wallet. Used by the admin routes (`PUT`/`DELETE /admin/users/{wallet}/roles/{role}`, behind
 * `access.admin()`) and by the first-admin command (`npm run admin:grant`, server/scripts/admin-grant.ts).
 *
 * Each change is one transaction: the user's row locked, `users.roles` updated (the trigger
 * users_roles_sync keeps it sorted and the deprecated `users.role` in step), the event `user.role_granted` /
 * `user.role_revoked` appended (audience: the user), and on a revoke the operator scopes the role gave
 * (contract OPERATOR_SCOPES) removed from the user's personal access tokens, so granting the role again
 * does not revive a token made before. A change that changes nothing (granting a held role, revoking a
 * missing one) writes nothing and emits nothing (`changed: false`).
 *
 * The last-admin guard: revoking `admin` locks every admin row (in id order) and refuses (409 last-admin)
 * when the user is the only admin left, so two admins revoking each other at once cannot both succeed (the
 * second re-reads the first's committed row under the lock and counts one admin). An admin API key made on
 * the command line is not a user and does not count.
 *
 * The roles are read from the user row on every request (auth.service.ts), so a revoke takes effect at the
 * user's next request on every replica; `onChanged` (the auth service's `forgetUser`) drops this process's
 * reusable principals of the user, and the credentials of the user are signalled (revocation.ts) so her open
 * event streams re-check their view at once.
 */
import { OPERATOR_SCOPES, type OperatorRole, type UserRoles } from '@bazaar/contract';
import type { PrismaClient } from '../../db/client.js';
import { DomainError } from '../../errors.js';
import { appendEvents, notifyAppended } from '../events/index.js';
import { rolesOfUser } from './auth.service.js';
import { notifyCredentialChanged } from './revocation.js';

export interface RolesDeps {
  db: PrismaClient;
  now?: () => Date;
  /** after a change committed: the user whose roles changed (the auth service forgets her cached principals) */
  onChanged?: (userId: string) => void;
}

/** The operator scopes that need `role` (contract OPERATOR_SCOPES). */
const scopesOf = (role: OperatorRole) => Object.entries(OPERATOR_SCOPES).filter(([, r]) => r === role).map(([s]) => s);

export function createRolesService(deps: RolesDeps) {
  const { db } = deps;
  const now = deps.now ?? (() => new Date());

  /** Signals after a committed change: this process's caches and streams re-read the user. */
  async function changed(userId: string, tokenIds: readonly string[]) {
    notifyAppended();
    deps.onChanged?.(userId);
    notifyCredentialChanged(`user:${userId}`);
    for (const id of tokenIds) notifyCredentialChanged(`pat:${id}`);
    const keys = await db.apiKey.findMany({ where: { userId, revokedAt: null }, select: { id: true } });
    for (const k of keys) notifyCredentialChanged(`api_key:${k.id}`);
  }

  async function change(wallet: string, role: OperatorRole, grant: boolean): Promise<UserRoles> {
    const out = await db.$transaction(async (tx) => {
      if (!grant && role === 'admin') {
        // the last-admin guard: every admin row locked, in one order (see the module comment)
        const admins = await tx.$queryRaw<Array<{ wallet: string }>>`
          SELECT wallet FROM users WHERE 'admin' = ANY (roles) ORDER BY id FOR UPDATE`;
        if (admins.length === 1 && admins[0]!.wallet === wallet) {
          throw new DomainError(
            'last-admin',
            `${wallet} is the only admin: revoking the role would leave the marketplace without one. Grant admin to another user first.`,
          );
        }
      }
      const [user] = await tx.$queryRaw<Array<{ id: string; wallet: string; roles: string[] }>>`
        SELECT id::text AS id, wallet, roles FROM users WHERE wallet = ${wallet} FOR UPDATE`;
      if (!user) throw new DomainError('not-found', `No user has logged in with wallet ${wallet}.`);
      const held = user.roles.includes(role);
      if (held === grant) return { body: { user_id: user.id, wallet, roles: rolesOfUser(user), role, changed: false }, tokenIds: [] };
      const [after] = await tx.$queryRaw<Array<{ roles: string[] }>>`
        UPDATE users SET roles = ${grant ? [...user.roles, role] : user.roles.filter((r) => r !== role)}::text[], updated_at = ${now()}
        WHERE id = ${user.id}::uuid RETURNING roles`;
      let tokenIds: string[] = [];
      if (!grant) {
        const scopes = scopesOf(role);
        const rows = await tx.$queryRaw<Array<{ id: string }>>`
          UPDATE personal_access_tokens
          SET scopes = ARRAY(SELECT s FROM unnest(scopes) AS s WHERE s <> ALL (${scopes}::text[]))
          WHERE user_id = ${user.id}::uuid AND scopes && ${scopes}::text[]
          RETURNING id::text AS id`;
        tokenIds = rows.map((r) => r.id);
      }
      const body: UserRoles = { user_id: user.id, wallet, roles: rolesOfUser(after), role, changed: true };
      await appendEvents(tx, [
        { type: grant ? 'user.role_granted' : 'user.role_revoked', resourceType: 'user', resourceId: user.id, audience: [user.id], data: body },
      ]);
      return { body, tokenIds };
    });
    if (out.body.changed) await changed(out.body.user_id, out.tokenIds);
    return out.body;
  }

  return {
    /**
     * Give the user whose wallet is `wallet` the role `role`. Returns her roles after (`changed` false when
     * she held it). Throws DomainError 404 not-found when no user has that wallet.
     */
    grant: (wallet: string, role: OperatorRole) => change(wallet, role, true),
    /**
     * Take `role` from the user whose wallet is `wallet`. Returns her roles after (`changed` false when she
     * lacked it). Throws DomainError 404 not-found (no such user), 409 last-admin (she is the only admin).
     */
    revoke: (wallet: string, role: OperatorRole) => change(wallet, role, false),
  };
}

export type RolesService = ReturnType<typeof createRolesService>;

/**
 * The first-admin path (issue 25): give the wallet `wallet` the role `role`, creating its user row when the
 * wallet never logged in (the row its first login would create), then granting through the roles service (one
 * transaction, `user.role_granted`, its audit entry). Used by `npm run admin:grant` (server/scripts/admin-grant.ts)
 * and, for the dev admin key only, by `npm start` on its embedded defaults (server/scripts/start.ts).
 * Returns the roles after (`changed` false when she held it). Throws what `grant` throws.
 */
export async function grantRoleToWallet(db: PrismaClient, wallet: string, role: OperatorRole): Promise<UserRoles> {
  await db.user.upsert({ where: { wallet }, create: { wallet }, update: {} });
  return createRolesService({ db }).grant(wallet, role);
}
