/**
 * IdempotencyStore over Prisma (table idempotency_keys, primary key (principal, key)).
 * The primary key is the race arbiter: of two concurrent first uses, one insert fails.
 */
import type { Prisma, PrismaClient } from '../../generated/prisma/client.js';
import type { IdempotencyRecord, IdempotencyStore } from './idempotency.store.js';

type Row = Prisma.IdempotencyKeyGetPayload<object>;

function toRecord(r: Row): IdempotencyRecord {
  return {
    scope: r.principal,
    key: r.key,
    route: r.route,
    fingerprint: r.requestHash,
    state: r.state === 'completed' ? 'done' : 'running',
    responseStatus: r.responseStatus,
    responseBody: r.responseBody,
    responseHeaders: (r.responseHeaders as Record<string, string> | null) ?? null,
    createdAt: r.createdAt,
    expiresAt: r.expiresAt,
    leaseExpiresAt: r.leaseExpiresAt,
    leaseToken: r.leaseToken,
  };
}

export class PrismaIdempotencyStore implements IdempotencyStore {
  constructor(private readonly db: PrismaClient) {}

  async tryInsert(rec: IdempotencyRecord): Promise<boolean> {
    try {
      await this.db.idempotencyKey.create({
        data: {
          principal: rec.scope,
          key: rec.key,
          route: rec.route ?? '',
          requestHash: rec.fingerprint,
          state: 'in_progress',
          createdAt: rec.createdAt,
          expiresAt: rec.expiresAt,
          leaseExpiresAt: rec.leaseExpiresAt ?? null,
          leaseToken: rec.leaseToken ?? null,
        },
      });
      return true;
    } catch (err) {
      if ((err as { code?: string }).code === 'P2002') return false;
      throw err;
    }
  }

  async get(scope: string, key: string) {
    const r = await this.db.idempotencyKey.findUnique({ where: { principal_key: { principal: scope, key } } });
    return r ? toRecord(r) : null;
  }

  async takeOver(scope: string, key: string, token: string, leaseExpiresAt: Date, now: Date) {
    // one UPDATE: a concurrent taker re-reads the row after the winner commits and no longer matches
    const r = await this.db.idempotencyKey.updateMany({
      where: { principal: scope, key, state: 'in_progress', OR: [{ leaseExpiresAt: null }, { leaseExpiresAt: { lte: now } }] },
      data: { leaseToken: token, leaseExpiresAt },
    });
    return r.count === 1;
  }

  async renew(scope: string, key: string, token: string, leaseExpiresAt: Date) {
    const r = await this.db.idempotencyKey.updateMany({
      where: { principal: scope, key, state: 'in_progress', leaseToken: token },
      data: { leaseExpiresAt },
    });
    return r.count === 1;
  }

  async complete(scope: string, key: string, status: number, body: unknown, headers: Record<string, string> | null, token?: string) {
    await this.db.idempotencyKey.updateMany({
      where: { principal: scope, key, ...(token !== undefined ? { leaseToken: token } : {}) },
      data: {
        state: 'completed',
        responseStatus: status,
        responseBody: body as Prisma.InputJsonValue,
        responseHeaders: (headers ?? undefined) as Prisma.InputJsonValue | undefined,
        leaseExpiresAt: null,
      },
    });
  }

  async remove(scope: string, key: string, token?: string) {
    await this.db.idempotencyKey.deleteMany({ where: { principal: scope, key, ...(token !== undefined ? { leaseToken: token } : {}) } });
  }

  async purgeExpired(now: Date) {
    const r = await this.db.idempotencyKey.deleteMany({ where: { expiresAt: { lte: now } } });
    return r.count;
  }
}
