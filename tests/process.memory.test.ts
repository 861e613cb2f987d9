/**
 * What one server process loads (issue 28 item 5): `node server/src/main.ts` on an already-migrated PostgreSQL
 * database, no chain, inspected from outside (benchmarks/lib/inspector.ts: every script V8 compiled). It loads
 * neither PGlite (imported on the first PGlite database only, db/client.ts) nor Prisma's schema engine (an
 * up-to-date database is recognised from `_prisma_migrations`, db/migrate.ts), and it serves requests that reach
 * the database. No timing and no RSS is asserted: the figures are `npm run bench:memory`'s.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Keypair } from '@solana/web3.js';
import { afterAll, describe, expect, it } from 'vitest';
import { debuggerUrl, Inspector } from '../benchmarks/lib/inspector.js';
import { freshPostgres, TEST_DATABASE_URL } from './helpers/db.js';
import { eventually } from './helpers/eventually.js';
import { freePort } from './helpers/ports.js';

const REPO = path.resolve(__dirname, '..');
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

describe.skipIf(!TEST_DATABASE_URL)('one server process on PostgreSQL (issue 28 item 5)', () => {
  it('loads neither PGlite nor the schema engine on a migrated database, and serves database reads', async () => {
    const db = await freshPostgres(); // migrated
    cleanups.push(db.drop);
    const dir = mkdtempSync(path.join(tmpdir(), 'bazaar-memory-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    const child: ChildProcess = spawn(process.execPath, ['--inspect=127.0.0.1:0', '--import', 'tsx', 'server/src/main.ts'], {
      cwd: REPO,
      env: {
        ...process.env,
        DATA_DIR: dir,
        DATABASE_URL: db.url,
        PORT: String(port),
        HOST: '127.0.0.1',
        SERVICE_KEYPAIR_PATH: path.join(dir, 'no-keypair.json'),
        CURRENCIES: 'USDC:Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB:6',
        LOG_LEVEL: 'info',
        NODE_OPTIONS: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    let insp: Inspector | null = null;
    cleanups.push(async () => {
      insp?.close();
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await new Promise((r) => child.once('exit', r));
      }
    });
    const base = `http://127.0.0.1:${port}`;
    await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`the server exited ${child.exitCode}:\n${out.slice(-2000)}`);
        return (await fetch(`${base}/readyz`).catch(() => null))?.status === 200 || undefined;
      },
      { what: 'the server to be ready', timeoutMs: 90_000, intervalMs: 100 },
    );
    // a request that reaches the database through Prisma (the SIWS nonce is written)
    const login = await fetch(`${base}/api/v1/auth/request_login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address: Keypair.generate().publicKey.toBase58() }),
    });
    expect(login.status).toBe(200);
    expect(((await login.json()) as { sign_in_input?: { nonce?: string } }).sign_in_input?.nonce).toBeTruthy();
    expect(out).toMatch(/"schema_engine":false/);

    insp = await Inspector.connect(debuggerUrl(out)!);
    const urls = (await insp.scripts()).map((s) => s.url);
    expect(urls.some((u) => u.includes('/@prisma/client/'))).toBe(true); // the listing is real
    expect(urls.filter((u) => u.includes('/@electric-sql/pglite/') || u.includes('pglite-prisma-adapter'))).toEqual([]);
    expect(urls.filter((u) => u.includes('/@prisma/schema-engine-wasm/'))).toEqual([]);
  }, 180_000);
});
