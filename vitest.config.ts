import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const r = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/**
 * Test files run side by side: at least 2 even on 2 cores (vitest's default there is 1, cores - 1). Most
 * files wait on other processes much of the time (the localnet, PostgreSQL, spawned servers and CLIs,
 * Chromium, tsc), so a second worker uses the core the first leaves idle. Each worker slot has its own
 * shared localnet (tests/helpers/chain-broker.ts); ports are picked free, databases and DATA_DIRs are
 * fresh per suite. VITEST_MAX_WORKERS overrides (1 to run one file at a time).
 */
const maxWorkers = Number(process.env.VITEST_MAX_WORKERS) || Math.max(2, availableParallelism() - 1);

export default defineConfig({
  resolve: {
    // exact matches: '@bazaar/client-sdk/login' must not become '<index.ts>/login'
    alias: [
      { find: /^@bazaar\/contract$/, replacement: r('./contract/src/index.ts') },
      { find: /^@bazaar\/contract\/ts-rest$/, replacement: r('./contract/src/ts-rest.ts') },
      { find: /^@bazaar\/client-sdk$/, replacement: r('./client-sdk/src/index.ts') },
      { find: /^@bazaar\/client-sdk\/(lite|login|keypair|events|webhooks|verify)$/, replacement: `${r('./client-sdk/src/')}$1.ts` },
      { find: /^@bazaar\/escrow-client$/, replacement: r('./programs/escrow/clients/js/src/index.ts') },
      { find: /^@bazaar\/escrow-idl$/, replacement: r('./programs/escrow/idl/escrow.json') },
    ],
  },
  test: {
    include: ['contract/**/*.test.ts', 'client-sdk/**/*.test.ts', 'server/**/*.test.ts', 'tests/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers,
    minWorkers: 1,
    globalSetup: ['tests/helpers/global-setup.ts'],
  },
});
