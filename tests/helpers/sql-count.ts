/**
 * Statements a piece of work sends to the database, read from the service's own counter
 * (server/src/db/statement-counter.ts, `Db.statements`): for tests that pin how many round trips an
 * operation costs (issue 28: "SQL statements per buyer cut by at least half").
 *
 * Background loops of the app under test (payment watcher, outbox) send statements too: pin counts in
 * apps whose loops are off (createTestApp's default) or read `sql` to see what was counted.
 */
import type { StatementCounter } from '../../server/src/db/statement-counter.js';

/** What `statementsDuring` saw: the work's result, the number of statements, and their text in order. */
export interface CountedStatements<T> {
  result: T;
  count: number;
  sql: string[];
}

/** Run `work` and report the statements sent through `db.statements` while it ran. */
export async function statementsDuring<T>(db: { statements: StatementCounter }, work: () => Promise<T>): Promise<CountedStatements<T>> {
  const sql: string[] = [];
  const stop = db.statements.listen((s) => sql.push(s));
  try {
    const result = await work();
    return { result, count: sql.length, sql };
  } finally {
    stop();
  }
}
