/**
 * Counts the SQL statements the service sends through Prisma's driver adapter (both engines: PGlite and
 * PostgreSQL), so that "statements per request / per buyer" is a number the tests and the benchmarks
 * can read rather than a guess from logs (issue 28).
 *
 * What counts as one statement: every `queryRaw` / `executeRaw` (a Prisma query may be several), and
 * the `BEGIN`, `COMMIT` and `ROLLBACK` of an interactive or batch transaction (each is a round trip to
 * the server). `executeScript` (migrations) is not counted. Statements sent outside Prisma (the
 * readiness probe's `SELECT 1`, LISTEN/NOTIFY connections) are not counted either.
 */
import type { SqlDriverAdapter, SqlQuery, Transaction } from '@prisma/driver-adapter-utils';

/** A listener told of each statement (`sql` is the text with placeholders; `BEGIN`/`COMMIT`/`ROLLBACK` for transaction control). */
export type StatementListener = (sql: string) => void;

/** A monotonic count of statements, and listeners for tests and benchmarks that want the text. */
export class StatementCounter {
  /** statements sent since the process started (never reset; read differences) */
  count = 0;
  private readonly listeners = new Set<StatementListener>();

  /** Record one statement. */
  record(sql: string): void {
    this.count += 1;
    for (const l of this.listeners) l(sql);
  }

  /** Be told of every statement from now on; returns the function that stops it. */
  listen(listener: StatementListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

function countQueries<T extends { queryRaw(q: SqlQuery): Promise<unknown>; executeRaw(q: SqlQuery): Promise<number> }>(target: T, counter: StatementCounter): T {
  const queryRaw = target.queryRaw.bind(target);
  const executeRaw = target.executeRaw.bind(target);
  target.queryRaw = ((q: SqlQuery) => {
    counter.record(q.sql);
    return queryRaw(q);
  }) as T['queryRaw'];
  target.executeRaw = (q: SqlQuery) => {
    counter.record(q.sql);
    return executeRaw(q);
  };
  return target;
}

/**
 * Wrap `adapter` (in place, and return it) so that every statement it and its transactions send is
 * recorded in `counter`. The adapter's behaviour is otherwise unchanged.
 */
export function countStatements(adapter: SqlDriverAdapter, counter: StatementCounter): SqlDriverAdapter {
  countQueries(adapter, counter);
  const start = adapter.startTransaction.bind(adapter);
  adapter.startTransaction = async (...args: Parameters<SqlDriverAdapter['startTransaction']>): Promise<Transaction> => {
    counter.record('BEGIN');
    const tx = await start(...args);
    // the end of a transaction is sent either as a statement of its own before commit()/rollback() is
    // called (Prisma's engine does so on @prisma/adapter-pg) or by commit()/rollback() themselves
    // (pglite-prisma-adapter): counted once either way
    let endSent = false;
    const txCounter = {
      record(sql: string) {
        if (/^\s*(COMMIT|ROLLBACK)\b/i.test(sql)) endSent = true;
        counter.record(sql);
      },
    } as StatementCounter;
    countQueries(tx, txCounter);
    const end = (what: 'COMMIT' | 'ROLLBACK', run: () => Promise<void>) => async () => {
      try {
        await run();
      } finally {
        // recorded once it has been sent (PGlite's commit sends SET CONSTRAINTS ALL IMMEDIATE first)
        if (!endSent) counter.record(what);
      }
    };
    tx.commit = end('COMMIT', tx.commit.bind(tx));
    tx.rollback = end('ROLLBACK', tx.rollback.bind(tx));
    return tx;
  };
  return adapter;
}
