/**
 * The api-key admin command end to end on a PGlite DATA_DIR: create (shown once, stored hashed),
 * list, revoke; then a server on that database refuses the revoked key; both are in the audit log.
 */
import { execFile } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { Keypair } from '@solana/web3.js';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../server/src/app.js';
import { createDb } from '../server/src/db/client.js';
import { createLogger } from '../server/src/logger.js';
import { hashApiKey } from '../server/src/modules/auth/api-keys.js';
import { API, testConfig } from './helpers/app.js';
import { migratedDataDir } from './helpers/db.js';

// a copy of the migrated DATA_DIR template: each command opens a ready database (the command still
// applies pending migrations, none here) instead of the first one running initdb and the migrations
let dataDir: string;
beforeAll(async () => {
  dataDir = await migratedDataDir('bazaar-cli-');
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

// async (not spawnSync): a blocked worker event loop trips vitest's RPC timeout
const cli = (...args: string[]) =>
  new Promise<{ code: number; out: string; err: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'server/scripts/api-key.ts', ...args],
      { cwd: path.resolve(__dirname, '..'), env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' }, encoding: 'utf8' },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, out: stdout, err: stderr }),
    );
  });

describe('npm run api-key', () => {
  it('creates, lists and revokes keys; only the hash is stored', async () => {
    const created = await cli('create', '--name', 'ci bot', '--admin');
    expect(created.code, created.err).toBe(0);
    const key = /^(bzk_\S+)$/m.exec(created.out)![1]!;
    const prefix = key.split('_')[1]!;
    expect((await cli('list')).out).toMatch(new RegExp(`${prefix}\\s+"ci bot"\\s+admin.*active`));

    // a server on that database accepts the key (service admin key: no user -> 403 on /user/me)
    let db = await createDb({ dataDir });
    let app = createApp({ config: testConfig({ dataDir }), db: db.prisma, log: createLogger('silent'), chain: null, now: () => new Date() });
    expect((await request(app).get(`${API}/user/me`).set('x-api-key', key)).status).toBe(403);
    const row = await db.prisma.apiKey.findUnique({ where: { prefix } });
    expect(row!.keyHash).toBe(hashApiKey(key));
    await db.close();

    const revoked = await cli('revoke', prefix);
    expect(revoked.code, revoked.err).toBe(0);
    expect((await cli('list')).out).toMatch(/REVOKED/);

    db = await createDb({ dataDir });
    app = createApp({ config: testConfig({ dataDir }), db: db.prisma, log: createLogger('silent'), chain: null, now: () => new Date() });
    const res = await request(app).get(`${API}/user/me`).set('x-api-key', key);
    expect(res.status).toBe(401);
    expect(res.body.detail).toMatch(/revoked/);
    // both operator actions are in the audit log (issue 25), by the CLI, chained
    const audit = await db.prisma.auditLogEntry.findMany({ where: { resourceId: row!.id }, orderBy: { seq: 'asc' } });
    expect(audit.map((e) => [e.action, e.actorType, e.actorId, e.requestId])).toEqual([
      ['api_key.created', 'system', 'api-key-cli', null],
      ['api_key.revoked', 'system', 'api-key-cli', null],
    ]);
    expect(audit[0]!.after).toEqual({ name: 'ci bot', prefix, user_id: null, is_admin: true });
    expect(audit[1]!.prevHash).toBe(audit[0]!.hash);
    await db.close();
  }, 180_000);
});

// the first admin (issue 25): `npm run admin:grant -- <wallet> <role>` on the same kind of DATA_DIR
const grantCli = (...args: string[]) =>
  new Promise<{ code: number; out: string; err: string }>((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'server/scripts/admin-grant.ts', ...args],
      { cwd: path.resolve(__dirname, '..'), env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' }, encoding: 'utf8' },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, out: stdout, err: stderr }),
    );
  });

describe('npm run admin:grant', () => {
  it('makes the first admin from the command line; the last admin cannot be revoked there either', async () => {
    const wallet = Keypair.generate().publicKey.toBase58();
    const granted = await grantCli(wallet, 'admin');
    expect(granted.code, granted.err).toBe(0);
    expect(granted.out).toMatch(/granted: \S+ admin; roles now: admin/);
    expect((await grantCli(wallet, 'admin')).out).toMatch(/nothing to change/);
    expect((await grantCli(wallet, 'root')).code).toBe(2);
    const last = await grantCli(wallet, 'admin', '--revoke');
    expect(last.code).toBe(1);
    expect(last.err).toMatch(/last-admin/);

    // the wallet logs in to a server on that database and is an admin there
    const db = await createDb({ dataDir });
    try {
      const row = await db.prisma.user.findUniqueOrThrow({ where: { wallet } });
      expect(row).toMatchObject({ roles: ['admin'], role: 'admin' });
      const events = await db.prisma.event.findMany({ where: { resourceId: row.id } });
      expect(events.map((e) => e.type)).toEqual(['user.role_granted']);
      // audited with the CLI as its actor (issue 25 audit log)
      const audit = await db.prisma.auditLogEntry.findMany({ where: { action: 'user.role_granted', resourceId: row.id } });
      expect(audit).toMatchObject([{ actorType: 'system', actorId: 'admin-grant-cli' }]);
    } finally {
      await db.close();
    }
  }, 180_000);
});
