/**
 * The one classifier of database failures that are the database's fault, not the request's: the
 * server unreachable or gone, the pool exhausted, a statement/lock/transaction timeout, PGlite
 * closed. http/problem.ts turns them into 503 with Retry-After (never 500): `database-unavailable` when the
 * database cannot be reached (reason `unreachable`: a failover in progress, the server gone), else
 * `service-unavailable` (overloaded, timed out, a conflict);
 * everything else (constraint violations, a missing table, bad SQL) stays an error of its own.
 *
 * Shapes recognised (Prisma 7 with a driver adapter; the adapter's error sits in
 * `meta.driverAdapterError.cause`, see @prisma/adapter-pg convertDriverError):
 * - Prisma codes P1001 (unreachable), P1002, P1008 (timed out), P1017 (server closed the connection),
 *   P2024 (pool timeout), P2028 (interactive transaction API error: timed out, closed);
 * - adapter kinds DatabaseNotReachable, ConnectionClosed, SocketTimeout, TooManyConnections,
 *   TransactionWriteConflict (40001 serialization / 40P01 deadlock: retryable);
 * - PostgreSQL SQLSTATEs (kind "postgres"): class 08 connection exception, 53 insufficient resources,
 *   57 operator intervention (57014 statement timeout / cancel, 57P01..57P05 shutdown, crash, idle
 *   session timeout), 58 system error, 55P03 lock_not_available (lock timeout), 25P03 idle-in-transaction
 *   timeout, 25006 read_only_sql_transaction (a write on a server a failover turned into a standby);
 * - db/host-list.ts NoAcceptableHostError (SQLSTATE 08001): no server of a host-list DATABASE_URL gave a
 *   read-write session (the primary died and the standby is not promoted yet);
 * - the same SQLSTATEs as a bare `code` beside a `severity` (node-postgres DatabaseError, NoAcceptableHostError):
 *   what the driver throws to reads that bypass Prisma (db/prepared.ts);
 * - errors node-postgres throws outside the adapter's mapping ("timeout exceeded when trying to
 *   connect" = pool acquire timeout, "Connection terminated ...", ECONNREFUSED/ECONNRESET/ETIMEDOUT);
 * - db/postgres.ts PoolQueueFullError ("database work queue is full", SQLSTATE 53300): the bounded
 *   connection queue refused a query;
 * - PGlite: "PGlite is closed" (the embedded database stopped or failed).
 */

export type DbFailureReason = 'unreachable' | 'timeout' | 'overloaded' | 'conflict';

export interface DbFailure {
  reason: DbFailureReason;
  /** seconds a client should wait before retrying (the Retry-After header) */
  retryAfterSeconds: number;
}

const PRISMA_CODES: Record<string, DbFailureReason> = {
  P1001: 'unreachable',
  P1002: 'timeout',
  P1008: 'timeout',
  P1017: 'unreachable',
  P2024: 'overloaded',
  P2028: 'timeout',
};

const ADAPTER_KINDS: Record<string, DbFailureReason> = {
  DatabaseNotReachable: 'unreachable',
  ConnectionClosed: 'unreachable',
  SocketTimeout: 'timeout',
  TooManyConnections: 'overloaded',
  TransactionWriteConflict: 'conflict',
};

function sqlState(code: string): DbFailureReason | null {
  // 25006 read_only_sql_transaction: a write reached a server that became a standby (a failover demoted it)
  if (code === '25006') return 'unreachable';
  if (code === '55P03' || code === '57014' || code === '25P03') return 'timeout';
  if (code === '40001' || code === '40P01') return 'conflict';
  if (code.startsWith('08') || code.startsWith('57') || code.startsWith('58')) return 'unreachable';
  if (code.startsWith('53')) return 'overloaded';
  return null;
}

/** A PostgreSQL SQLSTATE: five digits or upper-case letters. */
const SQLSTATE = /^[0-9A-Z]{5}$/;

const MESSAGES: Array<[RegExp, DbFailureReason]> = [
  [/timeout exceeded when trying to connect/i, 'overloaded'],
  [/database work queue is full/i, 'overloaded'],
  [/Connection terminated/i, 'unreachable'],
  [/Client has encountered a connection error/i, 'unreachable'],
  [/Cannot use a pool after calling end/i, 'unreachable'],
  [/PGlite is closed/i, 'unreachable'],
];

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EPIPE', 'EHOSTUNREACH']);

const RETRY_AFTER: Record<DbFailureReason, number> = { unreachable: 5, timeout: 2, overloaded: 2, conflict: 1 };

type Loose = { code?: unknown; kind?: unknown; message?: unknown; cause?: unknown; meta?: { driverAdapterError?: unknown } };

function classifyOne(e: Loose): DbFailureReason | null {
  if (typeof e.code === 'string') {
    if (PRISMA_CODES[e.code]) return PRISMA_CODES[e.code]!;
    if (SOCKET_CODES.has(e.code)) return 'unreachable';
    // a bare SQLSTATE: node-postgres's DatabaseError and db/host-list.ts NoAcceptableHostError, as thrown on the
    // driver outside Prisma (db/prepared.ts reads); both carry `severity`, which tells them from other coded errors
    if (typeof (e as { severity?: unknown }).severity === 'string' && SQLSTATE.test(e.code)) {
      const r = sqlState(e.code);
      if (r) return r;
    }
  }
  if (typeof e.kind === 'string') {
    if (ADAPTER_KINDS[e.kind]) return ADAPTER_KINDS[e.kind]!;
    if (e.kind === 'postgres' && typeof e.code === 'string') return sqlState(e.code);
  }
  if (typeof (e as { originalCode?: unknown }).originalCode === 'string') {
    const r = sqlState((e as { originalCode: string }).originalCode);
    if (r) return r;
  }
  if (typeof e.message === 'string') {
    for (const [re, reason] of MESSAGES) if (re.test(e.message)) return reason;
  }
  return null;
}

/**
 * `err` (anything thrown by Prisma, the pg pool or PGlite) -> a DbFailure when the database is
 * unavailable, overloaded or timed out; null for any other error. Walks `cause` chains and the
 * driver adapter error Prisma attaches in `meta.driverAdapterError`.
 */
export function classifyDbError(err: unknown): DbFailure | null {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length) {
    const e = queue.shift();
    if (!e || typeof e !== 'object' || seen.has(e)) continue;
    seen.add(e);
    const reason = classifyOne(e as Loose);
    if (reason) return { reason, retryAfterSeconds: RETRY_AFTER[reason] };
    const l = e as Loose;
    queue.push(l.cause, l.meta?.driverAdapterError);
  }
  return null;
}
