/**
 * The audit log in the database (issue 25 item 4), on PGlite and on PostgreSQL (TEST_DATABASE_URL): the
 * append-only trigger, the hash chain's verification after an edit or a deletion by the table's owner (the
 * trigger disabled), concurrent writers (the chain stays linear), and `npm run audit:verify` (exit code and
 * the first broken entry named).
 */
import { execFile } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../server/src/db/client.js';
import { createDb } from '../server/src/db/client.js';
import { REPO_ROOT } from '../server/src/db/migrate.js';
import { appendEvents } from '../server/src/modules/events/index.js';
import { appendAudit, canonicalEntry, createAuditRepo, entryHash, GENESIS_HASH, verifyChain, type AuditRecord } from '../server/src/modules/audit/index.js';
import { withSystemActor } from '../server/src/lib/request-context.js';
import { migratedDataDir } from './helpers/db.js';
import { dbBackends, sharedDatabase } from './helpers/shared-db.js';

const run = promisify(execFile);

/** Every entry in seq order. */
async function chain(db: Db): Promise<AuditRecord[]> {
  return createAuditRepo(db.prisma).readAfter(null, 100_000);
}

/** An operator action of the test (appendAudit in its own transaction). */
async function act(db: Db, n: number) {
  await db.prisma.$transaction(async (tx) => {
    await appendAudit(tx, { action: 'test.action', resourceType: 'test', resourceId: `r-${n}`, before: { n: n - 1 }, after: { n, at: new Date(0) } });
  });
}

/** Toggle the append-only trigger as the table's owner (what an attacker with the owner's role could do). */
async function trigger(db: Db, on: boolean) {
  if (on) await db.prisma.$executeRawUnsafe('ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only');
  else await db.prisma.$executeRawUnsafe('ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only');
}

describe('the hashed form (RFC 8785)', () => {
  it('is the canonical JSON of the entry with "v": 1: members sorted by code unit, no whitespace, ECMAScript numbers; hash = its SHA-256', () => {
    const entry = {
      prev_hash: GENESIS_HASH,
      id: '00000000-0000-4000-8000-000000000001',
      created_at: '2026-11-26T20:10:00.000Z',
      actor_type: 'user',
      actor_id: 'u1',
      actor_user_id: null,
      action: 'order.funded',
      resource_type: 'order',
      resource_id: 'o1',
      before: { status: 'awaiting_payment' },
      after: { status: 'in_progress', amount_base_units: '25500000', big: 1e21, small: 0.000001, 'é': 'ü', Z: true },
      request_id: 'req-1',
      signature: null,
      event_id: null,
    };
    const expected =
      '{"action":"order.funded","actor_id":"u1","actor_type":"user","actor_user_id":null,' +
      '"after":{"Z":true,"amount_base_units":"25500000","big":1e+21,"small":0.000001,"status":"in_progress","é":"ü"},' +
      '"before":{"status":"awaiting_payment"},"created_at":"2026-11-26T20:10:00.000Z","event_id":null,' +
      '"id":"00000000-0000-4000-8000-000000000001","prev_hash":"' + GENESIS_HASH + '","request_id":"req-1",' +
      '"resource_id":"o1","resource_type":"order","signature":null,"v":1}';
    expect(canonicalEntry(entry)).toBe(expected);
    expect(entryHash(entry)).toBe(createHash('sha256').update(expected, 'utf8').digest('hex'));
  });
});

describe.each(dbBackends)('audit log on $name', ({ postgres }) => {
  const shared = sharedDatabase(postgres);
  let db: Db;
  beforeAll(async () => {
    db = await shared.client();
  });

  it('the trigger refuses UPDATE, DELETE and TRUNCATE on audit_log, even of no row', async () => {
    await act(db, 1);
    const before = await chain(db);
    expect(before.length).toBeGreaterThan(0);
    await expect(db.prisma.$executeRaw`UPDATE audit_log SET action = 'forged'`).rejects.toThrow(/append-only \(UPDATE refused\)/);
    await expect(db.prisma.$executeRaw`UPDATE audit_log SET action = 'forged' WHERE false`).rejects.toThrow(/append-only/);
    await expect(db.prisma.$executeRaw`DELETE FROM audit_log`).rejects.toThrow(/append-only \(DELETE refused\)/);
    await expect(db.prisma.$executeRawUnsafe('TRUNCATE audit_log')).rejects.toThrow(/append-only \(TRUNCATE refused\)/);
    await expect(db.prisma.auditLogEntry.deleteMany({})).rejects.toThrow(/append-only/);
    expect(await chain(db)).toEqual(before);
    // a second entry claiming the same predecessor (a fork) cannot commit either: prev_hash is unique
    const head = before[before.length - 1]!;
    await expect(
      db.prisma.$executeRaw`INSERT INTO audit_log (id, created_at, actor_type, actor_id, action, resource_type, resource_id, prev_hash, hash)
        VALUES (${randomUUID()}::uuid, now(), 'system', 'x', 'fork', 'test', 'f', ${head.prev_hash}, ${'f'.repeat(64)})`,
    ).rejects.toThrow(/prev_hash|unique/i);
  });

  it('verify names the first broken entry after the table owner edits one (trigger disabled), and after deleting one', async () => {
    for (let n = 10; n < 15; n++) await act(db, n);
    expect(await verifyChain(createAuditRepo(db.prisma))).toMatchObject({ ok: true, first_broken: null });
    const rows = await chain(db);
    const victim = rows[rows.length - 3]!;
    await trigger(db, false);
    try {
      // an edit of one field: the entry no longer matches its hash
      await db.prisma.$executeRaw`UPDATE audit_log SET after = '{"n": 999}'::jsonb WHERE id = ${victim.id}::uuid`;
      const edited = await verifyChain(createAuditRepo(db.prisma), 2); // small batches: the walk crosses pages
      expect(edited).toMatchObject({ ok: false, head: null, first_broken: { seq: victim.seq.toString(), id: victim.id, reason: 'hash_mismatch', found: victim.hash } });
      // the forger recomputes the edited entry's hash: now its successor's link breaks
      const forged = { ...victim, after: { n: 999 } };
      const { seq: _s, hash: _h, ...fields } = forged;
      await db.prisma.$executeRaw`UPDATE audit_log SET hash = ${entryHash(fields)} WHERE id = ${victim.id}::uuid`;
      const next = rows[rows.length - 2]!;
      expect((await verifyChain(createAuditRepo(db.prisma))).first_broken).toMatchObject({ seq: next.seq.toString(), reason: 'prev_hash_mismatch', found: victim.hash });
      // put it back: whole again
      await db.prisma.$executeRaw`UPDATE audit_log SET after = ${JSON.stringify(victim.after)}::jsonb, hash = ${victim.hash} WHERE id = ${victim.id}::uuid`;
      expect((await verifyChain(createAuditRepo(db.prisma))).ok).toBe(true);
      // a deleted entry: its successor points at a hash no entry has
      await db.prisma.$executeRaw`DELETE FROM audit_log WHERE id = ${victim.id}::uuid`;
      expect((await verifyChain(createAuditRepo(db.prisma))).first_broken).toMatchObject({
        seq: next.seq.toString(),
        id: next.id,
        reason: 'prev_hash_mismatch',
        expected: victim.prev_hash,
        found: victim.hash,
      });
    } finally {
      await trigger(db, true);
    }
    await expect(db.prisma.$executeRaw`DELETE FROM audit_log`).rejects.toThrow(/append-only/);
  });
});

describe.each(dbBackends)('concurrent writers on $name', ({ postgres }) => {
  const shared = sharedDatabase(postgres);
  let dbs: Db[];
  beforeAll(async () => {
    // two clients (two replicas' pools) writing at once
    dbs = [await shared.client(), await shared.client()];
  });

  it('40 transactions appending audited events and operator actions at once: one linear chain (prev_hash = hash of the previous by seq), verified', async () => {
    const userId = randomUUID();
    await dbs[0]!.prisma.user.create({ data: { id: userId, wallet: `W-${userId}` } });
    const writes = Array.from({ length: 40 }, (_, i) =>
      withSystemActor(`writer-${i}`, () =>
        dbs[i % 2]!.prisma.$transaction(async (tx) => {
          if (i % 3 === 0) {
            await appendAudit(tx, { action: 'test.concurrent', resourceType: 'test', resourceId: String(i) });
          } else {
            // two audited events and one that is not, in one transaction
            const id = randomUUID();
            await appendEvents(tx, [
              { type: 'deposit.credited', resourceType: 'deposit', resourceId: id, audience: [userId], data: { status: 'credited', amount_base_units: String(i) } },
              { type: 'review.created', resourceType: 'review', resourceId: randomUUID(), audience: [userId], data: {} },
              { type: 'withdrawal.created', resourceType: 'withdrawal', resourceId: randomUUID(), audience: [userId], data: { status: 'pending' } },
            ]);
          }
          // more transactions than pool connections: the rest queue for one (not what is tested here)
        }, { maxWait: 60_000, timeout: 60_000 }),
      ),
    );
    await Promise.all(writes);
    const rows = await chain(dbs[0]!);
    const mine = rows.filter((r) => r.actor_id.startsWith('writer-'));
    expect(mine.length).toBe(14 + 26 * 2); // review.created is not audited
    expect(rows.filter((r) => r.action === 'review.created')).toEqual([]);
    rows.forEach((r, i) => {
      expect(r.prev_hash, `entry seq ${r.seq}`).toBe(i === 0 ? GENESIS_HASH : rows[i - 1]!.hash);
      const { seq: _s, hash, ...fields } = r;
      expect(entryHash(fields)).toBe(hash);
    });
    // each entry of an event names it, and the entries of one transaction are adjacent
    const events = await dbs[0]!.prisma.event.findMany({ where: { type: { in: ['deposit.credited', 'withdrawal.created'] } }, select: { id: true } });
    expect(new Set(mine.filter((r) => r.event_id).map((r) => r.event_id))).toEqual(new Set(events.map((e) => e.id)));
    expect(await verifyChain(createAuditRepo(dbs[1]!.prisma))).toMatchObject({ ok: true, checked: rows.length, head: { hash: rows[rows.length - 1]!.hash } });
  });
});

describe('npm run audit:verify', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await migratedDataDir('bazaar-audit-');
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const verify = () =>
    run(process.execPath, [path.join(REPO_ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(REPO_ROOT, 'server', 'scripts', 'audit-verify.ts')], {
      cwd: REPO_ROOT,
      env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' },
    }).then(
      (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout, err: e.stderr }),
    );

  it('exits 0 on a whole chain, 1 naming the first broken entry after one was edited (PGlite under DATA_DIR)', async () => {
    let db = await createDb({ dataDir });
    for (let n = 1; n <= 3; n++) await act(db, n);
    const rows = await chain(db);
    await db.close();
    const ok = await verify();
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toContain(`audit log OK: 3 entries; head seq ${rows[2]!.seq} hash ${rows[2]!.hash}`);

    db = await createDb({ dataDir });
    await trigger(db, false);
    await db.prisma.$executeRaw`UPDATE audit_log SET actor_id = 'someone-else' WHERE id = ${rows[1]!.id}::uuid`;
    await trigger(db, true);
    await db.close();
    const broken = await verify();
    expect(broken.code).toBe(1);
    expect(broken.err).toContain(`audit log BROKEN at seq ${rows[1]!.seq} (entry ${rows[1]!.id}): its hash does not match its fields`);
  });
});
