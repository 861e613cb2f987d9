/**
 * vitest globalSetup: generate the Prisma client when missing (server/src/generated is gitignored),
 * build the migrated PGlite template once per run, as a dump and as a DATA_DIR (see ./db.ts), and start the chain broker that
 * hands each worker slot its shared localnet (./chain-broker.ts; a localnet starts only when a suite
 * asks for it).
 */
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URL of the chain broker (tests/helpers/chain-broker.ts) */
    chainBroker: string;
  }
}

export default async function setup(project: TestProject) {
  // @ts-expect-error plain .mjs script without types
  const { ensurePrismaClient } = (await import('../../server/scripts/db-generate.mjs')) as { ensurePrismaClient: () => void };
  ensurePrismaClient();
  const { ensureDataDirTemplate } = await import('./db.js');
  await ensureDataDirTemplate(); // the dump of in-memory databases and the DATA_DIR of server processes
  const { startChainBroker } = await import('./chain-broker.js');
  const broker = await startChainBroker();
  project.provide('chainBroker', broker.url);
  return () => broker.close();
}
