/**
 * The statement counter (server/src/db/statement-counter.ts) counts what Prisma sends through the
 * driver adapter on both engines: each query, and BEGIN / COMMIT / ROLLBACK of a transaction.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../server/src/db/client.js';
import { freshPGlite, freshPostgres, TEST_DATABASE_URL } from './helpers/db.js';
import { statementsDuring } from './helpers/sql-count.js';

const engines: Array<[string, () => Promise<{ db: Db; done(): Promise<void> }>]> = [
  ['pglite', async () => {
    const pglite = await freshPGlite();
    const db = await createDb({ pglite });
    return { db, done: async () => { await db.close(); await pglite.close(); } };
  }],
];
if (TEST_DATABASE_URL) {
  engines.push(['postgres', async () => {
    const pgdb = await freshPostgres();
    const db = await createDb({ databaseUrl: pgdb.url, limits: { poolMax: 2, poolTimeoutMs: 5_000, statementTimeoutMs: 5_000, lockTimeoutMs: 5_000, idleInTransactionTimeoutMs: 5_000 } });
    return { db, done: async () => { await db.close(); await pgdb.drop(); } };
  }]);
}

describe.each(engines)('statement counter (%s)', (engine, open) => {
  const opened: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const d of opened) await d();
  });

  it('counts one statement per query and BEGIN + COMMIT around a transaction, and stops counting for a listener that left', async () => {
    const { db, done } = await open();
    opened.push(done);
    const single = await statementsDuring(db, () => db.prisma.$queryRaw`SELECT 1 AS one`);
    expect(single.count).toBe(1);
    expect(single.sql[0]).toMatch(/SELECT 1/);

    const tx = await statementsDuring(db, () =>
      db.prisma.$transaction(async (t) => {
        await t.$queryRaw`SELECT 1`;
        await t.$queryRaw`SELECT 2`;
      }),
    );
    // PGlite also runs SET CONSTRAINTS ALL IMMEDIATE before COMMIT (db/pglite.ts)
    const expected = engine === 'pglite' ? ['BEGIN', 'SELECT 1', 'SELECT 2', 'SET CONSTRAINTS ALL IMMEDIATE', 'COMMIT'] : ['BEGIN', 'SELECT 1', 'SELECT 2', 'COMMIT'];
    expect(tx.sql.map((s) => s.trim())).toEqual(expected);

    const failed = await statementsDuring(db, () =>
      db.prisma
        .$transaction(async (t) => {
          await t.$queryRaw`SELECT 1`;
          throw new Error('abort');
        })
        .catch(() => 'aborted'),
    );
    expect(failed.result).toBe('aborted');
    expect(failed.sql.map((s) => s.trim())).toEqual(['BEGIN', 'SELECT 1', 'ROLLBACK']);

    const before = db.statements.count;
    await db.prisma.$queryRaw`SELECT 3`;
    expect(db.statements.count).toBe(before + 1);
  });
});
