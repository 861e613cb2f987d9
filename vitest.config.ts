import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const r = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  resolve: {
    alias: {
      '@bazaar/contract': r('./contract/src/index.ts'),
      '@bazaar/client-sdk': r('./client-sdk/src/index.ts'),
      '@bazaar/escrow-idl': r('./programs/escrow/idl/escrow.json'),
    },
  },
  test: {
    include: ['contract/**/*.test.ts', 'client-sdk/**/*.test.ts', 'server/**/*.test.ts', 'tests/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    globalSetup: ['tests/helpers/global-setup.ts'],
  },
});
