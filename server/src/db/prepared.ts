/**
 * Prepared reads through the driver (issue 28 item 1): the hottest public reads (GET /listings/{id},
 * GET /categories) send their one statement as a named prepared statement on the node-postgres pool
 * that already backs the Prisma client, instead of through Prisma's `$queryRaw`.
 *
 * Why: a CPU profile of `npm run bench` put Prisma on the stack of most samples of these reads; measured
 * in one process on the same database (10 000 listings, 32 in flight), the listing read cost about
 * 400-650 µs of CPU through `$queryRaw` and 125-135 µs as a prepared statement on the same pool
 * (docs/performance.md section 1). Everything else keeps Prisma.
 *
 * Same pool, same rules: the statement goes through the service's BoundedPool (its wait-queue bound,
 * connect / statement / query timeouts, host-list failover) and is counted in `Db.statements` like
 * every statement Prisma sends; its errors are the pool's and driver's, which db/errors.ts classifies
 * (503 for an unavailable or overloaded database). A client that is not registered (PGlite, an
 * interactive transaction, a test double) runs the same SQL through `$queryRawUnsafe`, so both engines
 * answer alike.
 *
 * Rows are node-postgres rows: timestamptz as Date, int4 as number, int8/numeric as string, json/jsonb
 * parsed; callers select columns whose conversion they handle either way (listings.sql.ts casts).
 */
import type pg from 'pg';
import type { StatementCounter } from './statement-counter.js';

/** A statement prepared once per connection under `name` (node-postgres named statements). */
export interface PreparedStatement {
  /** unique per SQL text in the process (node-postgres refuses one name for two texts on a connection) */
  name: string;
  /** the SQL with $1.. placeholders */
  text: string;
}

interface Driver {
  pool: pg.Pool;
  statements: StatementCounter;
}

/** The object whose queries `$queryRawUnsafe` runs (a PrismaClient or a transaction client). */
export interface RawQueryClient {
  $queryRawUnsafe<T = unknown>(query: string, ...values: unknown[]): Promise<T>;
}

const drivers = new WeakMap<object, Driver>();

/** Mark `client` (a PrismaClient over `pool`) as one whose prepared reads may use `pool` directly. */
export function registerDriverPool(client: object, pool: pg.Pool, statements: StatementCounter): void {
  drivers.set(client, { pool, statements });
}

/**
 * Run `stmt` with `values` on `client`'s pool as a prepared statement (see the module comment), or
 * through `client.$queryRawUnsafe` when the client has no registered pool. Resolves to the rows.
 * Throws what the driver throws (db/errors.ts classifies it).
 */
export async function preparedRead<T>(client: RawQueryClient, stmt: PreparedStatement, values: unknown[]): Promise<T[]> {
  const driver = drivers.get(client);
  if (!driver) return client.$queryRawUnsafe<T[]>(stmt.text, ...values);
  driver.statements.record(stmt.text);
  const res = await driver.pool.query({ name: stmt.name, text: stmt.text, values });
  return res.rows as T[];
}
