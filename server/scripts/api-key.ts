/**
 * Admin CLI for API keys (server-to-server integration). Uses DATABASE_URL, or the PGlite database
 * under DATA_DIR (./data) when unset; stop the server first when it uses PGlite (single process).
 *
 *   npm run api-key -- create --name <name> [--admin] [--user <wallet>]   prints the key ONCE
 *   npm run api-key -- list
 *   npm run api-key -- revoke <prefix>
 *
 * A key with --user acts as that user (the user must have logged in once); --admin allows admin
 * routes (it holds every operator role: admin, moderator, arbiter; issue 25). Only sha256(key) is stored. Creating
 * and revoking append an audit entry (actor `api-key-cli`).
 */
import { loadToolConfig } from '../src/config.js';
import { createDb } from '../src/db/client.js';
import { migrateDatabase } from '../src/db/migrate.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../src/modules/auth/api-keys.js';
import { withSystemActor } from '../src/lib/request-context.js';

/** the audit log's actor of what this CLI does (modules/audit) */
const CLI_ACTOR = 'api-key-cli';
const [cmd, ...rest] = process.argv.slice(2);
const flag = (name: string) => rest.includes(`--${name}`);
const opt = (name: string) => {
  const i = rest.indexOf(`--${name}`);
  return i >= 0 ? rest[i + 1] : undefined;
};
const usage = () => {
  console.error('usage: api-key create --name <name> [--admin] [--user <wallet>] | list | revoke <prefix>');
  process.exit(2);
};

if (!cmd || !['create', 'list', 'revoke'].includes(cmd)) usage();
const { databaseUrl, dataDir } = loadToolConfig(process.env);
const db = await createDb({ databaseUrl, dataDir });
try {
  await migrateDatabase(db.adapter);
  const prisma = db.prisma;
  if (cmd === 'create') {
    const name = opt('name');
    if (!name) usage();
    let userId: string | null = null;
    const wallet = opt('user');
    if (wallet) {
      const user = await prisma.user.findUnique({ where: { wallet } });
      if (!user) {
        console.error(`no user with wallet ${wallet} (the wallet must log in once first)`);
        process.exitCode = 1;
      } else userId = user.id;
    }
    if (!process.exitCode) {
      // an operator action: its audit entry names this CLI as the actor
      const k = await withSystemActor(CLI_ACTOR, () => createApiKey(prisma, { name: name!, userId, isAdmin: flag('admin') }));
      console.log(`created API key "${k.name}" (prefix ${k.prefix}${k.isAdmin ? ', admin' : ''}${wallet ? `, acts as ${wallet}` : ''})`);
      console.log('store it now, it is not shown again:');
      console.log(k.key);
    }
  } else if (cmd === 'list') {
    const keys = await listApiKeys(prisma);
    if (!keys.length) console.log('no API keys');
    for (const k of keys) {
      console.log(
        [
          k.prefix,
          JSON.stringify(k.name),
          k.isAdmin ? 'admin' : '-',
          k.user?.wallet ?? '(service)',
          `created ${k.createdAt.toISOString()}`,
          k.lastUsedAt ? `last used ${k.lastUsedAt.toISOString()}` : 'never used',
          k.revokedAt ? `REVOKED ${k.revokedAt.toISOString()}` : 'active',
        ].join('  '),
      );
    }
  } else {
    const prefix = rest[0];
    if (!prefix) usage();
    if (await withSystemActor(CLI_ACTOR, () => revokeApiKey(prisma, prefix!))) console.log(`revoked ${prefix}`);
    else {
      console.error(`no active key with prefix ${prefix}`);
      process.exitCode = 1;
    }
  }
} finally {
  await db.close();
}
