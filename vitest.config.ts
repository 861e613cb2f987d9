import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const r = (p: string) => fileURLToPath(new URL(p, import.meta.url));

export default defineConfig({
  resolve: {
    // exact matches: '@bazaar/client-sdk/login' must not become '<index.ts>/login'
    alias: [
      { find: /^@bazaar\/contract$/, replacement: r('./contract/src/index.ts') },
      { find: /^@bazaar\/contract\/ts-rest$/, replacement: r('./contract/src/ts-rest.ts') },
      { find: /^@bazaar\/client-sdk$/, replacement: r('./client-sdk/src/index.ts') },
      { find: /^@bazaar\/client-sdk\/(login|keypair|events|webhooks)$/, replacement: `${r('./client-sdk/src/')}$1.ts` },
      { find: /^@bazaar\/escrow-idl$/, replacement: r('./programs/escrow/idl/escrow.json') },
    ],
  },
  test: {
    include: ['contract/**/*.test.ts', 'client-sdk/**/*.test.ts', 'server/**/*.test.ts', 'tests/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    globalSetup: ['tests/helpers/global-setup.ts'],
  },
});
