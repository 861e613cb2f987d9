/**
 * Users storage (Prisma): the users table. A profile's statistics come from the modules that own
 * them, through their read ports (users.service.ts UserStatsPorts), never from their tables here.
 */
import type { PrismaClient } from '../../db/client.js';

export function createUsersRepo(db: PrismaClient) {
  return {
    findById: (id: string) => db.user.findUnique({ where: { id } }),
    findByWallet: (wallet: string) => db.user.findUnique({ where: { wallet } }),
    update: (id: string, data: { displayName?: string | null; bio?: string | null; avatarUrl?: string | null }) =>
      db.user.update({ where: { id }, data }),
  };
}

export type UsersRepo = ReturnType<typeof createUsersRepo>;
