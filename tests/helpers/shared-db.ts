/**
 * Databases for suites that run on both engines and open several clients on one database (as N
 * replicas share one PostgreSQL).
 */
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll } from 'vitest';
import { createDb, type Db } from '../../server/src/db/client';
import { freshPGlite, freshPostgres, TEST_DATABASE_URL } from './db';

/** `describe.each(dbBackends)`: PGlite always, PostgreSQL too when TEST_DATABASE_URL is set. */
export const dbBackends = [{ name: 'PGlite', postgres: false }, ...(TEST_DATABASE_URL ? [{ name: 'PostgreSQL', postgres: true }] : [])];

/**
 * Call inside a describe: a fresh database for the suite (PGlite, or PostgreSQL when `postgres`);
 * `client()` opens one more Prisma client on it (one per replica). Every client and the database are
 * closed (dropped) after the suite.
 */
export function sharedDatabase(postgres: boolean): { client(): Promise<Db> } {
  let pglite: PGlite | undefined;
  let pg: Awaited<ReturnType<typeof freshPostgres>> | undefined;
  const dbs: Db[] = [];
  beforeAll(async () => {
    if (postgres) pg = await freshPostgres();
    else pglite = await freshPGlite();
  });
  afterAll(async () => {
    for (const db of dbs) await db.close();
    if (pglite && !pglite.closed) await pglite.close();
    await pg?.drop();
  });
  return {
    async client() {
      const db = await createDb(pg ? { databaseUrl: pg.url } : { pglite });
      dbs.push(db);
      return db;
    },
  };
}
