/** Prisma access for the auth module (no rules here). */
import type { PrismaClient } from '../../db/client.js';
import type { IssuedNonce } from './siws.js';

export function createAuthRepo(db: PrismaClient) {
  return {
    insertNonce: (n: IssuedNonce) => db.loginNonce.create({ data: n }),
    getNonce: (nonce: string) => db.loginNonce.findUnique({ where: { nonce } }),
    /** single use: true only for the one caller that flips used_at while unexpired (and issued to `address`) */
    async consumeNonce(nonce: string, address: string, now: Date): Promise<boolean> {
      const { count } = await db.loginNonce.updateMany({
        where: { nonce, address, usedAt: null, expiresAt: { gt: now } },
        data: { usedAt: now },
      });
      return count === 1;
    },
    /**
     * Consume the nonce in ONE statement when every condition verify_login checks holds: issued to
     * `address`, for `domain` (case-insensitive), unused, unexpired at `now`, and issued no later than
     * `issuedNoLaterThan` (null: no bound). Returns whether this caller consumed it (of concurrent callers
     * exactly one); on false nothing changed and the caller reads the nonce (`getNonce`) to say why.
     */
    async consumeNonceIf(nonce: string, c: { address: string; domain: string; now: Date; issuedNoLaterThan: Date | null }): Promise<boolean> {
      const n = await db.$executeRaw`
        UPDATE login_nonces SET used_at = ${c.now}
        WHERE nonce = ${nonce} AND address = ${c.address} AND lower(domain) = lower(${c.domain})
          AND used_at IS NULL AND expires_at > ${c.now}
          AND (${c.issuedNoLaterThan}::timestamptz IS NULL OR issued_at <= ${c.issuedNoLaterThan}::timestamptz)`;
      return n === 1;
    },
    /** logout: refuse the access token whose sha256 is `tokenHash` until `expiresAt` (its exp); idempotent */
    async revokeAccessToken(tokenHash: string, userId: string, now: Date, expiresAt: Date): Promise<void> {
      await db.revokedAccessToken.createMany({ data: [{ tokenHash, userId, revokedAt: now, expiresAt }], skipDuplicates: true });
    },
    /** was the access token whose sha256 is `tokenHash` revoked (logout)? */
    isAccessTokenRevoked: async (tokenHash: string): Promise<boolean> =>
      (await db.revokedAccessToken.findUnique({ where: { tokenHash }, select: { tokenHash: true } })) !== null,
    /** housekeeping: revocations of tokens that expired anyway */
    purgeRevokedAccessTokens: (before: Date) => db.revokedAccessToken.deleteMany({ where: { expiresAt: { lt: before } } }),
    /** housekeeping: nonces expired for more than a day */
    purgeNonces: (before: Date) => db.loginNonce.deleteMany({ where: { expiresAt: { lt: before } } }),
    /** create on first login; always stamp last_login_at */
    upsertUserOnLogin: (wallet: string, now: Date) =>
      db.user.upsert({ where: { wallet }, create: { wallet, lastLoginAt: now }, update: { lastLoginAt: now } }),
    /** the user of `wallet`, created as login creates it when missing (no login time: nobody logged in) */
    ensureUser: (wallet: string) => db.user.upsert({ where: { wallet }, create: { wallet }, update: {} }),
    getUser: (id: string) => db.user.findUnique({ where: { id } }),
    /**
     * What a session's principal needs in ONE statement (issue 28: the first request of every session read the
     * user and the revocation list separately): the user `id` (null when it does not exist) and whether the
     * access token whose sha256 is `tokenHash` was logged out. `id` must be a UUID (a verified JWT's `sub`).
     */
    async sessionOf(id: string, tokenHash: string): Promise<{ user: { id: string; wallet: string; roles: string[] } | null; revoked: boolean }> {
      const rows = await db.$queryRaw<Array<{ id: string | null; wallet: string | null; roles: string[] | null; revoked: boolean }>>`
        SELECT u.id::text AS id, u.wallet, u.roles,
               EXISTS (SELECT 1 FROM revoked_access_tokens WHERE token_hash = ${tokenHash}) AS revoked
          FROM (SELECT 1) AS one LEFT JOIN users u ON u.id = ${id}::uuid`;
      const r = rows[0]!;
      return { user: r.id && r.wallet ? { id: r.id, wallet: r.wallet, roles: r.roles ?? [] } : null, revoked: r.revoked === true };
    },
    findApiKeyByHash: (keyHash: string) =>
      db.apiKey.findUnique({ where: { keyHash }, include: { user: true } }),
    touchApiKey: (id: string, now: Date) => db.apiKey.update({ where: { id }, data: { lastUsedAt: now } }),
    async findPatByHash(tokenHash: string) {
      const row = await db.personalAccessToken.findUnique({ where: { tokenHash } });
      if (!row) return null;
      const user = await db.user.findUnique({ where: { id: row.userId } });
      return user ? { ...row, user } : null;
    },
    async findPatById(id: string) {
      const row = await db.personalAccessToken.findUnique({ where: { id } });
      if (!row) return null;
      const user = await db.user.findUnique({ where: { id: row.userId } });
      return { ...row, user };
    },
    findApiKeyById: (id: string) => db.apiKey.findUnique({ where: { id }, include: { user: true } }),
    touchPat: (id: string, now: Date) => db.personalAccessToken.update({ where: { id }, data: { lastUsedAt: now } }),
  };
}

export type AuthRepo = ReturnType<typeof createAuthRepo>;
