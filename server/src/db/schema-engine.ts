/**
 * Prisma's schema engine as WebAssembly (@prisma/schema-engine-wasm), driven through a driver
 * adapter: no native schema-engine binary, works offline, on PGlite and on PostgreSQL.
 *
 * The package's own entry imports the .wasm as an ES module (needs --experimental-wasm-modules),
 * so we instantiate it ourselves and hand the exports to its JS glue.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  bindMigrationAwareSqlAdapterFactory,
  type SqlDriverAdapter,
  type SqlMigrationAwareDriverAdapterFactory,
} from '@prisma/driver-adapter-utils';

const require = createRequire(import.meta.url);

// eslint-disable-next-line @typescript-eslint/consistent-type-imports
type Glue = typeof import('@prisma/schema-engine-wasm/schema_engine_bg');
export type SchemaEngine = Awaited<ReturnType<Glue['SchemaEngine']['new']>>;
export type { MigrationList, MigrationDirectory } from '@prisma/schema-engine-wasm';

interface WasmApi {
  instantiate(
    bytes: Uint8Array,
    imports: Record<string, unknown>,
  ): Promise<{ instance: { exports: Record<string, unknown> } }>;
}

let gluePromise: Promise<Glue> | undefined;

async function loadGlue(): Promise<Glue> {
  const dir = path.dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
  const glue = (await import(pathToFileURL(path.join(dir, 'schema_engine_bg.js')).href)) as Glue & {
    __wbg_set_wasm(exports: Record<string, unknown>): void;
  };
  const bytes = await readFile(path.join(dir, 'schema_engine_bg.wasm'));
  // lib "ES2022" has no WebAssembly typings; the global exists in every supported Node
  const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
  // The engine arms ~10 s timers (pool/IO timeouts) that would keep a finished CLI process alive:
  // hand it unref'd timers so they never hold the event loop open.
  const imports: Record<string, unknown> = { ...(glue as unknown as Record<string, unknown>) };
  for (const [name, fn] of Object.entries(imports)) {
    if (name.startsWith('__wbg_setTimeout_') && typeof fn === 'function') {
      imports[name] = (...args: unknown[]) => {
        const timer = (fn as (...a: unknown[]) => unknown)(...args) as { unref?: () => void };
        timer?.unref?.();
        return timer;
      };
    }
  }
  const { instance } = await wasm.instantiate(bytes, { './schema_engine_bg.js': imports });
  glue.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  return glue;
}

export interface EngineLog {
  level?: string;
  fields?: { message?: string };
}

/**
 * A schema engine bound to `adapter` (PGlite or PostgreSQL factory), with `schema` as datamodel.
 * Call `close()` when done: `free()` alone leaves the engine's connections open, and on PostgreSQL
 * the next engine then waits (up to the pool's idle timeout) for the migration advisory lock.
 */
export async function openSchemaEngine(
  adapter: SqlMigrationAwareDriverAdapterFactory,
  schema: { path: string; content: string },
  onLog?: (log: EngineLog) => void,
): Promise<SchemaEngine & { close(): Promise<void> }> {
  gluePromise ??= loadGlue();
  const glue = await gluePromise;
  const opened: SqlDriverAdapter[] = [];
  const tracked: SqlMigrationAwareDriverAdapterFactory = {
    provider: adapter.provider,
    adapterName: adapter.adapterName,
    connect: async () => {
      const a = await adapter.connect();
      opened.push(a);
      return a;
    },
    connectToShadowDb: async () => {
      const a = await adapter.connectToShadowDb();
      opened.push(a);
      return a;
    },
  };
  const engine = await glue.SchemaEngine.new(
    { datamodels: [[schema.path, schema.content]] },
    (msg: string) => {
      if (!onLog) return;
      try {
        onLog(JSON.parse(msg) as EngineLog);
      } catch {
        onLog({ fields: { message: msg } });
      }
    },
    bindMigrationAwareSqlAdapterFactory(tracked),
  );
  return Object.assign(engine, {
    async close() {
      engine.free();
      await Promise.all(opened.splice(0).map((a) => a.dispose().catch(() => undefined)));
    },
  });
}
