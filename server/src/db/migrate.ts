/**
 * Versioned SQL migrations (prisma/migrations/<timestamp>_<name>/migration.sql), applied with
 * Prisma's schema engine (WebAssembly) through a driver adapter. Applied migrations are recorded
 * in `_prisma_migrations` exactly like `prisma migrate deploy`, so both tools agree.
 * Idempotent: already-applied migrations are skipped; an edited applied migration is an error.
 *
 * Up to date already (every restart of a version, every replica after the first): `_prisma_migrations` is
 * read first (one SELECT through the adapter), and when it records every local migration as finished, not
 * rolled back, with the checksum of the local file (sha256 of migration.sql, as Prisma writes it), and no
 * other migration failed, the schema engine is not instantiated at all (issue 28 item 5: its WebAssembly
 * instance stays resident for the life of the process, about 30 MB of RSS measured on a PostgreSQL server
 * process). Anything else (a pending, failed, edited or unknown migration, no table yet) goes to the engine,
 * which applies or refuses exactly as before.
 */
import { createHash } from 'node:crypto';
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
  /** whether the schema engine ran (false: `_prisma_migrations` showed every local migration applied) */
  engine: boolean;
}

/**
 * Whether `_prisma_migrations` (read through `adapter`) records every migration of `list` as applied with the
 * local file's checksum, and no failed migration: then there is nothing for the schema engine to do. False on
 * any doubt (no table, a pending/failed/edited/rolled-back migration, an error reading), never a throw.
 */
export async function migrationsUpToDate(adapter: SqlMigrationAwareDriverAdapterFactory, list: MigrationList): Promise<boolean> {
  const local = new Map<string, string>();
  for (const d of list.migrationDirectories) {
    if (d.migrationFile.content.tag !== 'ok') return false;
    local.set(d.path, createHash('sha256').update(d.migrationFile.content.value).digest('hex'));
  }
  let driver: Awaited<ReturnType<SqlMigrationAwareDriverAdapterFactory['connect']>> | null = null;
  try {
    driver = await adapter.connect();
    const exists = await driver.queryRaw({ sql: "SELECT to_regclass('_prisma_migrations') IS NOT NULL AS present", args: [], argTypes: [] });
    if (exists.rows[0]?.[0] !== true) return false;
    const rs = await driver.queryRaw({
      sql: 'SELECT migration_name, checksum, finished_at IS NOT NULL, rolled_back_at IS NOT NULL FROM _prisma_migrations',
      args: [],
      argTypes: [],
    });
    const applied = new Set<string>();
    for (const [name, checksum, finished, rolledBack] of rs.rows as Array<[string, string, boolean, boolean]>) {
      if (rolledBack) continue;
      // a failed migration (started, never finished): the engine refuses to go on, and says why
      if (!finished) return false;
      if (local.has(name) && local.get(name) !== checksum) return false;
      applied.add(name);
    }
    return [...local.keys()].every((name) => applied.has(name));
  } catch {
    return false;
  } finally {
    await driver?.dispose().catch(() => undefined);
  }
}

/** Apply every pending migration. Safe to call on every start. */
export async function migrateDatabase(
  adapter: SqlMigrationAwareDriverAdapterFactory,
  opts: { migrationsDir?: string; schemaPath?: string; onLog?: (log: EngineLog) => void } = {},
): Promise<MigrateResult> {
  const t0 = performance.now();
  const schemaPath = opts.schemaPath ?? SCHEMA_PATH;
  const migrationsList = await readMigrationsList(opts.migrationsDir);
  if (await migrationsUpToDate(adapter, migrationsList)) return { applied: [], ms: Math.round(performance.now() - t0), engine: false };
  const engine = await openSchemaEngine(adapter, { path: schemaPath, content: await readFile(schemaPath, 'utf8') }, opts.onLog);
  try {
    const out = await engine.applyMigrations({ migrationsList, filters: noFilters });
    return { applied: out.appliedMigrationNames, ms: Math.round(performance.now() - t0), engine: true };
  } finally {
    await engine.close();
  }
}
