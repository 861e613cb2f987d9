/**
 * Operator roles in tests (issue 25): give a user roles by writing `users.roles` directly (what
 * `npm run admin:grant` and the admin routes end with), for tests about something else than granting.
 */
import { OPERATOR_ROLES, type OperatorRole } from '@bazaar/contract';
import type { PrismaClient } from '../../server/src/db/client.js';

/** Set the roles of the user `where` names (default: every role, as today's admins were migrated). */
export async function setRoles(db: PrismaClient, where: { id: string } | { wallet: string }, roles: readonly OperatorRole[] = OPERATOR_ROLES): Promise<void> {
  await db.user.update({ where, data: { roles: [...roles] } });
}
