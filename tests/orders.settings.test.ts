/**
 * The contract's prose states some orders defaults in words ("15 minutes", "120 s", "at most 3 unpaid
 * orders"). Defaults live in one place, the ENV_VARS table of server/src/config.ts (read here through
 * `ordersSettings` of an empty environment), plus the contract's own PAYMENT_GRACE_SECONDS: every such
 * statement in contract/src must say the same number, so changing a default without its prose fails here.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAYMENT_GRACE_SECONDS } from '@bazaar/contract';
import { ordersSettings } from '../server/src/config.js';

const CONTRACT_SRC = path.resolve(__dirname, '../contract/src');
const d = ordersSettings({}, 'http://127.0.0.1:3000');

/** Every statement of a default in the contract's prose: a pattern (its captures are numbers) and the values they must be. */
const STATEMENTS: Array<{ what: string; pattern: RegExp; expected: number[] }> = [
  { what: 'payment window (ORDER_PAYMENT_TTL_SECONDS)', pattern: /payment_expires_at = created_at \+ (\d+) minutes/g, expected: [d.paymentTtlSeconds / 60] },
  { what: 'payment window (ORDER_PAYMENT_TTL_SECONDS)', pattern: /not funded by payment_expires_at \((\d+) minutes\)/g, expected: [d.paymentTtlSeconds / 60] },
  {
    what: 'contested and normal payment windows (ORDER_PAYMENT_TTL_CONTESTED_SECONDS, ORDER_PAYMENT_TTL_SECONDS)',
    pattern: /payment window is (\d+) minutes instead of (\d+)/g,
    expected: [d.contestedPaymentTtlSeconds / 60, d.paymentTtlSeconds / 60],
  },
  { what: 'review window (ORDER_REVIEW_WINDOW_SECONDS)', pattern: /review_window_seconds \(default (\d+) = (\d+) days\)/g, expected: [d.reviewWindowSeconds, d.reviewWindowSeconds / 86_400] },
  { what: 'unpaid orders per buyer (ORDER_MAX_UNPAID_PER_BUYER)', pattern: /at most (\d+) unpaid orders/g, expected: [d.maxUnpaidOrdersPerBuyer] },
  { what: 'unpaid orders per network (ORDER_MAX_UNPAID_PER_IP)', pattern: /per client network \(IPv4 address \/ IPv6 \/64; API keys are exempt\): at most (\d+)/g, expected: [d.maxUnpaidOrdersPerIp] },
  { what: 'unpaid orders per network (ORDER_MAX_UNPAID_PER_IP)', pattern: /a client network \(IPv4 address or IPv6 \/64; API keys excepted\) at most (\d+)/g, expected: [d.maxUnpaidOrdersPerIp] },
  { what: 'hold cool-down (ORDER_HOLD_COOLDOWN_SECONDS, "an hour")', pattern: /(?:again|listing again) for (an hour)/g, expected: [d.holdCooldownSeconds] },
  { what: 'Idempotency-Key lease (ORDER_IDEMPOTENCY_LEASE_MS)', pattern: /holds its key for at most (\d+) s\b/g, expected: [d.idempotencyLeaseMs / 1000] },
  { what: 'payment grace (PAYMENT_GRACE_SECONDS)', pattern: /(?:payment_expires_at|payment window) \+ (\d+) s\b/g, expected: [PAYMENT_GRACE_SECONDS] },
  { what: 'payment grace (PAYMENT_GRACE_SECONDS)', pattern: /(\d+) s by default/g, expected: [PAYMENT_GRACE_SECONDS] },
];

const words: Record<string, number> = { 'an hour': 3600 };

function contractProse(): Array<{ file: string; text: string }> {
  return readdirSync(CONTRACT_SRC)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => ({ file: f, text: readFileSync(path.join(CONTRACT_SRC, f), 'utf8').replace(/'\s*\+\s*\n\s*'/g, '').replace(/\n\s*\* /g, ' ') }));
}

describe('the contract states the orders defaults of ENV_VARS', () => {
  it('every statement of a default in contract/src says the configured default', () => {
    const files = contractProse();
    const wrong: string[] = [];
    for (const s of STATEMENTS) {
      let found = 0;
      for (const { file, text } of files) {
        for (const m of text.matchAll(s.pattern)) {
          found++;
          const stated = m.slice(1).map((g) => words[g] ?? Number(g));
          if (stated.join() !== s.expected.join()) wrong.push(`${file}: "${m[0]}" states ${stated.join(', ')}; ${s.what} default is ${s.expected.join(', ')}`);
        }
      }
      // a statement reworded out of its pattern must have its pattern updated, not silently go unchecked
      expect(found, `no statement of ${s.what} matches ${s.pattern}`).toBeGreaterThan(0);
    }
    expect(wrong).toEqual([]);
  });
});
