/**
 * The custody ledger and its storage guards on a real database: PGlite always, PostgreSQL too when
 * TEST_DATABASE_URL is set (the concurrency tests matter most there: real parallel transactions).
 * Every test ends with the ledger invariant (sum of all postings per mint = 0, entries balanced,
 * cached balances = postings, no user balance below zero).
 */
import { randomUUID } from 'node:crypto';
import type { PGlite } from '@electric-sql/pglite';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createDb, type Db } from '../server/src/db/client';
import { DepositKeys } from '../server/src/modules/custody/custody.keys';
import { Ledger, systemAccount, userAccount } from '../server/src/modules/custody/custody.ledger';
import { CustodyRepo } from '../server/src/modules/custody/custody.repo';
import { depositEntry, holdEntry, releaseEntry, settleEntry } from '../server/src/modules/custody/custody.service';
import { freshPGlite, freshPostgres } from './helpers/db';
import { dbBackends } from './helpers/shared-db';

const MINT = 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB';

describe.each(dbBackends)('custody ledger on $name', ({ postgres }) => {
  let db: Db;
  let pglite: PGlite | undefined;
  let pg: Awaited<ReturnType<typeof freshPostgres>> | undefined;
  let ledger: Ledger;
  let repo: CustodyRepo;

  const newUser = async () => {
    const u = await db.prisma.user.create({ data: { wallet: `w-${randomUUID()}` } });
    return u.id;
  };
  /** credit `amount` to the user as a detected deposit would */
  const fund = (userId: string, amount: bigint) =>
    ledger.postAlone(depositEntry({ signature: randomUUID(), tokenAccount: 'ata', userId, mint: MINT, amount }));
  const available = async (userId: string) => (await ledger.userBalances(userId)).find((b) => b.mint === MINT)?.available ?? 0n;

  beforeAll(async () => {
    if (postgres) pg = await freshPostgres();
    else pglite = await freshPGlite();
    db = await createDb(pg ? { databaseUrl: pg.url } : { pglite });
    ledger = new Ledger(db.prisma);
    repo = new CustodyRepo(db.prisma, ledger);
  });

  afterEach(async () => {
    const report = await ledger.ledgerInvariant();
    expect(report.problems).toEqual([]);
    expect(Object.values(report.sumByMint).every((s) => s === 0n)).toBe(true);
  });

  afterAll(async () => {
    await db?.close();
    if (pglite && !pglite.closed) await pglite.close();
    await pg?.drop();
  });

  it('books a balanced entry once per ref; balances are read on the normal side', async () => {
    const u = await newUser();
    const entry = depositEntry({ signature: 'sig-1', tokenAccount: `ata-${u}`, userId: u, mint: MINT, amount: 2_500_000n });
    expect(await ledger.postAlone(entry)).toBe(true);
    expect(await ledger.postAlone(entry)).toBe(false); // replay: nothing booked
    expect(await ledger.userBalances(u)).toEqual([{ mint: MINT, available: 2_500_000n, held: 0n, escrow: 0n }]);
    expect(await ledger.balance(userAccount(u, MINT, 'available'))).toBe(-2_500_000n); // credit-normal: signed < 0
    expect(await ledger.balance(userAccount(u, MINT, 'deposit_address'))).toBe(2_500_000n);
    expect(await db.prisma.custodyJournalEntry.count({ where: { ref: entry.ref } })).toBe(1);
  });

  it('refuses an unbalanced entry before writing; the database refuses one at commit too', async () => {
    const u = await newUser();
    await expect(
      ledger.postAlone({ ref: `bad-${u}`, kind: 'deposit', postings: [{ account: userAccount(u, MINT, 'available'), amount: -5n }] }),
    ).rejects.toThrow(/unbalanced/);
    expect(await db.prisma.custodyJournalEntry.count({ where: { ref: `bad-${u}` } })).toBe(0);
    // bypass the code: the deferred constraint trigger rejects the transaction at COMMIT
    await fund(u, 10n);
    const acc = await db.prisma.custodyAccount.findUniqueOrThrow({ where: { code: `user:${u}:available:${MINT}` } });
    const entryId = randomUUID();
    await expect(
      db.prisma.$transaction([
        db.prisma.$executeRaw`INSERT INTO custody_journal_entries (id, ref, kind) VALUES (${entryId}::uuid, ${`raw-${u}`}, 'deposit')`,
        db.prisma.$executeRaw`INSERT INTO custody_postings (entry_id, account_id, mint, amount) VALUES (${entryId}::uuid, ${acc.id}::uuid, ${MINT}, -7)`,
      ]),
    ).rejects.toThrow(/does not balance/);
    expect(await db.prisma.custodyJournalEntry.count({ where: { ref: `raw-${u}` } })).toBe(0);
  });

  it('the journal is append-only and a user balance cannot go below zero, even by hand', async () => {
    const u = await newUser();
    await fund(u, 100n);
    await expect(db.prisma.$executeRaw`UPDATE custody_postings SET amount = amount * 2`).rejects.toThrow(/append-only/);
    await expect(db.prisma.$executeRaw`DELETE FROM custody_journal_entries`).rejects.toThrow(/append-only/);
    await expect(
      db.prisma.$executeRaw`UPDATE custody_accounts SET balance = 1 WHERE code = ${`user:${u}:available:${MINT}`}`,
    ).rejects.toThrow(/custody_accounts_user_balance_check/);
  });

  it('a hold larger than the available balance is refused and writes nothing', async () => {
    const u = await newUser();
    await fund(u, 1_000n);
    const before = await db.prisma.custodyTransfer.count();
    await expect(
      repo.createTransfer(
        { kind: 'withdrawal', userId: u, currency: 'USDC', mint: MINT, amount: 990n, fee: 20n, destination: 'd', destinationTokenAccount: 'dt' },
        (id) => holdEntry({ id, kind: 'withdrawal', userId: u, mint: MINT, amount: 990n, fee: 20n }),
      ),
    ).rejects.toMatchObject({ slug: 'insufficient-funds' });
    expect(await db.prisma.custodyTransfer.count()).toBe(before);
    expect(await available(u)).toBe(1_000n);
  });

  it('20 concurrent withdrawals racing for one balance: exactly the affordable ones are held, never below zero', async () => {
    const u = await newUser();
    await fund(u, 10_000n);
    // each takes 1_400 + 100 fee: 6 fit (9_000), the 7th would need 10_500
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () =>
        repo.createTransfer(
          { kind: 'withdrawal', userId: u, currency: 'USDC', mint: MINT, amount: 1_400n, fee: 100n, destination: 'd', destinationTokenAccount: 'dt' },
          (id) => holdEntry({ id, kind: 'withdrawal', userId: u, mint: MINT, amount: 1_400n, fee: 100n }),
        ),
      ),
    );
    const ok = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r) => r.status === 'rejected');
    expect(ok).toHaveLength(6);
    expect(refused.every((r) => (r as PromiseRejectedResult).reason.slug === 'insufficient-funds')).toBe(true);
    expect(await ledger.userBalances(u)).toEqual([{ mint: MINT, available: 1_000n, held: 9_000n, escrow: 0n }]);
  });

  it('settle and release book once each, and exclude each other', async () => {
    const u = await newUser();
    await fund(u, 5_000n);
    await ledger.postAlone({
      ref: `hot-${u}`,
      kind: 'sweep',
      postings: [
        { account: systemAccount(MINT, 'hot_wallet'), amount: 5_000n },
        { account: userAccount(u, MINT, 'deposit_address'), amount: -5_000n },
      ],
    });
    const mk = () =>
      repo.createTransfer(
        { kind: 'withdrawal', userId: u, currency: 'USDC', mint: MINT, amount: 1_000n, fee: 50n, destination: 'd', destinationTokenAccount: 'dt' },
        (id) => holdEntry({ id, kind: 'withdrawal', userId: u, mint: MINT, amount: 1_000n, fee: 50n }),
      );
    const a = await mk();
    const attempt = (await repo.claim(a.id, new Date(), 60_000))!;
    expect(await repo.claim(a.id, new Date(), 60_000)).toBeNull(); // leased
    expect(await repo.markSubmitted(a.id, attempt + 1, 'sig-stale', 100)).toBe(false); // not the latest claim
    expect(await repo.markSubmitted(a.id, attempt, `sig-a-${u}`, 100)).toBe(true);
    const sa = (await repo.getTransfer(a.id))!;
    const settled = await Promise.all(Array.from({ length: 5 }, () => repo.settle(a.id, 9, settleEntry(sa), new Date())));
    expect(settled.filter(Boolean)).toHaveLength(1);
    expect(await repo.fail(a.id, 'late', releaseEntry(sa))).toBe(false);
    const b = await mk();
    expect(await repo.fail(b.id, 'expired', releaseEntry(b))).toBe(true);
    expect(await repo.fail(b.id, 'expired', releaseEntry(b))).toBe(false);
    expect(await repo.settle(b.id, 9, settleEntry(b), new Date())).toBe(false);
    // 5_000 - 1_050 settled; b's hold came back
    expect(await ledger.userBalances(u)).toEqual([{ mint: MINT, available: 3_950n, held: 0n, escrow: 0n }]);
    expect(await ledger.balance(systemAccount(MINT, 'hot_wallet'))).toBe(4_000n);
    expect(await ledger.balance(systemAccount(MINT, 'withdrawal_fees'))).toBe(-50n);
  });

  it('deposit addresses: one per user (also under concurrent first calls), indexes never shared', async () => {
    const keys = new DepositKeys('c3'.repeat(32));
    const [u1, u2] = [await newUser(), await newUser()];
    const first = await Promise.all(Array.from({ length: 8 }, () => repo.ensureAddress(u1, (i) => keys.address(i))));
    expect(new Set(first.map((a) => a.address)).size).toBe(1);
    expect(first[0].address).toBe(keys.address(first[0].index));
    const other = await repo.ensureAddress(u2, (i) => keys.address(i));
    expect(other.index).not.toBe(first[0].index);
    expect(other.address).not.toBe(first[0].address);
    expect(await repo.ensureAddress(u1, (i) => keys.address(i))).toEqual(first[0]);
  });

  it('ledgerInvariant reports a cached balance that drifted from its postings', async () => {
    const u = await newUser();
    await fund(u, 42n);
    await db.prisma.$executeRaw`UPDATE custody_accounts SET balance = balance + 1 WHERE code = ${`user:${u}:deposit_address:${MINT}`}`;
    const report = await ledger.ledgerInvariant();
    expect(report.ok).toBe(false);
    expect(report.problems.join('\n')).toMatch(/caches 43 but its postings sum to 42/);
    await db.prisma.$executeRaw`UPDATE custody_accounts SET balance = balance - 1 WHERE code = ${`user:${u}:deposit_address:${MINT}`}`;
  });
});
