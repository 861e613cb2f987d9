/**
 * Versioned SQL migrations (prisma/migrations/<timestamp>_<name>/migration.sql), applied with
 * Prisma's schema engine (WebAssembly) through a driver adapter. Applied migrations are recorded
 * in `_prisma_migrations` exactly like `prisma migrate deploy`, so both tools agree.
 * Idempotent: already-applied migrations are skipped; an edited applied migration is an error.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { openSchemaEngine, type EngineLog, type MigrationList } from './schema-engine.js';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
export const PRISMA_DIR = path.join(REPO_ROOT, 'prisma');
export const SCHEMA_PATH = path.join(PRISMA_DIR, 'schema.prisma');
export const MIGRATIONS_DIR = path.join(PRISMA_DIR, 'migrations');

export const noFilters = { externalTables: [] as string[], externalEnums: [] as string[] };

/** The migrations folder as the schema engine wants it. */
export async function readMigrationsList(dir = MIGRATIONS_DIR): Promise<MigrationList> {
  const lockPath = path.join(dir, 'migration_lock.toml');
  const entries = existsSync(dir) ? await readdir(dir, { withFileTypes: true }) : [];
  const names = entries.filter((e) => e.isDirectory()).map((e) => e.name).sort();
  const migrationDirectories = [];
  for (const name of names) {
    const file = path.join(dir, name, 'migration.sql');
    const content = existsSync(file)
      ? ({ tag: 'ok', value: await readFile(file, 'utf8') } as const)
      : ({ tag: 'error', value: `missing ${file}` } as const);
    migrationDirectories.push({ path: name, migrationFile: { path: 'migration.sql', content } });
  }
  return {
    baseDir: dir,
    lockfile: { path: 'migration_lock.toml', content: existsSync(lockPath) ? await readFile(lockPath, 'utf8') : null },
    shadowDbInitScript: '',
    migrationDirectories,
  };
}

export interface MigrateResult {
  applied: string[];
  ms: number;
}

/** Apply every pending migration. Safe to call on every start. */
export async function migrateDatabase(
  adapter: SqlMigrationAwareDriverAdapterFactory,
  opts: { migrationsDir?: string; schemaPath?: string; onLog?: (log: EngineLog) => void } = {},
): Promise<MigrateResult> {
  const t0 = performance.now();
  const schemaPath = opts.schemaPath ?? SCHEMA_PATH;
  const engine = await openSchemaEngine(adapter, { path: schemaPath, content: await readFile(schemaPath, 'utf8') }, opts.onLog);
  try {
    const out = await engine.applyMigrations({
      migrationsList: await readMigrationsList(opts.migrationsDir),
      filters: noFilters,
    });
    return { applied: out.appliedMigrationNames, ms: Math.round(performance.now() - t0) };
  } finally {
    await engine.close();
  }
}
