/**
 * Webhooks storage (tables webhook_endpoints, webhook_deliveries, webhook_attempts,
 * webhook_dispatch_cursor). Queries only; rules in webhooks.service.ts / webhooks.worker.ts.
 *
 *  - `fanOut`: one transaction locks the dispatch cursor row (one fan-out at a time across replicas),
 *    turns the events after it into one delivery per matching enabled endpoint (INSERT ... SELECT,
 *    unique (endpoint, event)) and moves the cursor.
 *  - `claimDue`: due pending deliveries of enabled endpoints whose resource has no earlier pending
 *    delivery to the same endpoint (per-resource order), locked `FOR UPDATE SKIP LOCKED` (replicas
 *    claim disjoint sets) and leased by moving next_attempt_at past the attempt's timeout: a process
 *    that dies mid-attempt leaves the delivery to be retried after the lease.
 *  - Authority (issue 20), checked in SQL by both: an endpoint tied to a personal access token needs the
 *    token unrevoked and unexpired, and gets only the resource types its scopes read (EVENT_READ_SCOPES);
 *    one tied to an API key needs the key unrevoked; a marketplace-wide endpoint gets other users'
 *    events only while its creator is admin (an admin key, or the owner holds the admin role), at each fan-out.
 *    `disableUnauthorized` turns such endpoints off with a webhook.disabled event to the owner.
 *  - Recording an attempt of a delivery deleted meanwhile (its endpoint was deleted) records nothing.
 */

/** resource type -> scope that reads it, as two parallel arrays for `unnest` in SQL */
const SCOPE_RT = Object.keys(EVENT_READ_SCOPES);
const SCOPE_SC = Object.values(EVENT_READ_SCOPES) as string[];

/**
 * SQL condition: endpoint `w` (with `t` its token, `k` its API key) still holds the authority it was
 * created with at `now` (token unrevoked and unexpired, key unrevoked).
 */
const credentialValid = (now: Date) => Prisma.sql`
  (w.token_id IS NULL OR (t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ${now})))
  AND (w.api_key_id IS NULL OR k.revoked_at IS NULL)`;

/**
 * SQL condition: marketplace-wide endpoint `w` is still an admin's: an admin API key's, or its owner `u`
 * holds the admin role now (`users.roles`, issue 25; as auth.service reads a principal's roles).
 */
const stillAdmin = Prisma.sql`
  (w.marketplace_wide AND w.token_id IS NULL
   AND (coalesce(k.is_admin, false) OR coalesce('admin' = ANY (u.roles), false)))`;

/** the joins `credentialValid` and `stillAdmin` read */
const credentialJoins = Prisma.sql`
  LEFT JOIN personal_access_tokens t ON t.id = w.token_id
  LEFT JOIN api_keys k ON k.id = w.api_key_id
  LEFT JOIN users u ON u.id = w.owner_id`;
import { randomUUID } from 'node:crypto';
import type { EventType } from '@bazaar/contract';
import { Prisma, type PrismaClient } from '../../generated/prisma/client.js';
import { appendEvents, EVENT_READ_SCOPES, notifyAppended } from '../events/index.js';
import type { EventRecord } from '../events/index.js';

export interface EndpointRecord {
  id: string;
  ownerId: string | null;
  marketplaceWide: boolean;
  url: string;
  description: string;
  eventTypes: EventType[];
  secret: string;
  enabled: boolean;
  disabledReason: string | null;
  failingSince: Date | null;
  /** the personal access token / API key it is tied to (issue 20); null: a session made it */
  tokenId: string | null;
  apiKeyId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/** Why an endpoint lost the authority it was created with (disableUnauthorized). */
export type RevokedBecause = 'token_revoked' | 'token_expired' | 'key_revoked' | 'not_admin';

export interface AttemptRecord {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  createdAt: Date;
}

export interface DeliveryRecord {
  id: string;
  endpointId: string;
  eventId: string;
  eventSeq: bigint;
  eventType: EventType;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: Date;
  lastStatusCode: number | null;
  lastError: string | null;
  lastDurationMs: number | null;
  deliveredAt: Date | null;
  createdAt: Date;
  attemptLog: AttemptRecord[];
}

/** A claimed delivery with what the attempt needs. */
export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  url: string;
  secret: string;
  eventId: string;
  eventSeq: bigint;
  attempts: number;
  createdAt: Date;
  /** the event (audience left empty) */
  event: EventRecord;
}

type EndpointRow = Prisma.WebhookEndpointGetPayload<object>;

/** What a new endpoint is made of. */
export interface NewEndpoint {
  ownerId: string | null;
  marketplaceWide: boolean;
  url: string;
  description: string;
  eventTypes: EventType[];
  secret: string;
  tokenId?: string | null;
  apiKeyId?: string | null;
}
const toEndpoint = (r: EndpointRow): EndpointRecord => ({ ...r, eventTypes: (r.eventTypes ?? []) as EventType[] });

/** The owner was refused another endpoint: `limit` reached (createEndpointCapped). */
export class EndpointLimitReached extends Error {
  constructor(readonly limit: number) {
    super(`endpoint limit ${limit} reached`);
  }
}

export function createWebhooksRepo(db: PrismaClient) {
  return {
    async createEndpoint(e: NewEndpoint): Promise<EndpointRecord> {
      return toEndpoint(await db.webhookEndpoint.create({ data: { id: randomUUID(), ...e } }));
    },

    /**
     * Create an endpoint unless its owner already has `limit`: the owner's user row is locked for the
     * count and the insert, so concurrent creations cannot pass the limit together. Throws
     * EndpointLimitReached.
     */
    async createEndpointCapped(
      e: NewEndpoint & { ownerId: string },
      limit: number,
    ): Promise<EndpointRecord> {
      return db.$transaction(async (tx) => {
        await tx.$queryRaw`SELECT 1 FROM users WHERE id = ${e.ownerId}::uuid FOR UPDATE`;
        const n = await tx.webhookEndpoint.count({ where: { ownerId: e.ownerId } });
        if (n >= limit) throw new EndpointLimitReached(limit);
        return toEndpoint(await tx.webhookEndpoint.create({ data: { id: randomUUID(), ...e } }));
      });
    },

    async getEndpoint(id: string): Promise<EndpointRecord | null> {
      const r = await db.webhookEndpoint.findUnique({ where: { id } });
      return r ? toEndpoint(r) : null;
    },

    async listEndpoints(ownerId: string, limit: number, after?: { createdAt: Date; id: string }): Promise<EndpointRecord[]> {
      const rows = await db.webhookEndpoint.findMany({
        where: {
          ownerId,
          ...(after ? { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] } : {}),
        },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: limit,
      });
      return rows.map(toEndpoint);
    },

    async updateEndpoint(
      id: string,
      patch: Partial<Pick<EndpointRecord, 'url' | 'description' | 'eventTypes' | 'enabled' | 'secret' | 'disabledReason' | 'failingSince' | 'tokenId' | 'apiKeyId'>>,
    ) {
      return toEndpoint(await db.webhookEndpoint.update({ where: { id }, data: patch }));
    },

    async deleteEndpoint(id: string): Promise<void> {
      await db.webhookEndpoint.delete({ where: { id } });
    },

    /**
     * The lowest event position the webhook worker still needs (events retention keeps it and every later
     * one): the oldest pending delivery's event, else the first event not fanned out yet.
     */
    async oldestNeededSeq(): Promise<bigint> {
      const r = await db.$queryRaw<{ seq: bigint }[]>`
        SELECT LEAST(
          (SELECT min(event_seq) FROM webhook_deliveries WHERE status = 'pending'),
          (SELECT last_seq + 1 FROM webhook_dispatch_cursor WHERE id = 1),
          9223372036854775807) AS seq`;
      return BigInt(r[0]!.seq);
    },

    /**
     * The delivery backlog for the metrics, two bounded index reads: pending deliveries (counted up to
     * `cap`, on the (status, next_attempt_at) index) and committed events the fan-out has not reached yet
     * (the newest event's seq minus the dispatch cursor: two primary-key reads).
     */
    async backlog(cap: number): Promise<{ pending: number; unfanned: number }> {
      const [r] = await db.$queryRaw<Array<{ pending: bigint; unfanned: bigint }>>`
        SELECT (SELECT count(*) FROM (SELECT 1 FROM webhook_deliveries WHERE status = 'pending' LIMIT ${cap}) p) AS pending,
               GREATEST(0, COALESCE((SELECT max(seq) FROM events), 0) - COALESCE((SELECT last_seq FROM webhook_dispatch_cursor WHERE id = 1), 0)) AS unfanned`;
      return { pending: Number(r?.pending ?? 0), unfanned: Number(r?.unfanned ?? 0) };
    },

    /** Retention: delete up to `limit` finished (delivered or failed) deliveries created before `cutoff`, with their attempts. */
    async purgeFinishedBefore(cutoff: Date, limit: number): Promise<number> {
      return db.$executeRaw`
        DELETE FROM webhook_deliveries
         WHERE id IN (SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND created_at < ${cutoff} LIMIT ${limit})`;
    },

    /** Fan out up to `limit` events after the cursor; returns how many events were consumed. */
    async fanOut(limit: number, now: Date): Promise<number> {
      return db.$transaction(async (tx) => {
        const cur = await tx.$queryRaw<{ last_seq: bigint }[]>`SELECT last_seq FROM webhook_dispatch_cursor WHERE id = 1 FOR UPDATE`;
        const last = cur[0]?.last_seq ?? 0n;
        const next = await tx.$queryRaw<{ seq: bigint }[]>`SELECT seq FROM events WHERE seq > ${last} ORDER BY seq LIMIT ${limit}`;
        if (next.length === 0) return 0;
        const upto = next[next.length - 1]!.seq;
        await tx.$executeRaw`
          INSERT INTO webhook_deliveries (id, endpoint_id, event_seq, event_id, resource_key, status, attempts, next_attempt_at, created_at)
          SELECT gen_random_uuid(), w.id, e.seq, e.id, e.resource_type || ':' || e.resource_id::text, 'pending', 0, ${now}, ${now}
            FROM events e
            JOIN webhook_endpoints w
              ON w.enabled
             AND w.created_at <= e.created_at
             AND (coalesce(cardinality(w.event_types), 0) = 0 OR e.type = ANY(w.event_types))
            ${credentialJoins}
           WHERE e.seq > ${last} AND e.seq <= ${upto}
             AND (w.owner_id = ANY(e.audience) OR ${stillAdmin})
             AND ${credentialValid(now)}
             AND (w.token_id IS NULL OR EXISTS (
                   SELECT 1 FROM unnest(${SCOPE_RT}::text[], ${SCOPE_SC}::text[]) AS m(rt, sc)
                    WHERE m.rt = e.resource_type AND m.sc = ANY(t.scopes)))
          ON CONFLICT (endpoint_id, event_seq) DO NOTHING`;
        await tx.$executeRaw`UPDATE webhook_dispatch_cursor SET last_seq = ${upto} WHERE id = 1`;
        return next.length;
      });
    },

    /** Claim up to `n` due deliveries (see the module comment); `leaseUntil`: their next_attempt_at meanwhile. */
    async claimDue(n: number, now: Date, leaseUntil: Date): Promise<ClaimedDelivery[]> {
      const rows = await db.$queryRaw<
        {
          id: string;
          endpoint_id: string;
          url: string;
          secret: string;
          event_id: string;
          event_seq: bigint;
          attempts: number;
          created_at: Date;
          e_type: string;
          e_resource_type: string;
          e_resource_id: string;
          e_resource_seq: number;
          e_data: unknown;
          e_signature: string | null;
          e_created_at: Date;
        }[]
      >`
        WITH due AS (
          SELECT d.id
            FROM webhook_deliveries d
            JOIN webhook_endpoints w ON w.id = d.endpoint_id AND w.enabled
            ${credentialJoins}
           WHERE d.status = 'pending' AND d.next_attempt_at <= ${now}
             AND ${credentialValid(now)}
             AND NOT EXISTS (
               SELECT 1 FROM webhook_deliveries p
                WHERE p.endpoint_id = d.endpoint_id AND p.resource_key = d.resource_key
                  AND p.status = 'pending' AND p.event_seq < d.event_seq)
           ORDER BY d.next_attempt_at, d.event_seq
           LIMIT ${n}
           FOR UPDATE OF d SKIP LOCKED
        )
        UPDATE webhook_deliveries d
           SET next_attempt_at = ${leaseUntil}, attempts = d.attempts + 1
          FROM due, webhook_endpoints w, events e
         WHERE d.id = due.id AND w.id = d.endpoint_id AND e.seq = d.event_seq
        RETURNING d.id::text AS id, d.endpoint_id::text AS endpoint_id, w.url, w.secret, d.event_id::text AS event_id,
                  d.event_seq, d.attempts, d.created_at,
                  e.type AS e_type, e.resource_type AS e_resource_type, e.resource_id::text AS e_resource_id,
                  e.resource_seq AS e_resource_seq, e.data AS e_data, e.signature AS e_signature, e.created_at AS e_created_at`;
      return rows.map((r) => ({
        event: {
          seq: BigInt(r.event_seq),
          id: r.event_id,
          type: r.e_type as EventType,
          resourceType: r.e_resource_type as EventRecord['resourceType'],
          resourceId: r.e_resource_id,
          resourceSeq: Number(r.e_resource_seq),
          audience: [],
          data: r.e_data,
          signature: r.e_signature,
          createdAt: new Date(r.e_created_at),
        },
        id: r.id,
        endpointId: r.endpoint_id,
        url: r.url,
        secret: r.secret,
        eventId: r.event_id,
        eventSeq: BigInt(r.event_seq),
        attempts: Number(r.attempts),
        createdAt: new Date(r.created_at),
      }));
    },

    /**
     * Record an attempt and its consequence in one transaction: the delivery's new state, the endpoint's
     * failure streak, and when `disable` the endpoint disabled with a webhook.disabled event to its owner.
     */
    async recordAttempt(
      d: ClaimedDelivery,
      a: { ok: boolean; statusCode: number | null; error: string | null; durationMs: number; at: Date },
      next: { status: 'pending' | 'delivered' | 'failed'; nextAttemptAt: Date },
      disable: null | { reason: string; present: (e: EndpointRecord) => unknown },
    ): Promise<void> {
      if (a.ok) {
        // the common case in one statement (atomic without an interactive transaction)
        await db.$executeRaw`
          WITH d AS (
            UPDATE webhook_deliveries
               SET status = ${next.status}, next_attempt_at = ${next.nextAttemptAt}, last_status_code = ${a.statusCode},
                   last_error = NULL, last_duration_ms = ${a.durationMs}, delivered_at = ${a.at}
             WHERE id = ${d.id}::uuid RETURNING endpoint_id),
          a AS (
            INSERT INTO webhook_attempts (delivery_id, status_code, error, duration_ms, created_at)
            SELECT ${d.id}::uuid, ${a.statusCode}, NULL, ${a.durationMs}, ${a.at} WHERE EXISTS (SELECT 1 FROM d))
          UPDATE webhook_endpoints SET failing_since = NULL WHERE id = (SELECT endpoint_id FROM d) AND failing_since IS NOT NULL`;
        return;
      }
      let disabled = false;
      await db.$transaction(async (tx) => {
        // the update first: it locks the delivery row, so the attempt's insert cannot race a delete; a
        // delivery deleted meanwhile (its endpoint was deleted) is dropped quietly
        const { count } = await tx.webhookDelivery.updateMany({
          where: { id: d.id },
          data: {
            status: next.status,
            nextAttemptAt: next.nextAttemptAt,
            lastStatusCode: a.statusCode,
            lastError: a.error,
            lastDurationMs: a.durationMs,
            ...(a.ok ? { deliveredAt: a.at } : {}),
          },
        });
        if (count === 0) return;
        await tx.webhookAttempt.create({ data: { deliveryId: d.id, statusCode: a.statusCode, error: a.error, durationMs: a.durationMs, createdAt: a.at } });
        if (a.ok) {
          await tx.webhookEndpoint.updateMany({ where: { id: d.endpointId, failingSince: { not: null } }, data: { failingSince: null } });
          return;
        }
        await tx.webhookEndpoint.updateMany({ where: { id: d.endpointId, failingSince: null }, data: { failingSince: a.at } });
        if (disable) {
          const r = await tx.webhookEndpoint.updateMany({ where: { id: d.endpointId, enabled: true }, data: { enabled: false, disabledReason: disable.reason } });
          if (r.count === 1) {
            const ep = toEndpoint(await tx.webhookEndpoint.findUniqueOrThrow({ where: { id: d.endpointId } }));
            await appendEvents(tx, [
              { type: 'webhook.disabled', resourceType: 'webhook', resourceId: ep.id, audience: ep.ownerId ? [ep.ownerId] : [], data: disable.present(ep) },
            ]);
            disabled = true;
          }
        }
      });
      if (disabled) notifyAppended();
    },

    /**
     * Disable every enabled endpoint that lost the authority it was created with (issue 20): its
     * personal access token revoked or expired, its API key revoked, or (marketplace-wide) its creator no
     * longer an admin. Each gets `disabled_reason` and a webhook.disabled event to its owner (in the
     * transaction that disables it); its pending deliveries are marked failed (they were authorised by
     * that credential). `present`: the endpoint JSON of the event. Returns the endpoints disabled.
     */
    async disableUnauthorized(now: Date, present: (e: EndpointRecord) => unknown): Promise<Array<{ id: string; because: RevokedBecause }>> {
      const found = await db.$queryRaw<{ id: string; because: RevokedBecause; token_prefix: string | null; key_prefix: string | null }[]>`
        SELECT * FROM (
          SELECT w.id::text AS id, t.prefix AS token_prefix, k.prefix AS key_prefix,
                 CASE
                   WHEN w.token_id IS NOT NULL AND t.revoked_at IS NOT NULL THEN 'token_revoked'
                   WHEN w.token_id IS NOT NULL AND t.expires_at IS NOT NULL AND t.expires_at <= ${now} THEN 'token_expired'
                   WHEN w.api_key_id IS NOT NULL AND k.revoked_at IS NOT NULL THEN 'key_revoked'
                   WHEN w.marketplace_wide AND NOT ${stillAdmin} THEN 'not_admin'
                 END AS because
            FROM webhook_endpoints w
            ${credentialJoins}
           WHERE w.enabled) x
         WHERE because IS NOT NULL`;
      const out: Array<{ id: string; because: RevokedBecause }> = [];
      for (const f of found) {
        const reason =
          f.because === 'token_revoked'
            ? `the personal access token that created it (bzp_${f.token_prefix}) was revoked`
            : f.because === 'token_expired'
              ? `the personal access token that created it (bzp_${f.token_prefix}) expired`
              : f.because === 'key_revoked'
                ? `the API key that created it (bzk_${f.key_prefix}) was revoked`
                : 'marketplace-wide, and its creator is no longer an admin';
        const done = await db.$transaction(async (tx) => {
          const r = await tx.webhookEndpoint.updateMany({ where: { id: f.id, enabled: true }, data: { enabled: false, disabledReason: reason } });
          if (r.count !== 1) return false;
          await tx.webhookDelivery.updateMany({ where: { endpointId: f.id, status: 'pending' }, data: { status: 'failed', lastError: `endpoint disabled: ${reason}` } });
          const ep = toEndpoint(await tx.webhookEndpoint.findUniqueOrThrow({ where: { id: f.id } }));
          await appendEvents(tx, [{ type: 'webhook.disabled', resourceType: 'webhook', resourceId: ep.id, audience: ep.ownerId ? [ep.ownerId] : [], data: present(ep) }]);
          return true;
        });
        if (done) out.push({ id: f.id, because: f.because });
      }
      if (out.length) notifyAppended();
      return out;
    },

    /** Record accepted attempts of several deliveries in one statement (delivered + attempt log + streak reset). */
    async recordSuccesses(list: Array<{ id: string; statusCode: number | null; durationMs: number; at: Date }>): Promise<void> {
      if (list.length === 0) return;
      const ids = list.map((x) => x.id);
      const codes = list.map((x) => x.statusCode ?? 0);
      const ms = list.map((x) => x.durationMs);
      const ats = list.map((x) => x.at.toISOString());
      await db.$executeRaw`
        WITH v AS (
          SELECT * FROM unnest(${ids}::uuid[], ${codes}::int[], ${ms}::int[], ${ats}::timestamptz[]) AS v(id, code, ms, at)),
        d AS (
          UPDATE webhook_deliveries w
             SET status = 'delivered', next_attempt_at = v.at, last_status_code = v.code, last_error = NULL,
                 last_duration_ms = v.ms, delivered_at = v.at
            FROM v WHERE w.id = v.id RETURNING w.id, w.endpoint_id),
        a AS (
          -- only for deliveries that still exist (an endpoint deleted during the attempt took its own)
          INSERT INTO webhook_attempts (delivery_id, status_code, error, duration_ms, created_at)
          SELECT v.id, v.code, NULL, v.ms, v.at FROM v WHERE v.id IN (SELECT id FROM d))
        UPDATE webhook_endpoints SET failing_since = NULL
         WHERE id IN (SELECT endpoint_id FROM d) AND failing_since IS NOT NULL`;
    },

    /** The event JSON source of a delivery. */
    async eventOf(seq: bigint) {
      return db.event.findUnique({ where: { seq } });
    },

    async listDeliveries(endpointId: string, status: string | undefined, limit: number, after?: { createdAt: Date; id: string }): Promise<DeliveryRecord[]> {
      const rows = await db.webhookDelivery.findMany({
        where: {
          endpointId,
          ...(status ? { status } : {}),
          ...(after ? { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] } : {}),
        },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        take: limit,
        include: { attemptLog: { orderBy: { id: 'desc' }, take: 20 } },
      });
      return this.withTypes(rows);
    },

    async getDelivery(id: string): Promise<DeliveryRecord | null> {
      const r = await db.webhookDelivery.findUnique({ where: { id }, include: { attemptLog: { orderBy: { id: 'desc' }, take: 20 } } });
      return r ? (await this.withTypes([r]))[0]! : null;
    },

    async withTypes(rows: Prisma.WebhookDeliveryGetPayload<{ include: { attemptLog: true } }>[]): Promise<DeliveryRecord[]> {
      const types = new Map(
        (await db.event.findMany({ where: { seq: { in: rows.map((r) => r.eventSeq) } }, select: { seq: true, type: true } })).map((e) => [e.seq, e.type]),
      );
      return rows.map((r) => ({
        id: r.id,
        endpointId: r.endpointId,
        eventId: r.eventId,
        eventSeq: r.eventSeq,
        eventType: types.get(r.eventSeq) as EventType,
        status: r.status as DeliveryRecord['status'],
        attempts: r.attempts,
        nextAttemptAt: r.nextAttemptAt,
        lastStatusCode: r.lastStatusCode,
        lastError: r.lastError,
        lastDurationMs: r.lastDurationMs,
        deliveredAt: r.deliveredAt,
        createdAt: r.createdAt,
        attemptLog: [...r.attemptLog].reverse().map((a) => ({ statusCode: a.statusCode, error: a.error, durationMs: a.durationMs, createdAt: a.createdAt })),
      }));
    },

    /** Queue a delivery for an attempt at `now` (manual redelivery). */
    async requeue(id: string, now: Date): Promise<void> {
      await db.webhookDelivery.update({ where: { id }, data: { status: 'pending', nextAttemptAt: now } });
    },

    /** Resume the pending deliveries of a re-enabled endpoint now. */
    async resumeEndpoint(id: string, now: Date): Promise<void> {
      await db.webhookDelivery.updateMany({ where: { endpointId: id, status: 'pending' }, data: { nextAttemptAt: now } });
    },
  };
}

export type WebhooksRepo = ReturnType<typeof createWebhooksRepo>;
