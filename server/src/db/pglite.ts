/**
 * PGlite (Postgres in WebAssembly) with the extensions the schema needs (pg_trgm), and the
 * Prisma driver-adapter factory over it whose shadow database (used when creating migrations)
 * gets the same extensions.
 */
import { PGlite, type PGliteOptions } from '@electric-sql/pglite';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { PrismaPGlite } from 'pglite-prisma-adapter';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';
import { countStatements, type StatementCounter } from './statement-counter.js';

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

/**
 * pglite-prisma-adapter 0.7's commit() swallows a failing COMMIT (its transaction promise catches the
 * error): a deferred constraint violated at COMMIT (the custody ledger's balanced-entry trigger) would
 * roll the transaction back while Prisma reports success. Before committing, fire the deferred checks
 * with `SET CONSTRAINTS ALL IMMEDIATE`: a violation then fails that statement, which the adapter
 * reports, and Prisma rolls back and throws as on PostgreSQL.
 */
function checkDeferredBeforeCommit(adapter: SqlDriverAdapter): SqlDriverAdapter {
  const start = adapter.startTransaction.bind(adapter);
  adapter.startTransaction = async (...args: Parameters<SqlDriverAdapter['startTransaction']>) => {
    const tx = await start(...args);
    const commit = tx.commit.bind(tx);
    tx.commit = async () => {
      try {
        await tx.executeRaw({ sql: 'SET CONSTRAINTS ALL IMMEDIATE', args: [], argTypes: [] });
      } catch (err) {
        // end the PGlite transaction (Prisma does not roll back after a failed commit; left open,
        // it would hold PGlite's exclusive lock forever)
        await tx.rollback().catch(() => undefined);
        throw err;
      }
      await commit();
    };
    return tx;
  };
  return adapter;
}

export class BazaarPGliteAdapterFactory implements SqlMigrationAwareDriverAdapterFactory {
  readonly provider = 'postgres' as const;
  readonly adapterName: string;
  private readonly inner: PrismaPGlite;

  /** `statements`: counts every statement sent through this factory's connection (db/statement-counter.ts). */
  constructor(
    readonly client: PGlite,
    readonly statements?: StatementCounter,
  ) {
    this.inner = new PrismaPGlite(client);
    this.adapterName = this.inner.adapterName;
  }

  async connect(): Promise<SqlDriverAdapter> {
    const adapter = checkDeferredBeforeCommit(awaitScripts((await this.inner.connect()) as SqlDriverAdapter, this.client));
    // counted outermost: the SET CONSTRAINTS ALL IMMEDIATE before each COMMIT is a statement PGlite runs too
    return this.statements ? countStatements(adapter, this.statements) : adapter;
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
