/**
 * Migrations: apply on an empty database, re-apply as a no-op, and the schema they build matches
 * prisma/schema.prisma (no drift). PGlite always; PostgreSQL too when TEST_DATABASE_URL is set.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { afterAll, describe, expect, it } from 'vitest';
import { createDb } from '../server/src/db/client.js';
import { migrateDatabase, noFilters, readMigrationsList, SCHEMA_PATH } from '../server/src/db/migrate.js';
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
    engine.free();
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
    const adapter = new PrismaPg({ connectionString: target.url });
    expect((await migrateDatabase(adapter)).applied).toEqual([]);
    const db = await createDb({ databaseUrl: target.url });
    try {
      await behavesLikeTheSchema(db.prisma);
    } finally {
      await db.close();
    }
  });
});
