/**
 * vitest globalSetup: generate the Prisma client when missing (server/src/generated is gitignored)
 * and build the migrated PGlite template once per run (see ./db.ts).
 */
export default async function setup() {
  // @ts-expect-error plain .mjs script without types
  const { ensurePrismaClient } = (await import('../../server/scripts/db-generate.mjs')) as { ensurePrismaClient: () => void };
  ensurePrismaClient();
  const { ensurePGliteTemplate } = await import('./db.js');
  await ensurePGliteTemplate();
}
