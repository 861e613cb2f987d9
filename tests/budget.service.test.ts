/**
 * The budget module on a real database (PGlite always, PostgreSQL too when TEST_DATABASE_URL is set):
 * caps and the daily budget hold under concurrent charges (replicas share them), a refused charge writes
 * nothing, thresholds are logged once, a seller's payout account is sponsored once, a buyer's never.
 */
import { randomUUID } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../server/src/db/client';
import { DomainError } from '../server/src/errors';
import { createChainBudget, SPONSORSHIP_IN_FLIGHT_MS, TOKEN_ACCOUNT_RENT } from '../server/src/modules/budget/index';
import { freshPGlite, freshPostgres } from './helpers/db';
import { dbBackends } from './helpers/shared-db';

describe.each(dbBackends)('chain budget on $name', ({ postgres }) => {
  let db: Db;
  let pglite: PGlite | undefined;
  let pg: Awaited<ReturnType<typeof freshPostgres>> | undefined;
  let day = Date.UTC(2026, 0, 1, 12);
  /** each test on its own UTC day: caps and budget start from zero */
  const nextDay = () => {
    day += 86_400_000;
    const at = new Date(day);
    return () => at;
  };

  beforeAll(async () => {
    if (postgres) pg = await freshPostgres();
    else pglite = await freshPGlite();
    db = await createDb(pg ? { databaseUrl: pg.url } : { pglite });
  });

  afterAll(async () => {
    await db?.close();
    await pg?.drop();
  });

  const slugOf = (r: PromiseSettledResult<unknown>) => (r.status === 'rejected' ? (r.reason as DomainError).slug : 'ok');

  it('20 concurrent charges of one account against a cap of 3: exactly 3 pass, the rest 429, nothing else written', async () => {
    const budget = createChainBudget({ db: db.prisma, settings: { dailyLamports: 1e12, caps: { listing_mint: { perUser: 3 } } }, now: nextDay() });
    const user = randomUUID();
    const res = await Promise.allSettled(Array.from({ length: 20 }, () => budget.charge({ action: 'listing_mint', lamports: 1_000, userId: user })));
    expect(res.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(new Set(res.filter((r) => r.status === 'rejected').map(slugOf))).toEqual(new Set(['rate-limited']));
    const state = await budget.state();
    expect(state).toMatchObject({ spent_lamports: 3_000, by_action: { listing_mint: { count: 3, lamports: 3_000 } } });
    const refused = res.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason.extensions).toMatchObject({ action: 'listing_mint', limit: 3, scope: 'user' });
    expect(refused.reason.extensions.retry_after_seconds).toBe(12 * 3600);
  });

  it('fee sponsorship (issue 26): concurrent first transactions hold the per-account and per-IP counts and the sponsor\'s own budget; re-issues add lamports only; the service budget is untouched', async () => {
    const budget = createChainBudget({
      db: db.prisma,
      settings: { dailyLamports: 1e12, caps: {}, sponsorship: { dailyLamports: 50_000, perUser: 2, perIp: 3 } },
      now: nextDay(),
    });
    const [alice, bob] = [randomUUID(), randomUUID()];
    const one = (userId: string, lamports = 10_000, counted = true) => budget.chargeSponsorship({ userId, ip: '10.0.0.1', lamports: BigInt(lamports), counted });
    const first = await Promise.allSettled(Array.from({ length: 6 }, () => one(alice)));
    expect(first.map(slugOf).sort()).toEqual(['ok', 'ok', 'sponsorship-limit', 'sponsorship-limit', 'sponsorship-limit', 'sponsorship-limit']);
    expect((first.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason.extensions).toMatchObject({ scope: 'account', limit: 2, resets_at: expect.any(String) });
    await one(bob);
    const ip = await Promise.allSettled([one(bob)]);
    expect((ip[0] as PromiseRejectedResult).reason.extensions).toMatchObject({ scope: 'ip', limit: 3 });
    // re-issues are not counted, only their lamports: 30,000 + 10,000 + 10,000 = the budget, then refused
    await one(alice, 10_000, false);
    await one(bob, 10_000, false);
    const over = await Promise.allSettled([one(alice, 1, false)]);
    expect(slugOf(over[0]!)).toBe('sponsorship-budget-exhausted');
    expect((over[0] as PromiseRejectedResult).reason.extensions).toMatchObject({ reason: 'daily_budget', budget_lamports: 50_000 });
    expect((over[0] as PromiseRejectedResult).reason.retryAfterSeconds).toBe(12 * 3600);
    expect(await budget.sponsorshipState()).toMatchObject({ spent_lamports: 50_000, transactions: 5, budget_lamports: 50_000 });
    expect((await budget.state()).spent_lamports).toBe(0);
  });

  it('the daily budget: concurrent charges never pass it; recorded spending is never refused; thresholds logged once each', async () => {
    const warnings: Array<Record<string, unknown>> = [];
    const log = { warn: (o: unknown) => void warnings.push(o as Record<string, unknown>) };
    const budget = createChainBudget({ db: db.prisma, settings: { dailyLamports: 10_000, caps: {} }, log, now: nextDay() });
    const res = await Promise.allSettled(Array.from({ length: 8 }, () => budget.charge({ action: 'withdrawal', lamports: 3_000, userId: randomUUID() })));
    expect(res.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(res.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason.extensions.reason)).toEqual(
      Array(5).fill('chain_budget_exhausted'),
    );
    expect((await budget.state()).spent_lamports).toBe(9_000);
    await budget.record({ action: 'order_transaction', lamports: 5_000 }); // payouts are counted, never refused
    const state = await budget.state();
    expect(state).toMatchObject({ spent_lamports: 14_000, remaining_lamports: 0, level: 'exhausted' });
    expect(warnings.map((w) => w.threshold_percent)).toEqual([50, 80, 100]);
  });

  it('payee accounts: the treasury always, a seller once per wallet and mint, a buyer never (409 token-account-required)', async () => {
    let clock = nextDay()();
    const budget = createChainBudget({ db: db.prisma, settings: { dailyLamports: 1e12, caps: {} }, now: () => clock });
    const seller = `seller-${randomUUID()}`;
    const p = (role: 'buyer' | 'seller' | 'treasury', owner: string, mint = 'MINT') => ({ role, owner, mint, tokenAccount: `ata-${owner}`, orderId: randomUUID() });
    await budget.sponsorPayeeAccount(p('treasury', 'treasury'));
    await budget.sponsorPayeeAccount(p('treasury', 'treasury'));
    const first = p('seller', seller);
    await budget.sponsorPayeeAccount(first);
    await budget.sponsorPayeeAccount(first); // the same order's payout retried (the first attempt failed)
    await budget.sponsorPayeeAccount(p('seller', seller, 'OTHER-MINT'));
    // another order's payout while the first is in flight (a new seller's concurrent releases): allowed
    await budget.sponsorPayeeAccount(p('seller', seller));
    clock = new Date(clock.getTime() + SPONSORSHIP_IN_FLIGHT_MS - 1000);
    await budget.sponsorPayeeAccount(p('seller', seller)); // the window is not extended by those payouts
    clock = new Date(clock.getTime() + 2000);
    const again = await budget.sponsorPayeeAccount(p('seller', seller)).catch((e: DomainError) => e);
    expect(again).toMatchObject({ slug: 'token-account-required', extensions: { owner: seller, role: 'seller', token_account: `ata-${seller}` } });
    const buyer = await budget.sponsorPayeeAccount(p('buyer', 'buyer')).catch((e: DomainError) => e);
    expect(buyer).toMatchObject({ slug: 'token-account-required', extensions: { role: 'buyer' } });
    // an arbiter's ruling is never blocked by a party who closed her account
    await budget.sponsorPayeeAccount({ ...p('buyer', 'buyer'), instruction: 'resolve_dispute' });
    await budget.sponsorPayeeAccount({ ...p('seller', seller), instruction: 'resolve_dispute' });
    expect((await budget.state()).by_action.payout_account).toEqual({ count: 9, lamports: 9 * TOKEN_ACCOUNT_RENT });
  });
});
