/**
 * Test databases.
 *
 * PGlite: the migrations are applied once per test run into a template, dumped to
 * $TMPDIR/bazaar-pglite-template-<hash>.tar (hash of the migrations + PGlite version) and every test
 * file loads its own fresh copy from that dump (~0.4 s instead of ~3 s start + migrate).
 * tests/helpers/global-setup.ts builds it up front; freshPGlite() builds it on demand otherwise.
 *
 * DATA_DIR for server processes: migratedDataDir() copies a directory template (DATA_DIR/pglite holding the
 * migrated database, unpacked once per run next to the dump by ensureDataDirTemplate(), which globalSetup
 * calls too), so a process started on it opens a ready database instead of running initdb and the
 * migrations (a file copy instead of ~3 s per start).
 *
 * PostgreSQL: when TEST_DATABASE_URL is set, freshPostgres() creates a throw-away database on that
 * server (CREATE DATABASE bazaar_test_<random>), migrates it, and drop() removes it.
 */
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { MIGRATIONS_DIR, migrateDatabase } from '../../server/src/db/migrate.js';
import { BazaarPGliteAdapterFactory, openPGlite } from '../../server/src/db/pglite.js';
import { BazaarPgAdapterFactory } from '../../server/src/db/postgres.js';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;

function migrationsHash(): string {
  const h = createHash('sha256');
  const pkg = JSON.parse(
    readFileSync(path.join(path.dirname(MIGRATIONS_DIR), '../node_modules/@electric-sql/pglite/package.json'), 'utf8'),
  ) as { version: string };
  h.update(pkg.version);
  for (const name of readdirSync(MIGRATIONS_DIR).sort()) {
    const file = path.join(MIGRATIONS_DIR, name, 'migration.sql');
    if (existsSync(file)) h.update(name).update(readFileSync(file));
  }
  return h.digest('hex').slice(0, 16);
}

export function templatePath(): string {
  return path.join(tmpdir(), `bazaar-pglite-template-${migrationsHash()}.tar`);
}

/** Build the migrated template dump unless it exists; returns its path. */
export async function ensurePGliteTemplate(): Promise<string> {
  const file = templatePath();
  if (existsSync(file)) return file;
  const db = await openPGlite();
  try {
    await migrateDatabase(new BazaarPGliteAdapterFactory(db));
    const dump = await db.dumpDataDir('none');
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
    writeFileSync(tmp, Buffer.from(await dump.arrayBuffer()));
    renameSync(tmp, file); // atomic: concurrent builders race harmlessly
  } finally {
    await db.close();
  }
  return file;
}

/**
 * A DATA_DIR template whose `pglite/` is the migrated database on disk (from the dump of
 * ensurePGliteTemplate); built unless it exists; returns its path.
 */
export async function ensureDataDirTemplate(): Promise<string> {
  const dump = await ensurePGliteTemplate();
  const dir = dump.replace(/\.tar$/, '.datadir');
  if (existsSync(path.join(dir, 'pglite', 'PG_VERSION'))) return dir;
  const tmp = mkdtempSync(`${dir}.${process.pid}.`);
  const db = await openPGlite({ dataDir: path.join(tmp, 'pglite'), loadDataDir: new Blob([readFileSync(dump)]) });
  await db.close();
  try {
    renameSync(tmp, dir); // atomic: a concurrent builder that lost the race throws and drops its copy
  } catch {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

/**
 * A fresh DATA_DIR (under the system temp directory, named after `prefix`) whose embedded database is
 * already migrated: a copy of ensureDataDirTemplate(). The caller removes it.
 */
export async function migratedDataDir(prefix = 'bazaar-data-'): Promise<string> {
  const template = await ensureDataDirTemplate();
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  cpSync(template, dir, { recursive: true });
  return dir;
}

/** A fresh, migrated, in-memory PGlite (its own copy of the template). */
export async function freshPGlite(): Promise<PGlite> {
  const file = await ensurePGliteTemplate();
  const blob = new Blob([readFileSync(file)]);
  return openPGlite({ loadDataDir: blob });
}

/** A fresh migrated database on the TEST_DATABASE_URL server. */
export async function freshPostgres(baseUrl = TEST_DATABASE_URL): Promise<{ url: string; drop(): Promise<void> }> {
  if (!baseUrl) throw new Error('TEST_DATABASE_URL is not set');
  const name = `bazaar_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: baseUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${name}"`);
  await admin.end();
  const u = new URL(baseUrl);
  u.pathname = `/${name}`;
  const url = u.toString();
  const drop = async () => {
    const c = new pg.Client({ connectionString: baseUrl });
    await c.connect();
    await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
    await c.end();
  };
  try {
    await migrateDatabase(new BazaarPgAdapterFactory(url));
  } catch (e) {
    await drop();
    throw e;
  }
  return { url, drop };
}
