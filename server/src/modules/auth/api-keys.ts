/**
 * API keys for server-to-server integration: `bzk_<prefix>_<secret>` (prefix 8, secret 32 base62
 * characters). Only sha256(key) is stored; the key is shown once at creation. `prefix` names the key
 * in listings and for revocation.
 *
 * Issuing and revoking a key is an operator action: each appends an audit entry (`api_key.created`,
 * `api_key.revoked`; modules/audit) in the same transaction; the actor is the request context's, the
 * `api-key-cli` system actor when the CLI does it (server/scripts/api-key.ts).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { PrismaClient } from '../../db/client.js';
import { notifyCredentialChanged } from './revocation.js';
import { appendAudit } from '../audit/index.js';

export const API_KEY_PREFIX = 'bzk_';
const B62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

function base62(n: number): string {
  let out = '';
  while (out.length < n) for (const b of randomBytes(n * 2)) if (b < 248 && out.length < n) out += B62[b % 62];
  return out;
}

export const hashApiKey = (key: string) => createHash('sha256').update(key, 'utf8').digest('hex');
export const looksLikeApiKey = (v: string) => /^bzk_[A-Za-z0-9]{8}_[A-Za-z0-9]{32}$/.test(v);

export interface CreatedApiKey {
  id: string;
  name: string;
  prefix: string;
  key: string;
  userId: string | null;
  isAdmin: boolean;
  createdAt: Date;
}

export async function createApiKey(
  db: PrismaClient,
  opts: { name: string; userId?: string | null; isAdmin?: boolean },
): Promise<CreatedApiKey> {
  const prefix = base62(8);
  const key = `${API_KEY_PREFIX}${prefix}_${base62(32)}`;
  const row = await db.$transaction(async (tx) => {
    const r = await tx.apiKey.create({
      data: { name: opts.name, prefix, keyHash: hashApiKey(key), userId: opts.userId ?? null, isAdmin: !!opts.isAdmin },
    });
    await appendAudit(tx, {
      action: 'api_key.created',
      resourceType: 'api_key',
      resourceId: r.id,
      after: { name: r.name, prefix, user_id: r.userId, is_admin: r.isAdmin },
    });
    return r;
  });
  return { id: row.id, name: row.name, prefix, key, userId: row.userId, isAdmin: row.isAdmin, createdAt: row.createdAt };
}

export async function listApiKeys(db: PrismaClient) {
  return db.apiKey.findMany({
    orderBy: { createdAt: 'asc' },
    select: { id: true, name: true, prefix: true, userId: true, isAdmin: true, createdAt: true, revokedAt: true, lastUsedAt: true, user: { select: { wallet: true } } },
  });
}

/** true when a key with that prefix was active and is now revoked. */
export async function revokeApiKey(db: PrismaClient, prefix: string, now = new Date()): Promise<boolean> {
  const key = await db.apiKey.findUnique({ where: { prefix }, select: { id: true, name: true, userId: true, isAdmin: true } });
  const count = await db.$transaction(async (tx) => {
    const r = await tx.apiKey.updateMany({ where: { prefix, revokedAt: null }, data: { revokedAt: now } });
    if (r.count === 1 && key) {
      await appendAudit(tx, {
        action: 'api_key.revoked',
        resourceType: 'api_key',
        resourceId: key.id,
        before: { name: key.name, prefix, user_id: key.userId, is_admin: key.isAdmin, revoked_at: null },
        after: { revoked_at: now.toISOString() },
      });
    }
    return r.count;
  });
  if (count === 1 && key) notifyCredentialChanged(`api_key:${key.id}`);
  return count === 1;
}
