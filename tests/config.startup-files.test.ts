/**
 * Configuration parsing is pure (config.ts `loadConfig`: environment in, Config out, no file read or
 * written); the files the service keeps under DATA_DIR are start-up's work (startup.ts
 * `loadServerConfig`): DATA_DIR itself, keys/jwt-secret (0600, created once, kept across restarts) unless
 * JWT_SECRET is set, and the bootstrap's chain.json (currencies and program id when not set).
 * The custody seed: tests/custody.config.test.ts.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../server/src/config.js';
import { loadServerConfig } from '../server/src/startup.js';

const scratch = mkdtempSync(join(tmpdir(), 'bazaar-config-files-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let n = 0;
/** A DATA_DIR path that does not exist yet. */
const missingDir = () => join(scratch, `data-${++n}`, 'nested');
const SECRET = 'y'.repeat(40);

describe('loadConfig touches no file', () => {
  it('parses with a DATA_DIR that does not exist, custody on and no seed, and creates nothing', () => {
    const dir = missingDir();
    const c = loadConfig({ DATA_DIR: dir, JWT_SECRET: SECRET, CUSTODY_ENABLED: 'true' });
    expect(c.dataDir).toBe(dir);
    expect(c.jwtSecret).toBe(SECRET);
    expect(c.custodyEnabled).toBe(true);
    expect(c.custodySeed).toBeUndefined();
    expect(c.currencies).toEqual([]);
    expect(existsSync(join(dir, '..'))).toBe(false);
  });

  it('without JWT_SECRET or a stored key: ConfigError naming JWT_SECRET, and still nothing created', () => {
    const dir = missingDir();
    expect(() => loadConfig({ DATA_DIR: dir })).toThrow(ConfigError);
    expect(() => loadConfig({ DATA_DIR: dir })).toThrow(/JWT_SECRET/);
    expect(existsSync(join(dir, '..'))).toBe(false);
  });

  it('takes what start-up read from DATA_DIR only when the variable is unset', () => {
    const stored = { jwtSecret: 'z'.repeat(40), custodySeed: 'cd'.repeat(32), chain: { currencies: [{ code: 'USDC', mint: 'M1', decimals: 6 }], programId: 'P1' } };
    const fromFiles = loadConfig({ DATA_DIR: missingDir(), CUSTODY_ENABLED: 'true' }, { stored });
    expect([fromFiles.jwtSecret, fromFiles.custodySeed, fromFiles.currencies, fromFiles.escrowProgramId]).toEqual([stored.jwtSecret, stored.custodySeed, stored.chain.currencies, 'P1']);
    const fromEnv = loadConfig(
      { DATA_DIR: missingDir(), CUSTODY_ENABLED: 'true', JWT_SECRET: SECRET, CUSTODY_SEED: 'ab'.repeat(32), CURRENCIES: 'SOL:M2:9', ESCROW_PROGRAM_ID: 'P2' },
      { stored },
    );
    expect([fromEnv.jwtSecret, fromEnv.custodySeed, fromEnv.currencies, fromEnv.escrowProgramId]).toEqual([SECRET, 'ab'.repeat(32), [{ code: 'SOL', mint: 'M2', decimals: 9 }], 'P2']);
  });
});

describe('start-up creates the files', () => {
  it('creates DATA_DIR and keys/jwt-secret (0600) on first start and reads the same key on the next', () => {
    const dir = missingDir();
    const first = loadServerConfig({ DATA_DIR: dir });
    const file = join(dir, 'keys', 'jwt-secret');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'keys')).mode & 0o777).toBe(0o700);
    expect(readFileSync(file, 'utf8').trim()).toBe(first.jwtSecret);
    expect(Buffer.byteLength(first.jwtSecret)).toBeGreaterThanOrEqual(32);
    expect(loadServerConfig({ DATA_DIR: dir }).jwtSecret).toBe(first.jwtSecret);
  });

  it('JWT_SECRET set: no key file is written', () => {
    const dir = missingDir();
    expect(loadServerConfig({ DATA_DIR: dir, JWT_SECRET: SECRET }).jwtSecret).toBe(SECRET);
    expect(existsSync(dir)).toBe(true);
    expect(existsSync(join(dir, 'keys', 'jwt-secret'))).toBe(false);
  });

  it('reads the currencies and program id of the bootstrap\'s chain.json', () => {
    const dir = missingDir();
    mkdirSync(dir, { recursive: true });
    const currencies = [{ code: 'USDC', mint: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', decimals: 6, tokenProgram: 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA' }];
    writeFileSync(join(dir, 'chain.json'), JSON.stringify({ programId: 'AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r', currencies }));
    const c = loadServerConfig({ DATA_DIR: dir, JWT_SECRET: SECRET });
    expect(c.currencies).toEqual(currencies);
    expect(c.escrowProgramId).toBe('AYiA6JyiJxeCw2eHbYgzMHfp1Y2qWBrqVk6BHv8RfU8r');
  });
});
