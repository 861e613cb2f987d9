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

/**
 * pglite-prisma-adapter 0.7's executeScript does not await `exec` (a failing migration would be
 * recorded as applied and its error surface as an unhandled rejection): run scripts awaited,
 * errors mapped like every other query error.
 */
function awaitScripts(adapter: SqlDriverAdapter, client: PGlite): SqlDriverAdapter {
  const onError = (adapter as unknown as { onError(e: unknown): never }).onError.bind(adapter);
  adapter.executeScript = async (script: string) => {
    try {
      await client.exec(script);
    } catch (e) {
      onError(e);
    }
  };
  return adapter;
}

export class BazaarPGliteAdapterFactory implements SqlMigrationAwareDriverAdapterFactory {
  readonly provider = 'postgres' as const;
  readonly adapterName: string;
  private readonly inner: PrismaPGlite;

  constructor(readonly client: PGlite) {
    this.inner = new PrismaPGlite(client);
    this.adapterName = this.inner.adapterName;
  }

  async connect(): Promise<SqlDriverAdapter> {
    return awaitScripts((await this.inner.connect()) as SqlDriverAdapter, this.client);
  }

  async connectToShadowDb(): Promise<SqlDriverAdapter> {
    const shadow = await openPGlite();
    const adapter = awaitScripts((await new PrismaPGlite(shadow).connect()) as SqlDriverAdapter, shadow);
    const dispose = adapter.dispose.bind(adapter);
    adapter.dispose = async () => {
      await dispose();
      await shadow.close();
    };
    return adapter;
  }
}
