/**
 * Operator roles from the command line (issue 25): how the first admin is made; after that, admins grant
 * and revoke roles through the API (PUT/DELETE /api/v1/admin/users/{wallet}/roles/{role}). Uses
 * DATABASE_URL, or the PGlite database under DATA_DIR (./data) when unset; stop the server first when it
 * uses PGlite (single process).
 *
 *   npm run admin:grant -- <wallet> <admin|moderator|arbiter>            grant the role
 *   npm run admin:grant -- <wallet> <admin|moderator|arbiter> --revoke   revoke it (the last-admin guard applies)
 *
 * A wallet that never logged in gets its user row now (the row its first login would create), so the
 * first admin can be named before the service starts. The change is the API's (the same transaction,
 * `user.role_granted` / `user.role_revoked` event); a running replica sees it at the user's next request.
 * Exit codes: 0 done (or nothing to change), 1 refused (e.g. last-admin), 2 usage.
 */
import { PublicKey } from '@solana/web3.js';
import { OPERATOR_ROLES, type OperatorRole } from '@bazaar/contract';
import { loadToolConfig } from '../src/config.js';
import { createDb } from '../src/db/client.js';
import { migrateDatabase } from '../src/db/migrate.js';
import { DomainError } from '../src/errors.js';
import { withSystemActor } from '../src/lib/request-context.js';
import { createRolesService, grantRoleToWallet } from '../src/modules/auth/roles.js';

const args = process.argv.slice(2);
const revoke = args.includes('--revoke');
const [wallet, role] = args.filter((a) => !a.startsWith('--'));
const usage = (why?: string) => {
  if (why) console.error(why);
  console.error(`usage: admin:grant -- <wallet> <${OPERATOR_ROLES.join('|')}> [--revoke]`);
  process.exit(2);
};

if (!wallet || !role) usage();
if (!(OPERATOR_ROLES as readonly string[]).includes(role!)) usage(`unknown role ${role}`);
try {
  if (new PublicKey(wallet!).toBase58() !== wallet) usage(`${wallet} is not a base58 wallet address`);
} catch {
  usage(`${wallet} is not a base58 wallet address`);
}

const { databaseUrl, dataDir } = loadToolConfig(process.env);
const db = await createDb({ databaseUrl, dataDir });
try {
  await migrateDatabase(db.adapter);
  // the audit log's actor of a grant or revoke made here (issue 25): the CLI, like the api-key CLI's `api-key-cli`
  const r = await withSystemActor('admin-grant-cli', () =>
    revoke ? createRolesService({ db: db.prisma }).revoke(wallet!, role as OperatorRole) : grantRoleToWallet(db.prisma, wallet!, role as OperatorRole),
  );
  const verb = revoke ? 'revoked' : 'granted';
  console.log(`${r.changed ? verb : `nothing to change (already ${verb})`}: ${wallet} ${role}; roles now: ${r.roles.join(', ') || '(none)'}`);
} catch (e) {
  if (!(e instanceof DomainError)) throw e;
  console.error(`${e.slug}: ${e.detail}`);
  process.exitCode = 1;
} finally {
  await db.close();
}
