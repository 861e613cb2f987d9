/**
 * Solana Pay 1.2 structured errors (draft: solana-pay PR #270, SPEC1.2.md "Error Handling") on the wallet-facing
 * transaction-request routes: the problem+json body also carries the draft's `code`, `message`, `details` and
 * `retryAfterMs`, with a code whose recommended status is the response's status; other routes stay plain problems.
 * A small Express app with the service's error handler and rate limiter (no database, no chain); the same answers
 * from the real routes on the localnet are in tests/e2e.solana-pay.test.ts.
 */
import express from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { SOLANA_PAY_ERROR_STATUS } from '@bazaar/contract';
import { DomainError } from '../server/src/errors.js';
import { createLogger } from '../server/src/logger.js';
import { errorHandler } from '../server/src/http/problem.js';
import { perMinuteLimit } from '../server/src/http/security.js';
import { solanaPayCode } from '../server/src/http/solana-pay-errors.js';
import { invalidTransition } from '../server/src/modules/orders/order-state.js';

const ORDER = '7d2c9a4e-5b1f-4c3e-9a8d-0e6f1b2c3d4e';
const SP = `/api/v1/orders/${ORDER}/solana-pay`;

/** An app whose Solana Pay POST (and one ordinary route) throws `err`, behind a 1-per-minute limit on the GET. */
function appThrowing(err: unknown) {
  const app = express();
  app.use(express.json());
  app.get(SP, perMinuteLimit({ perMinute: 1, detail: (_req, s) => `Too many requests; retry in ${s} s.` }), (_req, res) => {
    res.json({ label: 'x', icon: 'https://bazaar.test/icon.svg' });
  });
  app.post(SP, () => {
    throw err;
  });
  app.post(`/api/v1/orders/${ORDER}/payment`, () => {
    throw err;
  });
  app.use(errorHandler(createLogger('silent')));
  return app;
}

async function post(err: unknown) {
  const r = await request(appThrowing(err)).post(SP).send({ account: 'x' });
  expect(r.headers['content-type']).toMatch(/^application\/problem\+json/);
  return r;
}

describe('Solana Pay 1.2 structured errors', () => {
  it('an order paid already: 409 SP_ALREADY_PAID, with the problem type kept and details', async () => {
    const r = await post(invalidTransition(ORDER, 'in_progress', 'pay'));
    expect(r.status).toBe(409);
    expect(r.body).toMatchObject({
      type: 'https://bazaar.dev/problems/invalid-state-transition',
      status: 409,
      code: 'SP_ALREADY_PAID',
      message: `Cannot pay order ${ORDER} in status in_progress.`,
      details: { order_status: 'in_progress', action: 'pay' },
    });
    expect(r.body.message).toBe(r.body.detail);
    expect(r.body).not.toHaveProperty('retryAfterMs');
  });

  it('a closed payment window, an order expired unpaid, a lapsed milestone: 409 SP_PRICE_EXPIRED', async () => {
    for (const status of ['awaiting_payment', 'expired', 'scheduled'] as const) {
      const r = await post(invalidTransition(ORDER, status, 'pay', 'The buyer may pay order x only before its payment_expires_at.'));
      expect([r.status, r.body.code], status).toEqual([409, 'SP_PRICE_EXPIRED']);
    }
  });

  it('a custodial order (the service pays it): 409 SP_ALREADY_PAID', async () => {
    const r = await post(invalidTransition(ORDER, 'awaiting_payment', 'pay', `Order ${ORDER} is paid from the custodial balance by the service.`));
    expect([r.status, r.body.code]).toEqual([409, 'SP_ALREADY_PAID']);
  });

  it('another account: 403 SP_UNAUTHORIZED_ACCOUNT; an unknown order: 404 SP_RESOURCE_NOT_FOUND; a bad body: 400 SP_INVALID_REQUEST', async () => {
    expect((await post(new DomainError('forbidden', 'Only the buyer wallet quoted for this order may pay it.'))).body).toMatchObject({
      status: 403,
      code: 'SP_UNAUTHORIZED_ACCOUNT',
    });
    expect((await post(new DomainError('not-found', `Order ${ORDER} not found.`))).body).toMatchObject({ status: 404, code: 'SP_RESOURCE_NOT_FOUND' });
    const bad = await post(new DomainError('validation-error', 'body.account: Required', { errors: [{ path: 'body.account', message: 'Required', code: 'invalid_type' }] }));
    expect(bad.body).toMatchObject({ status: 400, code: 'SP_INVALID_REQUEST', details: { errors: [{ path: 'body.account' }] } });
  });

  it('chain unavailable: 503 SP_MAINTENANCE with retryAfterMs = Retry-After in ms; an unexpected error: 500 SP_SERVER_ERROR', async () => {
    const r = await post(new DomainError('chain-unavailable', 'The Solana RPC cannot be reached.'));
    expect(r.status).toBe(503);
    expect(r.headers['retry-after']).toBe('5');
    expect(r.body).toMatchObject({ code: 'SP_MAINTENANCE', retryAfterMs: 5000 });
    const boom = await post(new Error('boom'));
    expect(boom.body).toMatchObject({ status: 500, code: 'SP_SERVER_ERROR', type: 'https://bazaar.dev/problems/internal-error' });
    expect(boom.body.message).not.toContain('boom');
  });

  it('rate limited: 429 SP_RATE_LIMITED with retryAfterMs from Retry-After', async () => {
    const app = appThrowing(new Error('unused'));
    expect((await request(app).get(SP)).status).toBe(200);
    const r = await request(app).get(SP);
    expect(r.status).toBe(429);
    const seconds = Number(r.headers['retry-after']);
    expect(seconds).toBeGreaterThan(0);
    expect(r.body).toMatchObject({ type: 'https://bazaar.dev/problems/rate-limited', code: 'SP_RATE_LIMITED', retryAfterMs: seconds * 1000 });
  });

  it('other routes answer plain problems (no Solana Pay members)', async () => {
    const r = await request(appThrowing(invalidTransition(ORDER, 'in_progress', 'pay'))).post(`/api/v1/orders/${ORDER}/payment`).send({});
    expect(r.status).toBe(409);
    expect(r.body.type).toBe('https://bazaar.dev/problems/invalid-state-transition');
    for (const k of ['code', 'message', 'details', 'retryAfterMs']) expect(r.body).not.toHaveProperty(k);
  });

  it('every code chosen has the status the draft recommends for it', () => {
    const cases: Array<[Parameters<typeof solanaPayCode>[0], number, Record<string, unknown>?]> = [
      ['validation-error', 400],
      ['malformed-json', 400],
      ['forbidden', 403],
      ['not-found', 404],
      ['invalid-state-transition', 409, { order_status: 'completed' }],
      ['invalid-state-transition', 409, { order_status: 'expired' }],
      ['insufficient-funds', 409],
      ['rate-limited', 429],
      ['internal-error', 500],
      ['service-unavailable', 503],
      ['chain-unavailable', 503],
    ];
    for (const [slug, status, ext] of cases) expect(SOLANA_PAY_ERROR_STATUS[solanaPayCode(slug, status, ext)], slug).toBe(status);
  });
});
