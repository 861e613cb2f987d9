/**
 * Database factory: the generated Prisma client over a driver adapter.
 *
 * - no `databaseUrl` -> PGlite (embedded Postgres, WebAssembly) persisted under `<dataDir>/pglite`
 *   (`dataDir: 'memory://'`-style in-memory use: pass `pglite` directly, as the tests do);
 * - `postgres://` / `postgresql://` -> node-postgres pool via @prisma/adapter-pg.
 *
 * `adapter` is the migration-aware adapter factory, for migrateDatabase() (./migrate.ts).
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { BazaarPgAdapterFactory } from './postgres.js';
import type { SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaClient } from '../generated/prisma/client.js';
import { BazaarPGliteAdapterFactory, openPGlite } from './pglite.js';

export { PrismaClient, Prisma } from '../generated/prisma/client.js';
export type { User, ApiKey, LoginNonce, Listing, Order, ChainIntent, Review, IdempotencyKey } from '../generated/prisma/client.js';

export interface Db {
  prisma: PrismaClient;
  adapter: SqlMigrationAwareDriverAdapterFactory;
  kind: 'pglite' | 'postgres';
  /** the PGlite instance (kind 'pglite' only) */
  pglite?: PGlite;
  close(): Promise<void>;
}

export interface CreateDbOptions {
  databaseUrl?: string;
  /** DATA_DIR; PGlite lives in <dataDir>/pglite (default ./data) */
  dataDir?: string;
  /** use this PGlite instance instead of opening one (tests) */
  pglite?: PGlite;
}

export async function createDb(opts: CreateDbOptions = {}): Promise<Db> {
  if (opts.databaseUrl) {
    if (!/^postgres(ql)?:\/\//.test(opts.databaseUrl)) {
      throw new Error('DATABASE_URL must be a postgres:// or postgresql:// URL');
    }
    const adapter = new BazaarPgAdapterFactory(opts.databaseUrl);
    const prisma = new PrismaClient({ adapter });
    return {
      prisma,
      adapter,
      kind: 'postgres',
      close: () => prisma.$disconnect(),
    };
  }
  let pglite = opts.pglite;
  const owned = !pglite;
  if (!pglite) {
    const dir = path.resolve(opts.dataDir ?? './data', 'pglite');
    mkdirSync(dir, { recursive: true });
    pglite = await openPGlite({ dataDir: dir });
  }
  const adapter = new BazaarPGliteAdapterFactory(pglite);
  const prisma = new PrismaClient({ adapter });
  return {
    prisma,
    adapter,
    kind: 'pglite',
    pglite,
    async close() {
      await prisma.$disconnect();
      if (owned && !pglite!.closed) await pglite!.close();
    },
  };
}
