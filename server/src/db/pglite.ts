/**
 * PGlite (Postgres in WebAssembly) with the extensions the schema needs (pg_trgm), and the
 * Prisma driver-adapter factory over it whose shadow database (used when creating migrations)
 * gets the same extensions.
 */
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';

export const pgliteExtensions = { pg_trgm };

/** `dataDir` undefined -> in memory; `loadDataDir` -> start from a dump (PGlite.dumpDataDir()). */
export async function openPGlite(opts: { dataDir?: string; loadDataDir?: Blob | File } = {}): Promise<PGlite> {
  const options: PGliteOptions = { extensions: pgliteExtensions };
  if (opts.dataDir) options.dataDir = opts.dataDir;
  if (opts.loadDataDir) options.loadDataDir = opts.loadDataDir;
  return PGlite.create(options);
}

export class BazaarPGliteAdapterFactory implements SqlMigrationAwareDriverAdapterFactory {
  readonly provider = 'postgres' as const;
  readonly adapterName: string;
  private readonly inner: PrismaPGlite;

  constructor(readonly client: PGlite) {
    this.inner = new PrismaPGlite(client);
    this.adapterName = this.inner.adapterName;
  }

  connect(): Promise<SqlDriverAdapter> {
    return this.inner.connect() as Promise<SqlDriverAdapter>;
  }

  async connectToShadowDb(): Promise<SqlDriverAdapter> {
    const shadow = await openPGlite();
    const adapter = (await new PrismaPGlite(shadow).connect()) as SqlDriverAdapter;
    const dispose = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      await dispose();
      await shadow.close();
    };
    return adapter;
  }
}
