/**
 * Migrations: apply on an empty database, re-apply as a no-op, and the schema they build matches
 * prisma/schema.prisma (no drift). PGlite always; PostgreSQL too when TEST_DATABASE_URL is set.
 */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { BazaarPgAdapterFactory } from '../server/src/db/postgres.js';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb } from '../server/src/db/client.js';
import { MIGRATIONS_DIR, migrateDatabase, migrationsUpToDate, noFilters, readMigrationsList, SCHEMA_PATH } from '../server/src/db/migrate.js';
import { BazaarPGliteAdapterFactory, openPGlite } from '../server/src/db/pglite.js';
import { openSchemaEngine } from '../server/src/db/schema-engine.js';
import { freshPostgres, TEST_DATABASE_URL } from './helpers/db.js';

async function drift(adapter: SqlMigrationAwareDriverAdapterFactory): Promise<string> {
  const schema = { path: SCHEMA_PATH, content: await readFile(SCHEMA_PATH, 'utf8') };
  const engine = await openSchemaEngine(adapter, schema);
  try {
    const out = await engine.diff({
      from: { tag: 'schemaDatasource', files: [schema], configDir: path.dirname(SCHEMA_PATH) },
      to: { tag: 'schemaDatamodel', files: [schema] },
      script: true,
      exitCode: null,
      filters: noFilters,
    });
    return (out.stdout ?? '').split('\n').filter((l) => l.trim() && !l.trim().startsWith('--')).join('\n');
  } finally {
    await engine.close();
  }
}

async function behavesLikeTheSchema(prisma: Awaited<ReturnType<typeof createDb>>['prisma']) {
  const u = await prisma.user.create({ data: { wallet: 'W1' } });
  const l = await prisma.listing.create({
    data: { sellerId: u.id, title: 'Logo design', description: 'Vector logos', priceBaseUnits: '18446744073709551615', currency: 'USDC', category: 'design', durationDays: 3 },
  });
  expect(l.priceBaseUnits.toFixed()).toBe('18446744073709551615');
  // generated tsvector + trigram index exist and work
  const fts = await prisma.$queryRaw<Array<{ id: string }>>`SELECT id FROM listings WHERE search_vector @@ plainto_tsquery('english', 'logos')`;
  expect(fts.map((r) => r.id)).toEqual([l.id]);
  const trgm = await prisma.$queryRaw<Array<{ sim: number }>>`SELECT similarity(title, 'logo desgin') AS sim FROM listings`;
  expect(Number(trgm[0]!.sim)).toBeGreaterThan(0.3);
  await expect(prisma.$executeRaw`UPDATE users SET role = 'root'`).rejects.toThrow();
  // issue 25: roles are a subset of the operator roles
  await expect(prisma.$executeRaw`UPDATE users SET roles = '{root}'`).rejects.toThrow();
}

const migrationNames = async () => (await readMigrationsList()).migrationDirectories.map((d) => d.path);

describe('migrations on PGlite', () => {
  it('apply once, then are a no-op; the result has no drift from schema.prisma', async () => {
    const pg = await openPGlite();
    try {
      const adapter = new BazaarPGliteAdapterFactory(pg);
      const first = await migrateDatabase(adapter);
      expect(first.applied).toEqual(await migrationNames());
      const second = await migrateDatabase(adapter);
      expect(second.applied).toEqual([]);
      const rows = await pg.query<{ n: number }>('SELECT count(*)::int AS n FROM _prisma_migrations WHERE finished_at IS NOT NULL');
      expect(rows.rows[0]!.n).toBe(first.applied.length);
      expect(await drift(adapter)).toBe('');
      const db = await createDb({ pglite: pg });
      await behavesLikeTheSchema(db.prisma);
      await db.close();
    } finally {
      await pg.close();
    }
  });
});

describe.skipIf(!TEST_DATABASE_URL)('migrations on PostgreSQL (TEST_DATABASE_URL)', () => {
  const cleanups: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const c of cleanups) await c();
  });

  // The drift check (schema introspection) runs on PGlite only: @prisma/adapter-pg cannot decode the
  // pg_catalog "char" columns the schema engine's introspection reads. The SQL is the same.
  it('apply once, then are a no-op; same behaviour', async () => {
    const target = await freshPostgres(); // applies the migrations
    cleanups.push(target.drop);
    const adapter = new BazaarPgAdapterFactory(target.url);
    expect((await migrateDatabase(adapter)).applied).toEqual([]);
    const db = await createDb({ databaseUrl: target.url });
    try {
      await behavesLikeTheSchema(db.prisma);
    } finally {
      await db.close();
    }
  });
});

/** A copy of prisma/migrations plus extra migrations (name -> SQL). */
function migrationsWith(extra: Record<string, string>): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'bazaar-migrations-'));
  cpSync(MIGRATIONS_DIR, dir, { recursive: true });
  for (const [name, sql] of Object.entries(extra)) {
    mkdirSync(path.join(dir, name));
    writeFileSync(path.join(dir, name, 'migration.sql'), sql);
  }
  return dir;
}

const TRICKY = `-- a comment; with semicolons; inside
CREATE FUNCTION bazaar_test_fn() RETURNS text LANGUAGE plpgsql AS $$
BEGIN
  RETURN 'a;b';
END;
$$;
CREATE TABLE "tricky" ("v" TEXT NOT NULL DEFAULT 'x;y');
`;
const BROKEN = 'CREATE TABLE "half_done" ("id" INT);\nCREATE TABLE "users" ("id" INT);\n';

async function scriptsBehave(adapter: SqlMigrationAwareDriverAdapterFactory, query: (sql: string) => Promise<unknown[]>) {
  const tricky = migrationsWith({ '99990101000000_tricky': TRICKY });
  const broken = migrationsWith({ '99990101000000_tricky': TRICKY, '99990102000000_broken': BROKEN });
  try {
    const ok = await migrateDatabase(adapter, { migrationsDir: tricky });
    expect(ok.applied).toContain('99990101000000_tricky');
    expect(await query(`SELECT bazaar_test_fn() AS v`)).toEqual([{ v: 'a;b' }]);
    await expect(migrateDatabase(adapter, { migrationsDir: broken })).rejects.toThrow(/users|exists/);
    // a failed migration is not recorded as applied
    const rows = await query(
      `SELECT migration_name FROM _prisma_migrations WHERE migration_name = '99990102000000_broken' AND finished_at IS NOT NULL`,
    );
    expect(rows).toEqual([]);
  } finally {
    rmSync(tricky, { recursive: true, force: true });
    rmSync(broken, { recursive: true, force: true });
  }
}

/**
 * Issue 25 (20261126200000_user_roles): the users an older release made admins (`role = 'admin'`) hold
 * admin, arbiter and moderator afterwards (today's admin does all three jobs); everyone else holds none.
 */
async function rolesBackfilled(adapter: SqlMigrationAwareDriverAdapterFactory, query: (sql: string) => Promise<unknown[]>) {
  const before = mkdtempSync(path.join(tmpdir(), 'bazaar-migrations-'));
  cpSync(MIGRATIONS_DIR, before, { recursive: true });
  const names = (await migrationNames()).filter((n) => n >= '20261126200000_user_roles');
  expect(names[0]).toBe('20261126200000_user_roles');
  for (const n of names) rmSync(path.join(before, n), { recursive: true, force: true });
  try {
    await migrateDatabase(adapter, { migrationsDir: before });
    await query(`INSERT INTO users (id, wallet, role) VALUES
      ('c0ffee00-0000-4000-8000-0000000000a1', 'AdminWallet', 'admin'),
      ('c0ffee00-0000-4000-8000-0000000000b2', 'UserWallet', 'user')`);
    expect((await migrateDatabase(adapter)).applied).toEqual(names);
    expect(await query(`SELECT wallet, role, roles FROM users ORDER BY wallet`)).toEqual([
      { wallet: 'AdminWallet', role: 'admin', roles: ['admin', 'arbiter', 'moderator'] },
      { wallet: 'UserWallet', role: 'user', roles: [] },
    ]);
  } finally {
    rmSync(before, { recursive: true, force: true });
  }
}

describe('the roles migration (issue 25)', () => {
  it('PGlite: role admin becomes roles {admin, arbiter, moderator}; other users hold none', async () => {
    const pg = await openPGlite();
    try {
      await rolesBackfilled(new BazaarPGliteAdapterFactory(pg), async (sql) => (await pg.query(sql)).rows);
    } finally {
      await pg.close();
    }
  });

  it.skipIf(!TEST_DATABASE_URL)('PostgreSQL: the same', async () => {
    const { default: pg } = await import('pg');
    const name = `bazaar_test_roles_${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
    const server = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await server.connect();
    await server.query(`CREATE DATABASE "${name}"`);
    const u = new URL(TEST_DATABASE_URL!);
    u.pathname = `/${name}`;
    const client = new pg.Client({ connectionString: u.toString() });
    await client.connect();
    try {
      await rolesBackfilled(new BazaarPgAdapterFactory(u.toString()), async (sql) => (await client.query(sql)).rows);
    } finally {
      await client.end();
      await server.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await server.end();
    }
  });
});

describe('migration scripts', () => {
  it('PGlite: semicolons in comments/strings/functions work, failures surface and are not recorded', async () => {
    const pg = await openPGlite();
    try {
      await scriptsBehave(new BazaarPGliteAdapterFactory(pg), async (sql) => (await pg.query(sql)).rows);
    } finally {
      await pg.close();
    }
  });

  it.skipIf(!TEST_DATABASE_URL)('PostgreSQL: the same', async () => {
    const target = await freshPostgres();
    const { default: pg } = await import('pg');
    const client = new pg.Client({ connectionString: target.url });
    await client.connect();
    try {
      await scriptsBehave(new BazaarPgAdapterFactory(target.url), async (sql) => (await client.query(sql)).rows);
    } finally {
      await client.end();
      await target.drop();
    }
  });
});

describe('an up-to-date database is checked without the schema engine (issue 28 item 5)', () => {
  it('PGlite: nothing pending -> engine not opened; a pending, edited or failed migration still goes to the engine', async () => {
    const pg = await openPGlite();
    const extra = migrationsWith({ '99990101000000_extra': 'CREATE TABLE "extra" ("id" INT);\n' });
    const edited = migrationsWith({ '99990101000000_extra': 'CREATE TABLE "extra" ("id" INT);\n-- edited after it was applied\n' });
    const broken = migrationsWith({ '99990101000000_extra': 'CREATE TABLE "extra" ("id" INT);\n', '99990102000000_broken': BROKEN });
    try {
      const adapter = new BazaarPGliteAdapterFactory(pg);
      expect((await migrateDatabase(adapter)).engine).toBe(true);
      // every restart of the same version: one SELECT, no WebAssembly engine in the process
      expect(await migrateDatabase(adapter)).toMatchObject({ applied: [], engine: false });
      // a new migration: the engine applies it, then the next start skips the engine again
      expect(await migrateDatabase(adapter, { migrationsDir: extra })).toMatchObject({ applied: ['99990101000000_extra'], engine: true });
      expect(await migrateDatabase(adapter, { migrationsDir: extra })).toMatchObject({ applied: [], engine: false });
      // an applied migration edited since: not "up to date", the engine decides (as before)
      expect(await migrationsUpToDate(adapter, await readMigrationsList(edited))).toBe(false);
      // a failed migration recorded in _prisma_migrations: the engine refuses, as before, on every later start
      await expect(migrateDatabase(adapter, { migrationsDir: broken })).rejects.toThrow(/users|exists/);
      expect(await migrationsUpToDate(adapter, await readMigrationsList(extra))).toBe(false);
      await expect(migrateDatabase(adapter, { migrationsDir: extra })).rejects.toThrow();
    } finally {
      for (const d of [extra, edited, broken]) rmSync(d, { recursive: true, force: true });
      await pg.close();
    }
  });

  it.skipIf(!TEST_DATABASE_URL)('PostgreSQL: a migrated database is checked without the engine', async () => {
    const target = await freshPostgres(); // applies the migrations
    try {
      expect(await migrateDatabase(new BazaarPgAdapterFactory(target.url))).toMatchObject({ applied: [], engine: false });
    } finally {
      await target.drop();
    }
  });
});
