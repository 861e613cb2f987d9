/**
 * npm run audit:verify: walk the audit log's hash chain (server/src/modules/audit) and report. Uses
 * DATABASE_URL, or the PGlite database under DATA_DIR (./data) when unset (stop the server first then: PGlite
 * is single-process).
 *
 * Exit 0 and the head (seq, hash: record it, a truncated tail only shows against a recorded head) when every
 * entry verifies; exit 1 naming the first broken entry (seq, id, why) otherwise; 2 on a usage or database error.
 */
import { loadToolConfig } from '../src/config.js';
import { createDb } from '../src/db/client.js';
import { migrateDatabase } from '../src/db/migrate.js';
import { createAuditRepo, verifyChain } from '../src/modules/audit/index.js';

const { databaseUrl, dataDir } = loadToolConfig(process.env);
const db = await createDb({ databaseUrl, dataDir });
try {
  await migrateDatabase(db.adapter);
  const r = await verifyChain(createAuditRepo(db.prisma));
  if (r.ok) {
    console.log(
      r.head ? `audit log OK: ${r.checked} entries; head seq ${r.head.seq} hash ${r.head.hash}` : 'audit log OK: empty',
    );
  } else {
    const b = r.first_broken!;
    const why =
      b.reason === 'hash_mismatch'
        ? 'its hash does not match its fields (the entry was edited)'
        : 'its prev_hash is not the previous entry\'s hash (an entry before it was deleted, inserted, or edited with its hash recomputed)';
    console.error(`audit log BROKEN at seq ${b.seq} (entry ${b.id}): ${why}; expected ${b.expected}, found ${b.found}`);
    process.exitCode = 1;
  }
} catch (err) {
  console.error(`audit:verify failed: ${(err as Error).message}`);
  process.exitCode = 2;
} finally {
  await db.close();
}
