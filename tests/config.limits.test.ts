/**
 * The HTTP, database, readiness and shutdown limits are read from the environment in config.ts only,
 * with documented defaults, and nonsensical values are refused at start-up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, loadConfig } from '../server/src/config.js';

const dataDir = mkdtempSync(path.join(tmpdir(), 'bazaar-config-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
const env = (over: Record<string, string> = {}) => ({ DATA_DIR: dataDir, JWT_SECRET: 'x'.repeat(40), ...over });

describe('limits configuration', () => {
  it('defaults', () => {
    const c = loadConfig(env());
    expect(c.http).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      maxConnections: 500,
      timeoutCheckIntervalMs: 1_000,
    });
    expect(c.db).toEqual({ poolMax: 10, poolTimeoutMs: 5_000, poolQueueMax: 1000, statementTimeoutMs: 10_000, lockTimeoutMs: 3_000, idleInTransactionTimeoutMs: 60_000 });
    expect(c.readyTimeoutMs).toBe(1_000);
    expect(c.shutdownTimeoutMs).toBe(25_000);
    expect(c.http).toEqual(DEFAULT_LIMITS.http);
  });

  it('reads every variable', () => {
    const c = loadConfig(
      env({
        HTTP_HEADERS_TIMEOUT_MS: '2000',
        HTTP_REQUEST_TIMEOUT_MS: '4000',
        HTTP_KEEP_ALIVE_TIMEOUT_MS: '65000',
        HTTP_MAX_CONNECTIONS: '100',
        HTTP_TIMEOUT_CHECK_INTERVAL_MS: '250',
        DB_POOL_MAX: '4',
        DB_POOL_TIMEOUT_MS: '750',
        DB_POOL_QUEUE_MAX: '7',
        DB_STATEMENT_TIMEOUT_MS: '1500',
        DB_LOCK_TIMEOUT_MS: '500',
        DB_IDLE_IN_TRANSACTION_TIMEOUT_MS: '9000',
        READY_TIMEOUT_MS: '300',
        SHUTDOWN_TIMEOUT_MS: '8000',
      }),
    );
    expect(c.http).toEqual({ headersTimeoutMs: 2000, requestTimeoutMs: 4000, keepAliveTimeoutMs: 65000, maxConnections: 100, timeoutCheckIntervalMs: 250 });
    expect(c.db).toEqual({ poolMax: 4, poolTimeoutMs: 750, poolQueueMax: 7, statementTimeoutMs: 1500, lockTimeoutMs: 500, idleInTransactionTimeoutMs: 9000 });
    expect([c.readyTimeoutMs, c.shutdownTimeoutMs]).toEqual([300, 8000]);
  });

  it('refuses 0 (no limit), non-integers and a headers timeout above the request timeout', () => {
    expect(() => loadConfig(env({ DB_STATEMENT_TIMEOUT_MS: '0' }))).toThrow(/DB_STATEMENT_TIMEOUT_MS/);
    expect(() => loadConfig(env({ HTTP_MAX_CONNECTIONS: '1.5' }))).toThrow(/HTTP_MAX_CONNECTIONS/);
    expect(() => loadConfig(env({ HTTP_HEADERS_TIMEOUT_MS: '40000' }))).toThrow(/HTTP_HEADERS_TIMEOUT_MS must not exceed/);
  });
});
