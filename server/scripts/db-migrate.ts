/**
 * npm run db:migrate: apply pending migrations to DATABASE_URL, or to the PGlite database under
 * DATA_DIR (./data) when DATABASE_URL is unset. The server also does this on every start.
 */
import { loadToolConfig } from '../src/config.js';
import { createDb } from '../src/db/client.js';
import { migrateDatabase } from '../src/db/migrate.js';

const { databaseUrl, dataDir } = loadToolConfig(process.env);
const db = await createDb({ databaseUrl, dataDir });
try {
  const { applied, ms } = await migrateDatabase(db.adapter);
  console.log(applied.length ? `applied ${applied.join(', ')} in ${ms} ms` : `database is up to date (${ms} ms)`);
} finally {
  await db.close();
}
