/**
 * Custody settings from the environment: off by default (no seed file is created), the seed
 * generated once at start-up into DATA_DIR/keys/custody-seed with 0600 permissions (or taken from
 * CUSTODY_SEED), per-currency limits parsed exactly, defaults 0.01 of the currency and no fee.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../server/src/config';
import { loadServerConfig } from '../server/src/startup';
import { custodyCurrencies } from '../server/src/modules/custody/index';

const dirs: string[] = [];
const dataDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'bazaar-custody-config-'));
  dirs.push(d);
  return d;
};
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

const base = { JWT_SECRET: 'x'.repeat(40) };

describe('custody configuration', () => {
  it('is off by default and then reads no seed', () => {
    const dir = dataDir();
    const c = loadServerConfig({ ...base, DATA_DIR: dir });
    expect(c.custodyEnabled).toBe(false);
    expect(c.custodySeed).toBeUndefined();
    expect(existsSync(join(dir, 'keys', 'custody-seed'))).toBe(false);
  });

  it('generates the seed once (0600) and keeps it across restarts; CUSTODY_SEED wins', () => {
    const dir = dataDir();
    const a = loadServerConfig({ ...base, DATA_DIR: dir, CUSTODY_ENABLED: 'true' });
    expect(a.custodySeed).toMatch(/^[0-9a-f]{64}$/);
    const file = join(dir, 'keys', 'custody-seed');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, 'utf8').trim()).toBe(a.custodySeed);
    expect(loadServerConfig({ ...base, DATA_DIR: dir, CUSTODY_ENABLED: '1' }).custodySeed).toBe(a.custodySeed);
    expect(loadServerConfig({ ...base, DATA_DIR: dir, CUSTODY_ENABLED: 'on', CUSTODY_SEED: 'ab'.repeat(32) }).custodySeed).toBe('ab'.repeat(32));
    expect(a.custodyPollIntervalMs).toBe(5000);
  });

  it('limits: CODE:ui_amount lists, exact base units, defaults 0.01 and fee 0; bad entries refused', () => {
    const c = loadConfig({
      ...base,
      DATA_DIR: dataDir(),
      CUSTODY_ENABLED: 'true',
      CUSTODY_MIN_DEPOSIT: 'usdc:0.5',
      CUSTODY_MIN_WITHDRAWAL: 'USDC:2',
      CUSTODY_WITHDRAWAL_FEE: 'USDC:0.15,SOL:0',
    });
    const currencies = custodyCurrencies(
      [
        { code: 'USDC', mint: 'M1', decimals: 6 },
        { code: 'SOL', mint: 'M2', decimals: 9 },
      ],
      { minDeposit: c.custodyMinDeposit, minWithdrawal: c.custodyMinWithdrawal, withdrawalFee: c.custodyWithdrawalFee },
    );
    expect(currencies.map((x) => [x.code, x.minDeposit, x.minWithdrawal, x.withdrawalFee])).toEqual([
      ['USDC', 500_000n, 2_000_000n, 150_000n],
      ['SOL', 10_000_000n, 10_000_000n, 0n],
    ]);
    expect(() => loadConfig({ ...base, DATA_DIR: dataDir(), CUSTODY_ENABLED: 'true', CUSTODY_WITHDRAWAL_FEE: 'USDC:-1' })).toThrow(/CUSTODY_WITHDRAWAL_FEE/);
    expect(() => custodyCurrencies([{ code: 'USDC', mint: 'M1', decimals: 6 }], { minDeposit: { USDC: '0.0000001' } })).toThrow(/decimal/);
  });
});
