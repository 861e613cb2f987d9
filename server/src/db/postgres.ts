/**
 * @prisma/adapter-pg with one fix for migrations: its executeScript splits the script on every ";"
 * (breaking semicolons in comments, strings and function bodies) and runs the pieces one by one.
 * Here the whole script goes to PostgreSQL as one simple-protocol query, which PostgreSQL parses
 * properly and runs as one implicit transaction (all or nothing).
 */
import { PrismaPg } from '@prisma/adapter-pg';
import type { SqlDriverAdapter, SqlMigrationAwareDriverAdapterFactory } from '@prisma/driver-adapter-utils';

type Queryable = { query(sql: string): Promise<unknown> };

function wholeScripts(adapter: SqlDriverAdapter): SqlDriverAdapter {
  const client = (adapter as unknown as { client: Queryable }).client;
  const onError = (adapter as unknown as { onError(e: unknown): never }).onError.bind(adapter);
  adapter.executeScript = async (script: string) => {
    try {
      await client.query(script);
    } catch (e) {
      onError(e);
    }
  };
  return adapter;
}

export class BazaarPgAdapterFactory implements SqlMigrationAwareDriverAdapterFactory {
  readonly provider = 'postgres' as const;
  readonly adapterName: string;
  private readonly inner: PrismaPg;

  constructor(connectionString: string) {
    this.inner = new PrismaPg({ connectionString });
    this.adapterName = this.inner.adapterName;
  }

  async connect(): Promise<SqlDriverAdapter> {
    return wholeScripts((await this.inner.connect()) as SqlDriverAdapter);
  }

  async connectToShadowDb(): Promise<SqlDriverAdapter> {
    return wholeScripts((await this.inner.connectToShadowDb()) as SqlDriverAdapter);
  }
}
